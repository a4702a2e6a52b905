package tracing_test

import (
	"strings"
	"syscall"
	"testing"
)

// The snapshot trigger as the oracle (Debian's 6.1 arm64) took it: it
// allocates the snapshot when set, and even when its registration then
// fails; a second one is EEXIST whatever its count; removal ignores the
// count and filter.
func TestSnapshotTriggerParsing(t *testing.T) {
	f := setup(t)
	if err := f.write("tracing/kprobe_events", triggerEvents, false); err != nil {
		t.Fatal(err)
	}
	const ok, einval, eexist = syscall.Errno(0), syscall.EINVAL, syscall.EEXIST
	const (
		freed     = "# tracer: nop\n#\n#\n# * Snapshot is freed *\n#\n"
		allocated = "# tracer: nop\n#\n#\n# * Snapshot is allocated *\n#\n"
	)
	steps := []struct {
		triggerStep
		snap string // then snapshot starts so
	}{
		{r("ev1/trigger", kpemuAvailableTriggers), freed},
		{w("ev1/trigger", "snapshot\n", ok), allocated},
		{r("ev1/trigger", "snapshot:unlimited\n"), ""},
		{w("ev1/trigger", "snapshot\n", eexist), ""},
		{w("ev1/trigger", "snapshot:3\n", eexist), ""},
		{w("ev1/trigger", "!snapshot:7 if foo\n", ok), allocated},
		{r("ev1/trigger", kpemuAvailableTriggers), ""},
		{w("ev1/trigger", "snapshot:abc\n", einval), ""},
		{w("ev1/trigger", "snapshot if bogus == 1\n", einval), ""},
		{w("ev1/trigger", "snapshot:2 if a > 0\n", ok), ""},
		{r("ev1/trigger", "snapshot:count=2 if a > 0\n"), ""},
		{w("ev1/trigger", "traceoff\n", ok), ""},
		{r("ev1/trigger", "traceoff:unlimited\nsnapshot:count=2 if a > 0\n"), ""},
		{w("ev1/trigger", "!traceoff\n", ok), ""},
		{w("tracing/snapshot", "0\n", ok), freed},
		// The next registration allocates it again, though it fails.
		{w("ev1/trigger", "snapshot\n", eexist), allocated},
		{w("ev1/trigger", "!snapshot\n", ok), allocated},
		{r("ev1/trigger", kpemuAvailableTriggers), ""},
		{r("ev1/enable", "0\n"), ""},
	}
	for i, s := range steps {
		f.runSteps(t, []triggerStep{s.triggerStep})
		if got := f.read(t, "tracing/snapshot"); s.snap != "" && !strings.HasPrefix(got, s.snap) {
			t.Errorf("step %d: snapshot reads\n%s\nwant it to start\n%s", i, got, s.snap)
		}
	}
}

// TestSnapshotTriggerFires steps the guest to each kernel_clone hit, as
// the oracle's dd runs saw vfs_read's: an unconditional snapshot swaps
// before the event is recorded, so its record is in trace; a conditional
// one swaps between the record's reserve and commit, so its record is in
// the snapshot, and a stacktrace after it goes to the new live buffer;
// without a snapshot the trigger writes Linux's two warnings and turns
// tracing off, after the record when it is conditional and instead of it
// when not.
func TestSnapshotTriggerFires(t *testing.T) {
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
	stepUntil := func(p, want string) {
		t.Helper()
		for i := 0; i < 20000; i++ {
			if f.read(t, "tracing/"+p) == want {
				return
			}
			f.step(t, 200)
		}
		t.Fatalf("%s never read %q", p, want)
	}
	const (
		hit       = " ev1: (kernel_clone+0x0/"
		stack     = "<stack trace>\n => kernel_clone\n"
		notAlloc  = " d.... "
		puts1     = ": tracing_snapshot_instance_cond: *** SNAPSHOT NOT ALLOCATED ***\n"
		puts2     = ": tracing_snapshot_instance_cond: *** stopping trace here!   ***\n"
		allocHelp = "# * Snapshot is allocated *"
	)
	cases := []struct {
		name      string
		triggers  []string // written in order
		free      bool     // echo 0 > snapshot after setting them
		waitFile  string
		waitWant  string
		snapHas   []string
		snapLacks []string
		traceHas  []string
		traceNot  []string
		puts      bool // the trace ends with the two warnings
	}{
		{name: "unconditional", triggers: []string{"snapshot:1"}, waitFile: "events/kprobes/ev1/trigger", waitWant: "snapshot:count=0\n",
			snapHas: []string{allocHelp}, traceHas: []string{hit}},
		{name: "conditional", triggers: []string{"snapshot:1 if a != 0"}, waitFile: "events/kprobes/ev1/trigger", waitWant: "snapshot:count=0 if a != 0\n",
			snapHas: []string{hit}, traceNot: []string{hit}},
		{name: "conditional with stacktrace", triggers: []string{"stacktrace:1 if a != 0", "snapshot:1 if a != 0"}, waitFile: "events/kprobes/ev1/trigger",
			waitWant: "snapshot:count=0 if a != 0\nstacktrace:count=0 if a != 0\n",
			snapHas:  []string{hit}, snapLacks: []string{stack}, traceHas: []string{stack}, traceNot: []string{hit}},
		{name: "not allocated", triggers: []string{"snapshot"}, free: true, waitFile: "tracing_on", waitWant: "0\n",
			traceNot: []string{hit}, puts: true},
		{name: "not allocated, conditional", triggers: []string{"snapshot if a != 0"}, free: true, waitFile: "tracing_on", waitWant: "0\n",
			traceHas: []string{hit}, puts: true},
	}
	write("ev1/enable", "1")
	for _, c := range cases {
		write("tracing/tracing_on", "1")
		write("tracing/snapshot", "1")
		write("tracing/snapshot", "2")
		write("tracing/trace", "")
		for _, tr := range c.triggers {
			write("ev1/trigger", tr)
		}
		if c.free {
			write("tracing/snapshot", "0")
		}
		stepUntil(c.waitFile, c.waitWant)
		snap, trace := f.read(t, "tracing/snapshot"), f.read(t, "tracing/trace")
		for _, s := range c.snapHas {
			if !strings.Contains(snap, s) {
				t.Errorf("%s: snapshot lacks %q:\n%s", c.name, s, snap)
			}
		}
		for _, s := range c.snapLacks {
			if strings.Contains(snap, s) {
				t.Errorf("%s: snapshot has %q:\n%s", c.name, s, snap)
			}
		}
		for _, s := range c.traceHas {
			if !strings.Contains(trace, s) {
				t.Errorf("%s: trace lacks %q:\n%s", c.name, s, trace)
			}
		}
		for _, s := range c.traceNot {
			if strings.Contains(trace, s) {
				t.Errorf("%s: trace has %q:\n%s", c.name, s, trace)
			}
		}
		if c.puts {
			lines := traceLines(trace)
			n := len(lines)
			if n < 2 || !strings.Contains(lines[n-2]+"\n", puts1) || !strings.Contains(lines[n-1]+"\n", puts2) ||
				!strings.Contains(lines[n-2], notAlloc) {
				t.Errorf("%s: trace does not end with the two warnings:\n%s", c.name, trace)
			}
		}
		for _, tr := range c.triggers {
			write("ev1/trigger", "!"+strings.Fields(strings.Split(tr, ":")[0])[0])
		}
	}
	write("ev1/enable", "0")
	write("tracing/tracing_on", "1")
}
