#!/bin/sh
# SPDX-License-Identifier: MIT
#
# kpemu-ns.sh: run a command in a private mount namespace that looks like a
# Linux box running kpemu's guest, so that scripts written for one run
# unchanged: kpemu's debugfs tree at /sys/kernel/debug, its tracing tree at
# /sys/kernel/tracing (both found through /proc/mounts, as "debugfs" and
# "tracefs"), the guest's kallsyms and version bound over /proc/kallsyms and
# /proc/version, its ELF notes (the build-id) over /sys/kernel/notes, its
# tracing sysctls (kpemu/sys/kernel/ and kpemu/stack_tracer_enabled) over
# /proc/sys/kernel/{ftrace_enabled, kptr_restrict, perf_event_paranoid,
# sched_rt_runtime_us, stack_tracer_enabled, ...}, and on PATH an `uname` that answers the
# guest's -m and -r and `modprobe`/`rmmod`/`insmod`/`lsmod` for the
# guest's modules (scripts/ns-bin). Nothing changes outside the namespace.
# Needs root (unshare -m).
#
# The namespace is sealed, so that a tool never reaches the host kernel's
# tracing: the host's tracefs and debugfs are unmounted in it; the rest of
# /proc/sys is read-only (a write fails with EROFS); and CMD and every
# process it starts run under kpemu's tracer (kpemu shadow-exec, run's
# --seal), which makes /proc/mounts and /proc/PID/{mounts,mountinfo} show
# kpemu's trees with Linux's types, tracefs and debugfs (trace-cmd and perf
# look for the type, and mount the host's tracefs if they do not find it),
# and turns a mount of tracefs or debugfs into a bind of kpemu's tree.
#
# CMD and every process it starts are shadowed (kpemu shadow-exec): each
# fork, open, symlink, mkdir, unlink and rmdir they make is first made by
# the guest kernel too (by the process's twin there, a task with its pid
# and name), so that a probe on kernel_clone or do_sys_openat2 sees what
# the script did, as on the box, and set_event_pid $$ follows the script. The guest's file system is not the host's: the guest's
# call may fail (a host path it lacks) where the host's succeeds.
#
#   scripts/kpemu-ns.sh [-k KPEMU] [-o "RUN FLAGS"] [-S] [CMD [ARG...]]
#
#   -k KPEMU   the kpemu binary (default: kpemu on PATH, else bin/kpemu)
#   -o FLAGS   more `kpemu run` flags, e.g. -o "--cpus 4"
#   -S         do not shadow CMD's system calls in the guest (it is still
#              sealed)
#   CMD        what to run inside (default: $SHELL, or /bin/sh)
#
# The exit status is CMD's.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
kpemu=
runflags=
shadowing=1
while getopts k:o:Sh opt; do
	case $opt in
	k) kpemu=$OPTARG ;;
	o) runflags=$OPTARG ;;
	S) shadowing= ;;
	*) sed -n '3,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))

if [ -z "$kpemu" ]; then
	kpemu=$(command -v kpemu || true)
	[ -n "$kpemu" ] || kpemu=$here/../bin/kpemu
fi
[ -x "$kpemu" ] || { echo "kpemu-ns.sh: no kpemu binary at '$kpemu' (make build, or -k)" >&2; exit 2; }
kpemu=$(cd "$(dirname "$kpemu")" && pwd)/$(basename "$kpemu")

if [ "${KPEMU_NS_INNER:-}" != 1 ]; then
	[ "$(id -u)" = 0 ] || { echo "kpemu-ns.sh: needs root for unshare -m" >&2; exit 2; }
	KPEMU_NS_INNER=1 KPEMU_NS_SHADOW=$shadowing exec unshare -m --propagation private \
		"$0" -k "$kpemu" -o "$runflags" "$@"
fi

# Inside the namespace. The host's tracefs and debugfs go first (deepest
# first), so that nothing inside reaches them, not even under kpemu's, and
# so do other kpemus' trees, which inside would show as tracefs and
# debugfs too.
awk '$3 == "tracefs" || $3 == "debugfs" || $3 == "fuse.kpemu" { print $2 }' /proc/self/mounts | sort -r |
	while read -r m; do umount -l "$(printf '%b' "$m")"; done
log=$(mktemp /tmp/kpemu-ns.XXXXXX.log)
sock=$(mktemp -u /tmp/kpemu-ns.XXXXXX.sock)
# the tracer's rewritten mount tables, readable by every process inside
seal_dir=$(mktemp -d /tmp/kpemu-ns.XXXXXX)
mount -t tmpfs -o mode=0755,size=16m kpemu-seal "$seal_dir"
# shellcheck disable=SC2086 # runflags is a list of flags
"$kpemu" run --mount /sys/kernel/debug --tracefs /sys/kernel/tracing \
	--shadow-socket "$sock" --seal "$seal_dir" $runflags >"$log" 2>&1 &
pid=$!
sysctl_dir=
stop() {
	# binds of the trees (ours, and any that CMD left, as a mount of
	# tracefs makes one) hold them busy: release them first
	awk '$3 == "fuse.kpemu" && $2 != "/sys/kernel/debug" && $2 != "/sys/kernel/tracing" { print $2 }' /proc/self/mounts |
		sort -r | while read -r m; do umount -l "$(printf '%b' "$m")" 2>/dev/null || true; done
	umount -l /proc/sys 2>/dev/null || true
	if [ -n "$sysctl_dir" ]; then
		umount -l "$sysctl_dir" 2>/dev/null || true
		rmdir "$sysctl_dir" 2>/dev/null || true
	fi
	kill -TERM "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	umount -l "$seal_dir" 2>/dev/null || true
	rmdir "$seal_dir" 2>/dev/null || true
	rm -f "$log" # shown already if kpemu failed to start
}
trap stop EXIT
# The waits share one bound, in seconds (sh has no SECONDS), which only
# turns a hang into an error: on a loaded host kpemu may take long.
end=$(($(date +%s) + ${KPEMU_NS_BOUND:-240}))
# await WHAT CMD...: run CMD every 0.1 s until it succeeds; give up with
# kpemu's log if kpemu exits or the bound passes.
await() {
	what=$1
	shift
	until "$@"; do
		if [ "$(date +%s)" -ge "$end" ] || ! kill -0 "$pid" 2>/dev/null; then
			echo "kpemu-ns.sh: kpemu did not $what; its log ($log):" >&2
			cat "$log" >&2
			exit 1
		fi
		sleep 0.1
	done
}
trees_mounted() { [ -e /sys/kernel/debug/kpemu/kallsyms ] && [ -e /sys/kernel/tracing/kprobe_events ]; }
await "mount its trees" trees_mounted
# The trees mount once the guest kernel is ready; give its user space
# (init, sh, lockd, ...) a moment to start, as a box that a script logs
# in to has.
until grep -q "Run /init as init process" /sys/kernel/debug/kpemu/dmesg 2>/dev/null; do
	[ "$(date +%s)" -lt "$end" ] || break
	sleep 0.1
done
sleep 0.5
mount --bind /sys/kernel/debug/kpemu/kallsyms /proc/kallsyms
mount --bind /sys/kernel/debug/kpemu/version /proc/version
# The image's build-id, which perf checks a vmlinux (perf probe -k) against.
mount --bind /sys/kernel/debug/kpemu/notes /sys/kernel/notes
# Linux automounts tracefs at /sys/kernel/debug/tracing; here it is the
# same tree, bound, so that it shows in /proc/mounts as Linux's does.
mount --bind /sys/kernel/tracing /sys/kernel/debug/tracing
# /proc/sys, read-only: nothing written there reaches the host kernel.
mount --bind /proc/sys /proc/sys
mount -o remount,bind,ro /proc/sys
# The guest's sysctls, each over the host's file, or, on a host whose
# kernel lacks one (no stack tracer: no such file to bind over), over a
# file of a tmpfs that stands in for /proc/sys/kernel, each of whose other
# entries is the host's (read-only), bound.
sysk=/proc/sys/kernel
set -- /sys/kernel/debug/kpemu/stack_tracer_enabled /sys/kernel/debug/kpemu/sys/kernel/* -- "$@"
missing=
for f; do
	[ "$f" = -- ] && break
	[ -e "$sysk/${f##*/}" ] || missing=1
done
if [ -n "$missing" ]; then
	sysctl_dir=$(mktemp -d /tmp/kpemu-ns.XXXXXX)
	mount -t tmpfs -o mode=0555 kpemu-sysctl "$sysctl_dir"
	for e in "$sysk"/*; do
		n=${e##*/}
		if [ -d "$e" ]; then mkdir "$sysctl_dir/$n"; else : >"$sysctl_dir/$n"; fi
		mount --bind "$e" "$sysctl_dir/$n"
	done
	for f; do
		[ "$f" = -- ] && break
		[ -e "$sysctl_dir/${f##*/}" ] || : >"$sysctl_dir/${f##*/}"
	done
	mount -o remount,ro "$sysctl_dir"
	mount --rbind "$sysctl_dir" $sysk
fi
while [ "$1" != -- ]; do
	mount --bind "$1" "$sysk/${1##*/}"
	shift
done
shift
PATH=$here/ns-bin:$PATH
export PATH
[ $# -gt 0 ] || set -- "${SHELL:-/bin/sh}"
await "open its shadow socket" test -S "$sock"
if [ -n "${KPEMU_NS_SHADOW:-}" ]; then
	set -- "$kpemu" shadow-exec --socket "$sock" -- "$@"
else
	set -- "$kpemu" shadow-exec --seal-only --socket "$sock" -- "$@"
fi
set +e
"$@"
status=$?
set -e
exit $status
