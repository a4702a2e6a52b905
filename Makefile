# kpemu — build, run, test and benchmark.
#
#   make run      build and run kpemu: boot the embedded kernel, mount its
#                 debugfs at $(MOUNT) with kprobes on $(PROBES)
#   make test     every test: lint, unit, QEMU differential, end-to-end through FUSE
#                 (with the README's samples); 6-8 minutes on 2 cores (docs/testing.md)
#   make deps     install the Debian packages the tests need (run by test)
#   make build    bin/kpemu (pure Go: the guest image is committed and embedded)
#   make image    rebuild the guest images with clang + ld.lld
#   make check-image  fail if the committed images differ from their sources
#   make check-generate  fail if the committed generated Go (the A64 decoder
#                 from machine/a64.decode) differs from what go generate makes
#   make bench    benchmarks: guest MIPS, boot time, syscalls/s, the cost of a probe hit,
#                 trace_pipe's events/s and hit-to-read latency, the cost of many
#                 kprobe events, an unmount while readers hold the tree, a
#                 sealed open; then the kprobe files through a real mount
#                 against tmpfs (scripts/bench-mount.sh); then guest MIPS of kpemu
#                 and QEMU on one program, their ratio, and kpemu's peak RSS

GO        ?= go
# Without cgo (net and os/user have Go versions) kpemu links statically:
# no dynamic loader, no libc to map, and it starts about 3 ms sooner.
export CGO_ENABLED ?= 0
STATICCHECK_VERSION ?= v0.7.0
DEB_PACKAGES = clang lld fuse3 qemu-system-arm gdb-multiarch device-tree-compiler time busybox-static python3 trace-cmd linux-perf perf-tools-unstable iputils-ping
RUN_PACKAGES = fuse3
MOUNT    ?= /tmp/dbg
PROBES   ?= vfs_read do_fork

.PHONY: all deps deps-run build run image check-image check-generate test unit e2e lint bench clean

all: build

# Install only what is missing, so that a machine that has everything
# does not touch apt (apt-get needs root).
define apt_install
	@missing=$$(for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing:" $$missing; \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing; \
	fi
endef

deps:
	$(call apt_install,$(DEB_PACKAGES))
	$(GO) mod download

deps-run:
	$(call apt_install,$(RUN_PACKAGES))

run: deps-run build
	bin/kpemu run --mount $(MOUNT) $(addprefix --probe ,$(PROBES))

build:
	$(GO) build -o bin/kpemu ./cmd/kpemu

image: deps
	$(MAKE) -C kernel/image
	$(MAKE) -C machine/testdata

# The committed images must be exactly what their sources build. -B
# rebuilds even when a fresh checkout's timestamps make them look current.
check-image: deps
	$(MAKE) -B -C kernel/image
	$(MAKE) -B -C machine/testdata
	git diff --exit-code --stat -- kernel/image machine/testdata
	@test -z "$$(git status --porcelain -- kernel/image machine/testdata)" || \
		{ git status --porcelain -- kernel/image machine/testdata; echo "untracked build outputs"; exit 1; }

# The decoder (machine/a64_decode.go, a64_jit_amd64.go, the dispatch in
# exec.go) is generated from the table machine/a64.decode and committed;
# it must be current.
GENERATED = machine/a64_decode.go machine/a64_jit_amd64.go machine/exec.go
check-generate:
	$(GO) generate ./machine/
	git diff --exit-code --stat -- $(GENERATED)

lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

unit:
	$(GO) test -count=1 ./...

e2e: build
	KPEMU=$(CURDIR)/bin/kpemu bash scripts/e2e.sh

test: deps lint unit e2e

# Every benchmark, then the table of the figures issue 18 tracks, each
# with its same-run baseline (scripts/bench.sh; docs/benchmarks.md).
bench: deps
	GO=$(GO) bash scripts/bench.sh

clean:
	rm -rf bin
