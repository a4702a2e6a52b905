package tracing_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
)

// The files of an instance, as Linux 6.1 arm64 lists them
// (`ls instances/foo` on Debian's 6.1, through shared/oracle).
const instanceFiles = "available_tracers buffer_percent buffer_size_kb buffer_total_size_kb current_tracer " +
	"error_log events free_buffer options per_cpu set_event set_event_notrace_pid set_event_pid " +
	"set_ftrace_filter set_ftrace_notrace set_ftrace_notrace_pid set_ftrace_pid snapshot " +
	"timestamp_mode trace trace_clock trace_marker trace_marker_raw trace_options trace_pipe " +
	"tracing_cpumask tracing_max_latency tracing_on"

// mkdir and rmdir are mkdir(2) and rmdir(2) of tracing/DIR/NAME, as the
// fuse adapter makes them.
func (f *fixture) mkdir(t *testing.T, dir, name string) error {
	t.Helper()
	d, err := f.tree.LookupDir("tracing/" + dir)
	if err != nil {
		t.Fatal(err)
	}
	return d.UserMkdir(name)
}

func (f *fixture) rmdir(t *testing.T, dir, name string) error {
	t.Helper()
	d, err := f.tree.LookupDir("tracing/" + dir)
	if err != nil {
		t.Fatal(err)
	}
	return d.UserRmdir(name)
}

func (f *fixture) mustWrite(t *testing.T, p, d string) {
	t.Helper()
	if err := f.write(p, d, true); err != nil {
		t.Fatalf("%s <- %q: %v", p, d, err)
	}
}

func TestInstanceMkdirRmdir(t *testing.T) {
	f := setup(t)
	steps := []struct {
		op, dir, name string
		errno         syscall.Errno
	}{
		{"mkdir", "instances", "foo", 0},
		{"mkdir", "instances", "foo", syscall.EEXIST},
		{"mkdir", "instances", "a.b", 0},
		{"mkdir", "instances", "with space", 0},
		{"mkdir", "instances", strings.Repeat("x", 255), 0},
		{"mkdir", "instances", "a/b", syscall.EINVAL},
		{"mkdir", "instances", "..", syscall.EINVAL},
		{"mkdir", "instances/foo", "bar", syscall.EPERM},
		{"mkdir", "events", "foo", syscall.EPERM},
		{"mkdir", "", "foo", syscall.EPERM},
		{"rmdir", "", "instances", syscall.EPERM},
		{"rmdir", "instances", "nosuch", syscall.ENOENT},
		{"rmdir", "instances/foo", "events", syscall.EPERM},
		{"rmdir", "instances", "a.b", 0},
		{"rmdir", "instances", "with space", 0},
		{"rmdir", "instances", strings.Repeat("x", 255), 0},
		{"rmdir", "instances", "a.b", syscall.ENOENT},
	}
	for _, s := range steps {
		var err error
		if s.op == "mkdir" {
			err = f.mkdir(t, s.dir, s.name)
		} else {
			err = f.rmdir(t, s.dir, s.name)
		}
		if got := errnoOf(err); got != s.errno {
			t.Errorf("%s %s/%.20s = %v, want %v", s.op, s.dir, s.name, err, s.errno)
		}
	}
	names, err := f.tree.ReadDir("tracing/instances")
	if err != nil || len(names) != 1 || names[0].Name() != "foo" {
		t.Errorf("instances/ = %v, %v; want foo alone", names, err)
	}
	var got []string
	nodes, err := f.tree.ReadDir("tracing/instances/foo")
	if err != nil {
		t.Fatal(err)
	}
	// The modes are Linux's too: 0640 unless said here.
	modes := map[string]os.FileMode{"available_tracers": 0o440, "buffer_total_size_kb": 0o440, "events": 0o750,
		"free_buffer": 0o200, "options": 0o750, "per_cpu": 0o750, "timestamp_mode": 0o440,
		"trace_marker": 0o220, "trace_marker_raw": 0o220, "trace_pipe": 0o440}
	for _, n := range nodes {
		got = append(got, n.Name())
		want, ok := modes[n.Name()]
		if !ok {
			want = 0o640
		}
		if n.Mode().Perm() != want {
			t.Errorf("instances/foo/%s has mode %o, want %o", n.Name(), n.Mode().Perm(), want)
		}
	}
	if strings.Join(got, " ") != instanceFiles {
		t.Errorf("instances/foo has\n%s\nwant\n%s", strings.Join(got, " "), instanceFiles)
	}
	fresh := []struct{ file, want string }{
		{"tracing_on", "1\n"},
		{"current_tracer", "nop\n"},
		{"set_event", ""},
		{"available_tracers", "function nop\n"},
		{"events/sched/sched_switch/enable", "0\n"},
		{"events/enable", "0\n"},
		{"buffer_size_kb", "7 (expanded: 1408)\n"},
	}
	for _, c := range fresh {
		if got := f.read(t, "tracing/instances/foo/"+c.file); got != c.want {
			t.Errorf("instances/foo/%s = %q, want %q", c.file, got, c.want)
		}
	}
	if got, top := f.read(t, "tracing/instances/foo/trace"), f.read(t, "tracing/trace"); got != top {
		t.Errorf("an empty instance's trace\n%s\nis not the fresh top's\n%s", got, top)
	}
	if err := f.rmdir(t, "instances", "foo"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.tree.Lookup("tracing/instances/foo"); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("instances/foo after rmdir: %v", err)
	}
	// The name is free again, for a fresh array.
	if err := f.mkdir(t, "instances", "foo"); err != nil {
		t.Fatal(err)
	}
}

// An open file of the instance, any of them, keeps rmdir off with EBUSY
// (__remove_instance's tr->ref); a waiting trace_pipe reader too.
func TestInstanceRmdirBusy(t *testing.T) {
	f := setup(t)
	for _, file := range []string{"trace", "events/sched/sched_switch/enable", "per_cpu/cpu0/trace_pipe", "trace_pipe", "options/overwrite"} {
		if err := f.mkdir(t, "instances", "foo"); err != nil {
			t.Fatal(err)
		}
		h, err := f.tree.Open(context.Background(), "tracing/instances/foo/"+file, os.O_RDONLY)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.rmdir(t, "instances", "foo"); !errors.Is(err, syscall.EBUSY) {
			t.Errorf("rmdir with %s open = %v, want EBUSY", file, err)
		}
		if got := f.read(t, "tracing/instances/foo/tracing_on"); got != "1\n" {
			t.Errorf("a refused rmdir changed tracing_on: %q", got)
		}
		h.Release()
		if err := f.rmdir(t, "instances", "foo"); err != nil {
			t.Errorf("rmdir after closing %s: %v", file, err)
		}
	}
}

// Each array has its own file of every event: enabled in one and not in
// the other, its hits go to the arrays where it is enabled.
func TestInstanceEventsPerArray(t *testing.T) {
	f := setup(t)
	f.mustWrite(t, "tracing/kprobe_events", "p:myk vfs_write\n")
	if err := f.mkdir(t, "instances", "foo"); err != nil {
		t.Fatal(err)
	}
	// An event made after the instance appears in it as well.
	if err := f.write("tracing/kprobe_events", "p:late vfs_write\n", false); err != nil { // >>
		t.Fatal(err)
	}
	if _, err := f.tree.Lookup("tracing/instances/foo/events/kprobes/late/enable"); err != nil {
		t.Fatal(err)
	}
	const top, inst = "tracing/", "tracing/instances/foo/"
	cases := []struct {
		name      string
		enable    []string // the files written 1 (all others 0)
		inTop     bool
		inInst    bool
		setTop    string
		setInst   string
		enableTop string
	}{
		{"instance only", []string{inst + "events/kprobes/myk/enable"}, false, true, "", "kprobes:myk\n", "0\n"},
		{"top only", []string{top + "events/kprobes/myk/enable"}, true, false, "kprobes:myk\n", "", "1\n"},
		{"both", []string{top + "events/kprobes/myk/enable", inst + "events/kprobes/myk/enable"}, true, true, "kprobes:myk\n", "kprobes:myk\n", "1\n"},
		{"instance by set_event", []string{inst + "set_event"}, false, true, "", "kprobes:myk\n", "0\n"},
		{"instance by group", []string{inst + "events/kprobes/enable"}, false, true, "", "kprobes:late\nkprobes:myk\n", "0\n"},
	}
	for _, c := range cases {
		for _, root := range []string{top, inst} {
			f.mustWrite(t, root+"events/enable", "0")
			f.mustWrite(t, root+"trace", "")
		}
		for _, p := range c.enable {
			data := "1"
			if strings.HasSuffix(p, "set_event") {
				data = "kprobes:myk"
			}
			f.mustWrite(t, p, data)
		}
		if got := f.read(t, top+"set_event"); got != c.setTop {
			t.Errorf("%s: top set_event = %q, want %q", c.name, got, c.setTop)
		}
		if got := f.read(t, inst+"set_event"); got != c.setInst {
			t.Errorf("%s: instance set_event = %q, want %q", c.name, got, c.setInst)
		}
		if got := f.read(t, top+"events/kprobes/myk/enable"); got != c.enableTop {
			t.Errorf("%s: top enable = %q, want %q", c.name, got, c.enableTop)
		}
		f.stepUntil(t, "a hit", func() bool {
			return strings.Contains(f.read(t, top+"trace"), " myk: (") || strings.Contains(f.read(t, inst+"trace"), " myk: (")
		})
		// The guest ran on: the other array had the same hits to see.
		f.step(t, 500_000)
		if got := strings.Contains(f.read(t, top+"trace"), " myk: ("); got != c.inTop {
			t.Errorf("%s: myk in the top trace: %v, want %v", c.name, got, c.inTop)
		}
		if got := strings.Contains(f.read(t, inst+"trace"), " myk: ("); got != c.inInst {
			t.Errorf("%s: myk in the instance's trace: %v, want %v", c.name, got, c.inInst)
		}
	}
	// Enabled in the instance only, the event is in use: kprobe_events
	// cannot drop it.
	f.mustWrite(t, top+"events/enable", "0")
	f.mustWrite(t, inst+"events/kprobes/myk/enable", "1")
	if err := f.write(top+"kprobe_events", "", true); !errors.Is(err, syscall.EBUSY) {
		t.Errorf("clearing kprobe_events with the event enabled in an instance = %v, want EBUSY", err)
	}
	// Its last event gone, the group's directory goes in every array.
	f.mustWrite(t, inst+"events/enable", "0")
	if err := f.write(top+"kprobe_events", "-:late\n", false); err != nil {
		t.Fatal(err)
	}
	if err := f.write(top+"kprobe_events", "", true); err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{top, inst} {
		if _, err := f.tree.Lookup(root + "events/kprobes"); !errors.Is(err, syscall.ENOENT) {
			t.Errorf("%sevents/kprobes after the last event: %v", root, err)
		}
	}
	f.mustWrite(t, top+"kprobe_events", "p:myk vfs_write\n")
	f.mustWrite(t, inst+"events/kprobes/myk/enable", "1")
	// rmdir disables the instance's events: then it can go.
	if err := f.rmdir(t, "instances", "foo"); err != nil {
		t.Fatal(err)
	}
	if err := f.write(top+"kprobe_events", "", true); err != nil {
		t.Errorf("clearing kprobe_events after rmdir: %v", err)
	}
	if got := f.read(t, "kprobes/list"); got != "" {
		t.Errorf("probes left after rmdir and clear: %q", got)
	}
}

// tracing_on, the static events, triggers and the function tracer are
// each array's own.
func TestInstanceTracingOnTracerAndTriggers(t *testing.T) {
	f := setup(t)
	if err := f.mkdir(t, "instances", "foo"); err != nil {
		t.Fatal(err)
	}
	const top, inst = "tracing/", "tracing/instances/foo/"
	f.mustWrite(t, top+"kprobe_events", "p:myk vfs_write\n")
	f.mustWrite(t, top+"events/kprobes/myk/enable", "1")
	f.mustWrite(t, inst+"events/kprobes/myk/enable", "1")
	f.mustWrite(t, inst+"tracing_on", "0")
	if got := f.read(t, top+"tracing_on"); got != "1\n" {
		t.Errorf("top tracing_on = %q after the instance's 0", got)
	}
	f.stepUntil(t, "a hit in the top array", func() bool { return strings.Contains(f.read(t, top+"trace"), " myk: (") })
	if strings.Contains(f.read(t, inst+"trace"), " myk: (") {
		t.Error("an instance with tracing_on 0 recorded")
	}
	// A traceoff trigger in the instance turns the instance's tracing
	// off, not the top's.
	f.mustWrite(t, inst+"tracing_on", "1")
	f.mustWrite(t, inst+"events/kprobes/myk/trigger", "traceoff")
	if got := f.read(t, top+"events/kprobes/myk/trigger"); !strings.HasPrefix(got, "# Available triggers:") {
		t.Errorf("top trigger after the instance's = %q", got)
	}
	f.stepUntil(t, "the instance's traceoff", func() bool { return f.read(t, inst+"tracing_on") == "0\n" })
	if got := f.read(t, top+"tracing_on"); got != "1\n" {
		t.Errorf("top tracing_on = %q after the instance's traceoff", got)
	}
	f.mustWrite(t, inst+"events/kprobes/myk/trigger", "!traceoff")
	f.mustWrite(t, top+"events/enable", "0")
	f.mustWrite(t, inst+"events/enable", "0")
	f.mustWrite(t, inst+"tracing_on", "1")

	// A static event through the instance's set_event.
	f.mustWrite(t, top+"trace", "")
	f.mustWrite(t, inst+"set_event", "sched:sched_switch")
	f.stepUntil(t, "a sched_switch in the instance", func() bool {
		return strings.Contains(f.read(t, inst+"trace"), " sched_switch: prev_comm=")
	})
	if strings.Contains(f.read(t, top+"trace"), "sched_switch") {
		t.Error("sched_switch enabled in the instance went to the top buffer")
	}
	f.mustWrite(t, inst+"set_event", "")

	// The function tracer of the instance, on its own filter.
	f.mustWrite(t, inst+"set_ftrace_filter", "kernel_clone")
	f.mustWrite(t, inst+"current_tracer", "function")
	if got := f.read(t, top+"current_tracer"); got != "nop\n" {
		t.Errorf("top current_tracer = %q", got)
	}
	if got := f.read(t, top+"set_ftrace_filter"); strings.Contains(got, "kernel_clone") {
		t.Errorf("top set_ftrace_filter = %q", got)
	}
	f.mustWrite(t, inst+"trace", "")
	f.stepForks(t, 5)
	tr := f.read(t, inst+"trace")
	if !strings.HasPrefix(tr, "# tracer: function\n") || !strings.Contains(tr, ": kernel_clone <-") {
		t.Errorf("instance trace with the function tracer:\n%.1500s", tr)
	}
	if top := f.read(t, top+"trace"); strings.Contains(top, "kernel_clone") || !strings.HasPrefix(top, "# tracer: nop\n") {
		t.Errorf("top trace:\n%.1500s", top)
	}
	// rmdir with the function tracer on: it goes back to nop and the
	// array goes.
	if err := f.rmdir(t, "instances", "foo"); err != nil {
		t.Fatal(err)
	}
	f.stepForks(t, 3)
	if got := f.read(t, top+"enabled_functions"); got != "" {
		t.Errorf("enabled_functions after rmdir: %q", got)
	}
}

// rmdir takes the instance's function commands and pid-filter fork hook
// away with it: nothing of it stays on the guest's functions.
func TestInstanceRmdirReleasesHooks(t *testing.T) {
	f := setup(t)
	if err := f.mkdir(t, "instances", "foo"); err != nil {
		t.Fatal(err)
	}
	const inst = "tracing/instances/foo/"
	f.mustWrite(t, inst+"set_event_pid", "1")
	f.mustWrite(t, inst+"options/event-fork", "1")
	f.mustWrite(t, inst+"events/sched/sched_switch/trigger", "enable_event:sched:sched_wakeup")
	if err := f.write(inst+"set_ftrace_filter", "kernel_clone:enable_event:sched:sched_process_fork:2", false); err != nil {
		t.Fatal(err)
	}
	if got := f.read(t, "tracing/enabled_functions"); got == "" {
		t.Fatal("no function hooked by the instance")
	}
	if got := f.read(t, "tracing/events/sched/sched_wakeup/enable"); got != "0\n" {
		t.Errorf("the instance's trigger target shows at the top as %q", got)
	}
	if got := f.read(t, inst+"events/sched/sched_wakeup/enable"); got != "0*\n" {
		t.Errorf("the instance's trigger target = %q, want 0*", got)
	}
	if err := f.rmdir(t, "instances", "foo"); err != nil {
		t.Fatal(err)
	}
	if got := f.read(t, "tracing/enabled_functions"); got != "" {
		t.Errorf("enabled_functions after rmdir: %q", got)
	}
	f.stepForks(t, 3) // nothing of the instance runs on the hits
}

// TestInstanceRawBuffer: an instance's per_cpu/cpuN/trace_pipe_raw serves
// its own buffer, and it has events/ftrace's formats, as every trace
// array on Linux does: an event enabled in the instance alone fills the
// instance's raw pages and leaves the top's empty.
func TestInstanceRawBuffer(t *testing.T) {
	f := setup(t)
	if err := f.mkdir(t, "instances", "foo"); err != nil {
		t.Fatal(err)
	}
	if got := f.read(t, "tracing/instances/foo/events/ftrace/print/format"); got != f.read(t, "tracing/events/ftrace/print/format") {
		t.Errorf("the instance's print format differs from the top's:\n%s", got)
	}
	f.mustWrite(t, "tracing/kprobe_events", "p:rawinst vfs_read\n")
	f.mustWrite(t, "tracing/instances/foo/events/kprobes/rawinst/enable", "1\n")
	f.step(t, 5_000_000)
	page := func(dir string) []byte {
		t.Helper()
		h, err := f.tree.Open(context.Background(), dir+"/per_cpu/cpu0/trace_pipe_raw", os.O_RDONLY|syscall.O_NONBLOCK)
		if err != nil {
			t.Fatal(err)
		}
		defer h.Release()
		b := make([]byte, 4096)
		n, err := h.Read(context.Background(), b, 0)
		if err != nil && !errors.Is(err, syscall.EAGAIN) {
			t.Fatalf("%s: %v", dir, err)
		}
		return b[:n]
	}
	if p := page("tracing/instances/foo"); len(p) <= 16 {
		t.Errorf("the instance's trace_pipe_raw gave %d bytes, want a page of its vfs_read hits", len(p))
	}
	if p := page("tracing"); len(p) > 0 {
		t.Errorf("the top's trace_pipe_raw gave %d bytes, want none: the event is enabled in the instance alone", len(p))
	}
}
