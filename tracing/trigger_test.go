package tracing_test

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/kpemu/kpemu/debugfs"
	"github.com/kpemu/kpemu/internal/waitfor"
)

// The events of the trigger oracle session (Debian's arm64 Linux 6.1.192
// under QEMU, as linux-6.1-oracle.md runs it, with a busybox /init that
// wrote each command with one write(2) and read the files back):
// kernel_clone, then wake_up_new_task and sched_fork, which each fork
// reaches after kernel_clone's entry, and a return probe on kernel_clone.
const triggerEvents = "p:ev1 kernel_clone a=%x0\np:ev2 wake_up_new_task\np:ev3 sched_fork\nr:ev4 kernel_clone ret=$retval\n"

// kpemuAvailableTriggers is Linux's "# Available triggers:" list, as the
// oracle printed it for a kprobe event and for sched_switch.
const kpemuAvailableTriggers = "# Available triggers:\n# traceon traceoff snapshot stacktrace enable_event disable_event enable_hist disable_hist hist\n"

// triggerStep writes data to file (one write(2), as the oracle's kpw, with
// O_TRUNC if trunc) and wants errno err, or, when read is set, reads file
// and wants want. A file without a "tracing/" prefix is under
// tracing/events/kprobes/.
type triggerStep struct {
	file  string
	data  string
	trunc bool
	err   syscall.Errno
	read  bool
	want  string
}

func w(file, data string, err syscall.Errno) triggerStep {
	return triggerStep{file: file, data: data, err: err}
}

func r(file, want string) triggerStep { return triggerStep{file: file, read: true, want: want} }

func (f *fixture) runSteps(t *testing.T, steps []triggerStep) {
	t.Helper()
	for i, s := range steps {
		p := s.file
		if !strings.HasPrefix(p, "tracing/") {
			p = "tracing/events/kprobes/" + p
		}
		if s.read {
			if got := f.read(t, p); got != s.want {
				t.Errorf("step %d: %s reads %q, want %q", i, p, got, s.want)
			}
			continue
		}
		err := f.write(p, s.data, s.trunc)
		switch {
		case s.err == 0 && err != nil:
			t.Errorf("step %d: %s <- %q: %v, want success", i, p, s.data, err)
		case s.err != 0 && !errors.Is(err, s.err):
			t.Errorf("step %d: %s <- %q: %v, want %v", i, p, s.data, err, s.err)
		}
	}
}

// TestTriggerParsing replays section 2 of the oracle session: what each
// write to ev1/trigger returns and what the file then reads. On Linux the
// shell's subshell around each command forked, so a count it printed is
// one less than here, where the guest does not run (noted per line).
func TestTriggerParsing(t *testing.T) {
	f := setup(t)
	if err := f.write("tracing/kprobe_events", triggerEvents, false); err != nil {
		t.Fatal(err)
	}
	const (
		ok     = 0
		einval = syscall.EINVAL
		eexist = syscall.EEXIST
	)
	f.runSteps(t, []triggerStep{
		r("ev1/trigger", kpemuAvailableTriggers),
		r("ev1/enable", "0\n"),
		w("ev1/trigger", "traceoff\n", ok),
		r("ev1/trigger", "traceoff:unlimited\n"),
		r("ev1/enable", "0*\n"),
		r("tracing/set_event", "kprobes:ev1\n"),
		r("enable", "X\n"),
		r("tracing/events/enable", "X\n"),
		w("ev1/trigger", "traceoff\n", eexist),
		w("ev1/trigger", "traceon\n", eexist), // one ETT_TRACE_ONOFF per event
		w("ev1/trigger", "traceoff:5\n", eexist),
		w("ev1/trigger", "!traceon\n", ok), // and removing either removes it
		r("ev1/trigger", kpemuAvailableTriggers),
		r("ev1/enable", "0\n"),
		w("ev1/trigger", "traceon\n", ok),
		r("ev1/trigger", "traceon:unlimited\n"),
		w("ev1/trigger", "!traceon:7 if garbage\n", ok),
		w("ev1/trigger", "traceoff:3\n", ok),
		r("ev1/trigger", "traceoff:count=3\n"), // Linux: count=2, after the fork
		w("ev1/trigger", "!traceoff:0\n", ok),
		w("ev1/trigger", "traceoff:0x10 if a != 0\n", ok),
		r("ev1/trigger", "traceoff:count=16 if a != 0\n"),
		w("ev1/trigger", "!traceoff\n", ok),
		w("ev1/trigger", "traceoff:\n", ok),
		r("ev1/trigger", "traceoff:unlimited\n"),
		w("ev1/trigger", "!traceoff\n", ok),
		w("ev1/trigger", "traceoff:3:4\n", ok),
		r("ev1/trigger", "traceoff:count=3\n"),
		w("ev1/trigger", "!traceoff\n", ok),
		w("ev1/trigger", "traceoff:0\n", ok),
		r("ev1/trigger", "traceoff:count=0\n"),
		w("ev1/trigger", "!traceoff\n", ok),
		w("ev1/trigger", "traceoff:010\n", ok),
		r("ev1/trigger", "traceoff:count=8\n"),
		w("ev1/trigger", "!traceoff\n", ok),
		w("ev1/trigger", "traceoff:18446744073709551615\n", ok),
		r("ev1/trigger", "traceoff:unlimited\n"),
		w("ev1/trigger", "!traceoff\n", ok),
		w("ev1/trigger", "traceoff:18446744073709551616\n", syscall.ERANGE),
		w("ev1/trigger", "traceoff:3x\n", einval),
		w("ev1/trigger", "traceoff:-1\n", einval),
		w("ev1/trigger", "traceoff:+1\n", einval),
		w("ev1/trigger", "traceoff:abc\n", einval),
		w("ev1/trigger", "traceoff if\n", einval),
		w("ev1/trigger", "traceoff:3 if\n", einval),
		w("ev1/trigger", "traceoff if nosuch == 1\n", einval),
		// A trigger's bad filter is only an errno.
		r("tracing/error_log", ""),
		r("ev1/filter", "none\n"),
		w("ev1/trigger", "traceoff if a ==\n", einval),
		w("ev1/trigger", "traceoff if (a == 1\n", syscall.ENOENT),
		w("ev1/trigger", "traceoff if a == 1)\n", syscall.EPERM),
		w("ev1/trigger", "traceoff if comm == \"sh\n", syscall.ESRCH),
		w("ev1/trigger", "traceoff if comm > 1\n", einval),
		w("ev1/trigger", "traceoff if a == x\n", einval),
		w("ev1/trigger", "traceoff if  common_pid > 0\n", ok),
		r("ev1/trigger", "traceoff:unlimited if  common_pid > 0\n"),
		w("ev1/trigger", "!traceoff\n", ok),
		w("ev1/trigger", "traceoff\tif common_pid>0 && comm ~ \"s*\"\n", ok),
		r("ev1/trigger", "traceoff:unlimited if common_pid>0 && comm ~ \"s*\"\n"),
		w("ev1/trigger", "!traceoff\n", ok),
		w("ev1/trigger", "traceoff if common_pid > 0   \n", ok),
		r("ev1/trigger", "traceoff:unlimited if common_pid > 0\n"),
		w("ev1/trigger", "!traceoff\n", ok),
		w("ev1/trigger", "traceoff junk\n", einval),
		w("ev1/trigger", "traceoff:3 junk\n", einval),
		w("ev1/trigger", "traceoff: if common_pid > 0\n", ok),
		r("ev1/trigger", "traceoff:unlimited if common_pid > 0\n"),
		w("ev1/trigger", "!traceoff\n", ok),
		w("ev1/trigger", "  traceoff  \n", ok),
		r("ev1/trigger", "traceoff:unlimited\n"),
		w("ev1/trigger", "!traceoff\n", ok),
		w("ev1/trigger", "\n", einval),
		w("ev1/trigger", " \n", einval),
		w("ev1/trigger", "traceoff\x00junk", ok),
		r("ev1/trigger", "traceoff:unlimited\n"),
		w("ev1/trigger", "!traceoff\n", ok),
		w("ev1/trigger", "bogus\n", einval),
		w("ev1/trigger", "!bogus\n", einval),
		w("ev1/trigger", "!\n", einval),
		w("ev1/trigger", "! traceoff\n", einval),
		w("ev1/trigger", "traceoff\ntraceon\n", einval),
		w("ev1/trigger", "traceoffx\n", einval),
		w("ev1/trigger", "TRACEOFF\n", einval),
		w("ev1/trigger", ":traceoff\n", einval),
		// The hist commands (hist_test.go has the rest): enable_hist
		// and disable_hist share ETT_HIST_ENABLE, one per target, as
		// enable_event and disable_event do; an unknown command
		// ("foo:bar" on the oracle) is EINVAL with nothing in error_log.
		w("ev1/trigger", "hist:keys=common_pid\n", ok),
		w("ev1/trigger", "enable_hist:kprobes:ev2\n", ok),
		w("ev1/trigger", "disable_hist:kprobes:ev2\n", eexist),
		r("ev1/trigger", "enable_hist:kprobes:ev2:unlimited\nhist:keys=common_pid:vals=hitcount:sort=hitcount:size=2048 [active]\n"),
		w("ev1/trigger", "!hist:keys=common_pid\n", ok),
		w("ev1/trigger", "!enable_hist:kprobes:ev2\n", ok),
		r("ev1/trigger", kpemuAvailableTriggers),
		r("ev2/enable", "0\n"),
		w("ev1/trigger", "foo:bar\n", einval),
		r("tracing/error_log", ""),
		w("ev1/trigger", "enable_event\n", einval),
		w("ev1/trigger", "enable_event:\n", einval),
		w("ev1/trigger", "enable_event:kprobes\n", einval),
		w("ev1/trigger", "enable_event:kprobes:\n", einval),
		w("ev1/trigger", "enable_event:kprobes:nosuch\n", einval),
		w("ev1/trigger", "enable_event:nosys:ev2\n", einval),
		w("ev1/trigger", "enable_event kprobes:ev2\n", ok),
		w("ev1/trigger", "enable_event:kprobes:ev2\n", eexist),
		r("ev1/trigger", "enable_event:kprobes:ev2:unlimited\n"),
		r("ev1/enable", "0*\n"),
		r("ev2/enable", "0*\n"), // Linux: 1*, the fork fired the trigger
		r("ev3/enable", "0\n"),
		w("ev1/trigger", "disable_event:kprobes:ev2\n", eexist), // one ETT_EVENT_ENABLE per target
		w("ev1/trigger", "enable_event:kprobes:ev2:5\n", eexist),
		w("ev1/trigger", "enable_event:kprobes:ev3:2 if common_pid > 0\n", ok),
		w("ev1/trigger", "traceoff\n", ok),
		r("ev1/trigger", "traceoff:unlimited\nenable_event:kprobes:ev3:count=2 if common_pid > 0\nenable_event:kprobes:ev2:unlimited\n"),
		w("ev1/trigger", "enable_event:kprobes:ev4:\n", einval),
		w("ev1/trigger", "enable_event:kprobes:ev4 junk\n", einval),
		w("ev1/trigger", "enable_event:kprobes:ev4:x\n", einval),
		r("ev4/enable", "0\n"), // a refused enable_event leaves its target alone
		w("ev1/trigger", "enable_event:kprobes:ev4:3:9\n", ok),
		w("ev1/trigger", "disable_event:kprobes:ev1\n", ok),
		r("ev1/trigger", "disable_event:kprobes:ev1:unlimited\nenable_event:kprobes:ev4:count=3\ntraceoff:unlimited\n"+
			"enable_event:kprobes:ev3:count=2 if common_pid > 0\nenable_event:kprobes:ev2:unlimited\n"),
		r("ev1/enable", "0*\n"),
		r("ev4/enable", "0*\n"),
		w("ev1/trigger", "!enable_event:kprobes:nosuch\n", einval),
		w("ev1/trigger", "!enable_event\n", einval),
		w("ev1/trigger", "!enable_event:kprobes:ev4:garbage\n", ok),
		r("ev4/enable", "0\n"),
		w("ev1/trigger", "!disable_event:kprobes:ev2\n", ok), // removes enable_event:kprobes:ev2
		r("ev1/trigger", "disable_event:kprobes:ev1:unlimited\ntraceoff:unlimited\nenable_event:kprobes:ev3:count=2 if common_pid > 0\n"),
		r("ev2/enable", "0\n"), // Linux: 1, as the trigger had enabled it

		// Section 3: an event with triggers, or that a trigger aims at,
		// is busy; O_TRUNC clears no trigger, and `echo > trigger` is an
		// empty command.
		w("tracing/kprobe_events", "-:ev1\n", syscall.EBUSY),
		w("tracing/kprobe_events", "-:ev3\n", syscall.EBUSY),
		{file: "tracing/kprobe_events", trunc: true, err: syscall.EBUSY},
		w("tracing/dynamic_events", "-:kprobes/ev3\n", syscall.EBUSY),
		{file: "ev1/trigger", data: "traceoff\n", trunc: true, err: eexist},
		{file: "ev1/trigger", data: "\n", trunc: true, err: einval},
		r("ev1/trigger", "disable_event:kprobes:ev1:unlimited\ntraceoff:unlimited\nenable_event:kprobes:ev3:count=2 if common_pid > 0\n"),
		w("ev1/trigger", "!traceoff\n", ok),
		w("ev1/trigger", "!enable_event:kprobes:ev3\n", ok),
		w("ev1/trigger", "!disable_event:kprobes:ev1\n", ok),
		r("ev1/trigger", kpemuAvailableTriggers),
		r("ev1/enable", "0\n"),
		r("ev3/enable", "0\n"),
		r("tracing/set_event", ""),
		w("tracing/kprobe_events", "p:ev5 sched_fork\n", ok),
		w("ev5/trigger", "traceoff\n", ok),
		w("tracing/kprobe_events", "-:ev5\n", syscall.EBUSY),
		w("ev5/trigger", "!traceoff\n", ok),
		w("tracing/kprobe_events", "-:ev5\n", ok),
		w("tracing/kprobe_events", "p:ev5 sched_fork\n", ok),
		w("ev1/trigger", "enable_event:kprobes:ev5\n", ok),
		w("tracing/kprobe_events", "-:ev5\n", syscall.EBUSY),
		w("ev1/trigger", "!enable_event:kprobes:ev5\n", ok),
		// Linux: EBUSY still, as the trigger had fired and left ev5
		// enabled (TestTriggersFire has that case).
		w("tracing/kprobe_events", "-:ev5\n", ok),
	})
	if t.Failed() {
		return
	}
	// A trigger file held open while its event goes fails (debugfs's
	// EIO; Linux's tracefs says ENODEV) and sets nothing.
	if err := f.write("tracing/kprobe_events", "p:ev6 sched_fork\n", false); err != nil {
		t.Fatal(err)
	}
	n, err := f.tree.Lookup("tracing/events/kprobes/ev6/trigger")
	if err != nil {
		t.Fatal(err)
	}
	h, err := n.(*debugfs.File).Open(t.Context(), os.O_WRONLY)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.write("tracing/kprobe_events", "-:ev6\n", false); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Write(t.Context(), []byte("traceoff\n"), 0); !errors.Is(err, syscall.EIO) {
		t.Errorf("a write to a removed event's trigger = %v, want EIO", err)
	}
}

// TestSoftModeEnableFile replays section 4 of the oracle session: the
// enable file of an event with a trigger reads 0* (armed, its records
// dropped) or 1* (enabled), writes of 0 and 1 and of the group and
// set_event files flip between them, and removing the trigger leaves the
// event as the last write left it.
func TestSoftModeEnableFile(t *testing.T) {
	f := setup(t)
	if err := f.write("tracing/kprobe_events", triggerEvents, false); err != nil {
		t.Fatal(err)
	}
	f.runSteps(t, []triggerStep{
		w("ev1/trigger", "traceoff", 0),
		r("ev1/enable", "0*\n"),
	})
	list := f.read(t, "kprobes/list")
	if strings.Count(list, "kernel_clone+0x0    \n") != 1 || strings.Count(list, "kernel_clone+0x0    [DISABLED]\n") != 1 {
		t.Errorf("kprobes/list: the soft-mode kprobe is armed, the kretprobe is not:\n%s", list)
	}
	f.runSteps(t, []triggerStep{
		w("ev1/enable", "1", 0),
		r("ev1/enable", "1*\n"),
		w("ev1/enable", "0", 0),
		r("ev1/enable", "0*\n"),
		r("tracing/set_event", "kprobes:ev1\n"),
		w("ev1/enable", "1", 0),
		w("ev1/trigger", "!traceoff", 0),
		r("ev1/enable", "1\n"),
		w("ev1/trigger", "traceoff", 0),
		r("ev1/enable", "1*\n"),
		w("ev1/trigger", "!traceoff", 0),
		r("ev1/enable", "1\n"),
		w("ev1/enable", "0", 0),
		w("ev1/trigger", "traceoff", 0),
		w("tracing/events/enable", "1", 0),
		r("ev1/enable", "1*\n"),
		w("tracing/events/enable", "0", 0),
		r("ev1/enable", "0*\n"),
		r("tracing/set_event", "kprobes:ev1\n"),
		w("tracing/set_event", "kprobes:ev1", 0),
		r("ev1/enable", "1*\n"),
		{file: "tracing/set_event", trunc: true},
		r("ev1/enable", "0*\n"),
		r("tracing/set_event", "kprobes:ev1\n"),
		w("ev1/trigger", "!traceoff", 0),
		r("ev1/enable", "0\n"),
		r("tracing/set_event", ""),
		// Two triggers aimed at one event (section 5, M): it leaves
		// soft mode with the last.
		w("ev1/trigger", "enable_event:kprobes:ev2", 0),
		w("ev3/trigger", "disable_event:kprobes:ev2", 0),
		r("ev2/enable", "0*\n"),
		w("ev1/trigger", "!enable_event:kprobes:ev2", 0),
		r("ev2/enable", "0*\n"),
		w("ev3/trigger", "!disable_event:kprobes:ev2", 0),
		r("ev2/enable", "0\n"),
	})
	if list := f.read(t, "kprobes/list"); strings.Count(list, "[DISABLED]") != 4 {
		t.Errorf("kprobes/list after the triggers went:\n%s", list)
	}
}

// A uprobe event holds triggers and is their target as a kprobe event is:
// a trigger arms it in soft mode ("0*"); removing the triggers ends the
// soft mode (the event an enable_event fired stays enabled, as on Linux).
// On /bin/sh's open(), its traceoff trigger fires.
func TestTriggerOnUprobeEvent(t *testing.T) {
	f := uprobeFixture(t)
	sh := guestProgram(t, f.k, "/bin/sh")
	off, _ := fileOffset(t, sh, "open")
	if err := f.write("tracing/kprobe_events", "p:ev1 kernel_clone\n", false); err != nil {
		t.Fatal(err)
	}
	if err := f.write("tracing/uprobe_events", fmt.Sprintf("p:up /bin/sh:%#x\n", off), false); err != nil {
		t.Fatal(err)
	}
	f.runSteps(t, []triggerStep{
		w("tracing/events/uprobes/up/trigger", "traceoff", 0),
		r("tracing/events/uprobes/up/trigger", "traceoff:unlimited\n"),
		r("tracing/events/uprobes/up/enable", "0*\n"),
		w("ev1/trigger", "enable_event:uprobes:up", 0),
		r("ev1/trigger", "enable_event:uprobes:up:unlimited\n"),
		r("ev1/enable", "0*\n"),
	})
	waitfor.Until(t, "the uprobe's traceoff and kernel_clone's enable_event to fire", func() bool {
		return f.read(t, "tracing/tracing_on") == "0\n" && strings.HasPrefix(f.read(t, "tracing/events/uprobes/up/enable"), "1")
	})
	f.runSteps(t, []triggerStep{
		w("tracing/events/uprobes/up/trigger", "!traceoff", 0),
		w("ev1/trigger", "!enable_event:uprobes:up", 0),
		r("tracing/events/uprobes/up/trigger", kpemuAvailableTriggers),
		r("ev1/trigger", kpemuAvailableTriggers),
		r("ev1/enable", "0\n"),
		// kernel_clone's enable_event enabled it for real meanwhile.
		r("tracing/events/uprobes/up/enable", "1\n"),
		w("tracing/events/uprobes/up/enable", "0", 0),
	})
	if err := f.write("tracing/uprobe_events", "", true); err != nil {
		t.Errorf("removing the uprobe: %v", err)
	}
}

// TestTriggersFire runs the guest (its workload forks all the time) and
// watches the triggers of section 5 of the oracle session fire.
func TestTriggersFire(t *testing.T) {
	f := setup(t)
	f.run(t)
	if err := f.write("tracing/kprobe_events", triggerEvents, false); err != nil {
		t.Fatal(err)
	}
	write := func(p, d string) {
		t.Helper()
		if !strings.HasPrefix(p, "tracing/") {
			p = "tracing/events/kprobes/" + p
		}
		if err := f.write(p, d, true); err != nil {
			t.Fatalf("%s <- %q: %v", p, d, err)
		}
	}
	waitFor := func(p, want string) {
		t.Helper()
		if !strings.HasPrefix(p, "tracing/") {
			p = "tracing/events/kprobes/" + p
		}
		waitfor.Until(t, fmt.Sprintf("%s to read %q", p, want), func() bool { return f.read(t, p) == want })
	}

	// traceoff on kernel_clone turns tracing off; it runs after the
	// event's record, so the record of the hit that turned tracing off is
	// the last in the buffer, and wake_up_new_task, which the same fork
	// reaches next, is not recorded.
	write("ev1/enable", "1")
	write("ev2/enable", "1")
	write("ev1/trigger", "traceoff")
	waitFor("tracing/tracing_on", "0\n")
	lines := traceLines(f.read(t, "tracing/trace"))
	if len(lines) == 0 || !strings.Contains(lines[len(lines)-1], " ev1: (kernel_clone+0x0/") {
		t.Errorf("the last record is not the ev1 hit that turned tracing off:\n%s", strings.Join(lines, "\n"))
	}
	write("ev1/trigger", "!traceoff")
	write("ev2/enable", "0")

	// traceoff:2 fires twice; a hit while tracing is off spends nothing.
	write("ev1/trigger", "traceoff:2")
	write("tracing/tracing_on", "1")
	waitFor("tracing/tracing_on", "0\n")
	waitFor("ev1/trigger", "traceoff:count=1\n")
	write("tracing/tracing_on", "1")
	waitFor("tracing/tracing_on", "0\n")
	waitFor("ev1/trigger", "traceoff:count=0\n")
	write("tracing/tracing_on", "1")
	n := hitsOf(t, f, "ev1")
	waitfor.Until(t, "two more ev1 hits", func() bool { return hitsOf(t, f, "ev1") >= n+2 })
	if got := f.read(t, "tracing/tracing_on"); got != "1\n" {
		t.Errorf("a spent traceoff:2 turned tracing off again: tracing_on = %q", got)
	}
	write("ev1/trigger", "!traceoff")
	write("ev1/enable", "0")

	// stacktrace:2 records the guest stack after the event, twice: a
	// "<stack trace>" entry whose first frame is the probed function.
	write("tracing/trace", "")
	write("ev1/trigger", "stacktrace:2")
	write("ev1/enable", "1")
	waitFor("ev1/trigger", "stacktrace:count=0\n")
	write("ev1/enable", "0")
	tr := f.read(t, "tracing/trace")
	if n := strings.Count(tr, "<stack trace>\n => kernel_clone\n => "); n != 2 {
		t.Errorf("%d stack traces starting at kernel_clone after stacktrace:2, want 2:\n%s", n, tr)
	}
	write("ev1/trigger", "!stacktrace")

	// enable_event: the target is armed but soft-disabled (0*) from the
	// moment the trigger is set; the first kernel_clone turns it on (1*)
	// without touching kernel text, and its records appear. Taking the
	// trigger away leaves it enabled, so it is busy.
	write("tracing/trace", "")
	write("ev1/trigger", "enable_event:kprobes:ev2")
	if got := f.read(t, "tracing/events/kprobes/ev1/enable") + f.read(t, "tracing/events/kprobes/ev2/enable"); got != "0*\n0*\n" && got != "0*\n1*\n" {
		t.Errorf("enable files after enable_event: %q", got)
	}
	waitFor("ev2/enable", "1*\n")
	waitfor.Until(t, "an ev2 record once enable_event fired", func() bool {
		return strings.Contains(f.read(t, "tracing/trace"), " ev2: (wake_up_new_task+0x0/")
	})
	if strings.Contains(f.read(t, "tracing/trace"), " ev1: ") {
		t.Error("the soft-disabled ev1 was recorded")
	}
	write("ev1/trigger", "!enable_event:kprobes:ev2")
	waitFor("ev2/enable", "1\n")
	waitFor("ev1/enable", "0\n")
	if err := f.write("tracing/kprobe_events", "-:ev2\n", false); !errors.Is(err, syscall.EBUSY) {
		t.Errorf("removing the event enable_event left enabled = %v, want EBUSY", err)
	}

	// disable_event turns it off again.
	// (It reads 1* only until the next fork, which on a loaded host can
	// come before the first read: wait for the end alone.)
	write("ev1/trigger", "disable_event:kprobes:ev2")
	waitFor("ev2/enable", "0*\n")
	write("ev1/trigger", "!disable_event:kprobes:ev2")
	waitFor("ev2/enable", "0\n")
	write("tracing/tracing_on", "1")
	if list := f.read(t, "kprobes/list"); strings.Count(list, "[DISABLED]") != 4 {
		t.Errorf("kprobes/list after the triggers went:\n%s", list)
	}
}

// traceLines are the trace file's records, without the header.
func traceLines(trace string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSuffix(trace, "\n"), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// TestTriggerOrder steps the guest (deterministically) one slice at a
// time, to see what each trigger does to the hit that fired it, as the
// oracle session's section 5 saw: an unconditional traceon fires before
// the record, so that hit is recorded; a conditional one sees the record
// after it was reserved with tracing off, so that hit is not; an
// enable_event aimed at its own event records from the next hit on; a
// filtered traceoff passes over hits its filter rejects; the event's own
// filter hides nothing from a trigger; a return probe fires triggers too.
func TestTriggerOrder(t *testing.T) {
	f := setup(t)
	if err := f.write("tracing/kprobe_events", triggerEvents, false); err != nil {
		t.Fatal(err)
	}
	write := func(p, d string) {
		t.Helper()
		if !strings.HasPrefix(p, "tracing/") {
			p = "tracing/events/kprobes/" + p
		}
		if err := f.write(p, d, true); err != nil {
			t.Fatalf("%s <- %q: %v", p, d, err)
		}
	}
	// stepUntil steps until p reads want, a few instructions at a time,
	// so that no second kernel_clone slips in after the first.
	stepUntil := func(p, want string) {
		t.Helper()
		for i := 0; i < 20000; i++ {
			if f.read(t, p) == want {
				return
			}
			f.step(t, 200)
		}
		t.Fatalf("%s never read %q", p, want)
	}
	ev1Records := func() int { return strings.Count(f.read(t, "tracing/trace"), " ev1: (kernel_clone+") }

	cases := []struct {
		name    string
		trigger string
		filter  string
		on      string // tracing_on before
		after   string // tracing_on after the trigger fired
		records int    // ev1 records of that hit
	}{
		{"unconditional traceon", "traceon", "", "0", "1\n", 1},
		{"conditional traceon", "traceon if a != 0", "", "0", "1\n", 0},
		{"traceoff", "traceoff", "", "1", "0\n", 1},
		{"filtered traceoff", "traceoff if common_pid == 99999 || a != 0", "", "1", "0\n", 1},
		{"event filter", "traceoff", "common_pid == 99999", "1", "0\n", 0},
	}
	write("ev1/enable", "1")
	for _, c := range cases {
		write("tracing/tracing_on", c.on)
		write("tracing/trace", "")
		if c.filter != "" {
			write("ev1/filter", c.filter)
		}
		write("ev1/trigger", c.trigger)
		stepUntil("tracing/tracing_on", c.after)
		if got := ev1Records(); got != c.records {
			t.Errorf("%s: %d records of the hit, want %d:\n%s", c.name, got, c.records, f.read(t, "tracing/trace"))
		}
		write("ev1/trigger", "!"+c.trigger)
		write("ev1/filter", "0")
	}

	// A filter that rejects every hit: the hits come, traceoff does not.
	write("tracing/tracing_on", "1")
	write("ev1/trigger", "traceoff if common_pid == 99999")
	for n := hitsOf(t, f, "ev1"); hitsOf(t, f, "ev1") < n+2; {
		f.step(t, 10_000)
	}
	if got := f.read(t, "tracing/tracing_on"); got != "1\n" {
		t.Errorf("a traceoff whose filter rejects every hit turned tracing off")
	}
	write("ev1/trigger", "!traceoff")

	// enable_event on itself: the hit that fires it is not recorded.
	write("ev1/enable", "0")
	write("tracing/trace", "")
	write("ev1/trigger", "enable_event:kprobes:ev1")
	stepUntil("tracing/events/kprobes/ev1/enable", "1*\n")
	if got := ev1Records(); got != 0 {
		t.Errorf("enable_event on itself recorded the hit that fired it:\n%s", f.read(t, "tracing/trace"))
	}
	f.step(t, 200_000)
	if ev1Records() == 0 {
		t.Error("no record after enable_event enabled its own event")
	}
	write("ev1/trigger", "!enable_event:kprobes:ev1")
	write("ev1/enable", "0")

	// A return probe's trigger.
	write("tracing/tracing_on", "1")
	write("ev4/trigger", "traceoff")
	stepUntil("tracing/tracing_on", "0\n")
	write("ev4/trigger", "!traceoff")
	write("tracing/tracing_on", "1")
}

// hitsOf is the event's hits in kprobe_profile.
func hitsOf(t *testing.T, f *fixture, event string) int {
	t.Helper()
	for _, l := range strings.Split(f.read(t, "tracing/kprobe_profile"), "\n") {
		if fs := strings.Fields(l); len(fs) == 3 && fs[0] == event {
			n, err := strconv.Atoi(fs[1])
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no %s in kprobe_profile", event)
	return 0
}
