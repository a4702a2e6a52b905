package tracing_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/kpemu/kpemu/internal/waitfor"
)

// aff returns available_filter_functions' names.
func (f *fixture) aff(t *testing.T) []string {
	t.Helper()
	return strings.Fields(f.read(t, "tracing/available_filter_functions"))
}

// names lists, in record order, the functions for which keep is true, as
// set_ftrace_filter shows them.
func names(all []string, keep func(i int, name string) bool) string {
	var b strings.Builder
	for i, n := range all {
		if keep(i, n) {
			b.WriteString(n + "\n")
		}
	}
	return b.String()
}

const allEnabled = "#### all functions enabled ####\n"

// The regex files as Linux 6.1 takes them (Debian's 6.1.192 through
// shared/oracle, "filter syntax"): one word per write(2), globs, '!',
// indexes, :mod:, what a failed word leaves behind, and each errno. The
// expected lists are computed from available_filter_functions with plain
// string tests, independently of the matcher.
func TestFtraceFilterSyntax(t *testing.T) {
	f := setup(t)
	all := f.aff(t)
	only := func(want ...string) func(int, string) bool {
		return func(_ int, n string) bool {
			for _, w := range want {
				if n == w {
					return true
				}
			}
			return false
		}
	}
	const sf, sn, st = "tracing/set_ftrace_filter", "tracing/set_ftrace_notrace", "tracing/stack_trace_filter"
	tests := []struct {
		name  string
		file  string
		data  string
		trunc bool
		errno syscall.Errno
		want  string
	}{
		{"a name", sf, "kernel_clone\n", true, 0, "kernel_clone\n"},
		{"an unknown name", sf, "nosuch_function_xyz\n", true, syscall.EINVAL, allEnabled},
		{"words up to the bad one", sf, "vfs_read nosuch_function_xyz vfs_write\n", false, syscall.EINVAL, "vfs_read\n"},
		{"removal", sf, "!vfs_read\n", false, 0, allEnabled},
		{"removal of an unknown name", sf, "!nosuch_function_xyz\n", false, syscall.EINVAL, allEnabled},
		{"front match", sf, "vfs_*\n", true, 0, names(all, func(_ int, n string) bool { return strings.HasPrefix(n, "vfs_") })},
		{"end match", sf, "*_clone\n", true, 0, names(all, func(_ int, n string) bool { return strings.HasSuffix(n, "_clone") })},
		{"middle match", sf, "*rnel_clo*\n", true, 0, names(all, func(_ int, n string) bool { return strings.Contains(n, "rnel_clo") })},
		{"glob", sf, "k?rnel_cl[o]ne\n", true, 0, "kernel_clone\n"},
		{"glob with a class range and inner star", sf, "*_sys_[a-c]*e\n", true, 0, names(all, func(_ int, n string) bool {
			i := strings.Index(n, "_sys_")
			return i >= 0 && len(n) > i+5 && n[i+5] >= 'a' && n[i+5] <= 'c' && strings.HasSuffix(n, "e")
		})},
		{"a word the close ends", sf, "kernel_clone", true, 0, "kernel_clone\n"},
		{"several words and white space", sf, "kernel_clone  vfs_read\tvfs_write\n\n", true, 0, names(all, only("kernel_clone", "vfs_read", "vfs_write"))},
		{"index 1", sf, "1\n", true, 0, all[0] + "\n"},
		{"index 0", sf, "0\n", true, syscall.EINVAL, allEnabled},
		{"index past the end", sf, "99999999\n", true, syscall.EINVAL, allEnabled},
		{"index with junk after it", sf, "12abc\n", true, 0, all[11] + "\n"},
		{"hex index", sf, "0x3\n", true, 0, all[2] + "\n"},
		{"everything", sf, "*\n", true, 0, strings.Join(all, "\n") + "\n"},
		{"removal by index", sf, "!1\n", false, 0, names(all, func(i int, _ string) bool { return i != 0 })},
		{"a module not loaded is cached", sf, "vfs_read:mod:nosuchmod\n", true, 0, "vfs_read:mod:nosuchmod\n"},
		{"an unknown command", sf, "vfs_read:bogus\n", true, syscall.EINVAL, allEnabled},
		{"white space only", sf, "\n", true, 0, allEnabled},
		{"a word too long", sf, strings.Repeat("x", 700) + "\n", true, syscall.EINVAL, allEnabled},
		{"notrace: a name", sn, "vfs_read\n", true, 0, "vfs_read\n"},
		{"notrace: an unknown name", sn, "nosuch\n", true, syscall.EINVAL, "#### no functions disabled ####\n"},
		{"notrace: cleared", sn, "\n", true, 0, "#### no functions disabled ####\n"},
		{"stack filter: a name", st, "kernel_clone\n", true, 0, "kernel_clone\n"},
		{"stack filter: no trace array for :mod:", st, ":mod:e1000ish\n", true, syscall.ENODEV, allEnabled},
		{"stack filter: cleared", st, "\n", true, 0, allEnabled},
	}
	for _, tt := range tests {
		err := f.write(tt.file, tt.data, tt.trunc)
		if tt.errno == 0 && err != nil || tt.errno != 0 && !errors.Is(err, tt.errno) {
			t.Errorf("%s: %q = %v, want errno %d", tt.name, tt.data, err, tt.errno)
		}
		if got := f.read(t, tt.file); got != tt.want {
			t.Errorf("%s: %s =\n%s\nwant:\n%s", tt.name, tt.file, got, tt.want)
		}
	}
}

// trace_get_user's one word per write(2): each write consumes a word and
// the white space after it, and the writer writes the rest again.
func TestFtraceFilterWriteCounts(t *testing.T) {
	f := setup(t)
	tests := []struct {
		data  string
		count int
	}{
		{"kernel_clone\n", 13},
		{"kernel_clone  vfs_read\tvfs_write\n\n", 13},
		{"  vfs_read\n", 11},
		{"kernel_clone", 12},
		{"\n\n\n", 3},
	}
	ctx := context.Background()
	for _, tt := range tests {
		h, err := f.tree.Open(ctx, "tracing/set_ftrace_filter", os.O_WRONLY|os.O_TRUNC)
		if err != nil {
			t.Fatal(err)
		}
		n, err := h.Write(ctx, []byte(tt.data), 0)
		h.Release()
		if err != nil || n != tt.count {
			t.Errorf("write(%q) = %d, %v; want %d", tt.data, n, err, tt.count)
		}
	}
}

var fnLine = regexp.MustCompile(`^ +(\S+)-(\d+) +\[(\d{3})\] ([d.])([N.])\.\.\. +\d+\.\d{6}: (\S+) <-(\S+)$`)

// The function tracer on kernel_clone, with a kprobe on its first
// instruction: every fork gives the probe's line, then the function's,
// "kernel_clone <-PARENT" where PARENT is the function the probe saw in
// the LR; the tracer and the probe go on and off independently, as in
// Linux's kselftest kprobe/kprobe_ftrace.tc.
func TestFunctionTracerKernelClone(t *testing.T) {
	f := setup(t)
	write := func(p, d string, trunc bool) {
		t.Helper()
		if err := f.write(p, d, trunc); err != nil {
			t.Fatalf("%s < %q: %v", p, d, err)
		}
	}
	if got := f.read(t, "tracing/available_tracers"); got != "function_graph function nop\n" {
		t.Errorf("available_tracers = %q", got)
	}
	write("tracing/set_ftrace_filter", "kernel_clone\n", true)
	write("tracing/kprobe_events", "p:testprobe kernel_clone lr=%lr:symbol\n", true)
	count := func() (probe, fn int) {
		tr := f.read(t, "tracing/trace")
		return strings.Count(tr, " testprobe: ("), strings.Count(tr, ": kernel_clone <-")
	}
	for _, c := range []struct{ probe, tracer bool }{{true, false}, {true, true}, {false, true}, {true, true}, {true, false}, {false, false}} {
		write("tracing/events/kprobes/testprobe/enable", map[bool]string{true: "1", false: "0"}[c.probe], true)
		write("tracing/current_tracer", map[bool]string{true: "function", false: "nop"}[c.tracer], true)
		write("tracing/trace", "", true)
		f.stepForks(t, 50)
		probe, fn := count()
		if (probe > 0) != c.probe || (fn > 0) != c.tracer {
			t.Errorf("probe %v, tracer %v: %d probe lines, %d kernel_clone lines", c.probe, c.tracer, probe, fn)
		}
	}
	write("tracing/events/kprobes/testprobe/enable", "1", true)
	write("tracing/current_tracer", "function", true)
	write("tracing/trace", "", true)
	f.stepForks(t, 100)
	tr := f.read(t, "tracing/trace")
	if !strings.HasPrefix(tr, "# tracer: function\n") {
		t.Errorf("trace header: %q", tr[:40])
	}
	// Each task's call gives its probe line, then its function line; an
	// interrupt between the two may let another task's pair in between,
	// so the LR the probe saw is kept per task.
	lrs := map[string]string{}
	pairs := 0
	for _, l := range strings.Split(tr, "\n") {
		if strings.HasPrefix(l, "#") || l == "" {
			continue
		}
		task := strings.Fields(l)[0]
		if i := strings.Index(l, " lr="); strings.Contains(l, " testprobe: (kernel_clone+0x0/") && i > 0 {
			lr := l[i+4:]
			lrs[task] = lr[:strings.IndexByte(lr, '+')]
			continue
		}
		m := fnLine.FindStringSubmatch(l)
		if m == nil || m[6] != "kernel_clone" {
			t.Errorf("not a kernel_clone entry: %q", l)
			continue
		}
		lr, ok := lrs[task]
		if !ok && pairs == 0 {
			continue // its probe hit came before the trace was cleared
		}
		if m[7] != lr {
			t.Errorf("%q: the probe saw the LR in %q", l, lr)
		}
		pairs++
		delete(lrs, task)
	}
	if pairs == 0 {
		t.Fatalf("no kernel_clone entries:\n%s", tr)
	}
	if got := f.read(t, "tracing/enabled_functions"); got != "kernel_clone (1)      \n" {
		t.Errorf("enabled_functions = %q", got)
	}
	// A filter changed while the tracer runs takes effect at the close.
	write("tracing/set_ftrace_filter", "do_fork\n", false)
	if got := f.read(t, "tracing/enabled_functions"); got != "kernel_clone (1)      \ndo_fork (1)      \n" && got != "do_fork (1)      \nkernel_clone (1)      \n" {
		t.Errorf("enabled_functions after >> do_fork = %q", got)
	}
	write("tracing/set_ftrace_notrace", "kernel_clone\n", true)
	if got := f.read(t, "tracing/enabled_functions"); got != "do_fork (1)      \n" {
		t.Errorf("enabled_functions with kernel_clone notrace = %q", got)
	}
	write("tracing/current_tracer", "nop", true)
	if got := f.read(t, "tracing/enabled_functions"); got != "" {
		t.Errorf("enabled_functions with nop = %q", got)
	}
	if tr := f.read(t, "tracing/trace"); !strings.HasPrefix(tr, "# tracer: nop\n") || strings.Contains(tr, "<-") {
		t.Error("switching the tracer kept the buffer")
	}
}

// kprobe_events refuses an ftrace call site (arm64 6.1 without
// KPROBES_ON_FTRACE) and a notrace function (within_notrace_func, without
// KPROBE_EVENTS_ON_NOTRACE) with EINVAL and Linux's error_log entry.
func TestKprobeEventsOnFtraceSites(t *testing.T) {
	f := setup(t)
	for _, tt := range []struct{ cmd, caret string }{
		{"p:k4 kernel_clone+4", "                ^"},
		{"p:nt __schedule", "                ^"},
		{"r:nt2 memcpy", "                 ^"},
	} {
		if err := f.write("tracing/error_log", "", true); err != nil {
			t.Fatal(err)
		}
		if err := f.write("tracing/kprobe_events", tt.cmd+"\n", false); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("%s: %v, want EINVAL", tt.cmd, err)
		}
		want := fmt.Sprintf("trace_kprobe: error: Failed to register probe event\n  Command: %s\n%s\n", tt.cmd, tt.caret)
		if got := f.read(t, "tracing/error_log"); !strings.HasSuffix(got, want) {
			t.Errorf("%s: error_log =\n%s\nwant the end:\n%s", tt.cmd, got, want)
		}
	}
	for _, cmd := range []string{"p:k0 kernel_clone", "p:k8 kernel_clone+8"} {
		if err := f.write("tracing/kprobe_events", cmd+"\n", false); err != nil {
			t.Errorf("%s: %v", cmd, err)
		}
	}
}

// The stack tracer on kernel_clone: stack_trace starts at the traced
// function's return address (+0x8) and goes down to its callers;
// stack_max_size is the deepest stack seen and a write restarts it.
func TestStackTracer(t *testing.T) {
	f := setup(t)
	st := f.read(t, "tracing/stack_trace")
	if !strings.Contains(st, "#  Stack tracer disabled\n") || !strings.HasPrefix(st, "        Depth    Size   Location    (0 entries)\n        -----    ----   --------\n") {
		t.Errorf("stack_trace before enabling:\n%s", st)
	}
	if err := f.write("tracing/stack_trace_filter", "kernel_clone\n", true); err != nil {
		t.Fatal(err)
	}
	if err := f.tr.SetStackTracerEnabled(true); err != nil {
		t.Fatal(err)
	}
	f.stepForks(t, 50)
	var max int
	if _, err := fmt.Sscanf(f.read(t, "tracing/stack_max_size"), "%d\n", &max); err != nil || max <= 0 || max > 16384 {
		t.Errorf("stack_max_size %d, %v", max, err)
	}
	st = f.read(t, "tracing/stack_trace")
	lines := strings.Split(strings.TrimSuffix(st, "\n"), "\n")
	if len(lines) < 4 || strings.Contains(st, "disabled") {
		t.Fatalf("stack_trace:\n%s", st)
	}
	var n int
	fmt.Sscanf(lines[0], "        Depth    Size   Location    (%d entries)", &n)
	if n != len(lines)-2 {
		t.Errorf("%d entries announced, %d listed", n, len(lines)-2)
	}
	row := regexp.MustCompile(`^ *(\d+)\) +(\d+) +(\d+)   (\S+)$`)
	prevDepth := 1 << 30
	for i, l := range lines[2:] {
		m := row.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("row %q", l)
		}
		var depth int
		fmt.Sscanf(m[2], "%d", &depth)
		if depth >= prevDepth {
			t.Errorf("depth does not shrink at %q", l)
		}
		prevDepth = depth
		if i == 0 && !strings.HasPrefix(m[4], "kernel_clone+0x8/") {
			t.Errorf("first frame %q, want kernel_clone+0x8", m[4])
		}
		if i == 1 && !strings.HasPrefix(m[4], "do_fork+") && !strings.HasPrefix(m[4], "__arm64_sys_clone+") {
			t.Errorf("second frame %q, want kernel_clone's caller", m[4])
		}
	}
	if err := f.write("tracing/stack_max_size", "abc\n", true); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("stack_max_size < abc: %v", err)
	}
	if err := f.tr.SetStackTracerEnabled(false); err != nil {
		t.Fatal(err)
	}
	if err := f.write("tracing/stack_max_size", "0\n", true); err != nil {
		t.Fatal(err)
	}
	if got := f.read(t, "tracing/stack_max_size"); got != "0\n" {
		t.Errorf("stack_max_size = %q", got)
	}
	// Off with no maximum: the notice, and the last trace still.
	if st := f.read(t, "tracing/stack_trace"); !strings.Contains(st, "#  Stack tracer disabled\n") || !strings.Contains(st, "kernel_clone+0x8/") {
		t.Errorf("stack_trace after disabling:\n%s", st)
	}
	if got := f.read(t, "tracing/enabled_functions"); got != "" {
		t.Errorf("enabled_functions = %q", got)
	}
}

// A module's functions are "name [mod]" in the ftrace files; :mod:
// selects them, and a :mod: command for a module not loaded yet is kept
// until it loads.
func TestFtraceModules(t *testing.T) {
	f := setup(t)
	f.run(t)
	if err := f.write("tracing/set_ftrace_filter", ":mod:e1000ish\n", true); err != nil {
		t.Fatal(err)
	}
	if got := f.read(t, "tracing/set_ftrace_filter"); got != ":mod:e1000ish\n" {
		t.Errorf("cached :mod: = %q", got)
	}
	if err := f.write("tracing/current_tracer", "function\n", true); err != nil {
		t.Fatal(err)
	}
	if err := f.k.LoadEmbeddedModule("e1000ish"); err != nil {
		t.Fatal(err)
	}
	aff := f.read(t, "tracing/available_filter_functions")
	if !strings.Contains(aff, "\nvnet_rx [e1000ish]\n") {
		t.Errorf("available_filter_functions lacks vnet_rx [e1000ish]")
	}
	filter := f.read(t, "tracing/set_ftrace_filter")
	if !strings.Contains(filter, "vnet_rx [e1000ish]\n") || strings.Contains(filter, ":mod:") || strings.Contains(filter, "init_module") {
		t.Errorf("set_ftrace_filter after the load:\n%s", filter)
	}
	waitfor.Until(t, "vnet_rx traced", func() bool { return strings.Contains(f.read(t, "tracing/trace"), ": vnet_rx <-") })
	if err := f.write("tracing/current_tracer", "nop\n", true); err != nil {
		t.Fatal(err)
	}
	if err := f.write("tracing/set_ftrace_filter", "vnet_*:mod:e1000ish\n", true); err != nil {
		t.Fatal(err)
	}
	if got, want := f.read(t, "tracing/set_ftrace_filter"), names(strings.Split(strings.TrimSpace(aff), "\n"), func(_ int, n string) bool {
		return strings.HasPrefix(n, "vnet_") && strings.HasSuffix(n, " [e1000ish]")
	}); got != want {
		t.Errorf("vnet_*:mod:e1000ish = %q, want %q", got, want)
	}
	if err := f.k.UnloadModule("e1000ish"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(f.read(t, "tracing/available_filter_functions"), "[e1000ish]") {
		t.Error("the module's functions stayed")
	}
	// clear_mod_from_hashes: the filter keeps its (now dead) entries, so
	// it still traces nothing rather than everything.
	if got := f.read(t, "tracing/set_ftrace_filter"); got != "" {
		t.Errorf("set_ftrace_filter after the unload = %q", got)
	}
}
