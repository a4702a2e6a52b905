package tracing

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/kpemu/kpemu/tracing/filter"
)

// The expected bytes here are the oracle's (Debian's arm64 6.1 under
// QEMU): each write made with one write(2), error_log read after it.

const forkTrigger = "tracing/events/sched/sched_process_fork/trigger"

// histLogEntry is one error_log entry at time 0 (the test clock's).
func histLogEntry(event, msg, cmd string, pos int) string {
	return fmt.Sprintf("[    0.000000] hist:sched:%s: error: %s\n  Command: %s\n%s^\n", event, msg, cmd, strings.Repeat(" ", len("  Command: ")+pos))
}

func TestHistParse(t *testing.T) {
	type logged struct {
		msg string
		pos int
	}
	tr, _ := newTestTracing(t, 1)
	for _, c := range []struct {
		cmd  string
		err  syscall.Errno
		logs []logged
	}{
		{"hist:keys=parent_pid:vals=child_pid", 0, nil},
		{"hist:keys=nosuch", syscall.EINVAL, []logged{{"Couldn't find field", 10}}},
		{"hist:keys=parent_pid.foo", syscall.EINVAL, []logged{{"Invalid field modifier", 21}}},
		{"hist:keys=parent_pid:vals=parent_comm", 0, nil},
		{"hist:keys=parent_pid:sort=nosuch", syscall.EINVAL, []logged{{"Sort field must be a key or a val", 26}}},
		{"hist:keys=parent_pid:sort=hitcount.up", syscall.EINVAL, []logged{{"Invalid sort modifier", 35}}},
		{"hist:keys=parent_pid:sort=", syscall.EINVAL, []logged{{"Empty assignment", 21}}},
		{"hist:keys=parent_pid:sort=,hitcount", syscall.EINVAL, []logged{{"Empty sort field", 21}}},
		{"hist:keys=parent_pid:sort=hitcount,parent_pid,child_pid", syscall.EINVAL, []logged{{"Too many sort fields (Max = 2)", 21}}},
		{"hist:keys=parent_pid:x=", syscall.EINVAL, []logged{{"Empty assignment", 21}}},
		{"hist:keys=parent_pid:x=1,x=2", syscall.EINVAL, []logged{{"Variable already defined", 21}}},
		{"hist:keys=parent_pid:x=$y", syscall.EINVAL, []logged{{"Couldn't find variable", 7}, {"Couldn't find field", 23}}},
		{"hist:keys=parent_pid:x=parent_comm+1", syscall.EINVAL, []logged{{"String type can not be an operand in expression", 23}}},
		{"hist:keys=parent_pid:x=3/0", syscall.EDOM, []logged{{"Division by zero", 25}}},
		{"hist:keys=parent_pid:x=-(1)+2", syscall.EINVAL, []logged{{"Unary minus not supported in sub-expressions", 25}}},
		{"hist:keys=parent_pid:x=1+2+3+4+5", syscall.EINVAL, []logged{{"Too many subexpressions (3 max)", 23}}},
		{"hist:keys=common_pid:x=32+10*3/20-4", syscall.EINVAL, []logged{{"Too many subexpressions (3 max)", 26}}},
		{"hist:keys=parent_pid:x=a=b", syscall.EINVAL, []logged{{"Couldn't find field", 23}}},
		{"hist:keys=parent_pid:size=1", syscall.EINVAL, nil},
		{"hist:keys=parent_pid:size=200000", syscall.EINVAL, nil},
		{"hist:vals=parent_pid", syscall.EINVAL, nil},
		{"hist", syscall.EINVAL, nil},
		{"hist:keys=parent_pid:foo", syscall.EINVAL, nil},
		{"hist:keys=parent_pid,child_pid,parent_comm,child_comm", syscall.EINVAL, nil},
		{"hist:keys=parent_pid:vals=child_pid,parent_pid,common_pid,child_pid", syscall.EINVAL, nil},
		{"hist:keys=parent_pid:x=common_timestamp.usecs-common_timestamp", syscall.EINVAL, []logged{{"Timestamp units in expression don't match", 0}}},
		{"hist:keys=parent_pid:x=abc-1", syscall.EINVAL, []logged{{"Couldn't find field", 23}}},
		{"hist:keys=parent_pid:x=1x", syscall.EINVAL, []logged{{"Expecting numeric literal", 23}}},
		{"hist:keys=parent_pid:vals=child_pid.log2", syscall.EINVAL, []logged{{"Invalid field modifier", 26}}},
		{"hist:keys=parent_comm.hex", 0, nil},
		{"hist:keys=child_pid.buckets=0", syscall.EINVAL, []logged{{"Invalid field modifier", 28}}},
		{"hist:keys=parent_pid if", syscall.EINVAL, nil},
		{"hist:keys=parent_pid if nosuch == 1", syscall.EINVAL, nil},
		{"hist:keys=parent_pid:x=-1", syscall.EINVAL, nil},
		{"hist:keys=parent_pid:x=-(1", syscall.EINVAL, nil},
		{"hist:keys=$x", syscall.EINVAL, []logged{{"Couldn't find variable", 11}, {"Couldn't find field", 10}}},
		{"hist:keys=parent_pid:name=a,b", 0, nil},
	} {
		err := tr.tree.WriteFile(forkTrigger, []byte(c.cmd), false)
		switch {
		case c.err == 0 && err != nil:
			t.Errorf("%q: %v, want success", c.cmd, err)
		case c.err != 0 && !errors.Is(err, c.err):
			t.Errorf("%q: %v, want %v", c.cmd, err, c.err)
		}
		var want string
		for _, l := range c.logs {
			want += histLogEntry("sched_process_fork", l.msg, c.cmd, l.pos)
		}
		if got, _ := tr.tree.ReadFile("tracing/error_log"); string(got) != want {
			t.Errorf("%q: error_log reads\n%s\nwant\n%s", c.cmd, got, want)
		}
		// O_TRUNC takes the hist triggers away (then the empty
		// command is EINVAL); error_log is cleared likewise.
		if err := tr.tree.WriteFile(forkTrigger, nil, true); err != nil {
			t.Fatal(err)
		}
		if err := tr.tree.WriteFile("tracing/error_log", nil, true); err != nil {
			t.Fatal(err)
		}
	}
}

// TestHistTriggerFile replays the oracle's triggers on sched_process_fork:
// how each prints in the trigger file, then pause, clear, cont, the
// errors of a second copy and of a cont with nothing to continue, and
// removal.
func TestHistTriggerFile(t *testing.T) {
	tr, _ := newTestTracing(t, 1)
	write := func(cmd string, trunc bool, want syscall.Errno) {
		t.Helper()
		err := tr.tree.WriteFile(forkTrigger, []byte(cmd+"\n"), trunc)
		if (want == 0 && err != nil) || (want != 0 && !errors.Is(err, want)) {
			t.Errorf("%q: %v, want %v", cmd, err, want)
		}
	}
	read := func(p, want string) {
		t.Helper()
		if got, _ := tr.tree.ReadFile(p); string(got) != want {
			t.Errorf("%s reads\n%s\nwant\n%s", p, got, want)
		}
	}
	read(forkTrigger, availableTriggers)
	read("tracing/events/sched/sched_process_fork/hist", "")
	for _, c := range []string{
		"hist:keys=parent_pid:vals=child_pid",
		"hist:keys=common_pid.execname,parent_comm:vals=hitcount,child_pid.hex:sort=common_pid,hitcount.descending:size=100",
		"hist:keys=child_pid.log2:vals=child_pid.percent,parent_pid.graph",
		"hist:keys=child_pid.buckets=10:x=child_pid*2+1,y=16-8-4-2:vals=parent_pid if child_pid > 5",
		"hist:keys=common_timestamp.usecs",
		"hist:keys=common_pid.sym-offset,child_pid.sym:vals=child_pid",
		"hist:keys=stacktrace:vals=hitcount",
		"hist:keys=common_cpu,cpu",
	} {
		write(c, false, 0)
	}
	lines := "hist:keys=common_pid.execname,parent_comm:vals=hitcount,child_pid.hex:sort=common_pid.execname,hitcount.descending:size=128 [active]\n" +
		"hist:keys=child_pid.log2:vals=hitcount,child_pid.percent,parent_pid.graph:sort=hitcount:size=2048 [active]\n" +
		"hist:keys=child_pid.buckets=10:vals=hitcount,parent_pid:x=child_pid*2+1,y=2:sort=hitcount:size=2048 if child_pid > 5 [active]\n" +
		"hist:keys=common_timestamp.usecs:vals=hitcount:sort=hitcount:size=2048:clock=global [active]\n" +
		"hist:keys=common_pid.sym-offset,child_pid.sym:vals=hitcount,child_pid:sort=hitcount:size=2048 [active]\n" +
		"hist:keys=stacktrace:vals=hitcount:sort=hitcount:size=2048 [active]\n" +
		"hist:keys=common_cpu,common_cpu:vals=hitcount:sort=hitcount:size=2048 [active]\n"
	read(forkTrigger, "hist:keys=parent_pid:vals=hitcount,child_pid:sort=hitcount:size=2048 [active]\n"+lines)
	read("tracing/error_log", "")

	write("hist:keys=parent_pid:vals=child_pid", false, syscall.EEXIST)
	read("tracing/error_log", histLogEntry("sched_process_fork", "Hist trigger already exists", "hist:keys=parent_pid:vals=child_pid", 0))
	write("", true, syscall.EINVAL) // O_TRUNC drops the hists; then an empty command
	read(forkTrigger, availableTriggers)
	if err := tr.tree.WriteFile("tracing/error_log", nil, true); err != nil {
		t.Fatal(err)
	}

	write("hist:keys=parent_pid:vals=child_pid:pause", false, 0)
	read(forkTrigger, "hist:keys=parent_pid:vals=hitcount,child_pid:sort=hitcount:size=2048 [paused]\n")
	write("hist:keys=parent_pid:vals=child_pid:clear", false, 0)
	write("hist:keys=parent_pid:vals=child_pid:cont", false, 0)
	read(forkTrigger, "hist:keys=parent_pid:vals=hitcount,child_pid:sort=hitcount:size=2048 [active]\n")
	write("hist:keys=parent_pid:vals=hitcount:cont", false, syscall.ENOENT)
	read("tracing/error_log", histLogEntry("sched_process_fork", "Can't clear or continue a nonexistent hist trigger", "hist:keys=parent_pid:vals=hitcount:cont", 0))
	write("!hist:keys=parent_pid:vals=child_pid", false, 0)
	write("!hist:keys=parent_pid:vals=child_pid", false, 0) // nothing to remove: no error
	read(forkTrigger, availableTriggers)

	// Named: the second event shares the first's data; a mismatch is
	// refused; disable_hist pauses the target's hists.
	write("hist:name=foo:keys=common_pid", false, 0)
	exitTrigger := "tracing/events/sched/sched_process_exit/trigger"
	if err := tr.tree.WriteFile(exitTrigger, []byte("hist:name=foo:keys=common_pid:vals=hitcount,prio"), false); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("a mismatching named hist: %v, want EINVAL", err)
	}
	if err := tr.tree.WriteFile("tracing/error_log", nil, true); err != nil {
		t.Fatal(err)
	}
	if err := tr.tree.WriteFile(exitTrigger, []byte("hist:name=foo:keys=common_pid"), false); err != nil {
		t.Fatal(err)
	}
	if err := tr.tree.WriteFile(exitTrigger, []byte("disable_hist:sched:sched_process_fork"), false); err != nil {
		t.Fatal(err)
	}
	if err := tr.tree.WriteFile(exitTrigger, []byte("enable_hist:sched:sched_process_exit:3 if pid > 1"), false); err != nil {
		t.Fatal(err)
	}
	read(exitTrigger, "enable_hist:sched:sched_process_exit:count=3 if pid > 1\ndisable_hist:sched:sched_process_fork:unlimited\n"+
		"hist:name=foo:keys=common_pid:vals=hitcount:sort=hitcount:size=2048 [active]\n")
	ef := tr.top.file(tr.findEvent("sched", "sched_process_exit"))
	tr.fire(tr.top, ef.triggers.Load().list[1], nil, 0)
	read(forkTrigger, "hist:name=foo:keys=common_pid:vals=hitcount:sort=hitcount:size=2048 [paused]\n")
}

// histTriggerOf is the i-th hist trigger of ev's file in the top array.
func histTriggerOf(t *testing.T, tr *Tracing, group, name string, i int) *histData {
	t.Helper()
	set := tr.top.file(tr.findEvent(group, name)).triggers.Load()
	for _, x := range set.list {
		if x.hist != nil {
			if i == 0 {
				return x.hist.hd
			}
			i--
		}
	}
	t.Fatalf("no hist trigger %d on %s:%s", i, group, name)
	return nil
}

func forkHit(parent, child int, comm string) *histHit {
	return &histHit{fields: map[string]filter.Value{
		"common_pid": {Num: uint64(parent)}, "parent_pid": {Num: uint64(parent)}, "child_pid": {Num: uint64(child)},
		"parent_comm": {Str: comm, IsStr: true}, "child_comm": {Str: comm, IsStr: true},
	}}
}

// TestHistRender feeds a hist the hits the oracle's forks made and
// compares the hist file with the oracle's bytes.
func TestHistRender(t *testing.T) {
	tr, _ := newTestTracing(t, 1)
	for _, c := range []string{
		"hist:keys=parent_pid:vals=child_pid",
		"hist:keys=child_pid.log2:vals=child_pid.percent,parent_pid.graph",
		"hist:keys=common_pid.execname,parent_comm:vals=hitcount,child_pid.hex:sort=common_pid,hitcount.descending:size=100",
		"hist:keys=common_pid.sym-offset,child_pid.sym:vals=child_pid",
		"hist:keys=child_pid.buckets=10:vals=parent_pid if child_pid > 5",
		"hist:keys=common_cpu,cpu",
	} {
		if err := tr.tree.WriteFile(forkTrigger, []byte(c), false); err != nil {
			t.Fatalf("%s: %v", c, err)
		}
	}
	hits := []*histHit{forkHit(95, 96, "init"), forkHit(97, 98, "init"), forkHit(1, 100, "init"), forkHit(1, 92, "init")}
	for _, h := range hits {
		histTriggerOf(t, tr, "sched", "sched_process_fork", 0).hit(h, "init")
		histTriggerOf(t, tr, "sched", "sched_process_fork", 1).hit(h, "init")
	}
	for _, h := range []*histHit{forkHit(1, 200, "init"), forkHit(113, 114, "init"), forkHit(1, 300, "init")} {
		histTriggerOf(t, tr, "sched", "sched_process_fork", 2).hit(h, "init")
	}
	for _, h := range []*histHit{forkHit(1, 0x70, "init"), forkHit(0x71, 0x72, "init")} {
		histTriggerOf(t, tr, "sched", "sched_process_fork", 3).hit(h, "init")
	}
	for _, h := range []*histHit{forkHit(1, 104, "init"), forkHit(1, 122, "init"), forkHit(1, 124, "init")} {
		histTriggerOf(t, tr, "sched", "sched_process_fork", 4).hit(h, "init")
	}
	histTriggerOf(t, tr, "sched", "sched_process_fork", 5).hit(forkHit(1, 2, "init"), "init")
	want := `# event histogram
#
# trigger info: hist:keys=parent_pid:vals=hitcount,child_pid:sort=hitcount:size=2048 [active]
#

{ parent_pid:         95 } hitcount:          1  child_pid:         96
{ parent_pid:         97 } hitcount:          1  child_pid:         98
{ parent_pid:          1 } hitcount:          2  child_pid:        192

Totals:
    Hits: 4
    Entries: 3
    Dropped: 0


# event histogram
#
# trigger info: hist:keys=child_pid.log2:vals=hitcount,child_pid.percent,parent_pid.graph:sort=hitcount:size=2048 [active]
#

{ child_pid: ~ 2^7  } hitcount:          4  child_pid (%): 100.00  parent_pid: ####################

Totals:
    Hits: 4
    Entries: 1
    Dropped: 0


# event histogram
#
# trigger info: hist:keys=common_pid.execname,parent_comm:vals=hitcount,child_pid.hex:sort=common_pid.execname,hitcount.descending:size=128 [active]
#

{ common_pid: init            [         1], parent_comm: init                                               } hitcount:          2  child_pid:        1f4
{ common_pid: init            [       113], parent_comm: init                                               } hitcount:          1  child_pid:         72

Totals:
    Hits: 3
    Entries: 2
    Dropped: 0


# event histogram
#
# trigger info: hist:keys=common_pid.sym-offset,child_pid.sym:vals=hitcount,child_pid:sort=hitcount:size=2048 [active]
#

{ common_pid: [1] 0x1                                                    , child_pid: [70] 0x70                                          } hitcount:          1  child_pid:        112
{ common_pid: [71] 0x71                                                   , child_pid: [72] 0x72                                          } hitcount:          1  child_pid:        114

Totals:
    Hits: 2
    Entries: 2
    Dropped: 0


# event histogram
#
# trigger info: hist:keys=child_pid.buckets=10:vals=hitcount,parent_pid:sort=hitcount:size=2048 if child_pid > 5 [active]
#

{ child_pid: ~ 100-109 } hitcount:          1  parent_pid:          1
{ child_pid: ~ 120-129 } hitcount:          2  parent_pid:          2

Totals:
    Hits: 3
    Entries: 2
    Dropped: 0


# event histogram
#
# trigger info: hist:keys=common_cpu,common_cpu:vals=hitcount:sort=hitcount:size=2048 [active]
#

{ common_cpu:          0, cpu:          0 } hitcount:          1

Totals:
    Hits: 1
    Entries: 1
    Dropped: 0
`
	got, err := tr.tree.ReadFile("tracing/events/sched/sched_process_fork/hist")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("hist reads\n%s\nwant\n%s", got, want)
	}
}

// TestHistExpr checks the selftest's constant expressions, folded as
// Linux folds them, left to right within a precedence.
func TestHistExpr(t *testing.T) {
	for _, c := range []struct {
		expr string
		want string
	}{
		{"123", "123"},
		{"16-8-4-2", "2"},
		{"64/8/4/2", "1"},
		{"16-8+4+2", "14"},
		{"4*3/2*2", "12"},
		{"4+3*2-2", "8"},
		{"4+6/2-2", "5"},
		{"child_pid*2+1", "child_pid*2+1"},
		{"-(child_pid)", "-(child_pid)"},
	} {
		tr, _ := newTestTracing(t, 1)
		if err := tr.tree.WriteFile(forkTrigger, []byte("hist:keys=common_pid:x="+c.expr), false); err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		want := "hist:keys=common_pid:vals=hitcount:x=" + c.want + ":sort=hitcount:size=2048 [active]\n"
		if got, _ := tr.tree.ReadFile(forkTrigger); string(got) != want {
			t.Errorf("%s: trigger reads %q, want %q", c.expr, got, want)
		}
	}
}

// TestHistMarkerSynthetic is trigger-trace-marker-synthetic.tc's
// sequence: a variable set by one trace_marker write, read by the next
// in another hist of ftrace/print, whose onmatch fires a synthetic event
// that a hist on it counts.
func TestHistMarkerSynthetic(t *testing.T) {
	tr, clock := newTestTracing(t, 1)
	must := func(p, d string, trunc bool) {
		t.Helper()
		if err := tr.tree.WriteFile(p, []byte(d), trunc); err != nil {
			t.Fatalf("%s <- %q: %v", p, d, err)
		}
	}
	must("tracing/synthetic_events", "latency u64 lat", true)
	must("tracing/events/ftrace/print/trigger", `hist:keys=common_pid:ts0=common_timestamp.usecs if buf == "start"`, true)
	must("tracing/events/ftrace/print/trigger", `hist:keys=common_pid:lat=common_timestamp.usecs-$ts0:onmatch(ftrace.print).latency($lat) if buf == "end"`, false)
	must("tracing/events/synthetic/latency/trigger", "hist:keys=common_pid,lat:sort=lat", true)
	must("tracing/events/synthetic/latency/enable", "1", true)
	*clock = 1000000
	must("tracing/trace_marker", "start", false)
	*clock = 1250000
	must("tracing/trace_marker", "end", false)
	got, _ := tr.tree.ReadFile("tracing/events/ftrace/print/trigger")
	want := "hist:keys=common_pid:vals=hitcount:ts0=common_timestamp.usecs:sort=hitcount:size=2048:clock=global if buf == \"start\" [active]\n" +
		"hist:keys=common_pid:vals=hitcount:lat=common_timestamp.usecs-$ts0:sort=hitcount:size=2048:clock=global:onmatch(ftrace.print).latency($lat) if buf == \"end\" [active]\n"
	if string(got) != want {
		t.Errorf("print's trigger reads\n%s\nwant\n%s", got, want)
	}
	got, _ = tr.tree.ReadFile("tracing/events/synthetic/latency/hist")
	if !strings.Contains(string(got), "{ common_pid:          0, lat:        250 } hitcount:          1\n") {
		t.Errorf("latency's hist reads\n%s", got)
	}
	if got, _ = tr.tree.ReadFile("tracing/trace"); !strings.Contains(string(got), ": tracing_mark_write: end\n") || !strings.HasSuffix(string(got), ": latency: lat=250\n") {
		t.Errorf("trace reads\n%s", got)
	}
	if err := tr.tree.WriteFile("tracing/events/ftrace/print/trigger", []byte(`!hist:keys=common_pid:ts0=common_timestamp.usecs if buf == "start"`), false); !errors.Is(err, syscall.EBUSY) {
		t.Errorf("removing the hist whose variable is referenced: %v, want EBUSY", err)
	}
}

// TestHistActions checks the inter-event handlers' parsing, errors and
// printing against the oracle's.
func TestHistActions(t *testing.T) {
	tr, _ := newTestTracing(t, 1)
	if err := tr.tree.WriteFile("tracing/synthetic_events", []byte("wl u64 lat; pid_t pid"), true); err != nil {
		t.Fatal(err)
	}
	onmax := "hist:keys=common_pid:c=child_pid:onmax($c).save(child_comm,child_pid)"
	if err := tr.tree.WriteFile(forkTrigger, []byte(onmax), false); err != nil {
		t.Fatal(err)
	}
	type logged struct {
		msg string
		pos int
	}
	for _, c := range []struct {
		cmd  string
		logs []logged
	}{
		{"hist:keys=parent_comm:c=child_pid:onchange($c).save(child_pid,parent_pid)", []logged{{"Variable already defined", 17}}},
		{"hist:keys=parent_pid:onmatch(sched.sched_process_fork).trace(wl,$c,child_pid)", []logged{{"Param type doesn't match synthetic event field type", 64}}},
		{"hist:keys=common_pid:d=child_pid:onmax($d).save(nosuch)", []logged{{"Couldn't find field", 48}, {"Couldn't parse field variable", 48}, {"Couldn't create field variable", 48}}},
		{"hist:keys=common_pid:d=child_pid:onmax($d).trace(wl,$d,child_pid)", []logged{{"Param type doesn't match synthetic event field type", 39}}},
		{"hist:keys=common_pid:d=child_pid:onmatch(sched.nosuch).wl($d,child_pid)", []logged{{"Invalid subsystem or event name", 47}}},
		{"hist:keys=common_pid:d=child_pid:onmatch(sched.sched_process_fork).nosuch($d,child_pid)", []logged{{"Couldn't find synthetic event", 67}}},
		{"hist:keys=common_pid:d=child_pid:onmatch(sched.sched_process_fork).wl($d)", []logged{{"Param type doesn't match synthetic event field type", 70}}},
		{"hist:keys=common_pid:onmatch(sched.sched_process_fork).wl($zz,child_pid)", []logged{{"Couldn't find param", 59}}},
		{"hist:keys=common_pid:onmatch(sched.sched_process_fork).save(child_pid)", []logged{{"Handler doesn't support action", 55}}},
	} {
		if err := tr.tree.WriteFile(forkTrigger, []byte(c.cmd), false); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("%q: %v, want EINVAL", c.cmd, err)
		}
		var want string
		for _, l := range c.logs {
			want += histLogEntry("sched_process_fork", l.msg, c.cmd, l.pos)
		}
		if got, _ := tr.tree.ReadFile("tracing/error_log"); string(got) != want {
			t.Errorf("%q: error_log reads\n%s\nwant\n%s", c.cmd, got, want)
		}
		if err := tr.tree.WriteFile("tracing/error_log", nil, true); err != nil {
			t.Fatal(err)
		}
	}
	hd := histTriggerOf(t, tr, "sched", "sched_process_fork", 0)
	for _, h := range []*histHit{forkHit(106, 107, "init"), forkHit(1, 110, "init"), forkHit(1, 111, "init"), forkHit(1, 105, "init")} {
		hd.hit(h, "init")
	}
	want := `# event histogram
#
# trigger info: hist:keys=common_pid:vals=hitcount:c=child_pid:sort=hitcount:size=2048:onmax($c).save(child_comm,child_pid) [active]
#

{ common_pid:        106 } hitcount:          1
	max:        107  child_comm: init                              child_pid:        107
{ common_pid:          1 } hitcount:          3
	max:        111  child_comm: init                              child_pid:        111

Totals:
    Hits: 4
    Entries: 2
    Dropped: 0
`
	if got, _ := tr.tree.ReadFile("tracing/events/sched/sched_process_fork/hist"); string(got) != want {
		t.Errorf("hist reads\n%s\nwant\n%s", got, want)
	}
}

// TestHistInstance: an instance has its own hists, in its events' and
// ftrace/print's hist files; its removal takes them, named ones too.
func TestHistInstance(t *testing.T) {
	tr, _ := newTestTracing(t, 1)
	inst, err := tr.tree.LookupDir("tracing/instances")
	if err != nil {
		t.Fatal(err)
	}
	if err := inst.UserMkdir("i1"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"tracing/instances/i1/events/sched/sched_process_fork/trigger", "tracing/instances/i1/events/ftrace/print/trigger"} {
		if err := tr.tree.WriteFile(p, []byte("hist:name=foo:keys=common_pid"), false); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	if err := tr.tree.WriteFile("tracing/instances/i1/trace_marker", []byte("x"), false); err != nil {
		t.Fatal(err)
	}
	got, _ := tr.tree.ReadFile("tracing/instances/i1/events/ftrace/print/hist")
	if !strings.Contains(string(got), "{ common_pid:          0 } hitcount:          1\n") {
		t.Errorf("the instance's print hist reads\n%s", got)
	}
	if got, _ := tr.tree.ReadFile("tracing/events/ftrace/print/hist"); len(got) != 0 {
		t.Errorf("the top's print hist reads\n%s", got)
	}
	if err := inst.UserRmdir("i1"); err != nil {
		t.Fatal(err)
	}
	// foo went with the instance: a different foo is no mismatch.
	if err := tr.tree.WriteFile(forkTrigger, []byte("hist:name=foo:keys=child_pid"), false); err != nil {
		t.Errorf("a new named hist after the instance went: %v", err)
	}
}

// TestHistCommField: an event's own comm field is a key (sched_waking's,
// a synthetic event's char comm[16]); the generic comm is no field.
func TestHistCommField(t *testing.T) {
	tr, _ := newTestTracing(t, 1)
	for _, c := range []struct {
		file, cmd string
		err       syscall.Errno
	}{
		{"tracing/synthetic_events", "wakeup_latency u64 lat; pid_t pid; char comm[16]", 0},
		{"tracing/events/sched/sched_waking/trigger", `hist:keys=comm:ts0=common_timestamp.usecs if comm=="ping"`, 0},
		{"tracing/events/synthetic/wakeup_latency/trigger", "hist:keys=comm,pid,lat:wakeup_lat=lat:sort=lat", 0},
		{forkTrigger, "hist:keys=comm", syscall.EINVAL},
	} {
		err := tr.tree.WriteFile(c.file, []byte(c.cmd), false)
		if (c.err == 0 && err != nil) || (c.err != 0 && !errors.Is(err, c.err)) {
			t.Errorf("%s <- %q: %v, want %v", c.file, c.cmd, err, c.err)
		}
	}
}
