#!/usr/bin/env bash
# make bench: every benchmark, then the table of issue 18's figures, each
# with the baseline it is measured against in the same run:
#
#   - the Go benchmarks of machine/, kernel/, kprobes/, tracing/, fuse/
#     and shadow/, one package at a time (-p 1: two packages at once
#     would share the host's cores and measure each other);
#   - scripts/bench-mount.sh (the kprobe files through a real mount);
#   - scripts/bench-vs-qemu.sh (CoreMark on kpemu and on QEMU);
#   - peak RSS of `kpemu run` with 4 kprobe events and sched_switch
#     enabled and trace_pipe unread, after RSS_SECONDS (default 300);
#   - `kpemu run` from its start to a mounted tree, median of 10;
#
# and prints the table (markdown). Every output is kept in OUT (default
# bin/bench/). Needs root (FUSE), QEMU and the Debian packages of make
# deps.
#
#   scripts/bench.sh [-o OUT] [-s RSS_SECONDS] [-t]
#
#   -t   the table only, from the outputs a previous run left in OUT
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
OUT=bin/bench
RSS_SECONDS=300
TABLE_ONLY=
while getopts o:s:t opt; do
	case $opt in
	o) OUT=$OPTARG ;;
	s) RSS_SECONDS=$OPTARG ;;
	t) TABLE_ONLY=1 ;;
	*) echo "usage: $0 [-o OUT] [-s RSS_SECONDS] [-t]" >&2; exit 2 ;;
	esac
done
mkdir -p "$OUT"

# rss_run: RSS_SECONDS and the peak RSS (VmHWM, KiB) of kpemu run after
# them with 4 kprobe events and sched_switch enabled and no reader.
rss_run() {
	local tmp pid
	tmp=$(mktemp -d /tmp/kpemu-bench-rss.XXXXXX)
	bin/kpemu run --mount "$tmp/mnt" >"$tmp/log" 2>&1 &
	pid=$!
	for _ in $(seq 600); do
		[ -e "$tmp/mnt/tracing/kprobe_events" ] && break
		kill -0 "$pid" 2>/dev/null || { cat "$tmp/log" >&2; return 1; }
		sleep 0.1
	done
	printf '%s\n' 'p:r1 vfs_read' 'p:w1 vfs_write' 'p:o1 do_sys_openat2' 'p:f1 kernel_clone' >"$tmp/mnt/tracing/kprobe_events"
	echo 1 >"$tmp/mnt/tracing/events/kprobes/enable"
	echo 1 >"$tmp/mnt/tracing/events/sched/sched_switch/enable"
	sleep "$RSS_SECONDS"
	awk -v s="$RSS_SECONDS" '/^VmHWM:/ { print s, $2 }' "/proc/$pid/status"
	kill -TERM "$pid"
	wait "$pid" || true
	rm -rf "$tmp"
}

# start_run: milliseconds from starting kpemu run to its tree serving
# kprobes/list. Nothing forks but kpemu: the clock is bash's
# EPOCHREALTIME and the wait between looks a builtin read's timeout, as
# date and sleep each cost a fork and an exec, 3 to 8 ms on a virtual
# machine, which counted as kpemu's.
start_run() {
	local tmp pid t0 t1 nap
	tmp=$(mktemp -d /tmp/kpemu-bench-start.XXXXXX)
	mkdir "$tmp/mnt"
	mkfifo "$tmp/nap"
	exec {nap}<>"$tmp/nap" # never written: each read waits its timeout
	t0=$EPOCHREALTIME
	bin/kpemu run --mount "$tmp/mnt" >"$tmp/log" 2>&1 &
	pid=$!
	until [ -e "$tmp/mnt/kprobes/list" ]; do
		kill -0 "$pid" 2>/dev/null || { cat "$tmp/log" >&2; exec {nap}>&-; return 1; }
		read -r -t 0.0005 -u "$nap" || true
	done
	t1=$EPOCHREALTIME
	exec {nap}>&-
	kill -TERM "$pid"
	wait "$pid" || true
	rm -rf "$tmp"
	echo $(((${t1//[!0-9]/} - ${t0//[!0-9]/}) / 1000)) # (the decimal point is the locale's)
}

if [ -z "$TABLE_ONLY" ]; then
	$GO build -o bin/kpemu ./cmd/kpemu
	$GO test -p 1 -run='^$' -bench=. -benchtime=2s ./machine/ ./kernel/ ./kprobes/ ./tracing/ ./fuse/ ./shadow/ 2>&1 | tee "$OUT/go.txt"
	GO=$GO bash scripts/bench-mount.sh -k bin/kpemu 2>&1 | tee "$OUT/mount.txt"
	GO=$GO bash scripts/bench-vs-qemu.sh 2>&1 | tee "$OUT/qemu.txt"
	echo "kpemu run start to a mounted tree (ms), 10 runs:"
	for _ in $(seq 10); do start_run; done | tee "$OUT/start.txt"
	echo "seconds, peak RSS (KiB) with 4 kprobe events and sched_switch, trace_pipe unread:"
	rss_run | tee "$OUT/rss.txt"
fi

# metric BENCHMARK UNIT: the value the Go benchmark reported for UNIT.
metric() {
	awk -v b="$1" -v u="$2" '$1 ~ "^"b"(-[0-9]+)?$" { for (i = 3; i < NF; i++) if ($(i + 1) == u) { print $i; exit } }' "$OUT/go.txt"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "?"; else printf "%.2f", a / b }'; }

kp=$(metric BenchmarkProbeHit/kprobe cpu-ns/hit)
kpi=$(metric BenchmarkProbeHit/kprobe insns/hit)
kpx=$(metric BenchmarkProbeHit/kprobe extra-ns/hit)
kph=$(metric BenchmarkProbeHit/kprobe hits/run)
kr=$(metric BenchmarkProbeHit/kretprobe cpu-ns/hit)
jg=$(metric BenchmarkProbeHit/jprobe-guest cpu-ns/hit)
e1=$(metric BenchmarkHotEvents/functions-1 slowdown)
e100=$(metric BenchmarkHotEvents/functions-100 slowdown)
wt=$(metric BenchmarkUserWorkload/translated MIPS)
wi=$(metric BenchmarkUserWorkload/interpreted MIPS)
cm=$(metric BenchmarkCoreMark MIPS)
pd=$(metric BenchmarkParallel/deterministic MIPS)
pp=$(metric BenchmarkParallel/parallel MIPS)
ppc=$(metric BenchmarkParallel/parallel host-cores)
qr=$(awk '/^ratio kpemu\/QEMU/ { print $3 }' "$OUT/qemu.txt")
qk=$(awk '/^MIPS/ { print $2 }' "$OUT/qemu.txt")
qq=$(awk '/^MIPS/ { print $3 }' "$OUT/qemu.txt")
read -r rss_s rss <"$OUT/rss.txt" 2>/dev/null || true
start=$(sort -n "$OUT/start.txt" 2>/dev/null | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }')
startmin=$(sort -n "$OUT/start.txt" 2>/dev/null | head -1)
ram=128

cat <<EOF

| figure | this run | baseline, same run | target |
|---|---|---|---|
| host CPU per kprobe hit (on $(printf %s "${kph:-?}") hits of the hottest function) | ${kp:-?} ns, ${kpi:-?} guest instructions; ${kpx:-?} ns beyond the instructions | the unprobed kernel, same work | ≤ 1,000 ns |
| kretprobe hit / jprobe with a guest handler | $(ratio "$kr" "$kp")× / $(ratio "$jg" "$kp")× a kprobe hit | a kprobe hit | ≤ 2× |
| guest slowdown, one enabled event on the hottest function / on the 100 hottest | $(printf %s "${e1:-?}")× / $(printf %s "${e100:-?}")× | the kernel without events, same work | ≤ 1.2× / ≤ 1.5× |
| kernel workload, translated against interpreted | $(ratio "$wt" "$wi")× (${wt:-?} MIPS) | interpreted, ${wi:-?} MIPS | ≥ 4× |
| kernel workload MIPS against CoreMark MIPS | $(ratio "$wt" "$cm") | CoreMark translated, ${cm:-?} MIPS | ≥ 0.6 |
| CoreMark, kpemu against QEMU | ${qr:-?} (${qk:-?} MIPS) | qemu-system-aarch64, ${qq:-?} MIPS | ≥ 1.0 |
| --parallel, 2 vCPUs on 2 host cores | $(ratio "$pp" "$pd")× (${pp:-?} MIPS, ${ppc:-?} host cores busy) | deterministic, ${pd:-?} MIPS | ≥ 1.5× |
| peak RSS, 4 kprobe events and sched_switch, trace_pipe unread, after ${rss_s:-?} s | $(awk -v r="$rss" 'BEGIN { if (r == "") print "?"; else printf "%.0f MiB", r / 1024 }') | guest RAM ${ram} MiB | ≤ $((ram + 64)) MiB |
| kpemu run start to a mounted tree, median of 10 | ${start:-?} ms (min ${startmin:-?}) | | ≤ 100 ms |
EOF
