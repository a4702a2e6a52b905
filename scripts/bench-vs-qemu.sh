#!/usr/bin/env bash
# Guest speed of kpemu against QEMU, in one run: the compute-bound
# bare-metal benchmark machine/testdata/coremark.elf runs on kpemu
# (`kpemu baremetal`, which runs a bare-metal ELF on a deterministic
# single-CPU machine and prints the instructions it retired), on kpemu
# with block translation off (`--interpret`, the baseline the translator
# is measured against) and on `qemu-system-aarch64 -M virt -cpu max`,
# each pinned to one host core.
#
#   scripts/bench-vs-qemu.sh [-k KPEMU] [-r RUNS]
#
# Both must print the same checksum line. The program is deterministic, so
# QEMU retires the same instructions as kpemu counts. Each tool's time is
# its whole process minus its start-up, measured on the same image with no
# workload (kpemu: `-n 0`, zero instructions; QEMU: CPU 0 started at the
# image's poweroff, three instructions); the best of RUNS runs of each is
# kept, since a shared host only ever adds time. It also prints kpemu's
# peak RSS against its guest RAM (the budget is guest RAM + 64 MiB).
# Exits 1 if the checksums differ or a run fails.
set -euo pipefail
cd "$(dirname "$0")/.."

KPEMU=bin/kpemu
RUNS=3
while getopts k:r: opt; do
	case $opt in
	k) KPEMU=$OPTARG ;;
	r) RUNS=$OPTARG ;;
	*) echo "usage: $0 [-k KPEMU] [-r RUNS]" >&2; exit 2 ;;
	esac
done
IMAGE=machine/testdata/coremark.elf
# kpemu baremetal builds machine.Config{} with its default RAM.
GUEST_RAM_MIB=128
RSS_BUDGET_MIB=64
QEMU=qemu-system-aarch64

command -v "$QEMU" >/dev/null || { echo "$QEMU not installed (Debian package qemu-system-arm)" >&2; exit 1; }
if [ "$KPEMU" = bin/kpemu ]; then
	${GO:-go} build -o bin/kpemu ./cmd/kpemu
fi

tmp=$(mktemp -d /tmp/kpemu-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# One host core for each tool: the first this shell may use.
pin=()
pincpu=
if command -v taskset >/dev/null; then
	pincpu=$(awk '/^Cpus_allowed_list/ { split($2, a, /[-,]/); print a[1] }' /proc/self/status)
	pin=(taskset -c "$pincpu")
fi
# GNU time reports the peak RSS; without it the RSS is not measured.
timecmd=()
if [ -x /usr/bin/time ]; then
	timecmd=(/usr/bin/time -f %M -o "$tmp/rss")
fi

# The image's poweroff (PSCI SYSTEM_OFF), where QEMU's start-up run begins.
poweroff=
for nm in llvm-nm nm; do
	if command -v $nm >/dev/null; then
		poweroff=$($nm "$IMAGE" 2>/dev/null | awk '$3 == "poweroff" { print $1 }') && [ -n "$poweroff" ] && break
	fi
done
[ -n "$poweroff" ] || { echo "cannot find poweroff in $IMAGE (needs llvm-nm or nm)" >&2; exit 1; }

qemu_cmd=("$QEMU" -M virt -cpu max -m ${GUEST_RAM_MIB}M -nographic -no-reboot -nic none -kernel "$IMAGE")

# timed NAME CMD...: runs CMD pinned, its stdout in $tmp/NAME.out; sets ns
# to its wall time in nanoseconds and rss to its peak RSS in KiB.
timed() {
	local name=$1 t0 t1
	shift
	rm -f "$tmp/rss"
	t0=$(date +%s%N)
	if ! "${timecmd[@]}" "${pin[@]}" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" </dev/null; then
		echo "$name failed: $*" >&2
		cat "$tmp/$name.err" >&2
		exit 1
	fi
	t1=$(date +%s%N)
	ns=$((t1 - t0))
	rss=$(cat "$tmp/rss" 2>/dev/null || echo 0)
}

# best NAME: keeps the smallest time and the largest RSS seen for NAME.
declare -A best_ns max_rss
best() {
	if [ -z "${best_ns[$1]:-}" ] || [ "$ns" -lt "${best_ns[$1]}" ]; then best_ns[$1]=$ns; fi
	if [ -z "${max_rss[$1]:-}" ] || [ "$rss" -gt "${max_rss[$1]}" ]; then max_rss[$1]=$rss; fi
}

for ((r = 0; r < RUNS; r++)); do
	timed kpemu "$KPEMU" baremetal --console -n 100000000000 "$IMAGE"; best kpemu
	timed kpemui "$KPEMU" baremetal --interpret --console -n 100000000000 "$IMAGE"; best kpemui
	timed qemu "${qemu_cmd[@]}"; best qemu
	timed kpemu0 "$KPEMU" baremetal -n 0 "$IMAGE"; best kpemu0
	timed qemu0 "${qemu_cmd[@]}" -device loader,addr=0x$poweroff,cpu-num=0; best qemu0
done

kline=$(grep '^coremark ' "$tmp/kpemu.out" || true)
iline=$(grep '^coremark ' "$tmp/kpemui.out" || true)
qline=$(grep '^coremark ' "$tmp/qemu.out" || true)
insns=$(awk '$1 == "instructions" { print $2 }' "$tmp/kpemu.out")
iinsns=$(awk '$1 == "instructions" { print $2 }' "$tmp/kpemui.out")
if [ -z "$kline" ] || [ "$kline" != "$qline" ] || [ "$iline" != "$qline" ]; then
	echo "checksums differ: kpemu printed '$kline', kpemu --interpret '$iline', QEMU '$qline'" >&2
	exit 1
fi
if [ "$insns" != "$iinsns" ]; then
	echo "kpemu retired $insns instructions, kpemu --interpret $iinsns" >&2
	exit 1
fi
if [ -s "$tmp/qemu0.out" ]; then
	echo "QEMU's start-up run printed output: it ran the workload" >&2
	exit 1
fi

awk -v insns="$insns" -v line="$kline" -v runs="$RUNS" -v cpu="${pincpu:-none}" \
	-v kns="${best_ns[kpemu]}" -v k0="${best_ns[kpemu0]}" -v ins="${best_ns[kpemui]}" \
	-v qns="${best_ns[qemu]}" -v q0="${best_ns[qemu0]}" \
	-v krss="${max_rss[kpemu]}" -v qrss="${max_rss[qemu]}" \
	-v ram="$GUEST_RAM_MIB" -v budget="$RSS_BUDGET_MIB" -v image="$IMAGE" '
BEGIN {
	ks = (kns - k0) / 1e9; qs = (qns - q0) / 1e9; is = (ins - k0) / 1e9
	printf "%s on kpemu and QEMU (best of %d runs each, pinned to host CPU %s)\n", image, runs, cpu
	printf "checksum            %s (same on all)\n", line
	printf "guest instructions  %d (retired, counted by kpemu)\n", insns
	printf "                    %12s %12s %12s\n", "kpemu", "qemu", "--interpret"
	printf "host seconds        %12.3f %12.3f %12.3f  (process minus start-up: kpemu %.3f - %.3f, qemu %.3f - %.3f)\n", ks, qs, is, kns / 1e9, k0 / 1e9, qns / 1e9, q0 / 1e9
	printf "MIPS                %12.1f %12.1f %12.1f\n", insns / ks / 1e6, insns / qs / 1e6, insns / is / 1e6
	printf "ratio kpemu/QEMU    %12.3f\n", qs / ks
	printf "ratio kpemu/interpreter %8.3f  (block translation against kpemu --interpret)\n", is / ks
	if (krss > 0) {
		over = krss / 1024 > ram + budget ? "OVER" : "within"
		printf "peak RSS            %9.1f MiB %8.1f MiB  (kpemu guest RAM %d MiB: %s guest RAM + %d MiB)\n", krss / 1024, qrss / 1024, ram, over, budget
	} else {
		print "peak RSS            not measured (needs GNU time at /usr/bin/time)"
	}
}'
