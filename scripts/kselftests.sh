#!/bin/sh
# SPDX-License-Identifier: MIT
#
# kselftests.sh: run Linux's ftrace kprobe selftests, unchanged, against
# kpemu, and print ftracetest's summary.
#
#   scripts/kselftests.sh [-k KPEMU] [-o "RUN FLAGS"] [-t SECS] [-w] SELFTEST_DIR [TEST...]
#
#   SELFTEST_DIR  a copy of Linux's tools/testing/selftests/ftrace (it holds
#                 ftracetest and test.d/); the tests are Linux's (GPL) and
#                 stay outside this project
#   TEST          test files or directories to run (default: test.d/kprobe/
#                 and test.d/dynevent/*kprobe*.tc, the kprobe tracing tests)
#   -k KPEMU      the kpemu binary (default: kpemu on PATH, else bin/kpemu)
#   -o FLAGS      more `kpemu run` flags
#   -t SECS       give up on the whole run after SECS seconds (default 1800)
#   -w            keep the guest workload's forks (kpemu/workload_forks):
#                 by default the run turns them off, for the guest to be
#                 about as quiet as the idle box the tests expect (two
#                 reads of a fork histogram must agree in trigger-multihist)
#
# ftracetest runs inside scripts/kpemu-ns.sh's namespace, so it finds
# kpemu's trees where it looks on Linux (/sys/kernel/tracing, through
# /proc/mounts), the guest's /proc/kallsyms, `uname -m` = aarch64, and
# modprobe/rmmod for the guest's modules (kprobe_module loads trace-printk),
# and its forks, opens and symlinks are shadowed in the guest, so that the
# tests that make one and look for it in the trace see it. The namespace is
# sealed: what the harness writes to /proc/sys/kernel (sched_rt_runtime_us,
# ftrace_enabled, ...) changes the guest's value, never the host kernel's.
# Per-test logs go to a directory named in the output. Needs root.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
nsflags=
timeout=1800
forks=0
while getopts k:o:t:wh opt; do
	case $opt in
	k) nsflags="$nsflags -k $OPTARG" ;;
	o) runflags=$OPTARG ;;
	t) timeout=$OPTARG ;;
	w) forks=1 ;;
	*) sed -n '3,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "usage: $0 [-k KPEMU] [-o FLAGS] [-t SECS] [-w] SELFTEST_DIR [TEST...]" >&2; exit 2; }
dir=$(cd "$1" && pwd)
shift
[ -x "$dir/ftracetest" ] && [ -d "$dir/test.d" ] || { echo "kselftests.sh: $dir has no ftracetest and test.d/" >&2; exit 2; }
if [ $# -eq 0 ]; then
	set -- "$dir/test.d/kprobe"
	for t in "$dir"/test.d/dynevent/*kprobe*.tc; do
		[ -e "$t" ] && set -- "$@" "$t"
	done
fi
logs=$(mktemp -d /tmp/kpemu-kselftests.XXXXXX)
echo "kselftests.sh: logs in $logs"
# shellcheck disable=SC2086 # nsflags is a list of flags
timeout -s TERM "$timeout" "$here/kpemu-ns.sh" $nsflags -o "${runflags:-}" \
	sh -c 'echo "$0" > /sys/kernel/debug/kpemu/workload_forks && exec "$@"' "$forks" \
	"$dir/ftracetest" -l "$logs" "$@" 2>&1 | tee "$logs/output.txt" |
	grep -E '^\[[0-9]+\]|^# of ' || true
grep -q '^# of passed' "$logs/output.txt" || { echo "kselftests.sh: ftracetest did not finish (see $logs/output.txt)" >&2; exit 1; }
! grep -Eq '^# of (failed|undefined\(test bug\)): +[1-9]' "$logs/output.txt"
