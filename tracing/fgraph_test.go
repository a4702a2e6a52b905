package tracing_test

import (
	"context"
	"errors"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// pipeAll drains trace_pipe without blocking.
func (f *fixture) pipeAll(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	h, err := f.tree.Open(ctx, "tracing/trace_pipe", os.O_RDONLY|syscall.O_NONBLOCK)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	var out strings.Builder
	buf := make([]byte, 1000) // smaller than a page: reads end mid-line
	for {
		n, err := h.Read(ctx, buf, 0)
		out.Write(buf[:n])
		if errors.Is(err, syscall.EAGAIN) || n == 0 && err == nil {
			return out.String()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// The graph tracer's files, their defaults as Linux 6.1's, and the
// errnos of bad writes.
func TestFunctionGraphFiles(t *testing.T) {
	f := setup(t)
	if err := f.mkdir(t, "instances", "foo"); err != nil {
		t.Fatal(err)
	}
	const allFuncs, noFuncs = "#### all functions enabled ####\n", "#### no functions disabled ####\n"
	steps := []struct {
		name, file, data string
		errno            syscall.Errno
		readFile, want   string
	}{
		{"available tracers", "", "", 0, "available_tracers", "function_graph function nop\n"},
		{"an instance's", "", "", 0, "instances/foo/available_tracers", "function nop\n"},
		{"not in an instance", "instances/foo/current_tracer", "function_graph", syscall.EINVAL, "instances/foo/current_tracer", "nop\n"},
		{"max_graph_depth", "", "", 0, "max_graph_depth", "0\n"},
		{"max_graph_depth set", "max_graph_depth", "3\n", 0, "max_graph_depth", "3\n"},
		{"max_graph_depth bad", "max_graph_depth", "x\n", syscall.EINVAL, "max_graph_depth", "3\n"},
		{"max_graph_depth wraps at 32 bits", "max_graph_depth", "4294967295\n", 0, "max_graph_depth", "-1\n"},
		{"max_graph_depth cleared", "max_graph_depth", "0", 0, "max_graph_depth", "0\n"},
		{"set_graph_function", "", "", 0, "set_graph_function", allFuncs},
		{"set_graph_notrace", "", "", 0, "set_graph_notrace", noFuncs},
		{"graph function set", "set_graph_function", "kernel_clone\n", 0, "set_graph_function", "kernel_clone\n"},
		{"graph function unknown", "set_graph_function", "nosuch_fn\n", syscall.EINVAL, "set_graph_function", allFuncs},
		{"graph function removal of one not there", "set_graph_function", "!vfs_read\n", syscall.EINVAL, "set_graph_function", allFuncs},
		{"graph notrace set", "set_graph_notrace", "copy_process\n", 0, "set_graph_notrace", "copy_process\n"},
		{"graph notrace cleared", "set_graph_notrace", "\n", 0, "set_graph_notrace", noFuncs},
		{"option defaults", "", "", 0, "options/funcgraph-cpu", "1\n"},
		{"overhead", "", "", 0, "options/funcgraph-overhead", "1\n"},
		{"duration", "", "", 0, "options/funcgraph-duration", "1\n"},
		{"irqs", "", "", 0, "options/funcgraph-irqs", "1\n"},
		{"sleep-time", "", "", 0, "options/sleep-time", "1\n"},
		{"graph-time", "", "", 0, "options/graph-time", "1\n"},
		{"proc", "", "", 0, "options/funcgraph-proc", "0\n"},
		{"abstime", "", "", 0, "options/funcgraph-abstime", "0\n"},
		{"tail", "", "", 0, "options/funcgraph-tail", "0\n"},
		{"overrun", "", "", 0, "options/funcgraph-overrun", "0\n"},
		{"an option's bad value", "options/funcgraph-tail", "2", syscall.EINVAL, "options/funcgraph-tail", "0\n"},
		{"not the current tracer's", "trace_options", "funcgraph-tail", syscall.EINVAL, "options/funcgraph-tail", "0\n"},
		{"profiler off", "", "", 0, "function_profile_enabled", "0\n"},
		{"stat header", "", "", 0, "trace_stat/function0",
			"  Function                               Hit    Time            Avg             s^2\n" +
				"  --------                               ---    ----            ---             ---\n"},
	}
	for _, s := range steps {
		if s.file != "" {
			err := f.write("tracing/"+s.file, s.data, true)
			if s.errno == 0 && err != nil || s.errno != 0 && !errors.Is(err, s.errno) {
				t.Errorf("%s: %s < %q: %v, want errno %d", s.name, s.file, s.data, err, s.errno)
			}
		}
		if got := f.read(t, "tracing/"+s.readFile); got != s.want {
			t.Errorf("%s: %s = %q, want %q", s.name, s.readFile, got, s.want)
		}
	}
	if _, err := f.tree.ReadFile("tracing/instances/foo/set_graph_function"); err == nil {
		t.Error("an instance has set_graph_function")
	}
	// The graph's options follow the core's in trace_options while it
	// is the tracer, and trace_options sets them.
	f.mustWrite(t, "tracing/current_tracer", "function_graph")
	f.mustWrite(t, "tracing/trace_options", "funcgraph-tail")
	opts := f.read(t, "tracing/trace_options")
	const graphOpts = "nofuncgraph-overrun\nfuncgraph-cpu\nfuncgraph-overhead\nnofuncgraph-proc\nfuncgraph-duration\n" +
		"nofuncgraph-abstime\nfuncgraph-irqs\nfuncgraph-tail\nsleep-time\ngraph-time\n"
	if !strings.HasSuffix(opts, "stacktrace\n"+graphOpts) {
		t.Errorf("trace_options:\n%s", opts)
	}
	// One graph at a time: the profiler and the tracer exclude each other.
	if err := f.write("tracing/function_profile_enabled", "1", true); !errors.Is(err, syscall.EBUSY) {
		t.Errorf("profiler beside function_graph: %v, want EBUSY", err)
	}
	f.mustWrite(t, "tracing/current_tracer", "nop")
	f.mustWrite(t, "tracing/function_profile_enabled", "1")
	if err := f.write("tracing/current_tracer", "function_graph", true); !errors.Is(err, syscall.EBUSY) {
		t.Errorf("function_graph beside the profiler: %v, want EBUSY", err)
	}
	if got := f.read(t, "tracing/current_tracer"); got != "nop\n" {
		t.Errorf("current_tracer after EBUSY: %q", got)
	}
}

// A graph line: the CPU, the duration column (with its overhead mark)
// or its fill, then the call at its depth.
var graphLine = regexp.MustCompile(`^ (\d)\) ([ +!#*@$]) *(\d+(\.\d+)? us +\|  |  +\|  )( *)(.+)$`)

// graphCalls checks a default-format graph trace and returns its calls
// with their depths (the indentation), one per line.
func graphCalls(t *testing.T, tr string, maxDepth int) []string {
	t.Helper()
	var calls []string
	depth := 0
	for _, l := range strings.Split(strings.TrimSuffix(tr, "\n"), "\n") {
		if strings.HasPrefix(l, "#") || l == "" || strings.HasPrefix(l, " ---") || strings.Contains(l, " => ") {
			continue
		}
		m := graphLine.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("not a graph line: %q", l)
			continue
		}
		ind, call := len(m[5]), m[6]
		if ind%2 != 0 || ind/2 >= maxDepth {
			t.Errorf("depth %d past %d: %q", ind/2, maxDepth, l)
		}
		switch {
		case strings.HasSuffix(call, "() {"):
			if strings.Contains(m[3], "us") {
				t.Errorf("an entry with a duration: %q", l)
			}
			depth = ind/2 + 1
		case call == "}":
			if !strings.Contains(m[3], "us") {
				t.Errorf("a return without its duration: %q", l)
			}
			depth = ind / 2
		case strings.HasPrefix(call, "} /* ") && strings.HasSuffix(call, " */"):
			// A return whose entry is not in the buffer (entered
			// before the trace began: a notrace set since, or a trace
			// cleared while it ran), named as Linux names it.
			if !strings.Contains(m[3], "us") {
				t.Errorf("a return without its duration: %q", l)
			}
			continue
		case strings.HasSuffix(call, "();"):
		default:
			t.Errorf("not a call: %q", l)
		}
		_ = depth
		calls = append(calls, strings.Repeat(" ", ind)+call)
	}
	return calls
}

// set_graph_function, set_graph_notrace and max_graph_depth choose the
// graph below kernel_clone; trace and trace_pipe print it alike.
func TestFunctionGraphTrace(t *testing.T) {
	f := setup(t)
	f.mustWrite(t, "tracing/set_graph_function", "kernel_clone")
	f.mustWrite(t, "tracing/max_graph_depth", "2")
	f.mustWrite(t, "tracing/current_tracer", "function_graph")
	f.stepForks(t, 3)
	f.mustWrite(t, "tracing/tracing_on", "0")
	tr := f.read(t, "tracing/trace")
	if !strings.HasPrefix(tr, "# tracer: function_graph\n#\n# CPU  DURATION                  FUNCTION CALLS\n# |     |   |                     |   |   |   |\n") {
		t.Errorf("header:\n%s", tr)
	}
	calls := graphCalls(t, tr, 2)
	joined := strings.Join(calls, "\n")
	for _, want := range []string{"kernel_clone() {", "  copy_process();", "  wake_up_new_task();", "}"} {
		if !strings.Contains(joined, want) {
			t.Errorf("no %q in\n%s", want, tr)
		}
	}
	if strings.Contains(joined, "dup_task_struct") {
		t.Errorf("depth 2 traced:\n%s", tr)
	}
	if got := f.pipeAll(t); got != strings.SplitN(tr, "|   |   |   |\n", 2)[1] {
		t.Errorf("trace_pipe:\n%s\ntrace:\n%s", got, tr)
	}

	// set_graph_notrace: copy_process and all below it go.
	f.mustWrite(t, "tracing/max_graph_depth", "0")
	f.mustWrite(t, "tracing/set_graph_notrace", "copy_process")
	f.mustWrite(t, "tracing/trace", "")
	f.mustWrite(t, "tracing/tracing_on", "1")
	f.stepForks(t, 2)
	tr = f.read(t, "tracing/trace")
	joined = strings.Join(graphCalls(t, tr, 50), "\n")
	if strings.Contains(joined, "copy_process") || strings.Contains(joined, "dup_task_struct") {
		t.Errorf("set_graph_notrace copy_process:\n%s", tr)
	}
	if !strings.Contains(joined, "  wake_up_new_task") {
		t.Errorf("no wake_up_new_task:\n%s", tr)
	}

	// funcgraph-tail names every closing brace.
	f.mustWrite(t, "tracing/options/funcgraph-tail", "1")
	if tr := f.read(t, "tracing/trace"); !strings.Contains(tr, "} /* kernel_clone */\n") || strings.Contains(tr, "}\n") {
		t.Errorf("funcgraph-tail:\n%s", tr)
	}
}

// With set_ftrace_filter alone only the filtered functions enter the
// graph, as leaves (fgraph-filter.tc's test, on kernel_clone).
func TestFunctionGraphFilter(t *testing.T) {
	f := setup(t)
	f.mustWrite(t, "tracing/set_ftrace_filter", "kernel_clone")
	f.mustWrite(t, "tracing/current_tracer", "function_graph")
	f.stepForks(t, 3)
	calls := graphCalls(t, f.read(t, "tracing/trace"), 1)
	if len(calls) == 0 {
		t.Fatal("no calls")
	}
	for i, c := range calls {
		// the last may be in flight where the stepping stopped
		if c != "kernel_clone();" && (c != "kernel_clone() {" || i != len(calls)-1) {
			t.Errorf("call %q", c)
		}
	}
}

// A kretprobe and the graph on one function: each hijacks the return
// (the kretprobe at the entry, the graph after it), the returns unwind
// through both, and the kretprobe's event shows the real caller, as a
// comment in the graph.
func TestFunctionGraphWithKretprobe(t *testing.T) {
	f := setup(t)
	f.mustWrite(t, "tracing/kprobe_events", "r:rp kernel_clone ret=$retval")
	f.mustWrite(t, "tracing/events/kprobes/rp/enable", "1")
	f.mustWrite(t, "tracing/set_ftrace_filter", "kernel_clone")
	f.mustWrite(t, "tracing/current_tracer", "function_graph")
	f.stepForks(t, 3)
	tr := f.read(t, "tracing/trace")
	comment := regexp.MustCompile(`(?m)^ \d\)               \|  /\* rp: \((\S+)\+0x[0-9a-f]+/0x[0-9a-f]+ <- kernel_clone\) ret=0x[0-9a-f]+ \*/$`)
	ms := comment.FindAllStringSubmatch(tr, -1)
	if len(ms) == 0 {
		t.Fatalf("no kretprobe comments:\n%s", tr)
	}
	for _, m := range ms {
		if m[1] == "return_to_handler" || m[1] == "__kretprobe_trampoline" {
			t.Errorf("the kretprobe saw %s as the caller", m[1])
		}
	}
	if !strings.Contains(tr, "kernel_clone();") {
		t.Errorf("no kernel_clone leaf:\n%s", tr)
	}
}

var statLine = regexp.MustCompile(`^  (\S+) +(\d+)    (\d+(\.\d+)? us +)    (\d+(\.\d+)? us +)    (\d+(\.\d+)? us +)$`)

// The profiler counts the filtered functions' hits, stops counting when
// disabled, and starts afresh when enabled again.
func TestFunctionProfiler(t *testing.T) {
	f := setup(t)
	f.mustWrite(t, "tracing/set_ftrace_filter", "kernel_clone copy_process")
	f.mustWrite(t, "tracing/function_profile_enabled", "1")
	f.stepForks(t, 3)
	f.mustWrite(t, "tracing/function_profile_enabled", "0")
	stat := f.read(t, "tracing/trace_stat/function0")
	lines := strings.Split(strings.TrimSuffix(stat, "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("trace_stat/function0:\n%s", stat)
	}
	hits := map[string]int{}
	last := math.Inf(1)
	for _, l := range lines[2:] {
		m := statLine.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("not a stat line: %q", l)
		}
		hits[m[1]], _ = strconv.Atoi(m[2])
		// By total time, highest first.
		us, err := strconv.ParseFloat(strings.Fields(m[3])[0], 64)
		if err != nil || us > last {
			t.Errorf("order:\n%s", stat)
		}
		last = us
	}
	// copy_process also makes kernel threads, without kernel_clone.
	if hits["kernel_clone"] == 0 || hits["copy_process"] < hits["kernel_clone"] {
		t.Errorf("hits %v", hits)
	}
	f.stepForks(t, 2)
	if got := f.read(t, "tracing/trace_stat/function0"); got != stat {
		t.Errorf("counted while disabled:\n%s", got)
	}
}

// A stack unwound through functions whose returns the graph took shows
// their real callers, not return_to_handler (ftrace_graph_ret_addr).
func TestFunctionGraphUnwind(t *testing.T) {
	f := setup(t)
	f.mustWrite(t, "tracing/kprobe_events", "p:kp dup_task_struct")
	f.mustWrite(t, "tracing/events/kprobes/kp/enable", "1")
	f.mustWrite(t, "tracing/options/stacktrace", "1")
	f.mustWrite(t, "tracing/set_graph_function", "kernel_clone")
	f.mustWrite(t, "tracing/current_tracer", "function_graph")
	f.stepForks(t, 2)
	tr := f.read(t, "tracing/trace")
	// From dup_task_struct's first instruction the unwinder starts with
	// copy_process's frame record, whose return the graph took.
	if !strings.Contains(tr, " => dup_task_struct\n => kernel_clone\n") {
		t.Errorf("no stack from dup_task_struct into kernel_clone:\n%s", tr)
	}
	if strings.Contains(tr, "return_to_handler") {
		t.Errorf("return_to_handler in a stack:\n%s", tr)
	}
}

// The options' columns, with the headers Debian's 6.1 prints for them
// (shared/oracle) and lines shaped as its.
func TestFunctionGraphOptions(t *testing.T) {
	f := setup(t)
	f.mustWrite(t, "tracing/set_graph_function", "kernel_clone")
	f.mustWrite(t, "tracing/max_graph_depth", "2")
	f.mustWrite(t, "tracing/current_tracer", "function_graph")
	f.stepForks(t, 2)
	f.mustWrite(t, "tracing/tracing_on", "0")
	for _, c := range []struct {
		name   string
		set    map[string]string
		header string
		line   *regexp.Regexp // every line after the header
	}{
		{"proc, abstime, tail, overrun",
			map[string]string{"funcgraph-proc": "1", "funcgraph-abstime": "1", "funcgraph-tail": "1", "funcgraph-overrun": "1"},
			"#     TIME        CPU  TASK/PID         DURATION                  FUNCTION CALLS\n" +
				"#      |          |     |    |           |   |                     |   |   |   |\n",
			regexp.MustCompile(`^( +\d+\.\d{6} \|   0\)  *[^ ]+-\d+ +\| ([ +!#*@$] \d+\.?\d* us +|              )\|  ( {2})*[a-z_]+(\(\);|\(\) \{)| +\d+\.\d{6} \|   0\)  *[^ ]+-\d+ +\| [ +!#*@$] \d+\.?\d* us +\|  ( {2})*\} /\* [a-z_]+ \*/| \(Overruns: \d+\)| -+| 0\) .* => .*|)$`)},
		{"no cpu, no duration",
			map[string]string{"funcgraph-cpu": "0", "funcgraph-duration": "0"},
			"#     TIME         TASK/PID                      FUNCTION CALLS\n" +
				"#      |            |    |                       |   |   |   |\n",
			regexp.MustCompile(`^( +\d+\.\d{6} \|  *[^ ]+-\d+ +\| ( {2})*([a-z_]+(\(\);|\(\) \{)|\} /\* [a-z_]+ \*/)| \(Overruns: \d+\)| -+| 0\) .* => .*|)$`)},
		{"no context-info",
			map[string]string{"context-info": "0"},
			"",
			regexp.MustCompile(`^(( {2})*([a-z_]+(\(\);|\(\) \{)|\} /\* [a-z_]+ \*/)| \(Overruns: \d+\)| -+| 0\) .* => .*|)$`)},
	} {
		for o, v := range c.set {
			f.mustWrite(t, "tracing/options/"+o, v)
		}
		tr := f.read(t, "tracing/trace")
		head := "# tracer: function_graph\n#\n" + c.header
		if !strings.HasPrefix(tr, head) {
			t.Errorf("%s: header\n%q\nwant\n%q", c.name, tr[:min(len(tr), len(head))], head)
			continue
		}
		n := 0
		for _, l := range strings.Split(strings.TrimSuffix(tr[len(head):], "\n"), "\n") {
			if !c.line.MatchString(l) {
				t.Errorf("%s: line %q", c.name, l)
			}
			n++
		}
		if n < 4 {
			t.Errorf("%s: %d lines", c.name, n)
		}
	}
}

// Without sleep-time, a function's duration leaves out the time its task
// was switched out: schedule() around a switch takes far less than with
// it. The fixture's clock moves 1.234567 s per reading, so a switch's
// readings dominate a duration that spans one. The test compares the
// median schedule(), not the longest: a task that went to sleep before
// sleep-time went off (kthreadd, asleep since boot) has no timestamp to
// take off when it wakes, on Linux as here.
func TestFunctionGraphSleepTime(t *testing.T) {
	f := setup(t)
	f.mustWrite(t, "tracing/set_ftrace_filter", "schedule")
	f.mustWrite(t, "tracing/options/funcgraph-tail", "1")
	f.mustWrite(t, "tracing/current_tracer", "function_graph")
	medianDur := func() float64 {
		t.Helper()
		f.stepForks(t, 3) // every task switched out since the option changed
		f.mustWrite(t, "tracing/trace", "")
		f.stepForks(t, 3)
		var ds []float64
		for _, l := range strings.Split(f.read(t, "tracing/trace"), "\n") {
			if !strings.HasSuffix(l, "} /* schedule */") {
				continue
			}
			fs := strings.Fields(l[strings.Index(l, ")")+1:])
			for i, s := range fs {
				if s == "us" {
					v, err := strconv.ParseFloat(fs[i-1], 64)
					if err == nil {
						ds = append(ds, v)
					}
				}
			}
		}
		if len(ds) == 0 {
			return 0
		}
		slices.Sort(ds)
		return ds[len(ds)/2]
	}
	with := medianDur()
	f.mustWrite(t, "tracing/options/sleep-time", "0")
	without := medianDur()
	t.Logf("median schedule(): %v us with sleep-time, %v us without", with, without)
	if with == 0 || without >= with {
		t.Errorf("median schedule(): %v us with sleep-time, %v us without", with, without)
	}
}

// A trace_pipe opened before function_graph became the tracer prints
// the graph's lines (tracing_read_pipe opens the new tracer).
func TestFunctionGraphPipeOpenedBefore(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	h, err := f.tree.Open(ctx, "tracing/trace_pipe", os.O_RDONLY|syscall.O_NONBLOCK)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	f.mustWrite(t, "tracing/set_ftrace_filter", "kernel_clone")
	f.mustWrite(t, "tracing/current_tracer", "function_graph")
	f.stepForks(t, 2)
	buf := make([]byte, 4096)
	n, err := h.Read(ctx, buf, 0)
	if err != nil {
		t.Fatal(err)
	}
	if first := strings.SplitN(string(buf[:n]), "\n", 2)[0]; !graphLine.MatchString(first) {
		t.Errorf("first line %q", first)
	}
}
