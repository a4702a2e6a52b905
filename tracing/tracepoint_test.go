package tracing_test

import (
	"errors"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// The format files of the reference kernel (Debian's 6.1 arm64), as it
// printed them.
const (
	wantExitFormat = "name: sched_process_exit\nID: 261\nformat:\n" +
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" +
		"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n" +
		"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" +
		"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n" +
		"\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n" +
		"\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n" +
		"\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n\n" +
		"print fmt: \"comm=%s pid=%d prio=%d\", REC->comm, REC->pid, REC->prio\n"
	wantDeliverFormat = "name: signal_deliver\nID: 134\nformat:\n" +
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" +
		"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n" +
		"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" +
		"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n" +
		"\tfield:int sig;\toffset:8;\tsize:4;\tsigned:1;\n" +
		"\tfield:int errno;\toffset:12;\tsize:4;\tsigned:1;\n" +
		"\tfield:int code;\toffset:16;\tsize:4;\tsigned:1;\n" +
		"\tfield:unsigned long sa_handler;\toffset:24;\tsize:8;\tsigned:0;\n" +
		"\tfield:unsigned long sa_flags;\toffset:32;\tsize:8;\tsigned:0;\n\n" +
		"print fmt: \"sig=%d errno=%d code=%d sa_handler=%lx sa_flags=%lx\", REC->sig, REC->errno, REC->code, REC->sa_handler, REC->sa_flags\n"
)

func TestStaticEventFiles(t *testing.T) {
	f := setup(t)
	for _, tc := range []struct{ file, want string }{
		{"tracing/events/sched/sched_process_exit/format", wantExitFormat},
		{"tracing/events/signal/signal_deliver/format", wantDeliverFormat},
		{"tracing/events/sched/sched_switch/id", "264\n"},
		{"tracing/events/sched/sched_wakeup_new/id", "265\n"},
		{"tracing/events/signal/signal_generate/id", "135\n"},
		{"tracing/events/sched/sched_switch/enable", "0\n"},
		{"tracing/events/sched/enable", "0\n"},
		{"tracing/events/sched/sched_switch/filter", "none\n"},
		// the reference kernel's order: signal's, then sched's by id
		{"tracing/available_events", "signal:signal_deliver\nsignal:signal_generate\nsched:sched_process_fork\n" +
			"sched:sched_process_exit\nsched:sched_process_free\nsched:sched_switch\nsched:sched_wakeup_new\n" +
			"sched:sched_wakeup\nsched:sched_waking\nkmem:kfree\nkmem:kmalloc\n"},
	} {
		got := f.read(t, tc.file)
		if tc.file == "tracing/available_events" {
			got = withoutSyscalls(got) // TestSyscallEvents has them
		}
		if got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.file, got, tc.want)
		}
	}
	sw := f.read(t, "tracing/events/sched/sched_switch/format")
	for _, want := range []string{
		"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n",
		"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n",
		"\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n",
		`print fmt: "prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s next_pid=%d next_prio=%d", REC->prev_comm,`,
		`{ 0x00000080, "I" }) : "R", REC->prev_state & (((0x00000000 |`,
	} {
		if !strings.Contains(sw, want) {
			t.Errorf("sched_switch/format lacks %q:\n%s", want, sw)
		}
	}
}

// TestStaticEventWritesRejected: bad writes get Linux's errno and change
// nothing.
func TestStaticEventWritesRejected(t *testing.T) {
	f := setup(t)
	for _, tc := range []struct {
		file, data string
		want       syscall.Errno
		after      string // the file's content after the write ("" = not checked)
	}{
		{"tracing/events/sched/sched_switch/enable", "2\n", syscall.EINVAL, "0\n"},
		{"tracing/events/sched/enable", "x\n", syscall.EINVAL, "0\n"},
		{"tracing/events/sched/sched_process_exit/trigger", "traceoff if next_pid == 0\n", syscall.EINVAL, ""},
		{"tracing/events/sched/sched_switch/trigger", "enable_event:sched:nope\n", syscall.EINVAL, ""},
		{"tracing/events/sched/sched_switch/filter", "prev_comm > 3\n", syscall.EINVAL,
			"prev_comm > 3\n             ^\nparse_error: Expecting string field\n\n"},
		{"tracing/kprobe_events", "p:sched/sched_switch vfs_read\n", syscall.EEXIST, ""},
	} {
		err := f.write(tc.file, tc.data, false)
		if !errors.Is(err, tc.want) {
			t.Errorf("writing %q to %s: %v, want %v", tc.data, tc.file, err, tc.want)
		}
		if tc.after != "" {
			if got := f.read(t, tc.file); got != tc.after {
				t.Errorf("%s after the bad write: %q, want %q", tc.file, got, tc.after)
			}
		}
	}
	if got := f.read(t, "tracing/events/sched/sched_switch/trigger"); strings.Contains(got, "enable_event:sched") {
		t.Errorf("a rejected trigger was set:\n%s", got)
	}
}

// TestStaticEventsRecord boots, enables the sched and signal events and
// checks the lines they print, then that a disabled tracepoint records
// nothing more.
func TestStaticEventsRecord(t *testing.T) {
	f := setupCPUs(t, 2)
	for _, w := range []struct{ file, data string }{
		{"tracing/events/sched/enable", "1\n"},
		{"tracing/events/signal/enable", "1\n"},
	} {
		if err := f.write(w.file, w.data, false); err != nil {
			t.Fatalf("%s: %v", w.file, err)
		}
	}
	if got := f.read(t, "tracing/events/sched/enable"); got != "1\n" {
		t.Errorf("events/sched/enable = %q", got)
	}
	f.step(t, 60_000_000)
	trace := f.read(t, "tracing/trace")
	for _, re := range []string{
		`(?m) d\.\.\.\. +[0-9.]+: sched_switch: prev_comm=\S+ prev_pid=\d+ prev_prio=120 prev_state=[RSDZ]\+? ==> next_comm=\S+ next_pid=\d+ next_prio=120$`,
		`(?m) d\.\.\.\. +[0-9.]+: sched_switch: prev_comm=swapper/\d prev_pid=0 prev_prio=\d+ prev_state=R\+? ==> `,
		`(?m): sched_switch: prev_comm=\S+ prev_pid=\d+ prev_prio=120 prev_state=Z ==> `,
		`(?m) d.\.\.\. +[0-9.]+: sched_waking: comm=\S+ pid=\d+ prio=120 target_cpu=00[01]$`,
		`(?m) d.\.\.\. +[0-9.]+: sched_wakeup: comm=\S+ pid=\d+ prio=120 target_cpu=00[01]$`,
		`(?m) d.\.\.\. +[0-9.]+: sched_wakeup_new: comm=\S+ pid=\d+ prio=120 target_cpu=00[01]$`,
		`(?m) \.\.\.\.\. +[0-9.]+: sched_process_fork: comm=sh pid=\d+ child_comm=sh child_pid=\d+$`,
		`(?m) \.\.\.\.\. +[0-9.]+: sched_process_exit: comm=\S+ pid=\d+ prio=120$`,
		`(?m): sched_process_free: comm=\S+ pid=\d+ prio=120$`,
	} {
		if !regexp.MustCompile(re).MatchString(trace) {
			t.Errorf("trace has no line matching %s", re)
		}
	}
	if t.Failed() {
		t.Logf("trace:\n%s", trace)
	}
	// Disabled, the tracepoints record nothing more.
	if err := f.write("tracing/events/enable", "0\n", false); err != nil {
		t.Fatal(err)
	}
	if err := f.write("tracing/trace", "", true); err != nil {
		t.Fatal(err)
	}
	f.step(t, 5_000_000)
	if got := f.read(t, "tracing/trace"); strings.Contains(got, "sched_") {
		t.Errorf("disabled events recorded:\n%s", got)
	}
}

// TestStaticEventFilterAndTrigger: a string filter over next_comm, and a
// traceoff trigger that fires on the event's hits. The glob is "swap*",
// not "sw*": the workload renames its forked children from "kworkload"
// to "sh" byte by byte (strscpy, as Linux's __set_task_comm) while
// another CPU may copy the comm into a sched_switch record, which then
// says "sworkload", as a torn read on Linux would.
func TestStaticEventFilterAndTrigger(t *testing.T) {
	f := setupCPUs(t, 2)
	for _, w := range []struct{ file, data string }{
		{"tracing/events/sched/sched_switch/filter", "next_comm ~ \"swap*\"\n"},
		{"tracing/events/sched/sched_switch/enable", "1\n"},
	} {
		if err := f.write(w.file, w.data, false); err != nil {
			t.Fatalf("%s: %v", w.file, err)
		}
	}
	f.step(t, 40_000_000)
	lines := 0
	for _, l := range strings.Split(f.read(t, "tracing/trace"), "\n") {
		if strings.Contains(l, "sched_switch:") {
			lines++
			if !strings.Contains(l, "next_comm=swapper/") {
				t.Errorf("the filter let through %q", l)
			}
		}
	}
	if lines == 0 {
		t.Error("no sched_switch to the idle task recorded")
	}
	if err := f.write("tracing/events/sched/sched_process_exit/trigger", "traceoff\n", false); err != nil {
		t.Fatal(err)
	}
	if got := f.read(t, "tracing/events/sched/sched_process_exit/enable"); got != "0*\n" {
		t.Errorf("sched_process_exit/enable with a trigger = %q, want 0*", got)
	}
	f.step(t, 40_000_000)
	if got := f.read(t, "tracing/tracing_on"); got != "0\n" {
		t.Errorf("tracing_on after exits with a traceoff trigger = %q", got)
	}
}
