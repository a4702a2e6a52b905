#!/usr/bin/env bash
# A/B guest speed of two revisions of the interpreter, in one run: builds
# machine's test binary at BASE and at the work tree (or at NEW), then runs
# BenchmarkCoreMark with each in turn, RUNS times, pinned to one host core,
# and prints each run's MIPS, each side's median and best, and NEW/BASE.
# With -b it does the same for the kernel workload too (kernel's
# BenchmarkUserWorkload: the booted system's guest MIPS).
#
#   scripts/bench-ab.sh [-b] [-c [-p KIND]] [-k MODE] [-r RUNS] [-n ITERATIONS] [BASE [NEW]]
#
#   BASE        a git revision (default HEAD)
#   NEW         a git revision (default: the work tree, uncommitted changes
#               included)
#   -r RUNS     runs of each (default 8)
#   -n ITER     CoreMark iterations a run (default 1000, about 200 million
#               guest instructions)
#   -b          also the kernel workload: BenchmarkUserWorkload/MODE, 200
#               steps of a million instructions a run after the boot
#   -k MODE     the kernel workload's mode: translated (default) or
#               interpreted
#   -c          count instead of time: each side's host instructions
#               (valgrind's cachegrind; needs valgrind) for one run of
#               each benchmark, the two sides at once; with -p KIND also
#               BenchmarkProbeHit/KIND (kprobe, kretprobe, jprobe-go,
#               jprobe-guest)
#
# Why: on a shared 2-core VM one run's MIPS varies by about ±10%, so two
# numbers from separate invocations cannot show a 5% change; alternating
# the two binaries spreads the host's noise over both. Compare medians.
# Some days the noise is ±30%: then -c decides. The guest's work is the
# same on both sides, so host instructions differ by the change alone
# (and some thousandths from the Go runtime); cache misses and branch
# mispredictions do not show.
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=8
ITER=1000
KERNEL=
KMODE=translated
COUNT=
PROBE=
while getopts bck:p:r:n: opt; do
	case $opt in
	b) KERNEL=1 ;;
	c) COUNT=1 ;;
	p) PROBE=$OPTARG ;;
	k) KMODE=$OPTARG ;;
	r) RUNS=$OPTARG ;;
	n) ITER=$OPTARG ;;
	*) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
BASE=${1:-HEAD}
NEW=${2:-}
GO=${GO:-go}

tmp=$(mktemp -d /tmp/kpemu-bench-ab.XXXXXX)
trap 'git worktree remove --force "$tmp/base" >/dev/null 2>&1 || true; git worktree remove --force "$tmp/new" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT

if [ -n "$COUNT" ] && ! command -v valgrind >/dev/null; then
	echo "bench-ab.sh: -c needs valgrind (apt-get install valgrind)" >&2
	exit 1
fi
build() { # DIR OUT
	(cd "$1" && $GO test -c -o "$2" ./machine/)
	if [ -n "$KERNEL" ]; then
		(cd "$1" && $GO test -c -o "$2.kernel" ./kernel/)
	fi
	if [ -n "$PROBE" ]; then
		(cd "$1" && $GO test -c -o "$2.kprobes" ./kprobes/)
	fi
}
git worktree add --detach -q "$tmp/base" "$BASE"
build "$tmp/base" "$tmp/base.test"
if [ -n "$NEW" ]; then
	git worktree add --detach -q "$tmp/new" "$NEW"
	build "$tmp/new" "$tmp/new.test"
else
	build . "$tmp/new.test"
fi

cpu=$(($(nproc) - 1))
mips() { awk '{for (i = 2; i <= NF; i++) if ($i == "MIPS") print $(i-1)}'; }
run() { # BINARY
	(cd machine && taskset -c "$cpu" "$1" -test.run '^$' -test.bench '^BenchmarkCoreMark$' \
		-test.benchtime "${ITER}x" | mips)
}
runk() { # BINARY
	(cd kernel && taskset -c "$cpu" "$1.kernel" -test.run '^$' \
		-test.bench "^BenchmarkUserWorkload\$/^${KMODE}\$" -test.benchtime 200x | mips)
}
if [ -n "$COUNT" ]; then
	# irefs DIR BINARY BENCH BENCHTIME: the host instructions of one run.
	# (Valgrind has no RDTSCP, which Go 1.26's runtime uses for cputicks
	# where the CPU has it: without cpu.rdtscp=off the run dies of SIGILL.
	# Valgrind runs one thread at a time: unfairly, the runtime.GC that
	# testing makes before a benchmark spun in Gosched for the sweeper,
	# up to 16 billion instructions more in a run; --fair-sched=yes
	# hands the threads round.)
	irefs() {
		(cd "$1" && GODEBUG=cpu.rdtscp=off valgrind --tool=cachegrind --fair-sched=yes --cache-sim=no --smc-check=all-non-file \
			--cachegrind-out-file=/dev/null "$2" -test.run '^$' -test.bench "$3" -test.benchtime "$4" 2>&1 |
			awk '/I +refs:/ { gsub(",", "", $NF); print $NF }')
	}
	count() { # NAME DIR SUFFIX BENCH BENCHTIME
		irefs "$2" "$tmp/base.test$3" "$4" "$5" >"$tmp/$1.base" &
		irefs "$2" "$tmp/new.test$3" "$4" "$5" >"$tmp/$1.new"
		wait
		awk -v what="$1" -v b="$(cat "$tmp/$1.base")" -v n="$(cat "$tmp/$1.new")" 'BEGIN {
			printf "%s host instructions: base %.0f, new %.0f, new/base %.4f\n", what, b, n, n / b }'
	}
	count coremark machine "" '^BenchmarkCoreMark$' "${ITER}x"
	if [ -n "$KERNEL" ]; then
		count "kernel workload ($KMODE)" kernel .kernel "^BenchmarkUserWorkload\$/^${KMODE}\$" 100x
	fi
	if [ -n "$PROBE" ]; then
		count "probe hit ($PROBE)" kprobes .kprobes "^BenchmarkProbeHit\$/^${PROBE}\$" 1x
	fi
	exit 0
fi

for _ in $(seq "$RUNS"); do
	echo "base $(run "$tmp/base.test")"
	echo "new $(run "$tmp/new.test")"
	if [ -n "$KERNEL" ]; then
		echo "kbase $(runk "$tmp/base.test")"
		echo "knew $(runk "$tmp/new.test")"
	fi
done | tee "$tmp/runs"
awk -v base="$BASE" -v new="${NEW:-work tree}" -v kmode="$KMODE" '
	{ v[$1, ++n[$1]] = $2 }
	function median(k,   i, j, t, a, m) {
		m = n[k]
		for (i = 1; i <= m; i++) a[i] = v[k, i]
		for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		best[k] = a[m]
		return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
	}
	function report(what, b, nw,   mb, mn) {
		mb = median(b); mn = median(nw)
		printf "%s base (%s): median %.1f MIPS, best %.1f\n", what, base, mb, best[b]
		printf "%s new (%s): median %.1f MIPS, best %.1f\n", what, new, mn, best[nw]
		printf "%s new/base: %.3f (medians), %.3f (bests), %d runs each\n", what, mn / mb, best[nw] / best[b], n[b]
	}
	END {
		report("coremark", "base", "new")
		if (n["kbase"]) report("kernel workload (" kmode ")", "kbase", "knew")
	}' "$tmp/runs"
