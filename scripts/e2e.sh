#!/usr/bin/env bash
# End-to-end test of kpemu through a real FUSE mount, with real cat, echo
# and dd: boot the emulated kernel with two probes, list them, add a trace
# event, watch its hits climb, disarm every probe globally (the BRKs must
# leave kernel text and the hits must stop), re-arm, and tear down; and
# much more of the tree, signals and stale mounts, kpemu-ns.sh, and last
# the README's samples (scripts/readme-samples.py).
#
#   KPEMU=bin/kpemu bash scripts/e2e.sh
#
# Prints one line per check and "N passed, M failed" at the end; exits 1 if
# any check failed.
set -u
KPEMU=${KPEMU:-bin/kpemu}
MNT=$(mktemp -d /tmp/kpemu-e2e.XXXXXX)
LOG=$(mktemp /tmp/kpemu-e2e-log.XXXXXX)
passed=0
failed=0
pid=

cleanup() {
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	fi
	if mountpoint -q "$MNT" 2>/dev/null; then umount -l "$MNT" 2>/dev/null || fusermount3 -u -z "$MNT" 2>/dev/null; fi
	rmdir "$MNT" 2>/dev/null
	rm -f "$LOG"
}
trap cleanup EXIT

ok() { echo "PASS $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1"; shift; for l in "$@"; do printf '    %s\n' "$l"; done; failed=$((failed + 1)); }
# expect NAME WANT GOT
expect() { if [ "$2" == "$3" ]; then ok "$1"; else bad "$1" "want: $(printf %q "$2")" "got:  $(printf %q "$3")"; fi; }
# expect_err NAME ERRTEXT CMD...: the command must fail and say ERRTEXT.
expect_err() {
	local name=$1 want=$2 out
	shift 2
	if out=$(bash -c "$*" 2>&1); then bad "$name" "succeeded, want failure: $want"; return; fi
	case $out in *"$want"*) ok "$name" ;; *) bad "$name" "want error: $want" "got: $out" ;; esac
}

# Waiting: on a loaded host (or beside another make test) the guest runs
# many times slower than usual, so a check waits for the event it needs,
# never for a time; BOUND seconds only turn a hang into a failure.
BOUND=${E2E_BOUND:-240}
# poll CMD...: runs CMD every POLL_STEP (0.1) seconds until it succeeds;
# fails after BOUND seconds.
poll() {
	local end=$((SECONDS + BOUND))
	until "$@"; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep "${POLL_STEP:-0.1}"
	done
}
# stop_kpemu SIG: signal kpemu and wait for it; its exit status is in rc.
stop_kpemu() {
	kill -"$1" "$pid"
	wait "$pid"
	rc=$?
	pid=
}
# is FILE TEXT: FILE reads TEXT.
is() { [ "$(cat "$1")" = "$2" ]; }
# mounted: the tree is up, or kpemu is gone (nothing to wait for then).
mounted() { [ -e "$D/kprobes/list" ] || ! kill -0 "$pid" 2>/dev/null; }

D=$MNT
T=$MNT/tracing

"$KPEMU" run --mount "$MNT" --probe vfs_read --probe do_fork >"$LOG" 2>&1 &
pid=$!
poll mounted
if [ ! -e "$D/kprobes/list" ]; then
	bad "kpemu mounts its debugfs" "$(cat "$LOG")"
	echo "$passed passed, $failed failed"
	exit 1
fi
ok "kpemu mounts its debugfs"

addr() { awk -v s="$1" '$3 == s { print $1; exit }' "$D/kpemu/kallsyms"; }
# bucket ADDR: Linux's hash_ptr(addr, 6), the order of kprobes/list.
bucket() { echo $(( ((0x$1 * 0x61C8864680B583EB) >> 58) & 63 )); }
# vmcoreinfo KEY: a value of kpemu/vmcoreinfo (Linux's VMCOREINFO lines).
vmcoreinfo() { sed -n "s/^$1=//p" "$D/kpemu/vmcoreinfo"; }
# The image runs at kimage_voffset above its physical address, which is
# what kpemu/mem is indexed by (like /dev/mem).
VOFF=$(vmcoreinfo 'NUMBER(kimage_voffset)')
MODULES_VADDR=$(vmcoreinfo 'NUMBER(MODULES_VADDR)')
# insn ADDR: the instruction word at kernel image address ADDR, read back
# from guest physical memory.
insn() { dd if="$D/kpemu/mem" bs=4 count=1 skip=$((0x$1 - VOFF)) iflag=skip_bytes status=none | od -An -tx4 | tr -d ' '; }
# listing LINE...: the lines, given in registration order, in kprobes/list
# order: by bucket, and newest first within one (hlist_add_head_rcu).
listing() {
	i=0
	for l in "$@"; do
		i=$((i + 1))
		printf '%02d %04d %s\n' "$(bucket "${l%% *}")" $((9999 - i)) "$l"
	done | sort -n -k1,1 -k2,2 | cut -c9-
}
hits() { awk -v e="$1" '$1 == e { print $2 }' "$T/kprobe_profile"; }
# hits_above EVENT N: EVENT has more than N hits.
hits_above() { [ "$(hits "$1")" -gt "$2" ]; }
# iterations: kworkload's loop count (each iteration reads, writes and
# forks twice), from guest memory. guest_runs N waits for N more: what a
# check that something does not happen must have let the guest do.
ITER=$(addr workload_iterations)
iterations() { dd if="$D/kpemu/mem" bs=8 count=1 skip=$((0x$ITER - VOFF)) iflag=skip_bytes status=none | od -An -tu8 | tr -d ' '; }
iterations_reach() { [ "$(iterations)" -ge "$1" ]; }
guest_runs() { poll iterations_reach $(($(iterations) + $1)); }

READ=$(addr vfs_read) FORK=$(addr do_fork) WRITE=$(addr vfs_write)
expect "vmcoreinfo gives kimage_voffset and MODULES_VADDR" 2 "$(printf '%s\n' "$VOFF" "$MODULES_VADDR" | grep -c '^0x[0-9a-f]\{1,16\}$')"
expect "kallsyms names vfs_read, do_fork, vfs_write" 3 "$(printf '%s\n' "$READ" "$FORK" "$WRITE" | grep -c '^[0-9a-f]\{16\}$')"

BRK=d4200080
expect "list shows the --probe kprobes, byte for byte" \
	"$(listing "$READ  k  vfs_read+0x0    " "$FORK  k  do_fork+0x0    ")" "$(cat "$D/kprobes/list")"
expect "vfs_read is armed with BRK #0x004" "$BRK" "$(insn "$READ")"
expect "enabled reads 1" "1" "$(cat "$D/kprobes/enabled")"
expect "blacklist names notify_page_fault" 1 "$(grep -c $'\tnotify_page_fault$' "$D/kprobes/blacklist")"

# Bad writes: Linux's errno, and nothing changes.
expect_err "write to list is EINVAL" "Invalid argument" "echo 1 > '$D/kprobes/list'"
expect_err "enabled rejects 2 with EINVAL" "Invalid argument" "echo 2 > '$D/kprobes/enabled'"
expect_err "enabled rejects an empty line" "Invalid argument" "echo > '$D/kprobes/enabled'"
expect "enabled still 1 after bad writes" "1" "$(cat "$D/kprobes/enabled")"
expect_err "unknown symbol is ENOENT" "No such file or directory" "echo 'p:nx no_such_function_xyz' >> '$T/kprobe_events'"
expect_err "blacklisted symbol is EINVAL" "Invalid argument" "echo 'p:bl notify_page_fault' >> '$T/kprobe_events'"
expect_err "entry text is EINVAL" "Invalid argument" "echo 'p:bl2 el1h_64_sync_handler' >> '$T/kprobe_events'"
expect_err "misaligned offset is EINVAL" "Invalid argument" "echo 'p:mis vfs_read+2' >> '$T/kprobe_events'"
expect_err "garbage is EINVAL" "Invalid argument" "echo garbage >> '$T/kprobe_events'"
expect "bad writes registered nothing" "" "$(cat "$T/kprobe_events")"
expect "error_log explains the unknown symbol" "  Command: p:nx no_such_function_xyz" "$(grep -A1 'Invalid probed address or symbol' "$T/error_log" | tail -1)"

# Every bad line of scripts/testdata/kprobe_events_errors.tsv (Linux's
# answers, from the oracle), as a shell meets it: the errno of the write,
# the error_log entry (message, command, caret), kprobe_events untouched.
errtext() {
	case $1 in
	EINVAL) echo "Invalid argument" ;;
	ENOENT) echo "No such file or directory" ;;
	EEXIST) echo "File exists" ;;
	esac
}
echo 'p:myprobe vfs_read' >> "$T/kprobe_events"
before=$(cat "$T/kprobe_events")
ncase=0
nbad=0
firstbad=
while IFS=$'\t' read -r line errno msg caret; do
	case $line in '#'* | '') continue ;; esac
	ncase=$((ncase + 1))
	echo > "$T/error_log"
	err=$({ printf '%s\n' "$line" >> "$T/kprobe_events"; } 2>&1)
	want=
	if [ "$msg" != - ]; then
		want=$(printf 'trace_kprobe: error: %s\n  Command: %s\n%*s^' "$msg" "$line" "$caret" "")
	fi
	got=$(sed 's/^\[ *[0-9.]*\] //' "$T/error_log")
	case $err in *"$(errtext "$errno")") ;; *) got="errno: $err" ;; esac
	if [ "$got" != "$want" ] || [ "$(cat "$T/kprobe_events")" != "$before" ]; then
		nbad=$((nbad + 1))
		[ -n "$firstbad" ] || firstbad="$line: want $errno $(printf %q "$want"), got $(printf %q "$got")"
	fi
done < "$(dirname "$0")/testdata/kprobe_events_errors.tsv"
if [ "$nbad" -eq 0 ] && [ "$ncase" -gt 30 ]; then
	ok "all $ncase bad kprobe_events lines of the table fail with Linux's errno and error_log"
else
	bad "bad kprobe_events lines fail as on Linux ($nbad of $ncase differ)" "$firstbad"
fi
echo '-:myprobe' >> "$T/kprobe_events"
echo > "$T/error_log"
# A NUL ends what trace_parse_run_command sees of a write: the line is
# "too long", EINVAL, with nothing in error_log (oracle).
expect_err "a NUL inside a kprobe_events line is EINVAL" "Invalid argument" "printf 'p:nul vfs_read\\0 x=%%x0\\n' >> '$T/kprobe_events'"
expect "the line with a NUL defined nothing, logged nothing" "" "$(grep nul "$T/kprobe_events"; cat "$T/error_log")"

# A trace event on vfs_write.
ORIG_WRITE=$(insn "$WRITE")
echo 'p:myprobe vfs_write' >> "$T/kprobe_events"
expect "kprobe_events lists myprobe" "p:kprobes/myprobe vfs_write" "$(cat "$T/kprobe_events")"
expect "a new event is registered [DISABLED]" 1 "$(grep -c "^$WRITE  k  vfs_write+0x0    \[DISABLED\]\$" "$D/kprobes/list")"
expect "a disabled event leaves text alone" "$ORIG_WRITE" "$(insn "$WRITE")"
expect "kprobe_profile starts at zero" "  myprobe                                                    0               0" "$(cat "$T/kprobe_profile")"
echo 1 > "$T/events/kprobes/myprobe/enable"
expect "enable reads 1" "1" "$(cat "$T/events/kprobes/myprobe/enable")"
expect "list after enable, byte for byte" \
	"$(listing "$READ  k  vfs_read+0x0    " "$FORK  k  do_fork+0x0    " "$WRITE  k  vfs_write+0x0    ")" "$(cat "$D/kprobes/list")"
expect "vfs_write is armed" "$BRK" "$(insn "$WRITE")"
h1=$(hits myprobe); poll hits_above myprobe "${h1:-0}"; h2=$(hits myprobe)
if [ "${h1:-0}" -lt "${h2:-0}" ]; then ok "hits climb while the guest runs ($h1 -> $h2)"; else bad "hits climb while the guest runs" "$h1 -> $h2"; fi
expect "trace shows myprobe hits" 1 "$(grep -m1 -c "myprobe: (vfs_write+0x0/0x" "$T/trace")"
expect_err "clearing kprobe_events while enabled is EBUSY" "Device or resource busy" "echo > '$T/kprobe_events'"
expect_err "removing an enabled event is EBUSY" "Device or resource busy" "echo -:myprobe >> '$T/kprobe_events'"

# Global disarm: every BRK leaves kernel text, hits stop, list unchanged.
before=$(cat "$D/kprobes/list")
echo 0 > "$D/kprobes/enabled"
expect "enabled reads 0" "0" "$(cat "$D/kprobes/enabled")"
expect "list unchanged by global disarm" "$before" "$(cat "$D/kprobes/list")"
expect "vfs_write text restored" "$ORIG_WRITE" "$(insn "$WRITE")"
if [ "$(insn "$READ")" != "$BRK" ] && [ "$(insn "$FORK")" != "$BRK" ]; then ok "vfs_read and do_fork text restored"; else bad "vfs_read and do_fork text restored" "$(insn "$READ") $(insn "$FORK")"; fi
h3=$(hits myprobe); guest_runs 20; h4=$(hits myprobe)
expect "hits stop while disarmed" "$h3" "$h4"
echo 1 > "$D/kprobes/enabled"
expect "enabled reads 1 again" "1" "$(cat "$D/kprobes/enabled")"
expect "vfs_write re-armed" "$BRK" "$(insn "$WRITE")"
poll hits_above myprobe "$h4"; h5=$(hits myprobe)
if [ "$h4" -lt "$h5" ]; then ok "hits climb again after re-arm ($h4 -> $h5)"; else bad "hits climb again after re-arm" "$h4 -> $h5"; fi

# A disabled probe stays disabled across a global disarm and re-arm.
echo 0 > "$T/events/kprobes/myprobe/enable"
echo 0 > "$D/kprobes/enabled"; echo 1 > "$D/kprobes/enabled"
expect "per-probe [DISABLED] survives a global toggle" 1 "$(grep -c "vfs_write+0x0    \[DISABLED\]\$" "$D/kprobes/list")"
expect "and its text stays original" "$ORIG_WRITE" "$(insn "$WRITE")"

# A return probe: r events count returns and trace "(caller <- func)".
echo 'r:myret vfs_read ret=$retval' >> "$T/kprobe_events"
expect "r events read back with the default maxactive" 'r10:kprobes/myret vfs_read ret=$retval' "$(grep myret "$T/kprobe_events")"
expect "list shows the kretprobe as r" 1 "$(grep -c "^$READ  r  vfs_read+0x0    \[DISABLED\]\$" "$D/kprobes/list")"
echo 1 > "$T/events/kprobes/myret/enable"
poll grep -q "myret: (.* <- vfs_read) ret=0x" "$T/trace"
expect "trace shows returns" 1 "$(grep -m1 -c "myret: (.* <- vfs_read) ret=0x" "$T/trace")"
echo 0 > "$T/events/kprobes/myret/enable"

# Modules: insmod and rmmod through kpemu/modules, and what kprobes does
# with a MOD:SYM event across the load and the unload (the oracle's
# surprises 4 and 12).
expect "no module is loaded" "" "$(cat "$D/kpemu/modules")"
echo 'p:modgrp/stats e1000ish:vnet_get_stats64' >> "$T/kprobe_events"
expect "a MOD:SYM event before the module loads is accepted" 1 "$(grep -c '^p:modgrp/stats e1000ish:vnet_get_stats64$' "$T/kprobe_events")"
expect "and is not registered" 0 "$(grep -c vnet_get_stats64 "$D/kprobes/list")"
echo +e1000ish > "$D/kpemu/modules"
expect "kpemu/modules reads as /proc/modules" "e1000ish 4096 0 - Live $MODULES_VADDR" "$(cat "$D/kpemu/modules")"
STATS=$(awk '$3 == "vnet_get_stats64" && $4 == "[e1000ish]" { print $1 }' "$D/kpemu/kallsyms")
expect "kallsyms shows the module's symbols with [mod]" 1 "$(grep -c "^$STATS t vnet_get_stats64"$'\t'"\[e1000ish\]\$" "$D/kpemu/kallsyms")"
expect "the event is registered when the module loads" 1 "$(grep -c "^$STATS  k  vnet_get_stats64+0x0  e1000ish \[DISABLED\]\$" "$D/kprobes/list")"
expect_err "loading it twice is EEXIST" "File exists" "echo +e1000ish > '$D/kpemu/modules'"
expect_err "an unknown module is ENOENT" "No such file or directory" "echo +no_such_module > '$D/kpemu/modules'"
expect_err "a bad command is EINVAL" "Invalid argument" "echo e1000ish > '$D/kpemu/modules'"
echo -e1000ish > "$D/kpemu/modules"
expect "after rmmod the probe is [GONE], as Linux prints it" 1 "$(grep -c "^$STATS  k  0x$STATS \[GONE\]\$" "$D/kprobes/list")"
expect "kpemu/modules is empty again" "" "$(cat "$D/kpemu/modules")"
expect "the module's symbols are gone" 0 "$(grep -c '\[e1000ish\]' "$D/kpemu/kallsyms")"
expect_err "unloading it again is ENOENT" "No such file or directory" "echo -e1000ish > '$D/kpemu/modules'"
echo +e1000ish > "$D/kpemu/modules"
expect "reloaded, the event is registered again" 1 "$(grep -c "^$STATS  k  vnet_get_stats64+0x0  e1000ish \[DISABLED\]\$" "$D/kprobes/list")"
echo -e1000ish > "$D/kpemu/modules"

# The function tracer, as Linux 6.1 arm64 builds it: every traceable
# function opens with MOV X9, LR and a NOP (-fpatchable-function-entry=2,
# the first made MOV X9, LR at boot), and tracing a function turns the NOP
# into BL ftrace_caller.
CLONE=$(addr kernel_clone)
CLONE4=$(printf '%016x' $((0x$CLONE + 4)))
# bl FROM TO: the BL instruction at FROM that calls TO.
bl() { printf '%08x' $((0x94000000 | (((0x$2 - 0x$1) >> 2) & 0x3ffffff))); }
expect "kernel_clone starts with MOV X9, LR" aa1e03e9 "$(insn "$CLONE")"
expect "its ftrace call site is a NOP" d503201f "$(insn "$CLONE4")"
expect "available_tracers lists function_graph, function and nop" "function_graph function nop" "$(cat "$T/available_tracers")"
expect "available_filter_functions lists kernel_clone once" 1 "$(grep -cx kernel_clone "$T/available_filter_functions")"
expect "no notrace function in it" 0 "$(grep -cxE '__schedule|memcpy|el1h_64_sync_handler|ftrace_caller' "$T/available_filter_functions")"
expect "set_ftrace_filter starts out empty" "#### all functions enabled ####" "$(cat "$T/set_ftrace_filter")"
expect_err "an unknown function is EINVAL" "Invalid argument" "echo no_such_function_xyz > '$T/set_ftrace_filter'"
echo 'kernel_clone do_fork' > "$T/set_ftrace_filter"
echo '!do_fork' >> "$T/set_ftrace_filter"
expect "set_ftrace_filter takes names, >> and !" "kernel_clone" "$(cat "$T/set_ftrace_filter")"
expect_err "a kprobe on the call site is EINVAL (no KPROBES_ON_FTRACE)" "Invalid argument" "echo 'p:k4 kernel_clone+4' >> '$T/kprobe_events'"
expect "error_log explains it" "  Command: p:k4 kernel_clone+4" "$(grep -A1 'Failed to register probe event' "$T/error_log" | tail -1)"
echo 'p:testprobe kernel_clone' >> "$T/kprobe_events"
echo 1 > "$T/events/kprobes/testprobe/enable"
echo function > "$T/current_tracer"
expect "current_tracer reads function" "function" "$(cat "$T/current_tracer")"
expect "kernel_clone+4 is BL ftrace_caller" "$(bl "$CLONE4" "$(addr ftrace_caller)")" "$(insn "$CLONE4")"
expect "enabled_functions shows it" "kernel_clone (1)      " "$(cat "$T/enabled_functions")"
echo > "$T/trace"
poll grep -qE ': kernel_clone <-(do_fork|__arm64_sys_clone)$' "$T/trace"
poll grep -q 'testprobe: (kernel_clone+0x0/' "$T/trace"
expect "trace has the tracer's header" "# tracer: function" "$(head -1 "$T/trace")"
expect "trace shows kernel_clone <-its caller" 1 "$(grep -m1 -cE '^ +[^ ]+-[0-9]+ +\[[0-9]{3}\] [d.][N.]\.\.\. +[0-9]+\.[0-9]{6}: kernel_clone <-(do_fork|__arm64_sys_clone)$' "$T/trace")"
expect "and the kprobe on kernel_clone+0 at the same time" 1 "$(grep -m1 -c 'testprobe: (kernel_clone+0x0/' "$T/trace")"
echo 0 > "$T/events/kprobes/testprobe/enable"
echo nop > "$T/current_tracer"
expect "nop puts the NOP back" d503201f "$(insn "$CLONE4")"
expect "the tracer switch cleared the buffer" 0 "$(grep -c '<-' "$T/trace")"
echo function_graph > "$T/current_tracer"
expect "function_graph also calls ftrace_caller at kernel_clone+4" "$(bl "$CLONE4" "$(addr ftrace_caller)")" "$(insn "$CLONE4")"
if poll grep -qE '^ [0-9]+\) .{14}\|  kernel_clone\(\);$' "$T/trace"; then ok "function_graph shows kernel_clone as a leaf"; else bad "function_graph shows kernel_clone as a leaf" "$(head -20 "$T/trace")"; fi
expect "function_graph's header" "# CPU  DURATION                  FUNCTION CALLS" "$(sed -n 3p "$T/trace")"
expect_err "the profiler is EBUSY beside function_graph" "Device or resource busy" "echo 1 > '$T/function_profile_enabled'"
echo nop > "$T/current_tracer"
echo 1 > "$T/function_profile_enabled"
if poll grep -qE '^  kernel_clone +[1-9]' "$T/trace_stat/function0" "$T/trace_stat/function1"; then ok "the profiler counts kernel_clone"; else bad "the profiler counts kernel_clone" "$(cat "$T"/trace_stat/function*)"; fi
echo 0 > "$T/function_profile_enabled"
expect "nop and the profiler off put the NOP back" d503201f "$(insn "$CLONE4")"
echo > "$T/set_ftrace_filter"
echo kernel_clone > "$T/stack_trace_filter"
echo 1 > "$D/kpemu/stack_tracer_enabled"
stack_from_clone() { sed -n 3p "$T/stack_trace" | grep -q '^  0) .* kernel_clone+0x8/'; }
poll stack_from_clone
echo 0 > "$D/kpemu/stack_tracer_enabled"
expect "the stack tracer starts at kernel_clone" 1 "$(sed -n 3p "$T/stack_trace" | grep -c '^  0) .* kernel_clone+0x8/')"
if [ "$(cat "$T/stack_max_size")" -gt 0 ]; then ok "stack_max_size grew"; else bad "stack_max_size grew" "$(cat "$T/stack_max_size")"; fi
echo > "$T/stack_trace_filter"
echo -:testprobe >> "$T/kprobe_events"

# set_ftrace_filter's function commands (ftrace.c's function probes): each
# lists after the functions with what is left of its count, traces its
# functions whatever the tracer, and goes with "!" (by its command and
# whether it was written with a count, not by the count).
echo > "$T/trace"
echo 'kernel_clone:stacktrace' > "$T/set_ftrace_filter"
echo 'kernel_clone:traceoff:1' >> "$T/set_ftrace_filter"
expect "their function is traced once per command" "kernel_clone (2)" "$(grep '^kernel_clone ' "$T/enabled_functions" | sed 's/ *$//')"
poll is "$T/tracing_on" 0
expect "traceoff:1 turns tracing off; commands list newest first, with their counts" \
	"$(printf '0\n#### all functions enabled ####\nkernel_clone:traceoff:count=0\nkernel_clone:stacktrace:unlimited')" "$(cat "$T/tracing_on" "$T/set_ftrace_filter")"
expect "stacktrace records the stack from kernel_clone" 1 "$(grep -m1 -c '<stack trace>' "$T/trace")"
expect "the stack starts at kernel_clone" " => kernel_clone" "$(grep -m1 -A1 '<stack trace>' "$T/trace" | tail -1)"
echo 1 > "$T/tracing_on"
expect_err "a command a function has already is EINVAL" "Invalid argument" "echo kernel_clone:traceoff:5 >> '$T/set_ftrace_filter'"
expect_err "an unknown command is EINVAL" "Invalid argument" "echo kernel_clone:nosuch >> '$T/set_ftrace_filter'"
expect_err "a command in set_ftrace_notrace is EINVAL" "Invalid argument" "echo kernel_clone:traceon >> '$T/set_ftrace_notrace'"
expect_err "removing a command no function has is ENODEV" "No such device" "echo '!*:traceon' >> '$T/set_ftrace_filter'"
echo '!kernel_clone:traceoff:0' >> "$T/set_ftrace_filter"
echo '!*:stacktrace' >> "$T/set_ftrace_filter"
expect "! removes them, and their functions are no longer traced" "#### all functions enabled #### 0" "$(cat "$T/set_ftrace_filter") $(grep -c '^kernel_clone ' "$T/enabled_functions")"

# Event triggers: traceoff on kernel_clone turns tracing off by itself at
# the guest's next fork; the event is armed for its trigger while not
# enabled (0*); enable_event turns another event on (1*); an event with a
# trigger is busy; `echo > trigger` is an empty command.
echo 'p:trig kernel_clone' >> "$T/kprobe_events"
echo 'p:trig2 wake_up_new_task' >> "$T/kprobe_events"
E=$T/events/kprobes
expect "an empty trigger file lists the commands" "$(printf '# Available triggers:\n# traceon traceoff snapshot stacktrace enable_event disable_event enable_hist disable_hist hist')" "$(cat "$E/trig/trigger")"
echo traceoff > "$E/trig/trigger"
expect "the trigger reads back as Linux's" "traceoff:unlimited" "$(cat "$E/trig/trigger")"
expect "its event is armed, not enabled" "0*" "$(cat "$E/trig/enable")"
poll is "$T/tracing_on" 0
expect "a fork turned tracing off" 0 "$(cat "$T/tracing_on")"
expect_err "traceon beside traceoff is EEXIST" "File exists" "echo traceon >> '$E/trig/trigger'"
expect_err "echo > trigger is an empty command" "Invalid argument" "echo > '$E/trig/trigger'"
expect_err "an event with a trigger is busy" "Device or resource busy" "echo -:trig >> '$T/kprobe_events'"
echo '!traceoff' >> "$E/trig/trigger"
echo 1 > "$T/tracing_on"
expect "removing it disarms the event" "0" "$(cat "$E/trig/enable")"
echo 'enable_event:kprobes:trig2:0' > "$E/trig/trigger"
expect "enable_event arms its target, soft-disabled" "0*" "$(cat "$E/trig2/enable")"
echo '!enable_event:kprobes:trig2' > "$E/trig/trigger"
echo 'enable_event:kprobes:trig2:1 if common_pid > 0' > "$E/trig/trigger"
poll is "$E/trig2/enable" '1*'
expect "a fork enabled the target" "1*" "$(cat "$E/trig2/enable")"
expect "and spent the count" "enable_event:kprobes:trig2:count=0 if common_pid > 0" "$(cat "$E/trig/trigger")"
echo '!enable_event:kprobes:trig2' > "$E/trig/trigger"
echo 0 > "$E/trig2/enable"
echo -:trig >> "$T/kprobe_events"
echo -:trig2 >> "$T/kprobe_events"

# Subsystem filters (tracing/subsysfilter.go) and the events/
# root's header_page and header_event, with Linux 6.1's answers: a
# group's filter goes to each of its events, set where it parses and in
# error where it does not (the write succeeds all the same, one
# error_log entry per event), "0" clears them all, and the group's file
# always reads Linux's fixed message.
echo 'p:sfa vfs_read count=%x2' >> "$T/kprobe_events"
echo 'p:sfb vfs_write cnt=%x2' >> "$T/kprobe_events"
echo 'p:sfgrp/sfc vfs_write' >> "$T/kprobe_events"
E=$T/events/kprobes
expect "a group has enable and filter, with Linux's modes" "-rw-r----- -rw-r-----" "$(cd "$E" && echo $(stat -c %A enable filter))"
expect "a group's filter reads the global filter message" "$(printf '%s\n' '### global filter ###' '# Use this to set filters for multiple events.' '# Only events with the given fields will be affected.' '# If no events are modified, an error message will be displayed here')" "$(cat "$E/filter")"
: > "$T/error_log"
echo 'count > 0' > "$E/filter"
expect "the event with the field gets the filter" "count > 0" "$(cat "$E/sfa/filter")"
expect "the event without it gets the error" "$(printf 'count > 0\n^\nparse_error: Couldn'"'"'t find or set field in one of a subsystem'"'"'s events\n')" "$(cat "$E/sfb/filter")"
expect "another group's event is untouched" "none" "$(cat "$T/events/sfgrp/sfc/filter")"
expect "error_log has the event's entry" "$(printf '%s\n' "  Command: count > 0" "           ^")" "$(grep -A2 "event filter parse error: error: Couldn't find or set field in one of a subsystem's events" "$T/error_log" | tail -2)"
expect "the group's file still reads the message" "### global filter ###" "$(head -1 "$E/filter")"
echo 'common_pid != 0' > "$E/filter"
expect "a common field goes to every event" "common_pid != 0 common_pid != 0" "$(echo $(cat "$E/sfa/filter" "$E/sfb/filter"))"
echo '(count > 0' > "$E/filter"
expect "a syntax error is each event's error, not the write's" "(count > 0" "$(head -1 "$E/sfa/filter")"
expect_err "a page-long group filter is EINVAL" "Invalid argument" "head -c 4096 /dev/zero | tr '\\0' ' ' > '$E/filter'"
expect "and changes nothing" "^" "$(sed -n 2p "$E/sfa/filter")"
echo 0 > "$E/filter"
expect "0 clears every event's filter" "none none" "$(echo $(cat "$E/sfa/filter" "$E/sfb/filter"))"
: > "$T/error_log"
expect "events/ has header_page and header_event, read-only" "-r--r----- -r--r-----" "$(cd "$T/events" && echo $(stat -c %A header_page header_event))"
expect "header_page is Linux's" "$(printf '\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;')" "$(cat "$T/events/header_page")"
expect "header_event is Linux's" "$(printf '# compressed entry header\n\ttype_len    :    5 bits\n\ttime_delta  :   27 bits\n\tarray       :   32 bits\n\n\tpadding     : type == 29\n\ttime_extend : type == 30\n\ttime_stamp : type == 31\n\tdata max type_len  == 28')" "$(cat "$T/events/header_event")"
expect "both are 205 bytes" "205 205" "$(echo $(wc -c < "$T/events/header_page") $(wc -c < "$T/events/header_event"))"
expect_err "writing header_page is EINVAL" "Invalid argument" "echo x > '$T/events/header_page'"
echo -:sfa >> "$T/kprobe_events"
echo -:sfb >> "$T/kprobe_events"
echo -:sfgrp/sfc >> "$T/kprobe_events"

# The snapshot buffer (CONFIG_TRACER_SNAPSHOT): freed at boot, its help in
# place of the column headers; `echo 1 > snapshot` allocates it and swaps
# it with the live buffer, a second one swaps back; other numbers clear
# it, 0 frees it; a per-CPU file can neither free nor take one (the
# reference kernel has no CONFIG_RING_BUFFER_ALLOW_SWAP). The snapshot
# trigger swaps at an event's hit, and without a snapshot writes Linux's
# two warnings and turns tracing off.
E=$T/events/kprobes
expect "snapshot is freed at boot" "# * Snapshot is freed *" "$(sed -n 4p "$T/snapshot")"
expect "with Linux's help" "# echo 2 > snapshot : Clears snapshot buffer (but does not allocate or free)" "$(sed -n 10p "$T/snapshot")"
expect "per_cpu/cpu0/snapshot has the per-CPU help" "$(printf '%s\n' '# echo 0 > snapshot : Invalid for per_cpu snapshot file.' '# echo 1 > snapshot : Not supported with this kernel.')" "$(sed -n 7,8p "$T/per_cpu/cpu0/snapshot")"
expect "snapshot files are -rw-r-----" "-rw-r----- -rw-r-----" "$(stat -c %A "$T/snapshot" "$T/per_cpu/cpu0/snapshot" | tr '\n' ' ' | sed 's/ $//')"
expect_err "echo abc > snapshot is EINVAL" "Invalid argument" "echo abc > '$T/snapshot'"
expect_err "a number past unsigned long is ERANGE" "Numerical result out of range" "echo 18446744073709551616 > '$T/snapshot'"
expect_err "a per-CPU snapshot cannot be freed" "Invalid argument" "echo 0 > '$T/per_cpu/cpu0/snapshot'"
expect_err "nor taken" "Invalid argument" "echo 1 > '$T/per_cpu/cpu0/snapshot'"
echo 'p:snap kernel_clone' >> "$T/kprobe_events"
echo > "$T/trace"
echo 1 > "$E/snap/enable"
poll grep -q ' snap: (kernel_clone+' "$T/trace"
echo 0 > "$E/snap/enable"
n=$(grep -c ' snap: (kernel_clone+' "$T/trace")
if [ "$n" -gt 0 ]; then ok "the guest's forks were recorded for the snapshot"; else bad "the guest's forks were recorded for the snapshot" "$(cat "$T/trace")"; fi
echo 1 > "$T/snapshot"
expect "echo 1 > snapshot takes the live buffer's records" "$n" "$(grep -c ' snap: (kernel_clone+' "$T/snapshot")"
expect "and leaves an empty live buffer" "# entries-in-buffer/entries-written: 0/0   #P:$(ls -d "$T"/per_cpu/cpu* | wc -l)" "$(sed -n 3p "$T/trace")"
echo 1 > "$T/snapshot"
expect "a second snapshot swaps them back" "$n 0" "$(grep -c ' snap: (kernel_clone+' "$T/trace") $(grep -c ' snap: ' "$T/snapshot")"
expect "the snapshot is allocated" "# * Snapshot is allocated *" "$(sed -n 4p "$T/snapshot")"
echo 1 > "$T/snapshot"
echo 2 > "$T/snapshot"
expect "echo 2 clears it" "# * Snapshot is allocated *" "$(sed -n 4p "$T/snapshot")"
echo 0 > "$T/snapshot"
expect "echo 0 frees it" "# * Snapshot is freed *" "$(sed -n 4p "$T/snapshot")"
expect "the trigger file lists snapshot" "# traceon traceoff snapshot stacktrace enable_event disable_event enable_hist disable_hist hist" "$(sed -n 2p "$E/snap/trigger")"
echo 'snapshot:1 if common_pid > 0' > "$E/snap/trigger"
expect "the snapshot trigger allocates the snapshot" "# * Snapshot is allocated *" "$(sed -n 4p "$T/snapshot")"
expect_err "a second snapshot trigger is EEXIST" "File exists" "echo snapshot >> '$E/snap/trigger'"
poll is "$E/snap/trigger" 'snapshot:count=0 if common_pid > 0'
expect "a fork spent it" "snapshot:count=0 if common_pid > 0" "$(cat "$E/snap/trigger")"
echo '!snapshot' > "$E/snap/trigger"
echo > "$T/trace"
echo snapshot > "$E/snap/trigger"
echo 0 > "$T/snapshot"
poll is "$T/tracing_on" 0
expect "a snapshot trigger without a snapshot turns tracing off" 0 "$(cat "$T/tracing_on")"
expect "after Linux's two warnings" "$(printf '%s\n' 'tracing_snapshot_instance_cond: *** SNAPSHOT NOT ALLOCATED ***' 'tracing_snapshot_instance_cond: *** stopping trace here!   ***')" "$(grep -v '^#' "$T/trace" | sed 's/^.*: tracing_snap/tracing_snap/')"
echo '!snapshot' > "$E/snap/trigger"
echo 1 > "$T/tracing_on"
echo -:snap >> "$T/kprobe_events"
expect "README lists the snapshot file" "  snapshot		- Like 'trace' but shows the content of the static" "$(grep '^  snapshot' "$T/README")"

# Pid filters (tracing/pidfilter.go): set_event_pid,
# set_event_notrace_pid, set_ftrace_pid, set_ftrace_notrace_pid and the
# event-fork and function-fork options, as Linux 6.1's trace_events.c,
# ftrace.c and trace.c (trace_pid_write) take them; the expected values are
# the oracle's (shared/oracle, Debian's 6.1).
expect "pid files and -fork options are -rw-r-----" "$(printf -- '-rw-r-----\n%.0s' 1 2 3 4 5 6)" \
	"$(cd "$T" && stat -c %A set_event_pid set_event_notrace_pid set_ftrace_pid set_ftrace_notrace_pid options/event-fork options/function-fork)"
expect "event pid files read empty, ftrace pid files \"no pid\"" "$(printf 'no pid\nno pid')" \
	"$(cat "$T/set_event_pid" "$T/set_event_notrace_pid" "$T/set_ftrace_pid" "$T/set_ftrace_notrace_pid")"
expect "trace_options lists noevent-fork and nofunction-fork" "$(printf 'noevent-fork\nnofunction-fork')" "$(grep fork "$T/trace_options")"
echo "30 1 2" > "$T/set_event_pid"
echo 5 >> "$T/set_event_pid"
expect "set_event_pid lists pids ascending; >> appends" "$(printf '1\n2\n5\n30')" "$(cat "$T/set_event_pid")"
expect_err "a bad word in a pid write is EINVAL" "Invalid argument" "echo '8 abc 9' >> '$T/set_event_pid'"
expect_err "a pid from 1<<30 on is EPERM" "Operation not permitted" "echo 1073741824 >> '$T/set_event_pid'"
expect "a failed pid write changes nothing" "1 2 5 30" "$(echo $(cat "$T/set_event_pid"))"
printf '0x10 010 +9 4294967301\t21\n' >> "$T/set_event_pid"
expect "pids are kstrtoul(word, 0) truncated to a pid_t" "1 2 5 8 9 16 21 30" "$(echo $(cat "$T/set_event_pid"))"
truncate -s 0 "$T/set_event_pid"
expect "truncate(2) leaves set_event_pid alone" "1 2 5 8 9 16 21 30" "$(echo $(cat "$T/set_event_pid"))"
echo 7 > "$T/set_event_pid"
expect "> replaces set_event_pid" "7" "$(cat "$T/set_event_pid")"
expect_err "> with a bad pid is EINVAL" "Invalid argument" "echo abc > '$T/set_event_pid'"
expect "... and the open had cleared the list" "" "$(cat "$T/set_event_pid")"
echo "3 1" > "$T/set_ftrace_pid"
expect "set_ftrace_pid lists its pids" "$(printf '1\n3')" "$(cat "$T/set_ftrace_pid")"
echo > "$T/set_ftrace_pid"
expect "an empty write to set_ftrace_pid makes it \"no pid\"" "no pid" "$(cat "$T/set_ftrace_pid")"

# Filtering: kworkload forks children that exit at once and reaps them.
echo 'p:pidf/clone kernel_clone' >> "$T/kprobe_events"
echo 'p:pidf/exit do_exit' >> "$T/kprobe_events"
echo 1 > "$T/events/pidf/enable"
poll grep -q 'kworkload-[0-9]' "$T/trace"
KW=$(grep -o 'kworkload-[0-9]*' "$T/trace" | head -1 | cut -d- -f2)
expect "kworkload forks" 1 "$([ -n "$KW" ] && echo 1)"
# pidsin WHAT: the pids of the trace's lines that contain WHAT.
pidsin() { grep -v '^#' "$T/trace" | grep -- "$1" | awk '{ n = split($1, a, "-"); print a[n] }' | sort -un | tr '\n' ' '; }
echo "$KW" > "$T/set_event_pid"
: > "$T/trace"
guest_runs 20
expect "set_event_pid keeps only its tasks' events" "$KW " "$(pidsin ': (')"
: > "$T/set_event_pid"
echo "$KW" > "$T/set_event_notrace_pid"
: > "$T/trace"
guest_runs 20
expect "set_event_notrace_pid drops its tasks' events" 0 "$(grep -v '^#' "$T/trace" | grep -c -- "-$KW \+\[")"
: > "$T/set_event_notrace_pid"

# event-fork: a listed task's children are listed while they live, and
# their events recorded; the hook is an ftrace ops while it is needed.
echo "$KW" > "$T/set_event_pid"
echo 1 > "$T/options/event-fork"
: > "$T/trace"
children_listed() { [ "$(wc -l < "$T/set_event_pid")" -gt 1 ]; }
child_exited() { pidsin 'exit: (do_exit' | awk -v kw="$KW" '{ for (i = 1; i <= NF; i++) if ($i != kw) f = 1 } END { exit !f }'; }
expect "event-fork lists kworkload's children" 1 "$(poll children_listed && echo 1)"
poll child_exited
expect "event-fork records the children's exits" 1 "$(pidsin 'exit: (do_exit' | awk -v kw="$KW" '{ for (i = 1; i <= NF; i++) if ($i != kw) { print 1; exit } }')"
expect "the fork hook shows in enabled_functions while needed" 2 "$(grep -c -e '^wake_up_new_task ' -e '^release_task ' "$T/enabled_functions")"
expect "reaped children leave set_event_pid" 1 "$([ "$(wc -l < "$T/set_event_pid")" -lt 40 ] && echo 1)"
echo noevent-fork > "$T/trace_options"
expect "... and the hook goes with event-fork" 0 "$(grep -c -e '^wake_up_new_task ' -e '^release_task ' "$T/enabled_functions")"
: > "$T/set_event_pid"
echo 0 > "$T/events/pidf/enable"
echo '-:pidf/clone' >> "$T/kprobe_events"
echo '-:pidf/exit' >> "$T/kprobe_events"

# The function tracer's lists.
echo kernel_clone > "$T/set_ftrace_filter"
echo function > "$T/current_tracer"
echo "$KW" > "$T/set_ftrace_pid"
: > "$T/trace"
guest_runs 20
expect "set_ftrace_pid keeps only its tasks' functions" "$KW " "$(pidsin 'kernel_clone <-')"
echo nop > "$T/current_tracer"
echo > "$T/set_ftrace_pid"
echo > "$T/set_ftrace_filter"

# uprobe_events: PATH is the guest's (/bin/sh its shell, /sys a directory),
# parsed as Linux 6.1 parses it, and a kprobe event beside it is listed in
# dynamic_events.
echo > "$T/error_log"
expect_err "a uprobe on a missing file is ENOENT" "No such file or directory" "printf %s 'p /non_exist_file:100' >> '$T/uprobe_events'"
expect_err "a uprobe on a directory is EINVAL" "Invalid argument" "printf %s 'p /sys:100' >> '$T/uprobe_events'"
expect "error_log places the caret as Linux" "$(printf '%s\n' 'trace_uprobe: error: Not a regular file' '  Command: p /sys:100' '             ^')" "$(tail -3 "$T/error_log" | sed 's/^\[ *[0-9.]*\] //')"
echo 'p /bin/sh:10' >> "$T/uprobe_events"
echo 'r:myup /bin/sh:0x20(0x40) sp=$stack' >> "$T/uprobe_events"
echo 'p:kp vfs_read' >> "$T/kprobe_events"
expect "uprobe_events reads back as Linux's" "$(printf '%s\n' 'p:uprobes/p_sh_0xa /bin/sh:0x000000000000000a' 'r:uprobes/myup /bin/sh:0x0000000000000020(0x40) sp=$stack')" "$(cat "$T/uprobe_events")"
expect "dynamic_events lists both kinds" "$(cat "$T/uprobe_events")
p:kprobes/kp vfs_read" "$(grep -e uprobes/ -e kprobes/kp "$T/dynamic_events")"
expect "the event has its directory" "0" "$(cat "$T/events/uprobes/myup/enable")"
echo > "$T/uprobe_events"
expect "echo > uprobe_events clears the uprobes only" "p:kprobes/kp vfs_read" "$(grep -e uprobes/ -e kprobes/kp "$T/dynamic_events")"

# uprobes hit: on the guest's /bin/sh open() (kpemu usymbols gives its file
# offset), the entry event fetches the path from the process's memory, the
# return event its $retval; uprobe_profile counts; disabling puts the
# original instruction back (later hits count nothing), and the event goes.
UOFF=$("$KPEMU" usymbols /bin/sh open | awk '$3 == "open" { print $1 }')
UADDR=$("$KPEMU" usymbols /bin/sh open | awk '$3 == "open" { print $2 }')
expect "kpemu usymbols gives /bin/sh's open() as a file offset" 1 "$(printf '%s\n' "$UOFF" | grep -c '^0x[0-9a-f]*$')"
echo "p:sh_open /bin/sh:$UOFF path=+0(%x0):string" >> "$T/uprobe_events"
echo "r:sh_open_ret /bin/sh:$UOFF rv=\$retval:s32" >> "$T/uprobe_events"
echo > "$T/trace"
echo 1 > "$T/events/uprobes/enable"
uhits() { awk -v e="$1" '$2 == e { print $3 }' "$T/uprobe_profile"; }
uhits_above() { [ "$(uhits "$1")" -gt "$2" ]; }
poll uhits_above sh_open_ret 2
echo 0 > "$T/events/uprobes/enable"
expect "a uprobe on sh's open() records Linux's line, the path from user memory" 1 \
	"$(grep -m1 -cE '^ +sh-[0-9]+ +\[[0-9]{3}\] \.\.\.\.\. +[0-9]+\.[0-9]{6}: sh_open: \(0x[0-9a-f]+\) path="/[^"]+"$' "$T/trace")"
expect "a uretprobe records (return <- function) with \$retval" 1 \
	"$(grep -m1 -cE ': sh_open_ret: \(0x[0-9a-f]+ <- 0x[0-9a-f]+\) rv=-?[0-9]+$' "$T/trace")"
uh=$(uhits sh_open)
guest_runs 20
expect "uprobe_profile counts the hits, and none after the disable" "yes $uh" "$([ "$uh" -gt 0 ] && echo yes) $(uhits sh_open)"
echo > "$T/uprobe_events"
expect "the uprobes are gone" "" "$(cat "$T/uprobe_events" "$T/uprobe_profile")"

# synthetic_events: definitions read back as Linux 6.1's, in
# dynamic_events too, with events/synthetic/NAME/format as Linux lays it
# out (u64 slots, a char[N] in 256 bytes); nothing fires them yet.
echo 'wake u64 lat; pid_t pid; char comm[16]' >> "$T/synthetic_events"
expect "synthetic_events reads back as Linux's" "$(printf 'wake\tu64 lat; pid_t pid; char[16] comm')" "$(cat "$T/synthetic_events")"
expect "dynamic_events lists it as an s: line" "$(printf 's:synthetic/wake\tu64 lat; pid_t pid; char[16] comm')" "$(grep '^s:' "$T/dynamic_events")"
expect "its format is Linux's" "$(printf '\tfield:u64 lat;\toffset:8;\tsize:8;\tsigned:0;\n\tfield:pid_t pid;\toffset:16;\tsize:4;\tsigned:1;\n\tfield:char comm[];\toffset:24;\tsize:16;\tsigned:1;\n\nprint fmt: "lat=%%llu, pid=%%d, comm=%%s", REC->lat, REC->pid, REC->comm')" "$(tail -5 "$T/events/synthetic/wake/format")"
echo > "$T/error_log"
expect_err "an unknown field type is EINVAL" "Invalid argument" "echo 'bad u64 a; foo b' >> '$T/synthetic_events'"
expect "error_log places the caret as Linux" "$(printf '%s\n' 'synthetic_events: error: Invalid type' '  Command: bad u64 a; foo b' '                      ^')" "$(tail -3 "$T/error_log" | sed 's/^\[ *[0-9.]*\] //')"
echo 1 > "$T/events/synthetic/wake/enable"
expect_err "removing an enabled one is EBUSY" "Device or resource busy" "echo '!wake' >> '$T/synthetic_events'"
echo 0 > "$T/events/synthetic/wake/enable"
echo '!wake' >> "$T/synthetic_events"
expect "!NAME removes it and its directory" ":" "$(cat "$T/synthetic_events"):$(ls "$T/events" | grep synthetic)"

# The ring buffer, as Linux 6.1's: a buffer per CPU sized in pages of
# 4080 bytes (at least two), Linux's stats and counts, trace_pipe's lost
# events, the stacktrace option, trace_clock and trace_options.
echo 'p:rb vfs_read' >> "$T/kprobe_events"
expect "buffer_size_kb was expanded by the first enable" "1410" "$(cat "$T/buffer_size_kb")"
expect "buffer_total_size_kb adds up the CPUs" "2820" "$(cat "$T/buffer_total_size_kb")"
expect "per_cpu has a directory per CPU" "cpu0 cpu1" "$(echo $(ls "$T/per_cpu"))"
expect_err "buffer_size_kb 0 is EINVAL" "Invalid argument" "echo 0 > '$T/buffer_size_kb'"
echo 1 > "$T/buffer_size_kb"
expect "1 KiB is two pages" "7" "$(cat "$T/per_cpu/cpu1/buffer_size_kb")"
sum() { awk -v k="$1" -F': ' '$1 == k { s += $2 } END { print s + 0 }' "$T"/per_cpu/cpu*/stats; }
overran() { [ "$(sum overrun)" -gt 0 ]; }
echo 1 > "$T/events/kprobes/rb/enable"
poll overran
echo 0 > "$T/events/kprobes/rb/enable"
expect "stats has Linux's fields" "entries:overrun:commit overrun:bytes:oldest event ts:now ts:dropped events:read events:" "$(awk -F': ' '{ printf "%s:", $1 }' "$T/per_cpu/cpu0/stats")"
entries=$(sum entries) overrun=$(sum overrun)
if [ "$overrun" -gt 0 ]; then ok "a two-page buffer overruns ($overrun)"; else bad "a two-page buffer overruns" "$(cat "$T"/per_cpu/cpu*/stats)"; fi
expect "entries-written counts what was overrun" "# entries-in-buffer/entries-written: $entries/$((entries + overrun))   #P:2" "$(sed -n 3p "$T/trace")"
cpu=$(awk -F': ' '$1 == "overrun" && $2 > 0 { print FILENAME; exit }' "$T"/per_cpu/cpu*/stats | sed 's|.*/cpu\([0-9]*\)/stats|\1|')
expect "trace_pipe first reports the lost events" 1 "$(dd if="$T/per_cpu/cpu$cpu/trace_pipe" bs=4096 count=1 2>/dev/null | head -1 | grep -cE "^CPU:$cpu \[LOST [0-9]+ EVENTS\]$")"
expect "what trace_pipe read is counted" 1 "$(awk -F': ' '$1 == "read events" && $2 > 0 { n++ } END { print n + 0 }' "$T/per_cpu/cpu$cpu/stats")"
echo 1410 > "$T/buffer_size_kb"
echo > "$T/trace"
expect "echo > trace empties every CPU" "0 0" "$(sum entries) $(sum overrun)"
echo 1 > "$T/options/stacktrace"
echo 1 > "$T/events/kprobes/rb/enable"
poll grep -qE '^ +[^ ]+-[0-9]+ +\[[0-9]{3}\] d\.\.\.\. +[0-9]+\.[0-9]{6}: <stack trace>$' "$T/trace"
echo 0 > "$T/events/kprobes/rb/enable"
echo 0 > "$T/options/stacktrace"
expect "a <stack trace> follows an event, the probed function first" " => vfs_read" "$(grep -m1 -A1 -E '^ +[^ ]+-[0-9]+ +\[[0-9]{3}\] d\.\.\.\. +[0-9]+\.[0-9]{6}: <stack trace>$' "$T/trace" | sed -n 2p)"
expect "trace_clock lists Linux 6.1's arm64 clocks" "[local] global counter uptime perf mono mono_raw boot tai" "$(cat "$T/trace_clock")"
expect_err "an unknown clock is EINVAL" "Invalid argument" "echo bogus > '$T/trace_clock'"
echo counter > "$T/trace_clock"
expect "a clock change empties the buffer" 0 "$(grep -c ' rb: ' "$T/trace")"
echo 1 > "$T/events/kprobes/rb/enable"
poll grep -q ' rb: ' "$T/trace"
echo 0 > "$T/events/kprobes/rb/enable"
expect "the counter clock prints a count" 1 "$(grep -m1 -cE '^ +[^ ]+-[0-9]+ +\[[0-9]{3}\] d\.\.\.\. +[0-9]+: rb: \(vfs_read\+0x0/0x[0-9a-f]+\)$' "$T/trace")"
echo local > "$T/trace_clock"
expect "trace_options starts with Linux's defaults" "print-parent nosym-offset nosym-addr noverbose noraw nohex nobin" "$(echo $(head -7 "$T/trace_options"))"
echo noirq-info > "$T/trace_options"
expect "options/irq-info follows trace_options" "0" "$(cat "$T/options/irq-info")"
expect "without irq-info the header has no flags" "#           TASK-PID     CPU#     TIMESTAMP  FUNCTION" "$(sed -n 5p "$T/trace")"
echo 1 > "$T/options/irq-info"
expect "and trace_options follows options/" "irq-info" "$(grep -x -e irq-info -e noirq-info "$T/trace_options")"
expect_err "blk's options (no block layer) are EINVAL" "Invalid argument" "echo blk_classic > '$T/trace_options'"
# raw, hex and bin (tracing/rawoutput.go): print_raw_fmt,
# print_hex_fmt and print_bin_fmt; a probe event prints only its type
# (its id), as Linux's kprobe events have no raw printers.
echo 'r:rbr vfs_read' >> "$T/kprobe_events"
ID=$(cat "$T/events/kprobes/rb/id") RID=$(cat "$T/events/kprobes/rbr/id")
echo > "$T/trace"
echo 1 > "$T/events/kprobes/rb/enable"
echo 1 > "$T/events/kprobes/rbr/enable"
poll grep -q ' rb: ' "$T/trace"
poll grep -q ' rbr: ' "$T/trace"
echo 0 > "$T/events/kprobes/rb/enable"
echo 0 > "$T/events/kprobes/rbr/enable"
echo hello > "$T/trace_marker"
echo raw > "$T/trace_options"
expect "options/raw follows trace_options" "1" "$(cat "$T/options/raw")"
expect "raw keeps the header" "# tracer: nop" "$(head -1 "$T/trace")"
expect "raw prints a kprobe event as pid cpu ts type: ID" 1 "$(grep -m1 -cE "^[0-9]+ [01] [0-9]+ type: $ID\$" "$T/trace")"
expect "and a kretprobe event by its own id" 1 "$(grep -m1 -cE "^[0-9]+ [01] [0-9]+ type: $RID\$" "$T/trace")"
expect "raw prints a marker as # ip text" 1 "$(grep -cE '^[0-9]+ 0 [0-9]+ # 0 hello$' "$T/trace")"
echo 0 > "$T/options/context-info"
expect "without context-info raw prints the type alone" "type: $ID" "$(grep -m1 -x "type: $ID" "$T/trace")"
echo 1 > "$T/options/context-info"
echo 1 > "$T/options/hex"
expect "hex prints the context as hex fields, then an empty line" "$(printf 'type\n')" "$(grep -m1 -A1 -E "^[0-9a-f]{8} 0000000[01] [0-9a-f]{16} type: ($ID|$RID)\$" "$T/trace" | sed 's/.* \(type\): .*/\1/')"
expect "hex prints a marker as TRACE_PRINT's type" 1 "$(grep -cE '^[0-9a-f]{8} 00000000 [0-9a-f]{16} type: 5$' "$T/trace")"
echo bin > "$T/trace_options"
expect "bin prints pid, cpu (0) and ts as their bytes before type: N" " 00 00 00 00 74 79 70 65 3a 20 35 0a" "$(tail -c 24 "$T/trace" | od -An -tx1 -j4 | tr -d '\n' | sed 's/^\(.\{12\}\).\{24\}/\1/')"
expect "bin's marker record: 16 bytes then type: 5" "type: 5" "$(tail -c 8 "$T/trace" | head -1)"
expect_err "options/bin takes only 0 and 1" "Invalid argument" "echo 2 > '$T/options/bin'"
echo nobin > "$T/trace_options"
echo nohex > "$T/trace_options"
echo noraw > "$T/trace_options"
expect "noraw brings back the default format" 1 "$(grep -c 'tracing_mark_write: hello$' "$T/trace")"
# Last, as it consumes: a read of trace_pipe takes what it prints out of
# the buffer, and with few hits one page is all of it (the checks above
# then found nothing, now and then).
echo raw > "$T/trace_options"
expect "trace_pipe prints raw too" 1 "$(dd if="$T/trace_pipe" bs=4096 count=1 iflag=nonblock 2>/dev/null | head -1 | grep -cE "^[0-9]+ [01] [0-9]+ type: ($ID|$RID)\$")"
echo noraw > "$T/trace_options"
echo -:rbr >> "$T/kprobe_events"
echo -:rb >> "$T/kprobe_events"

# The binary interface (tracing/rawpage.go): events/ftrace with Linux
# 6.1 arm64's events, and per_cpu/cpuN/trace_pipe_raw's pages, read as
# libtracefs reads them: read(2) of a page, O_NONBLOCK set by fcntl once
# the buffer is to be drained, then EAGAIN. splice(2) of it is EINVAL
# (fuse/splice.go: a stream cannot go through the page cache).
expect "events/ftrace lists Linux 6.1 arm64's built-in events" "bprint bputs branch context_switch func_repeats funcgraph_entry funcgraph_exit function hwlat kernel_stack mmiotrace_map mmiotrace_rw osnoise print raw_data timerlat user_stack wakeup" "$(echo $(ls "$T/events/ftrace"))"
expect "events/ftrace/print has its id and TRACE_PRINT's format" "5 ID: 5 field:unsigned long ip; field:char buf[];" \
	"$(echo $(cat "$T/events/ftrace/print/id"; grep -o -e '^ID: 5' -e 'field:unsigned long ip;' -e 'field:char buf\[\];' "$T/events/ftrace/print/format"))"
echo 0 > "$T/tracing_on"
echo > "$T/trace"
echo 1 > "$T/tracing_on"
echo "raw one" > "$T/trace_marker"
printf 'raw two' > "$T/trace_marker"
echo 0 > "$T/tracing_on"
rawread='
import errno, fcntl, os, struct, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
r, w = os.pipe()
try:
    os.splice(fd, w, 4096, flags=2)
    print("splice ok")
except OSError as e:
    print("splice", errno.errorcode[e.errno])
fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)
texts = []
while True:
    try:
        page = os.read(fd, 8192)
    except BlockingIOError:
        print("EAGAIN")
        break
    commit = struct.unpack_from("<Q", page, 8)[0] & 0x3fffffff
    print("page", len(page))
    off = 16
    while off < 16 + commit:
        h = struct.unpack_from("<I", page, off)[0]
        tl = h & 31
        if tl == 30:
            off += 8
            continue
        if tl == 0:
            n = struct.unpack_from("<I", page, off + 4)[0] - 4
            rec = page[off + 8:off + 8 + n]
            off += 8 + n
        else:
            rec = page[off + 4:off + 4 + 4 * tl]
            off += 4 + 4 * tl
        if struct.unpack_from("<H", rec)[0] == 5:
            texts.append(rec[16:].split(b"\0")[0].decode())
print(repr(texts))
'
expect "trace_pipe_raw: splice is EINVAL, read(2) gives a page with the markers as print records, then EAGAIN once fcntl set O_NONBLOCK" \
	"$(printf "splice EINVAL\npage 4096\nEAGAIN\n['raw one\\\\n', 'raw two\\\\n']")" "$(python3 -c "$rawread" "$T/per_cpu/cpu0/trace_pipe_raw" 2>&1)"
echo 1 > "$T/tracing_on"
echo "raw three" > "$T/trace_marker"
expect "a blocking read of trace_pipe_raw returns one page" 4096 "$(timeout "$BOUND" dd if="$T/per_cpu/cpu0/trace_pipe_raw" bs=8192 count=1 2>/dev/null | wc -c)"

# The files around the trace array (tracing/infofiles.go), as
# Linux 6.1's: trace_marker and trace_marker_raw, the saved comms and
# tgids, the settings, with the oracle's answers and errnos.
expect "info files have Linux's modes" "--w--w---- --w--w---- --w------- -r--r----- -rw-r----- -r--r----- -r--r----- -r--r----- -r--r----- -rw-r----- -rw-r----- -rw-r----- -rw-r-----" \
	"$(cd "$T" && echo $(stat -c %A trace_marker trace_marker_raw free_buffer saved_cmdlines saved_cmdlines_size saved_tgids printk_formats dyn_ftrace_total_info timestamp_mode buffer_percent tracing_thresh tracing_max_latency tracing_cpumask))"
expect "fresh saved_cmdlines_size timestamp_mode buffer_percent tracing_thresh tracing_max_latency tracing_cpumask" "6552 [delta] absolute 50 0 0 3" \
	"$(echo $(cat "$T/saved_cmdlines_size" "$T/timestamp_mode" "$T/buffer_percent" "$T/tracing_thresh" "$T/tracing_max_latency" "$T/tracing_cpumask"))"
expect "printk_formats is empty: no trace_printk in the kernel, no module loaded" "" "$(cat "$T/printk_formats")"
expect "dyn_ftrace_total_info counts available_filter_functions" "$(wc -l < "$T/available_filter_functions")" "$(sed -n 's/^\([0-9]*\) pages:[0-9]* groups: [0-9]*$/\1/p' "$T/dyn_ftrace_total_info")"
expect_err "a read-only info file refuses writes" "Invalid argument" "echo 1 > '$T/timestamp_mode'"
expect_err "trace_marker cannot be read" "Invalid argument" "cat '$T/trace_marker'"
# marks: each marker line as "pid cpu flags: text"
marks() { sed -n 's/^ *.*-\([0-9]*\) *\[\([0-9]*\)\] \(.....\) *[0-9.]*: tracing_mark_write: /\1 \2 \3: /p' "$T/trace"; }
echo > "$T/trace"
echo hello > "$T/trace_marker"
printf 'no newline' > "$T/trace_marker"
printf '%1030s' '' | tr ' ' a > "$T/trace_marker"
expect "markers are the writer's, on CPU 0, a write(2) taking 1024 bytes" "$$ 000 .....: hello
$$ 000 .....: no newline
1024 6" "$(marks | head -2; echo $(marks | sed -n '3,4s/.*: //p' | awk '{ print length($0) }'))"
echo 0 > "$T/tracing_on"
expect_err "a marker with tracing_on 0 is EBADF" "Bad file descriptor" "echo off > '$T/trace_marker'"
echo 1 > "$T/tracing_on"
echo 0 > "$T/options/markers"
expect_err "a marker with the markers option off is EINVAL" "Invalid argument" "echo nomark > '$T/trace_marker'"
echo 1 > "$T/options/markers"
printf '\001\000\000\000abc' > "$T/trace_marker_raw"
expect "trace_marker_raw shows its id and the record's bytes" "# 1 buf: 61 62 63 00 00 00 00 00 00 00 00 00 00 00 00 00" "$(grep -o '# 1 buf: .*' "$T/trace")"
expect_err "a raw marker under 4 bytes is EINVAL" "Invalid argument" "printf abc > '$T/trace_marker_raw'"
expect_err "a raw marker over 3072 bytes is EINVAL" "Invalid argument" "head -c 3073 /dev/zero > '$T/trace_marker_raw'"
expect_err "saved_cmdlines_size 0 is EINVAL" "Invalid argument" "echo 0 > '$T/saved_cmdlines_size'"
expect_err "saved_cmdlines_size over PID_MAX_DEFAULT is EINVAL" "Invalid argument" "echo 32769 > '$T/saved_cmdlines_size'"
echo 32768 > "$T/saved_cmdlines_size"
expect "saved_cmdlines_size takes what the pages hold" "45874" "$(cat "$T/saved_cmdlines_size")"
echo 128 > "$T/saved_cmdlines_size"
expect "and 128 is 6552" "6552" "$(cat "$T/saved_cmdlines_size")"
expect_err "buffer_percent 101 is EINVAL" "Invalid argument" "echo 101 > '$T/buffer_percent'"
echo 100 > "$T/buffer_percent"
expect "buffer_percent takes 0..100" "100" "$(cat "$T/buffer_percent")"
echo 50 > "$T/buffer_percent"
expect_err "tracing_thresh takes a number" "Invalid argument" "echo abc > '$T/tracing_thresh'"
echo 100 > "$T/tracing_thresh"
echo 250 > "$T/tracing_max_latency"
expect "tracing_thresh and tracing_max_latency read back in usecs" "100 250" "$(echo $(cat "$T/tracing_thresh" "$T/tracing_max_latency"))"
echo 0 > "$T/tracing_thresh"
echo 0 > "$T/tracing_max_latency"
expect_err "a cpumask past the CPUs is EOVERFLOW" "Value too large for defined data type" "echo 4 > '$T/tracing_cpumask'"
expect_err "a cpumask of garbage is EINVAL" "Invalid argument" "echo xyz > '$T/tracing_cpumask'"
echo 2 > "$T/tracing_cpumask"
expect "tracing_cpumask reads back" "2" "$(cat "$T/tracing_cpumask")"
expect_err "a marker goes to CPU 0, which the mask leaves out: EBADF" "Bad file descriptor" "echo m > '$T/trace_marker'"
echo > "$T/trace"
echo 1 > "$T/options/record-tgid"
echo 'p:tg vfs_read' >> "$T/kprobe_events"
echo 1 > "$T/events/kprobes/tg/enable"
poll grep -q ' tg: (' "$T/trace"
guest_runs 5
echo 0 > "$T/events/kprobes/tg/enable"
expect "events recorded on CPU 1 alone" "001" "$(grep ' tg: (' "$T/trace" | sed 's/.*\[\([0-9]*\)\].*/\1/' | sort -u)"
expect "record-tgid adds the TGID column" "#           TASK-PID       TGID    CPU#  |||||  TIMESTAMP  FUNCTION" "$(grep -m1 'TASK-PID' "$T/trace")"
line=$(grep -m1 ' tg: (' "$T/trace")
tpid=$(echo "$line" | sed 's/^ *.*-\([0-9]*\) *(.*/\1/')
expect "saved_tgids has the tgid the line shows" "$tpid $(echo "$line" | sed 's/^[^(]*( *\([0-9]*\)).*/\1/')" "$(grep "^$tpid " "$T/saved_tgids")"
expect "saved_cmdlines has the comm the line shows" "$tpid $(echo "$line" | sed 's/^ *\(.*\)-[0-9]* *(.*/\1/')" "$(grep "^$tpid " "$T/saved_cmdlines")"
echo 0 > "$T/options/record-tgid"
echo 3 > "$T/tracing_cpumask"
echo -:tg >> "$T/kprobe_events"
echo 1408 > "$T/buffer_size_kb"
echo > "$T/free_buffer"
expect "free_buffer's close shrinks the buffer to two pages a CPU" "7 1" "$(echo $(cat "$T/buffer_size_kb" "$T/tracing_on"))"
echo 1 > "$T/options/disable_on_free"
echo > "$T/free_buffer"
expect "with disable_on_free it turns tracing off" "0" "$(cat "$T/tracing_on")"
echo 0 > "$T/options/disable_on_free"
echo 1 > "$T/tracing_on"
echo 1410 > "$T/buffer_size_kb"

# Static events (tracing/tracepoint.go): the sched and signal
# TRACE_EVENTs on the guest's tracepoints, with the reference kernel's
# ids and formats, enable, filter and trigger, and TP_printk's lines.
expect "events/sched/sched_switch/id is the reference kernel's" "264" "$(cat "$T/events/sched/sched_switch/id")"
expect "sched_process_exit's format is the reference kernel's" \
	"$(printf 'name: sched_process_exit\nID: 261\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n\nprint fmt: "comm=%%s pid=%%d prio=%%d", REC->comm, REC->pid, REC->prio')" \
	"$(cat "$T/events/sched/sched_process_exit/format")"
expect "available_events lists signal's, then sched's" "signal:signal_deliver signal:signal_generate sched:sched_process_fork" \
	"$(grep -E '^(sched|signal):' "$T/available_events" | head -3 | tr '\n' ' ' | sed 's/ $//')"
expect_err "a string field takes no >" "Invalid argument" "echo 'prev_comm > 3' > '$T/events/sched/sched_switch/filter'"
expect "the bad filter shows its error" "parse_error: Expecting string field" "$(sed -n 3p "$T/events/sched/sched_switch/filter")"
echo 'next_comm ~ "swapper*"' > "$T/events/sched/sched_switch/filter"
: > "$T/trace"
echo 1 > "$T/events/sched/enable"
expect "events/sched/enable and set_event" "1 sched:sched_process_fork" "$(echo $(cat "$T/events/sched/enable"; grep -m1 sched "$T/set_event"))"
sched_res=('sched_switch: prev_comm=[^ ]+ prev_pid=[0-9]+ prev_prio=120 prev_state=[RSDZ]\+? ==> next_comm=swapper/[01] next_pid=0 next_prio=120$'
	'sched_waking: comm=[^ ]+ pid=[0-9]+ prio=120 target_cpu=00[01]$' 'sched_wakeup: comm=' 'sched_wakeup_new: comm='
	'sched_process_fork: comm=sh pid=[0-9]+ child_comm=sh child_pid=[0-9]+$' 'sched_process_exit: comm=' 'sched_process_free: comm=')
# sched_seen: each line kind, once some poll found it (an early one may
# be overwritten by the time the rarest comes).
declare -A sched_seen
sched_all() {
	local tr re all=0
	tr=$(cat "$T/trace")
	for re in "${sched_res[@]}"; do
		[ -n "${sched_seen[$re]:-}" ] && continue
		if echo "$tr" | grep -Eq "$re"; then sched_seen[$re]=1; else all=1; fi
	done
	return $all
}
poll sched_all
echo 0 > "$T/events/sched/enable"
tr=$(cat "$T/trace")
for re in "${sched_res[@]}"; do
	if [ -n "${sched_seen[$re]:-}" ]; then ok "trace has $re"; else bad "trace has $re" "$(echo "$tr" | tail -3)"; fi
done
if echo "$tr" | grep "sched_switch:" | grep -vq "next_comm=swapper/"; then bad "the next_comm filter holds"; else ok "the next_comm filter holds"; fi
echo 0 > "$T/events/sched/sched_switch/filter"
echo traceoff > "$T/events/sched/sched_process_exit/trigger"
expect "a trigger arms sched_process_exit in soft mode" "0*" "$(cat "$T/events/sched/sched_process_exit/enable")"
poll is "$T/tracing_on" 0
expect "its traceoff fires on the guest's exits" "0" "$(cat "$T/tracing_on")"
echo '!traceoff' > "$T/events/sched/sched_process_exit/trigger"
expect "without it the event is off again" "0" "$(cat "$T/events/sched/sched_process_exit/enable")"
echo 1 > "$T/tracing_on"
: > "$T/trace"

# Instances (tracing/instance.go): mkdir makes a trace array with its own
# buffer, tracing_on, tracer and event enables; rmdir frees it, and is
# EBUSY while a file of it is open. The files are Linux 6.1's.
I="$T/instances/e2e"
mkdir "$I"
expect_err "mkdir of an existing instance" "File exists" "mkdir '$I'"
expect_err "no directory inside an instance" "Operation not permitted" "mkdir '$I/x'"
expect "an instance has Linux's files" "available_tracers buffer_percent buffer_size_kb buffer_total_size_kb current_tracer error_log events free_buffer options per_cpu set_event set_event_notrace_pid set_event_pid set_ftrace_filter set_ftrace_notrace set_ftrace_notrace_pid set_ftrace_pid snapshot timestamp_mode trace trace_clock trace_marker trace_marker_raw trace_options trace_pipe tracing_cpumask tracing_max_latency tracing_on" \
	"$(ls "$I" | tr '\n' ' ' | sed 's/ $//')"
expect "a fresh instance: on, nop, no events" "1 nop 0" "$(echo $(cat "$I/tracing_on" "$I/current_tracer" "$I/set_event" "$I/events/enable"))"
echo 'p:inst_rd vfs_read' >> "$T/kprobe_events"
echo 1 > "$I/events/kprobes/inst_rd/enable"
expect "enabled in the instance, not at the top" "0 1 kprobes:inst_rd" "$(echo $(cat "$T/events/kprobes/inst_rd/enable" "$I/events/kprobes/inst_rd/enable" "$I/set_event"))"
inst_hit() { grep -q ' inst_rd: (vfs_read+0x0/' "$I/trace"; }
poll inst_hit
if inst_hit; then ok "its hits go to the instance's trace"; else bad "its hits go to the instance's trace" "$(tail -3 "$I/trace")"; fi
if grep -q ' inst_rd: (' "$T/trace"; then bad "and not to the top's"; else ok "and not to the top's"; fi
expect_err "kprobe_events keeps an event an instance uses" "Device or resource busy" "echo > '$T/kprobe_events'"
echo 0 > "$I/tracing_on"
expect "tracing_on is the instance's" "0 1" "$(echo $(cat "$I/tracing_on" "$T/tracing_on"))"
echo 1 > "$I/tracing_on"
echo vfs_read > "$I/set_ftrace_filter"
echo function > "$I/current_tracer"
expect "current_tracer is the instance's" "function nop" "$(echo $(cat "$I/current_tracer" "$T/current_tracer"))"
inst_fn() { grep -q ': vfs_read <-' "$I/trace"; }
poll inst_fn
if inst_fn; then ok "the instance's function tracer traces vfs_read"; else bad "the instance's function tracer traces vfs_read" "$(tail -3 "$I/trace")"; fi
if grep -q ': vfs_read <-' "$T/trace"; then bad "the top's trace has no function lines"; else ok "the top's trace has no function lines"; fi
exec 8<"$I/trace_pipe"
expect_err "rmdir while its trace_pipe is open" "Device or resource busy" "rmdir '$I'"
exec 8<&-
# The close's FUSE RELEASE reaches kpemu after close(2) returns: rmdir
# waits for it.
if out=$(rmdir "$I" 2>&1) && [ ! -e "$I" ]; then ok "rmdir right after the close frees the instance"; else bad "rmdir right after the close frees the instance" "$out"; fi
expect "with it its tracer and its event's enable" "nop" "$(cat "$T/current_tracer")"
echo '-:inst_rd' >> "$T/kprobe_events"
expect "the event it enabled can go" "" "$(grep inst_rd "$T/kprobe_events")"

# Teardown.
echo > "$T/kprobe_events"
expect "echo > kprobe_events clears" "" "$(cat "$T/kprobe_events")"
if [ ! -e "$T/events/kprobes/myprobe" ]; then ok "the event directory is gone"; else bad "the event directory is gone"; fi
# Permissions are the kernel's, with Linux's modes: the root of debugfs
# is 0700; without CAP_DAC_OVERRIDE a 0400 file cannot be opened for
# writing, and chmod 000 locks a file.
expect "debugfs root mode" "700 400 600" "$(stat -c %a "$D" "$D/kprobes/list" "$D/kprobes/enabled" | tr '\n' ' ' | sed 's/ $//')"
NODAC="setpriv --bounding-set=-dac_override,-dac_read_search --"
expect_err "no CAP_DAC_OVERRIDE: open kprobes/list for writing" "Permission denied" "$NODAC bash -c 'echo 1 > $D/kprobes/list'"
chmod 000 "$D/kprobes/enabled"
expect_err "no CAP_DAC_OVERRIDE: read a file chmod 000" "Permission denied" "$NODAC cat $D/kprobes/enabled"
chmod 600 "$D/kprobes/enabled"
expect "no CAP_DAC_OVERRIDE: read a 0600 file" "1" "$($NODAC cat "$D/kprobes/enabled")"

# Every way of reading a file gives what read(2) gives: busybox cat and
# Python's shutil.copyfile use sendfile(2), GNU cp copy_file_range(2),
# tail -n reads backwards with lseek, dd and head -c read part of it.
echo 'p:rd vfs_read' > "$T/kprobe_events"
echo 1 > "$T/events/kprobes/rd/enable"
poll hits_above rd 20
echo 0 > "$T/events/kprobes/rd/enable"
PY=$(command -v python3)
for f in kprobes/list kprobes/blacklist tracing/kprobe_events tracing/kprobe_profile tracing/trace tracing/available_filter_functions; do
	want=$(cat "$D/$f" | md5sum)
	expect "busybox cat $f" "$want" "$(busybox cat "$D/$f" | md5sum)"
	rm -f /tmp/kpemu-e2e-copy
	"$PY" -c 'import shutil, sys; shutil.copyfile(sys.argv[1], sys.argv[2])' "$D/$f" /tmp/kpemu-e2e-copy
	expect "python3 shutil.copyfile $f" "$want" "$(md5sum </tmp/kpemu-e2e-copy)"
	cp "$D/$f" /tmp/kpemu-e2e-copy
	expect "cp $f" "$want" "$(md5sum </tmp/kpemu-e2e-copy)"
	expect "tail -n 3 $f" "$(cat "$D/$f" | tail -n 3)" "$(tail -n 3 "$D/$f")"
	expect "head -c 100 $f" "$(cat "$D/$f" | head -c 100)" "$(head -c 100 "$D/$f")"
	expect "dd skip=1 bs=37 $f" "$(cat "$D/$f" | tail -c +38 | md5sum)" "$(dd if="$D/$f" bs=37 skip=1 status=none | md5sum)"
done
rm -f /tmp/kpemu-e2e-copy
off=$((0x$(addr vfs_read) - VOFF))
expect "busybox dd of kpemu/mem reads what dd reads" "$(dd if="$D/kpemu/mem" bs=4 count=4 skip=$off iflag=skip_bytes status=none | od -An -tx4)" \
	"$(busybox dd if="$D/kpemu/mem" bs=4 count=4 skip=$((off / 4)) 2>/dev/null | od -An -tx4)"
expect "sendfile of kpemu/mem at an offset reads what dd reads" "$(dd if="$D/kpemu/mem" bs=4 count=4 skip=$off iflag=skip_bytes status=none | od -An -tx4)" \
	"$("$PY" -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.sendfile(1, fd, int(sys.argv[2]), 16)' "$D/kpemu/mem" "$off" | od -An -tx4)"
echo 1 > "$T/events/kprobes/rd/enable"
# trace_pipe blocks: busybox cat (sendfile first, then read) streams it.
out=$(timeout "$BOUND" busybox cat "$T/trace_pipe" | head -n 2 | grep -c ' rd: (vfs_read+0x0/')
expect "busybox cat trace_pipe streams its lines" 2 "$out"
echo 0 > "$T/events/kprobes/rd/enable"
echo > "$T/kprobe_events"

# A second kpemu on the same directory is refused, naming the first,
# which keeps serving.
out=$("$KPEMU" run --mount "$MNT" 2>&1)
rc=$?
case "$rc $out" in 1*"already served by kpemu (pid $pid)"*) ok "a second kpemu on the mount is refused" ;; *) bad "a second kpemu on the mount is refused" "$rc $out" ;; esac
if grep -q '^0x' "$D/kprobes/blacklist"; then ok "the first kpemu still serves"; else bad "the first kpemu still serves"; fi

# Stop while the tree is held: a reader blocked in trace_pipe (it gets
# EOF), a shell whose working directory is in the mount, and a copy of
# the mount in another mount namespace (unshare -m). kpemu exits 0 and
# leaves no mount anywhere.
echo > "$T/trace"
exec 7< <(cat "$T/trace_pipe" >/dev/null; echo "reader exit $?")
# the reader holds the file before kpemu stops (on a loaded machine cat
# may not have opened it yet, and would then fail to)
poll sh -c 'ls -l /proc/[0-9]*/fd 2>/dev/null | grep -qF -- "$1"' sh "$T/trace_pipe"
(cd "$T" && exec sleep 60) &
cwdpid=$!
unshare -m --propagation private sleep 60 &
nspid=$!
poll grep -q " $MNT " /proc/$nspid/mountinfo
start=$(date +%s%N)
stop_kpemu TERM
ms=$((($(date +%s%N) - start) / 1000000))
echo "    (SIGTERM to exit with a reader, a cwd and a namespace copy holding the mount: $ms ms)"
expect "SIGTERM exits 0" 0 "$rc"
if mountpoint -q "$MNT"; then bad "SIGTERM unmounts"; else ok "SIGTERM unmounts"; fi
expect "the trace_pipe reader gets EOF" "reader exit 0" "$(timeout "$BOUND" cat <&7)"
exec 7<&-
expect "no copy of the mount is left in another namespace" 0 "$(grep -c " $MNT " /proc/$nspid/mountinfo)"
kill "$cwdpid" "$nspid" 2>/dev/null
wait "$cwdpid" "$nspid" 2>/dev/null
if grep -q "panic" "$LOG"; then bad "guest did not panic" "$(grep panic "$LOG")"; else ok "guest did not panic"; fi

# A run killed with SIGKILL leaves a dead mount; the next run cleans it up.
wait_mounted() { poll mounted && [ -e "$D/kprobes/list" ]; }
"$KPEMU" run --mount "$MNT" >"$LOG" 2>&1 &
pid=$!
wait_mounted || bad "second run mounts" "$(cat "$LOG")"
kill -KILL "$pid"; wait "$pid" 2>/dev/null; pid=
if ls "$MNT" >/dev/null 2>&1; then bad "SIGKILL leaves a dead mount (test setup)"; fi
"$KPEMU" run --mount "$MNT" --probe tcp_v4_rcv --module ramfs_helper >"$LOG" 2>&1 &
pid=$!
if wait_mounted; then ok "a stale mount is cleaned at the next start"; else bad "a stale mount is cleaned at the next start" "$(cat "$LOG")"; fi
expect "the new run lists its probe" "1" "$(grep -c '  k  tcp_v4_rcv+0x0    $' "$D/kprobes/list")"
# The module shows as Loading while its init runs (as /proc/modules does): wait for Live.
poll grep -q "^ramfs_helper .* Live " "$D/kpemu/modules"
expect "--module loads a module at boot" "ramfs_helper 4096 0 - Live $MODULES_VADDR" "$(cat "$D/kpemu/modules")"
stop_kpemu INT
expect "SIGINT exits 0" 0 "$rc"
if mountpoint -q "$MNT"; then bad "SIGINT unmounts"; else ok "SIGINT unmounts"; fi

# The log's reader may go first (Ctrl-C on "kpemu run | tee log" ends
# tee as well): kpemu's writes to the broken pipe fail, and it still
# serves and stops cleanly, its readers getting EOF, not ECONNABORTED.
fifo=$(mktemp -u /tmp/kpemu-e2e-log.XXXXXX)
mkfifo "$fifo"
"$KPEMU" run --mount "$MNT" >"$fifo" 2>&1 &
pid=$!
head -c 1 "$fifo" >/dev/null # reads a byte of the log and goes
rm -f "$fifo"
poll mounted
exec 7< <(cat "$T/trace_pipe" >/dev/null 2>&1; echo "reader exit $?")
poll sh -c 'ls -l /proc/[0-9]*/fd 2>/dev/null | grep -qF -- "$1"' sh "$T/trace_pipe"
stop_kpemu INT
expect "with its log's reader gone, kpemu serves on and SIGINT exits 0" 0 "$rc"
if mountpoint -q "$MNT"; then bad "with its log's reader gone, SIGINT unmounts"; else ok "with its log's reader gone, SIGINT unmounts"; fi
expect "with its log's reader gone, the trace_pipe reader gets EOF" "reader exit 0" "$(timeout "$BOUND" cat <&7)"
exec 7<&-

# A SIGKILL the moment the mount appears ends the process: kpemu makes
# no request to its own mount that a killed serve loop would leave
# unanswered (go-fuse's poll hack did, about 1 start in 10: a thread stuck
# in the open kept /dev/fuse, so the process never ended). A stuck one is
# freed through fusectl so that the run goes on.
one_thread() { [ "$(ls "/proc/$1/task" 2>/dev/null | wc -l)" -le 1 ]; }
stuck=0
for _ in $(seq 20); do
	"$KPEMU" run --mount "$MNT" >"$LOG" 2>&1 &
	pid=$!
	POLL_STEP=0.001 poll grep -qs " $MNT " /proc/mounts
	kill -KILL "$pid"
	if ! BOUND=10 poll one_thread "$pid"; then
		stuck=$((stuck + 1))
		conn=$(awk -v m="$MNT" '$5 == m { split($3, d, ":"); print d[2] }' /proc/self/mountinfo | tail -1)
		[ -z "$conn" ] || echo 1 >"/sys/fs/fuse/connections/$conn/abort"
	fi
	wait "$pid" 2>/dev/null
	pid=
	umount -l "$MNT" 2>/dev/null || true
done
expect "a SIGKILL as the mount appears ends kpemu (20 tries)" 0 "$stuck"

# The tree is ready when it appears: probes on functions the guest runs
# while it boots, one given with --probe (registered before the guest runs)
# and one written the moment the mount appears, are armed once the guest
# can take them, and the guest keeps running.
"$KPEMU" run --mount "$MNT" --probe kmem_cache_alloc >"$LOG" 2>&1 &
pid=$!
POLL_STEP=0.01 poll mounted # the probe goes in the moment the tree appears
echo 'p:early kmalloc' > "$T/kprobe_events" && echo 1 > "$T/events/kprobes/early/enable"
expect_err "a probe on preempt_count_add is refused (NOKPROBE_SYMBOL, as in Linux)" "Invalid argument" "echo 'p:hot preempt_count_add' >> '$T/kprobe_events'"
poll hits_above early 0
if [ "$(hits early)" != 0 ]; then ok "a probe written as the mount appears hits"; else bad "a probe written as the mount appears hits" "$(cat "$T/kprobe_profile")"; fi
if grep -q "Kernel panic\|Internal error" "$D/kpemu/dmesg"; then bad "probes armed at boot leave the guest running" "$(cat "$D/kpemu/dmesg")"; else ok "probes armed at boot leave the guest running"; fi
stop_kpemu INT

# What the blacklist prevents on the debug exception path: a probe on
# do_debug_exception is hit again by every BRK; the guest notices its stack
# overflow, as Linux's VMAP_STACK check, panics readably, and kpemu serves on.
"$KPEMU" run --mount "$MNT" --unsafe-allow-blacklisted --probe do_debug_exception --probe vfs_read >"$LOG" 2>&1 &
pid=$!
wait_mounted || bad "the unsafe run mounts" "$(cat "$LOG")"
poll grep -q "end Kernel panic" "$D/kpemu/dmesg"
expect "a probe on do_debug_exception: the guest reports its stack overflow" \
	"$(printf 'ESR: 0x00000000f2000004 -- BRK (AArch64)\nInsufficient stack space to handle exception!\nKernel panic - not syncing: kernel stack overflow')" \
	"$(sed -n 's/^\[ *[0-9.]*\] //p' "$D/kpemu/dmesg" | grep -E '^(Insufficient|ESR:|Kernel panic)' | sort -u)"
expect "kpemu serves on after the guest panicked" "1" "$(grep -c '  k  do_debug_exception+0x0    $' "$D/kprobes/list")"
stop_kpemu INT
expect "SIGINT exits 0 after a guest panic" 0 "$rc"

# kpemu explain walks through one hit.
out=$("$KPEMU" explain vfs_read 2>&1)
case $out in *"EC=0x3c (BRK64"*"Step out of line"*"regs->pc <- vfs_read+0x4/"*) ok "kpemu explain shows the mechanism" ;; *) bad "kpemu explain shows the mechanism" "$out" ;; esac

# scripts/kpemu-ns.sh: a namespace that looks like the guest's box, for
# scripts written for Linux; nothing of it shows outside. (trace prints a
# trace_printk's caller when it is read, as Linux does: the module's
# __init function has no symbol by then, so its address shows;
# printk_formats keeps the module's formats after it goes, as Linux's.)
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	ns_tmp_before=$(ls -d /tmp/kpemu-ns.* 2>/dev/null || true)
	out=$(bash "$(dirname "$0")/kpemu-ns.sh" -k "$KPEMU" sh -c '
		grep -c "^tracefs /sys/kernel/tracing " /proc/mounts
		ls /sys/kernel/debug/kprobes/list /sys/kernel/tracing/kprobe_events
		grep " T vfs_read$" /proc/kallsyms | cut -c1-8
		uname -m
		modprobe trace-printk && lsmod | grep -c "^trace_printk "
		grep -cE ": 0x[0-9a-f]+: This is a static string" /sys/kernel/tracing/trace
		grep -c "^0x[0-9a-f]* : \".*trace_b" /sys/kernel/tracing/printk_formats
		rmmod trace-printk && lsmod | grep -c "^trace_printk "
		grep -c "^0x[0-9a-f]* : \".*trace_b" /sys/kernel/tracing/printk_formats
		echo 1 > /proc/sys/kernel/stack_tracer_enabled && cat /sys/kernel/debug/kpemu/stack_tracer_enabled
		echo 0 > /proc/sys/kernel/stack_tracer_enabled && cat /sys/kernel/debug/kpemu/stack_tracer_enabled
		exit 7' 2>&1)
	rc=$?
	expect "kpemu-ns.sh: tracefs, debugfs, kallsyms, uname -m, modules, printk_formats and stack_tracer_enabled as on the guest's box" \
		"$(printf '1\n/sys/kernel/debug/kprobes/list\n/sys/kernel/tracing/kprobe_events\nffff8000\naarch64\n1\n2\n4\n0\n4\n1\n0')" "$out"
	expect "kpemu-ns.sh exits with the command's status" 7 "$rc"
	# perf-tools' user/uprobe (Debian's perf-tools-unstable: uprobe-perf),
	# unmodified, with a full path and an offset (no objdump of the
	# guest's program then).
	uprobe=$(command -v uprobe-perf || echo /tmp/pt/user/uprobe)
	if [ -x "$uprobe" ]; then
		out=$(bash "$(dirname "$0")/kpemu-ns.sh" -k "$KPEMU" bash -c "$uprobe -d 1 'p:/bin/sh:$UOFF path=+0(%x0):string'" 2>&1)
		case $out in
		*"Tracing uprobe sh_$UOFF for 1 seconds"*" sh_$UOFF: ($UADDR) path=\"/"*) ok "perf-tools' user/uprobe traces /bin/sh:$UOFF through kpemu-ns.sh" ;;
		*) bad "perf-tools' user/uprobe traces /bin/sh:$UOFF through kpemu-ns.sh" "$out" ;;
		esac
	else
		echo "SKIP perf-tools' user/uprobe: no uprobe-perf (Debian's perf-tools-unstable) nor /tmp/pt/user/uprobe on this machine"
	fi
	if grep -q " T vfs_read$" /proc/kallsyms 2>/dev/null && grep " T vfs_read$" /proc/kallsyms | grep -q "^ffff8000"; then
		bad "kpemu-ns.sh changes nothing outside its namespace" "/proc/kallsyms is the guest's"
	elif [ "$(ls -d /tmp/kpemu-ns.* 2>/dev/null || true)" != "$ns_tmp_before" ]; then
		bad "kpemu-ns.sh changes nothing outside its namespace" "left in /tmp: $(ls -d /tmp/kpemu-ns.* 2>/dev/null)"
	else
		ok "kpemu-ns.sh changes nothing outside its namespace"
	fi
fi

# kpemu-ns.sh is sealed: Linux's own tools, unmodified, find kpemu's trees
# where they look (the type tracefs or debugfs in /proc/mounts), a mount of
# tracefs or debugfs gives kpemu's, the tracing sysctls are the guest's,
# and nothing written inside reaches the host kernel: its tracefs and its
# sysctls are the same after as before (tracefs mounted here for the
# check, at a directory of ours). The binds of kpemu/ files over /proc and
# /sys files (kallsyms, notes, the sysctls) are not in the mount tables,
# as those files are no mounts on Linux.
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && command -v trace-cmd >/dev/null && command -v perf >/dev/null; then
	host_t=$(mktemp -d /tmp/kpemu-e2e-tracefs.XXXXXX)
	inner=$(mktemp /tmp/kpemu-e2e-seal.XXXXXX)
	cat >"$inner" <<'EOF'
cd /sys/kernel/tracing
awk '$3 == "tracefs" || $3 == "debugfs" { print $1, $2, $3 }' /proc/mounts
sed -n 's/^[0-9]* [0-9]* [0-9:]* [^ ]* \([^ ]*\) .* - \(tracefs\|debugfs\) .*/\1 \2/p' /proc/self/mountinfo
stat -f -c "%n %T" /sys/kernel/tracing /sys/kernel/debug
trace-cmd stat 2>&1 | grep -c "^Tracing is enabled"
trace-cmd list -e | grep -c "^sched:sched_process_fork$"
trace-cmd start -e sched:sched_process_fork >/dev/null 2>&1; echo "start: $?"
cat set_event tracing_on
trace-cmd stop; cat tracing_on
trace-cmd show | head -1
trace-cmd reset; echo "reset: $?"; cat set_event tracing_on
echo "p:sealprobe vfs_read" > kprobe_events
perf probe -l 2>&1
mkdir -p /tmp/kpemu-seal-mnt && mount -t tracefs nodev /tmp/kpemu-seal-mnt && cat /tmp/kpemu-seal-mnt/kprobe_events && umount /tmp/kpemu-seal-mnt
mount -t debugfs nodev /tmp/kpemu-seal-mnt && ls /tmp/kpemu-seal-mnt/kprobes/list && umount /tmp/kpemu-seal-mnt; rmdir /tmp/kpemu-seal-mnt
echo > kprobe_events
for s in ftrace_enabled stack_tracer_enabled kptr_restrict perf_event_paranoid tracepoint_printk ftrace_dump_on_oops traceoff_on_warning sched_rt_runtime_us; do
	case $s in sched_rt_runtime_us) v=-1 ;; ftrace_enabled) v=0 ;; kptr_restrict) v=2 ;; perf_event_paranoid) v=-1 ;; *) v=1 ;; esac
	echo $v > /proc/sys/kernel/$s && printf "%s=%s " $s "$(cat /proc/sys/kernel/$s)"
done
echo
echo 5 2>/dev/null > /proc/sys/kernel/kptr_restrict || echo "kptr_restrict 5: EINVAL"
( echo 1 > /proc/sys/vm/overcommit_memory ) 2>&1 | sed 's/.*: //'
echo function > current_tracer && wc -l < enabled_functions
echo 1 > /proc/sys/kernel/ftrace_enabled && [ "$(wc -l < enabled_functions)" -gt 100 ] && echo "function tracer on"
echo nop > current_tracer
EOF
	if mount -t tracefs nodev "$host_t" 2>/dev/null; then
		host_state() {
			for f in tracing_on current_tracer set_event kprobe_events uprobe_events dynamic_events events/enable \
				buffer_size_kb trace_options trace_clock tracing_cpumask set_ftrace_filter set_event_pid; do
				printf '%s %s\n' "$f" "$(cat "$host_t/$f" 2>&1 | md5sum)"
			done
			for s in ftrace_enabled stack_tracer_enabled kptr_restrict perf_event_paranoid tracepoint_printk \
				ftrace_dump_on_oops traceoff_on_warning sched_rt_runtime_us sched_rt_period_us; do
				printf '%s %s\n' "$s" "$(cat /proc/sys/kernel/$s 2>&1)"
			done
		}
		before=$(host_state)
		out=$(bash "$(dirname "$0")/kpemu-ns.sh" -k "$KPEMU" bash "$inner" 2>&1)
		after=$(host_state)
		expect "kpemu-ns.sh: trace-cmd, perf probe and mount(8) find kpemu's trees as tracefs and debugfs; the sysctls are the guest's" \
			"$(printf '%s\n' "debugfs /sys/kernel/debug debugfs" "tracefs /sys/kernel/tracing tracefs" \
				"tracefs /sys/kernel/debug/tracing tracefs" "/sys/kernel/debug debugfs" "/sys/kernel/tracing tracefs" \
				"/sys/kernel/debug/tracing tracefs" "/sys/kernel/tracing tracefs" "/sys/kernel/debug debugfs" \
				1 1 "start: 0" sched:sched_process_fork 1 0 "# tracer: nop" \
				"reset: 0" 1 "  kprobes:sealprobe    (on vfs_read)" "p:kprobes/sealprobe vfs_read" \
				/tmp/kpemu-seal-mnt/kprobes/list \
				"ftrace_enabled=0 stack_tracer_enabled=1 kptr_restrict=2 perf_event_paranoid=-1 tracepoint_printk=1 ftrace_dump_on_oops=1 traceoff_on_warning=1 sched_rt_runtime_us=-1 " \
				"kptr_restrict 5: EINVAL" "Read-only file system" 0 "function tracer on")" "$out"
		expect "kpemu-ns.sh: the host's tracefs and sysctls are unchanged" "$before" "$after"
		umount "$host_t"
	else
		bad "mounting the host's tracefs for the check" "mount -t tracefs nodev $host_t failed"
	fi
	rm -f "$inner"
	rmdir "$host_t"
fi

# perf probe (Debian's linux-perf), unmodified, inside kpemu-ns.sh: a
# probe with an argument found by name in the image's DWARF (-k; perf
# checks the image's build-id against /sys/kernel/notes), a return probe
# and an offset (both written as _text+OFF, as perf does), -l (with -k,
# the source lines, through the image's .debug_aranges), -L (the
# source from the top of the checkout), -V, a hit, and -d.
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && command -v perf >/dev/null; then
	top=$(cd "$(dirname "$0")/.." && pwd)
	kp=$(realpath "$KPEMU")
	out=$(cd "$top" && bash scripts/kpemu-ns.sh -k "$kp" bash -c '
		img=kernel/image/kpemu.elf top=$PWD
		cd /sys/kernel/tracing
		perf probe -q -k "$top/$img" -a "vfs_read count" 2>&1
		perf probe -q -a "vfs_read%return" 2>&1
		perf probe -q -a "vfs_write+8" 2>&1
		sed "s/_text+[0-9]*/_text+N/" kprobe_events
		perf probe -l 2>&1 | sort
		perf probe -k "$top/$img" -l 2>&1 | sort
		(cd "$top" && perf probe -k $img -L vfs_read 2>&1 | head -2)
		perf probe -k "$top/$img" -V vfs_read 2>&1 | grep -c "size_t	count"
		echo 1 > events/probe/vfs_read/enable
		i=0; until grep -q "vfs_read: (vfs_read+0x0/.*) count=0x" trace || [ $i -ge $(($1 * 20)) ]; do sleep 0.05; i=$((i+1)); done
		grep -m1 -o "vfs_read: (vfs_read+0x0/0x[0-9a-f]*) count=0x" trace | sed "s,/0x[0-9a-f]*,/SIZE,"
		echo 0 > events/probe/vfs_read/enable
		perf probe -q -d "probe:*" 2>&1; wc -c < kprobe_events' _ "$BOUND" 2>&1)
	expect "kpemu-ns.sh: perf probe -k -a with a DWARF argument, %return, +OFF, -l, -L, -V, a hit, -d" \
		"$(printf '%s\n' "p:probe/vfs_read _text+N count=%x2:x64" "r10:probe/vfs_read__return _text+N" \
			"p:probe/vfs_write _text+N" "  probe:vfs_read       (on vfs_read with count)" \
			"  probe:vfs_read__return (on vfs_read%return)" "  probe:vfs_write      (on vfs_write+8)" \
			"  probe:vfs_read       (on vfs_read@fs/read_write.c with count)" \
			"  probe:vfs_read__return (on vfs_read%return@fs/read_write.c)" \
			"  probe:vfs_write      (on vfs_write:1@fs/read_write.c)" \
			"<vfs_read@kernel/image/fs/read_write.c:0>" \
			"      0  noinline ssize_t vfs_read(struct file *file, char *buf, size_t count, loff_t *pos)" \
			1 "vfs_read: (vfs_read+0x0/SIZE) count=0x" 0)" "$out"
fi

# kpemu-ns.sh shadows its command: each fork, open, symlink, mkdir and
# unlink of the shell is made by the guest kernel first, under the shell's
# name, so a probe enabled around `( : )` sees that fork, every time, as on
# a Linux box; and a path's argument is the shell's.
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	out=$(bash "$(dirname "$0")/kpemu-ns.sh" -k "$KPEMU" bash -c '
		cd /sys/kernel/tracing
		echo "p:sfork kernel_clone comm=\$comm" > kprobe_events
		echo "p:sopen do_sys_openat2 path=+0(\$arg2):ustring comm=\$comm" >> kprobe_events
		echo "p:ssym vfs_symlink comm=\$comm" >> kprobe_events
		echo "p:sunlink vfs_unlink comm=\$comm" >> kprobe_events
		seen=0
		for i in $(seq 20); do
			echo > trace
			echo 1 > events/kprobes/sfork/enable
			( : )
			echo 0 > events/kprobes/sfork/enable
			grep -q "^ *bash-[0-9]* .* sfork: (kernel_clone+0x0/0x[0-9a-f]*) comm=\"bash\"$" trace && seen=$((seen + 1))
		done
		echo "forks seen: $seen of 20"
		d=$(mktemp -d /tmp/kpemu-e2e-shadow.XXXXXX)
		echo > trace
		echo 1 > events/kprobes/enable
		echo > "$d/f"
		ln -s f "$d/l"
		rm "$d/l" "$d/f"
		echo 0 > events/kprobes/enable
		rmdir "$d"
		grep -c " sopen: (do_sys_openat2+0x0/0x[0-9a-f]*) path=\"$d/f\" comm=\"bash\"$" trace
		grep -c " ssym: (vfs_symlink+0x0/0x[0-9a-f]*) comm=\"ln\"$" trace
		grep -c " sunlink: (vfs_unlink+0x0/0x[0-9a-f]*) comm=\"rm\"$" trace
		echo > kprobe_events' 2>&1)
	expect "kpemu-ns.sh: the guest replays the shell's forks, opens, symlinks and unlinks, under its name" \
		"$(printf 'forks seen: 20 of 20\n1\n1\n2')" "$out"
	# ... each in the twin of its process, a guest task with the host
	# process's pid: the shell's $$ forks the child whose pid it printed,
	# which makes the mkdir and exits; set_event_pid $$ with event-fork
	# follows the shell's children and nothing else.
	out=$(bash "$(dirname "$0")/kpemu-ns.sh" -k "$KPEMU" bash -c '
		cd /sys/kernel/tracing
		d=$(mktemp -d /tmp/kpemu-e2e-pid.XXXXXX)
		echo "p:mk do_mkdirat c=\$comm" > kprobe_events
		echo 1 > events/kprobes/mk/enable
		# The guest workload forks thousands of times a second: its
		# tasks would push the mkdir out of the 128 saved comms before
		# the read (the line would say <...>, as Linux does), so keep
		# more comms and filter its forks and exits out.
		echo 4096 > saved_cmdlines_size
		echo "parent_pid == $$" > events/sched/sched_process_fork/filter
		echo "comm == \"mkdir\"" > events/sched/sched_process_exit/filter
		echo 1 > events/sched/sched_process_fork/enable
		echo 1 > events/sched/sched_process_exit/enable
		sh -c "echo \$\$ > $d/pid; exec mkdir $d/x"
		echo 0 > events/enable
		echo 0 > events/sched/sched_process_fork/filter
		echo 0 > events/sched/sched_process_exit/filter
		c=$(cat "$d/pid")
		grep -c "^ *bash-$$ .*: sched_process_fork: comm=bash pid=$$ child_comm=bash child_pid=$c$" trace
		grep -c "^ *mkdir-$c .*: mk: (do_mkdirat+0x0/0x[0-9a-f]*) c=\"mkdir\"$" trace
		grep -c "^ *mkdir-$c .*: sched_process_exit: comm=mkdir pid=$c prio=" trace
		echo > trace
		touch "$d/noise"
		(while [ -e "$d/noise" ]; do mkdir "$d/n"; rmdir "$d/n"; done) &
		echo $$ > set_event_pid
		echo 1 > options/event-fork
		echo 1 > events/kprobes/mk/enable
		for i in 1 2 3; do mkdir "$d/y$i"; done
		echo 0 > events/kprobes/mk/enable
		rm "$d/noise"; wait
		echo 0 > options/event-fork
		echo > set_event_pid
		echo "set_event_pid: $(grep -c " mk: " trace)"
		echo 128 > saved_cmdlines_size
		echo > kprobe_events
		# syscalls events: the openat of cat, in its twin, under its pid
		echo > trace
		echo "filename ~ \"*/hostname\"" > events/syscalls/sys_enter_openat/filter
		echo 1 > events/syscalls/sys_enter_openat/enable
		sh -c "echo \$\$ > $d/pid; exec cat /etc/hostname" > /dev/null
		echo 0 > events/syscalls/sys_enter_openat/enable
		echo 0 > events/syscalls/sys_enter_openat/filter
		c=$(cat "$d/pid")
		grep -cE "^ *cat-$c .*: sys_openat\(dfd: ffffffffffffff9c, filename: [0-9a-f]+, flags: [0-9a-f]+, mode: [0-9a-f]+\)$" trace
		# an event probe on it fetches the string the user pointer points to
		echo > trace
		echo "e:epo syscalls/sys_enter_openat file=+0(\$filename):ustring if filename ~ \"*/hostname\"" >> dynamic_events
		echo 1 > events/eprobes/epo/enable
		sh -c "echo \$\$ > $d/pid; exec cat /etc/hostname" > /dev/null
		echo 0 > events/eprobes/epo/enable
		echo "-:epo" >> dynamic_events
		c=$(cat "$d/pid")
		grep -cE "^ *cat-$c .*: epo: \(syscalls\.sys_enter_openat\) file=\"/etc/hostname\"$" trace
		rm -rf "$d"' 2>&1)
	expect "kpemu-ns.sh: each process replays in a guest twin with its pid: sched_process_fork from \$\$, the child's events, set_event_pid \$\$, sys_enter_openat, an eprobe on it" \
		"$(printf '1\n1\n1\nset_event_pid: 3\n1\n1')" "$out"
	# A host process's kill(2) is replayed by its twin once its target
	# takes the signal (sys_enter_kill, sys_exit_kill, signal_generate).
	# perf stat's counters of a tracepoint are kpemu's (the host kernel
	# would count its own event of that id): exact for a command's
	# process tree, with perf's filters; perf record samples them.
	out=$(bash "$(dirname "$0")/kpemu-ns.sh" -k "$KPEMU" bash -c '
		cd /sys/kernel/tracing
		echo 1 > events/syscalls/sys_enter_kill/enable
		echo 1 > events/syscalls/sys_exit_kill/enable
		echo "sig == 15" > events/signal/signal_generate/filter
		echo 1 > events/signal/signal_generate/enable
		sleep 60 & p=$!
		kill -TERM $p; wait $p; echo "status $?"
		echo 0 > events/enable
		echo 0 > events/signal/signal_generate/filter
		x=$(printf %x $p)
		grep -c "^ *bash-$$ .*: sys_kill(pid: $x, sig: f)$" trace
		grep -c "^ *bash-$$ .*: signal_generate: sig=15 errno=0 code=0 comm=[^ ]* pid=$p grp=1 res=0$" trace
		grep -c "^ *bash-$$ .*: sys_kill -> 0x0$" trace
		d=$(mktemp -d /tmp/kpemu-e2e-perf.XXXXXX)
		perf stat -x, -e syscalls:sys_enter_mkdirat -- sh -c "mkdir $d/a $d/b" 2>&1 | grep -c "^2,,syscalls:sys_enter_mkdirat,"
		n=$(perf stat -x, -e syscalls:sys_enter_mkdirat -a -- mkdir "$d/c" 2>&1 | awk -F, "/sys_enter_mkdirat/ { print \$1 }")
		[ "$n" -ge 1 ] && echo "perf stat -a: counted"
		# --filter (PERF_EVENT_IOC_SET_FILTER): mkdir -m 700 is mode 448
		perf stat -x, -e syscalls:sys_enter_mkdirat --filter "mode == 448" -e syscalls:sys_enter_mkdirat --filter "mode == 493" \
			-- mkdir -m 700 "$d/f" 2>&1 | awk -F, "/sys_enter_mkdirat/ { printf \"%s \", \$1 } END { print \"filtered\" }"
		# perf record samples into a ring kpemu writes (a memfd perf maps)
		perf record -q -o "$d/perf.data" -e syscalls:sys_enter_mkdirat -a -- mkdir -m 700 "$d/r" >/dev/null 2>&1
		perf script -i "$d/perf.data" 2>&1 | grep -c "^ *mkdir  *[0-9]* \[00[01]\] *[0-9.]*: *syscalls:sys_enter_mkdirat: .*mode: 0x0*1c0$"
		rm -rf "$d"' 2>&1)
	# perf-tools (Debian's perf-tools-unstable), unmodified: killsnoop
	# sees the kills made while it traces (it clears the buffer after
	# enabling its events, so a loop kills until it is done): kill -0 and
	# kill -9 replayed at the caller's stop, kill -TERM at its target's,
	# and one that fails from the kill watch (the host's tracepoints),
	# syscount -c counts a command's mkdirs through perf stat, syscount
	# its mkdir's syscalls through perf record.
	if command -v killsnoop-perf >/dev/null && command -v syscount-perf >/dev/null; then
		pt=$(bash "$(dirname "$0")/kpemu-ns.sh" -k "$KPEMU" bash -c '
			d=$(mktemp -d /tmp/kpemu-e2e-pt.XXXXXX)
			touch $d/run
			(
				while [ -e $d/run ]; do
					sleep 60 & p=$!; sleep 60 & q=$!
					kill -0 $p; kill -TERM $p; kill -9 $q; wait $p $q
					kill -TERM 3999999 2>/dev/null
					echo "$p $q" >> $d/p
					sleep 0.2
				done
			) 2>/dev/null &
			killsnoop-perf -d 2 > $d/ks 2>&1; rm $d/run; wait
			awk "NR == FNR { p[\$1] = 1; q[\$2] = 1; next }
				\$1 != \"bash\" { next }
				(\$3 in p) && \$4 == 0 && \$5 == 0 { z = 1 }
				(\$3 in p) && \$4 == 15 && \$5 == 0 { t = 1 }
				(\$3 in q) && \$4 == 9 && \$5 == 0 { k = 1 }
				\$3 == 3999999 && \$4 == 15 && \$5 != 0 { e = 1 }
				END { print z + 0, t + 0, k + 0, e + 0 }" $d/p $d/ks
			printf "mkdir %s/m1 %s/m2 %s/m3\n" $d $d $d > $d/mk.sh
			syscount-perf -c sh $d/mk.sh 2>/dev/null | awk "\$1 == \"mkdirat\" && \$2 >= 3" | wc -l
			# without -c: perf record of raw_syscalls:sys_enter, perf script
			(cd $d && syscount-perf sh $d/mk.sh > $d/sc 2>&1)
			awk "\$1 == \"mkdir\" && \$2 >= 3" $d/sc | wc -l
			rm -rf $d' 2>&1)
		expect "perf-tools' killsnoop (kill -0, -TERM, -9, and one that fails), syscount -c and syscount (Debian's perf-tools-unstable) through kpemu-ns.sh" "$(printf '1 1 1 1\n1\n1')" "$pt"
	else
		echo "SKIP perf-tools' killsnoop and syscount: no killsnoop-perf or syscount-perf (Debian's perf-tools-unstable) on this machine"
	fi
	expect "kpemu-ns.sh: kill(2) in the caller's twin (sys_enter_kill, sys_exit_kill, signal_generate); perf stat counts kpemu's tracepoints, filtered too; perf record and perf script show a sample" \
		"$(printf 'status 143\n1\n1\n1\n1\nperf stat -a: counted\n1 0 filtered\n1')" "$out"
	out=$(bash "$(dirname "$0")/kpemu-ns.sh" -S -k "$KPEMU" bash -c '
		cd /sys/kernel/tracing
		echo "p:sfork kernel_clone" > kprobe_events
		echo 1 > events/kprobes/sfork/enable
		( : ); ( : ); ( : )
		echo 0 > events/kprobes/sfork/enable
		grep -c "^ *bash-" trace
		grep -c "^tracefs /sys/kernel/tracing tracefs " /proc/mounts' 2>&1)
	expect "kpemu-ns.sh -S: the guest does not see the shell, which is still sealed" "$(printf '0\n1')" "$out"
fi

# trace-cmd (Debian's 3.1, unmodified) inside kpemu-ns.sh: record splices
# per_cpu/cpuN/trace_pipe_raw (the seal serves the splice), and report's
# events are those kprobe_profile counts; -B, -F -c (the command's processes,
# not the noise beside them), -T and -p function -l record theirs;
# extract's report shows the events, times, pids and CPUs that trace
# shows; stream prints events as they come and ends at SIGINT
# (given the one more record it waits for; see below).
# do_mkdirat is reached only by the replayed mkdirs (the guest's own
# workload makes none), so that the counts are exact.
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && command -v trace-cmd >/dev/null; then
	inner=$(mktemp /tmp/kpemu-e2e-tc.XXXXXX)
	cat >"$inner" <<'EOF'
cd "$(mktemp -d /tmp/kpemu-e2e-tcdir.XXXXXX)" || exit 1
T=/sys/kernel/tracing
echo 'p:kprobes/mk do_mkdirat c=$comm' > $T/kprobe_events
w='for i in $(seq 20); do mkdir d$i; rmdir d$i; done'
trace-cmd record -e kprobes -e sched:sched_process_fork bash -c "$w" >/dev/null 2>rec.err; echo "record: $?"
grep -v -e '^CPU[0-9]* data recorded at' -e ' bytes in size ' rec.err
trace-cmd report > report.txt 2>/dev/null; echo "report: $?"
echo "mk $(grep -cE ' mk: +\(ffff[0-9a-f]+\) c="mkdir"$' report.txt) hits $(awk '$1 == "mk" { print $2 }' $T/kprobe_profile)"
grep -m1 -cE ' sched_process_fork: +comm=[^ ]+ pid=[0-9]+ child_comm=[^ ]+ child_pid=[0-9]+$' report.txt
trace-cmd record -B kp1 -e kprobes bash -c "$w" >/dev/null 2>&1
echo "-B $(trace-cmd report 2>/dev/null | grep -c ' mk: '), instances left: $(ls $T/instances | wc -l)"
# -F -c: the command's processes only, not the noise beside them
touch noise; (while [ -e noise ]; do mkdir dn; rmdir dn; done) &
trace-cmd record -F -c -e kprobes:mk bash -c "$w" >/dev/null 2>rec.err; echo "-F: $?"
rm noise; wait
grep -v -e '^CPU[0-9]* data recorded at' -e ' bytes in size ' rec.err
echo "-F $(trace-cmd report 2>/dev/null | grep -c ' mk: ')"
trace-cmd record -T -e kprobes:mk mkdir dT >/dev/null 2>&1; rmdir dT
echo "-T $(trace-cmd report 2>/dev/null | grep -c '^=> do_mkdirat (ffff')"
trace-cmd record -p function -l do_mkdirat bash -c "$w" >/dev/null 2>&1
echo "-p $(trace-cmd report 2>/dev/null | grep -cE ' function: +do_mkdirat$')"
trace-cmd start -e kprobes:mk; bash -c "$w"; trace-cmd stop
grep ' mk: ' $T/trace | awk '{ print $1, $2, $4, $NF }' > trace.txt
trace-cmd extract -o ex.dat >/dev/null 2>&1; echo "extract: $?"
trace-cmd report -i ex.dat 2>/dev/null | grep ' mk: ' | awk '{ print $1, $2, $3, $NF }' > ex.txt
echo "extract $(wc -l < ex.txt) lines, as trace: $(cmp -s trace.txt ex.txt && echo yes)"
# stream: its parent has its recorders flush what they hold whenever it
# has read nothing for 500 ms, so the mk events come while it runs
# (stdbuf: its stdout is a file). Stopped with SIGINT while no events
# come, trace-cmd 3.1's stream waits for one more record (its last read
# polls without a timeout; so it reads on Linux 6.1 too): until it ends,
# give it one and have its recorders flush it, as its own idle loop does.
stdbuf -oL trace-cmd stream -e kprobes:mk > st.out 2>/dev/null &
sp=$!
for i in $(seq 3000); do [ "$(cat $T/events/kprobes/mk/enable $T/tracing_on)" = "$(printf '1\n1')" ] && [ "$(pgrep -P $sp | wc -l)" -ge 2 ] && break; sleep 0.1; done
bash -c "$w"
for i in $(seq 3000); do [ "$(grep -c ' mk: ' st.out)" -ge 20 ] && break; sleep 0.1; done
n=$(grep -c ' mk: ' st.out)
kill -INT $sp
for i in $(seq 300); do kill -0 $sp 2>/dev/null || break; mkdir dS; rmdir dS; pkill -USR2 -P $sp; sleep 0.1; done
wait $sp; echo "stream: $? $n"
trace-cmd reset >/dev/null 2>&1
echo > /sys/kernel/tracing/kprobe_events
cd / && rm -rf "$OLDPWD"
EOF
	out=$(bash "$(dirname "$0")/kpemu-ns.sh" -k "$KPEMU" bash "$inner" 2>&1)
	expect "kpemu-ns.sh: trace-cmd record/report (-B, -F -c, -T, -p function), extract and stream get kpemu's events through trace_pipe_raw" \
		"$(printf '%s\n' "record: 0" "report: 0" "mk 20 hits 20" 1 "-B 20, instances left: 0" "-F: 0" "-F 20" "-T 1" "-p 20" "extract: 0" "extract 20 lines, as trace: yes" "stream: 0 20")" "$out"
	rm -f "$inner"
fi

# The samples of the README and docs/ (`<!-- sample: ... -->` blocks): the
# README's `make run`, run as written, and each command shown against that
# mount, compared with the output shown, so that they cannot go stale
# (scripts/readme-samples.py says what it normalises and why).
out=$(python3 "$(dirname "$0")/readme-samples.py" "$(dirname "$0")/../README.md" "$(dirname "$0")"/../docs/*.md 2>&1)
rc=$?
while IFS= read -r line; do
	case $line in
	"PASS "*) ok "README samples: ${line#PASS }" ;;
	"FAIL "*) bad "README samples: ${line#FAIL }" ;;
	*" passed, 0 failed") [ "$rc" -eq 0 ] || bad "readme-samples.py exits 0" "exit status $rc" ;;
	*" passed, "*" failed") ;;
	*) printf '%s\n' "$line" ;;
	esac
done <<<"$out"
case $out in *" passed, "*" failed"*) ;; *) bad "readme-samples.py runs" "exit status $rc" ;; esac

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
