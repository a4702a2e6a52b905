#!/usr/bin/env bash
# The cost of the kprobe files through a real FUSE mount, against the same
# bytes cat'd and echo'd on a tmpfs in the same run: boot `kpemu run`
# with a mount, then time, as a user's shell does them,
#
#   add-10k     10,000 p: events into kprobe_events in one write(2) (dd:
#               cat's 128 KiB writes would cut a line in two, which Linux
#               parses as two commands)
#   list-10k    cat kprobes/list with those 10,000 probes registered
#   enable-10k  echo 1 > events/kprobes/enable: every event enabled, every
#               probe armed
#   toggle-10k  echo 0, then echo 1, into kprobes/enabled with them armed
#   disable-10k echo 0 > events/kprobes/enable
#   remove-10k  echo > kprobe_events (O_TRUNC: every event goes)
#   echo-1      one echo ... >> kprobe_events of a single event (on a
#               tree without the 10,000; the event is removed untimed)
#   echo-1-sh   the same echo, by this shell's builtin: no fork, so the
#               file's own cost (open, write, close) shows
#
# Each is run RUNS times; the median is printed in ms with its tmpfs
# counterpart (the same command on a file holding the same bytes), their
# ratio, and their difference (what the mount adds). Every command but
# echo-1-sh is a child shell (sh -c), on both sides, so both pay the same
# fork and exec, which on a loaded machine can outweigh the rest.
#
#   scripts/bench-mount.sh [-k KPEMU] [-r RUNS] [-n EVENTS]
#
# Needs root (FUSE and the tmpfs mount). Exits 1 if kpemu does not come up
# or a command fails.
set -euo pipefail
cd "$(dirname "$0")/.."

KPEMU=bin/kpemu
RUNS=5
N=10000
while getopts k:r:n: opt; do
	case $opt in
	k) KPEMU=$OPTARG ;;
	r) RUNS=$OPTARG ;;
	n) N=$OPTARG ;;
	*) echo "usage: $0 [-k KPEMU] [-r RUNS] [-n EVENTS]" >&2; exit 2 ;;
	esac
done
if [ "$KPEMU" = bin/kpemu ]; then
	${GO:-go} build -o bin/kpemu ./cmd/kpemu
fi

tmp=$(mktemp -d /tmp/kpemu-bench-mount.XXXXXX)
MNT=$tmp/mnt
TMPFS=$tmp/tmpfs
mkdir "$MNT" "$TMPFS"
pid=
cleanup() {
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	if mountpoint -q "$MNT"; then umount -l "$MNT" 2>/dev/null || true; fi
	if mountpoint -q "$TMPFS"; then umount "$TMPFS" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT
mount -t tmpfs tmpfs "$TMPFS"

"$KPEMU" run --mount "$MNT" >"$tmp/log" 2>&1 &
pid=$!
for _ in $(seq 1 600); do
	[ -e "$MNT/tracing/kprobe_events" ] && break
	kill -0 "$pid" 2>/dev/null || { cat "$tmp/log" >&2; exit 1; }
	sleep 0.1
done
[ -e "$MNT/tracing/kprobe_events" ] || { echo "kpemu did not mount" >&2; cat "$tmp/log" >&2; exit 1; }
T=$MNT/tracing

# N events spread over the functions kprobe events may probe (traceable,
# not blacklisted, a unique name), at offset 0: several events share a
# kprobe (an aggregate) where functions run out.
mapfile -t funcs < <(awk '{ print $1 }' "$T/available_filter_functions" | grep -v '[.:]' | sort | uniq -u |
	grep -vxFf <(awk '{ print $2 }' "$MNT/kprobes/blacklist"))
[ "${#funcs[@]}" -gt 0 ] || { echo "no available_filter_functions" >&2; exit 1; }
for ((i = 0; i < N; i++)); do
	echo "p:kprobes/bench$i ${funcs[i % ${#funcs[@]}]}"
done >"$tmp/events"
one="p:kprobes/benchone ${funcs[0]}"

# timed CMD: run CMD in a child shell and print its wall time in µs
# (EPOCHREALTIME, read without a fork).
timed() {
	local t0 t1
	t0=${EPOCHREALTIME/./}
	sh -c "$1"
	t1=${EPOCHREALTIME/./}
	echo $((t1 - t0))
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
declare -A fuse tmpfs
record() { # NAME FUSE_US TMPFS_US: append one run's pair
	fuse[$1]="${fuse[$1]:-} $2"
	tmpfs[$1]="${tmpfs[$1]:-} $3"
}
pair() { # NAME FUSE_CMD TMPFS_CMD: time both, record the pair
	record "$1" "$(timed "$2")" "$(timed "$3")"
}

for ((r = 0; r < RUNS; r++)); do
	# The tmpfs twins hold the same bytes as the files they stand for.
	: >"$TMPFS/kprobe_events"
	pair add-10k "dd if='$tmp/events' of='$T/kprobe_events' bs=4M conv=notrunc status=none" \
		"dd if='$tmp/events' of='$TMPFS/kprobe_events' bs=4M conv=notrunc status=none"

	cat "$MNT/kprobes/list" >"$TMPFS/list"
	[ "$(wc -l <"$TMPFS/list")" -ge "$N" ] || { echo "kprobes/list has $(wc -l <"$TMPFS/list") lines, want $N" >&2; exit 1; }
	pair list-10k "cat '$MNT/kprobes/list' >/dev/null" \
		"cat '$TMPFS/list' >/dev/null"

	pair enable-10k "echo 1 > '$T/events/kprobes/enable'" \
		"echo 1 > '$TMPFS/enable'"

	pair toggle-10k "echo 0 > '$MNT/kprobes/enabled'; echo 1 > '$MNT/kprobes/enabled'" \
		"echo 0 > '$TMPFS/enabled'; echo 1 > '$TMPFS/enabled'"

	pair disable-10k "echo 0 > '$T/events/kprobes/enable'" \
		"echo 0 > '$TMPFS/enable'"

	pair remove-10k "echo > '$T/kprobe_events'" \
		"echo > '$TMPFS/kprobe_events'"
	[ ! -s "$T/kprobe_events" ] || { echo "kprobe_events not empty after removal" >&2; exit 1; }

	: >"$TMPFS/kprobe_events"
	pair echo-1 "echo '$one' >> '$T/kprobe_events'" \
		"echo '$one' >> '$TMPFS/kprobe_events'"
	echo '-:kprobes/benchone' >>"$T/kprobe_events"

	: >"$TMPFS/kprobe_events"
	t0=${EPOCHREALTIME/./}
	echo "$one" >>"$T/kprobe_events"
	t1=${EPOCHREALTIME/./}
	echo "$one" >>"$TMPFS/kprobe_events"
	t2=${EPOCHREALTIME/./}
	record echo-1-sh $((t1 - t0)) $((t2 - t1))
	echo '-:kprobes/benchone' >>"$T/kprobe_events"
done

printf '%-11s %10s %10s %8s %10s   (median of %d; %d events)\n' figure mount-ms tmpfs-ms ratio extra-ms "$RUNS" "$N"
for name in add-10k list-10k enable-10k toggle-10k disable-10k remove-10k echo-1 echo-1-sh; do
	# shellcheck disable=SC2086 # the runs are a list
	f=$(printf '%s\n' ${fuse[$name]} | median)
	# shellcheck disable=SC2086
	m=$(printf '%s\n' ${tmpfs[$name]} | median)
	awk -v n="$name" -v f="$f" -v m="$m" 'BEGIN { printf "%-11s %10.2f %10.2f %7.1fx %10.2f\n", n, f / 1000, m / 1000, f / m, (f - m) / 1000 }'
done
