package tracing_test

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// The option files are Debian's 6.1 arm64's (less blk's), with their
// modes and defaults; an instance has no file of the options that act
// on the top buffer alone, and the function tracer's but not the graph
// tracer's.
func TestOptionFiles(t *testing.T) {
	f := setup(t)
	if err := f.mkdir(t, "instances", "k"); err != nil {
		t.Fatal(err)
	}
	// ls instances/NAME/options on Debian's 6.1 arm64.
	instance := "annotate bin block context-info disable_on_free display-graph event-fork func-no-repeats " +
		"func_stack_trace function-fork function-trace hash-ptr hex irq-info latency-format markers " +
		"overwrite pause-on-trace print-parent raw record-tgid stacktrace sym-addr sym-offset " +
		"sym-userobj test_nop_accept test_nop_refuse userstacktrace verbose"
	nodes, err := f.tree.ReadDir("tracing/instances/k/options")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range nodes {
		names = append(names, n.Name())
	}
	if got := strings.Join(names, " "); got != instance {
		t.Errorf("instances/k/options:\n%s\nwant\n%s", got, instance)
	}
	modes := map[string]os.FileMode{}
	for _, dir := range []string{"tracing/options", "tracing/instances/k/options"} {
		nodes, err := f.tree.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range nodes {
			modes[dir+"/"+n.Name()] = n.Mode()
		}
	}
	for _, tt := range []struct {
		name, value string
	}{
		{"verbose", "0\n"}, {"block", "0\n"}, {"userstacktrace", "0\n"}, {"sym-userobj", "0\n"},
		{"latency-format", "0\n"}, {"hash-ptr", "1\n"}, {"function-trace", "1\n"},
		{"display-graph", "0\n"}, {"func_stack_trace", "0\n"}, {"func-no-repeats", "0\n"},
	} {
		for _, dir := range []string{"tracing/options/", "tracing/instances/k/options/"} {
			if got := f.read(t, dir+tt.name); got != tt.value {
				t.Errorf("%s%s = %q, want %q", dir, tt.name, got, tt.value)
			}
			if m := modes[dir+tt.name]; m.Perm() != 0o640 {
				t.Errorf("%s%s: mode %v, want 0640", dir, tt.name, m)
			}
		}
	}
}

// func_stack_trace and func-no-repeats are one pair of flags for every
// array (func_flags): set through one array's file, they read set in
// all; trace_options lists and sets them only where function is the
// tracer.
func TestFuncOptionsShared(t *testing.T) {
	f := setup(t)
	if err := f.mkdir(t, "instances", "k"); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		file, data string
		errno      syscall.Errno
		top, inst  string // options/func_stack_trace in the top and in k after
	}{
		{"instances/k/options/func_stack_trace", "1", 0, "1\n", "1\n"},
		{"options/func_stack_trace", "0", 0, "0\n", "0\n"},
		{"trace_options", "func_stack_trace", syscall.EINVAL, "0\n", "0\n"},
		{"instances/k/trace_options", "func_stack_trace", syscall.EINVAL, "0\n", "0\n"},
		{"instances/k/current_tracer", "function", 0, "0\n", "0\n"},
		{"instances/k/trace_options", "func_stack_trace", 0, "1\n", "1\n"},
		{"trace_options", "nofunc_stack_trace", syscall.EINVAL, "1\n", "1\n"},
		{"instances/k/trace_options", "nofunc_stack_trace", 0, "0\n", "0\n"},
		{"options/func_stack_trace", "2", syscall.EINVAL, "0\n", "0\n"},
	}
	for _, s := range steps {
		if err := f.write("tracing/"+s.file, s.data, true); errnoOf(err) != s.errno || (err != nil) != (s.errno != 0) {
			t.Errorf("%q > %s: %v, want errno %d", s.data, s.file, err, s.errno)
		}
		if got := f.read(t, "tracing/options/func_stack_trace"); got != s.top {
			t.Errorf("after %q > %s: options/func_stack_trace = %q, want %q", s.data, s.file, got, s.top)
		}
		if got := f.read(t, "tracing/instances/k/options/func_stack_trace"); got != s.inst {
			t.Errorf("after %q > %s: instances/k/options/func_stack_trace = %q, want %q", s.data, s.file, got, s.inst)
		}
	}
	for _, tt := range []struct {
		file, suffix string
	}{
		{"tracing/instances/k/trace_options", "nostacktrace\nnofunc_stack_trace\nnofunc-no-repeats\n"},
		{"tracing/trace_options", "nostacktrace\nnotest_nop_accept\nnotest_nop_refuse\n"},
	} {
		if got := f.read(t, tt.file); !strings.HasSuffix(got, tt.suffix) {
			t.Errorf("%s:\n%s\nwant it to end with\n%s", tt.file, got, tt.suffix)
		}
	}
}

// optFnLine is a function tracer's line in the default format: the task,
// the time stamp, the function and its parent, and what follows.
var optFnLine = regexp.MustCompile(`^ *(\S+)-(\d+) +\[000\] \S{5} +(\d+\.\d{6}): (\S+) <-(\S+)(.*)$`)

// traceWith runs the function tracer on vfs_read with the function
// tracer's flags set as given, and returns trace's lines, tracing off.
func traceWith(t *testing.T, stack, norepeats string) []string {
	t.Helper()
	f := setup(t)
	f.mustWrite(t, "tracing/set_ftrace_filter", "vfs_read\n")
	f.mustWrite(t, "tracing/options/func_stack_trace", stack)
	f.mustWrite(t, "tracing/options/func-no-repeats", norepeats)
	f.mustWrite(t, "tracing/current_tracer", "function")
	f.step(t, 3_000_000)
	f.mustWrite(t, "tracing/tracing_on", "0")
	return traceLines(f.read(t, "tracing/trace"))
}

// With func_stack_trace each call's line is followed by the stack at
// the function's entry: the function, then its caller.
func TestFuncStackTrace(t *testing.T) {
	for _, tt := range []struct {
		stack string
	}{{"0"}, {"1"}} {
		lines := traceWith(t, tt.stack, "0")
		calls, stacks := 0, 0
		for i, l := range lines {
			m := optFnLine.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			calls++
			if i+2 >= len(lines) || !strings.HasSuffix(lines[i+1], ": <stack trace>") {
				continue
			}
			stacks++
			if lines[i+2] != " => "+m[4] || lines[i+3] != " => "+m[5] {
				t.Errorf("func_stack_trace %s: %q's stack starts %q, %q", tt.stack, l, lines[i+2], lines[i+3])
			}
		}
		if want := map[string]int{"0": 0, "1": calls}[tt.stack]; calls == 0 || stacks != want {
			t.Errorf("func_stack_trace %s: %d calls, %d stacks", tt.stack, calls, stacks)
		}
	}
}

// With func-no-repeats a call like the last one recorded is counted,
// and the count comes as a func_repeats line before the next call
// recorded, naming the last one's function and parent and the time of
// its last repeat.
func TestFuncNoRepeats(t *testing.T) {
	repeatsOf := regexp.MustCompile(`^ \(repeats: (\d+), last_ts: +(\d+\.\d{6})\)$`)
	for _, tt := range []struct {
		norepeats string
	}{{"0"}, {"1"}} {
		lines := traceWith(t, "0", tt.norepeats)
		repeats := 0
		var last []string // the last call recorded
		for _, l := range lines {
			m := optFnLine.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			if m[6] == "" {
				if last != nil && last[4] == m[4] && last[5] == m[5] && tt.norepeats == "1" {
					t.Errorf("a repeat recorded: %q after %q", l, last[0])
				}
				last = m
				continue
			}
			r := repeatsOf.FindStringSubmatch(m[6])
			if r == nil || last == nil {
				t.Errorf("func-no-repeats %s: %q", tt.norepeats, l)
				continue
			}
			repeats++
			n, _ := strconv.Atoi(r[1])
			lastTS, _ := strconv.ParseFloat(r[2], 64)
			prevTS, _ := strconv.ParseFloat(last[3], 64)
			ts, _ := strconv.ParseFloat(m[3], 64)
			if n < 1 || m[4] != last[4] || m[5] != last[5] || lastTS <= prevTS || lastTS > ts {
				t.Errorf("%q after %q", l, last[0])
			}
		}
		if (repeats > 0) != (tt.norepeats == "1") {
			t.Errorf("func-no-repeats %s: %d func_repeats lines", tt.norepeats, repeats)
		}
	}
}

// A func_repeats record prints raw as trace_func_repeats_raw, its
// addresses in decimal, and hex and bin as a type without a printer.
func TestFuncRepeatsRaw(t *testing.T) {
	f := setup(t)
	f.mustWrite(t, "tracing/set_ftrace_filter", "vfs_read\n")
	f.mustWrite(t, "tracing/options/func-no-repeats", "1")
	f.mustWrite(t, "tracing/current_tracer", "function")
	f.step(t, 3_000_000)
	f.mustWrite(t, "tracing/tracing_on", "0")
	var fnIP string
	for _, l := range traceLines(f.read(t, "tracing/trace")) {
		if m := optFnLine.FindStringSubmatch(l); m != nil && m[6] != "" {
			fnIP = m[4]
			break
		}
	}
	if fnIP == "" {
		t.Fatal("no func_repeats line")
	}
	f.mustWrite(t, "tracing/options/raw", "1")
	rawFn := regexp.MustCompile(`^\d+ 0 \d+ ([0-9a-f]+) [0-9a-f]+$`)
	rawRepeats := regexp.MustCompile(`^\d+ 0 \d+ (\d+) (\d+) (\d+) (\d+)$`)
	var ips []uint64
	repeats := 0
	for _, l := range traceLines(f.read(t, "tracing/trace")) {
		if m := rawFn.FindStringSubmatch(l); m != nil {
			ip, _ := strconv.ParseUint(m[1], 16, 64)
			ips = append(ips, ip)
		} else if m := rawRepeats.FindStringSubmatch(l); m != nil {
			repeats++
			ip, _ := strconv.ParseUint(m[1], 10, 64)
			if len(ips) == 0 || ip != ips[len(ips)-1] || m[3] == "0" {
				t.Errorf("raw func_repeats %q after calls at %x", l, ips)
			}
		} else {
			t.Errorf("raw line %q", l)
		}
	}
	if repeats == 0 {
		t.Error("no raw func_repeats line")
	}
	f.mustWrite(t, "tracing/options/raw", "0")
	f.mustWrite(t, "tracing/options/hex", "1")
	if !strings.Contains(f.read(t, "tracing/trace"), "type: 19\n") {
		t.Error("hex: no func_repeats line as type 19")
	}
}

// hash-ptr decides at each read whether an event's %p prints hashed or
// raw, per array.
func TestHashPtr(t *testing.T) {
	f := setup(t)
	if err := f.mkdir(t, "instances", "k"); err != nil {
		t.Fatal(err)
	}
	f.mustWrite(t, "tracing/events/kmem/kmalloc/enable", "1")
	f.mustWrite(t, "tracing/instances/k/events/kmem/kmalloc/enable", "1")
	f.step(t, 2_000_000)
	f.mustWrite(t, "tracing/events/kmem/kmalloc/enable", "0")
	f.mustWrite(t, "tracing/instances/k/events/kmem/kmalloc/enable", "0")
	ptrs := regexp.MustCompile(`ptr=([0-9a-f]{16}) `)
	read := func(dir string) []string {
		var out []string
		for _, m := range ptrs.FindAllStringSubmatch(f.read(t, dir+"trace"), -1) {
			out = append(out, m[1])
		}
		return out
	}
	hashed := read("tracing/")
	if len(hashed) == 0 {
		t.Fatal("no kmalloc event")
	}
	for _, tt := range []struct {
		dir, hash string
		raw       bool
	}{
		{"tracing/instances/k/", "0", true},
		{"tracing/", "1", false},
		{"tracing/", "0", true},
		{"tracing/instances/k/", "1", false},
		{"tracing/", "1", false},
	} {
		f.mustWrite(t, tt.dir+"options/hash-ptr", tt.hash)
		got := read(tt.dir)
		if len(got) == 0 {
			t.Fatalf("%s: no kmalloc event", tt.dir)
		}
		for i, p := range got {
			// A hash is 32 bits; a kernel pointer is in the top half.
			if raw := strings.HasPrefix(p, "ffff"); raw != tt.raw || (!tt.raw && !strings.HasPrefix(p, "00000000")) {
				t.Errorf("%s hash-ptr %s: ptr=%s", tt.dir, tt.hash, p)
			}
			if tt.dir == "tracing/" && !tt.raw && i < len(hashed) && p != hashed[i] {
				t.Errorf("hash-ptr 1 again: ptr=%s, was %s", p, hashed[i])
			}
		}
	}
	f.mustWrite(t, "tracing/options/hash-ptr", "0")
	if strings.Contains(f.read(t, "tracing/instances/k/trace"), "ptr=ffff") {
		t.Error("the top's hash-ptr changed the instance's")
	}
}

// latHeader is print_trace_header and print_lat_help_header for the
// function tracer over n entries.
func latHeader(n int, help bool) string {
	s := "# tracer: function\n#\n" +
		"# function latency trace v1.1.5 on 6.1.0-kpemu\n" +
		"# --------------------------------------------------------------------\n" +
		"# latency: 0 us, #" + strconv.Itoa(n) + "/" + strconv.Itoa(n) + ", CPU#0 | (M:desktop VP:0, KP:0, SP:0 HP:0 #P:1)\n" +
		"#    -----------------\n" +
		"#    | task: -0 (uid:0 nice:0 policy:0 rt_prio:0)\n" +
		"#    -----------------\n" +
		"#\n"
	if help {
		s += "#                    _------=> CPU#            \n" +
			"#                   / _-----=> irqs-off/BH-disabled\n" +
			"#                  | / _----=> need-resched    \n" +
			"#                  || / _---=> hardirq/softirq \n" +
			"#                  ||| / _--=> preempt-depth   \n" +
			"#                  |||| / _-=> migrate-disable \n" +
			"#                  ||||| /     delay           \n" +
			"#  cmd     pid     |||||| time  |   caller     \n" +
			"#     \\   /        ||||||  \\    |    /       \n"
	}
	return s
}

// The latency format: its header over a buffer with entries (none over
// an empty one), and each line's context with the time since the
// buffer's reset and to the next entry, plain or verbose, in the
// clock's unit.
func TestLatencyFormat(t *testing.T) {
	plainNS := regexp.MustCompile(`^([ \S]{8})-(\d+) +  0([.d][.nNp][.hHsz]\.\.) +(\d+)us([ +!#*@$]): vfs_read <-\S+$`)
	plainCounter := regexp.MustCompile(`^([ \S]{8})-(\d+) +  0([.d][.nNp][.hHsz]\.\.) +(\d+): vfs_read <-\S+$`)
	verboseNS := regexp.MustCompile(`^ *\S+ +(\d+)   0 (\d+) 00000000 ([0-9a-f]{8}) \[([0-9a-f]{8})\] (\d+)\.(\d{3})ms \(\+(\d+)\.(\d{3})ms\): vfs_read <-\S+$`)
	verboseCounter := regexp.MustCompile(`^ *\S+ +(\d+)   0 (\d+) 00000000 ([0-9a-f]{8}) \[([0-9a-f]{16})\] (\d+) \(\+(\d+)\): vfs_read <-\S+$`)
	for _, tt := range []struct {
		name, clock string
		verbose     bool
		line        *regexp.Regexp
	}{
		{"plain", "local", false, plainNS},
		{"plain counter", "counter", false, plainCounter},
		{"verbose", "local", true, verboseNS},
		{"verbose counter", "counter", true, verboseCounter},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := setup(t)
			f.mustWrite(t, "tracing/set_ftrace_filter", "vfs_read\n")
			f.mustWrite(t, "tracing/trace_clock", tt.clock)
			f.mustWrite(t, "tracing/current_tracer", "function")
			f.mustWrite(t, "tracing/options/latency-format", "1")
			if tt.verbose {
				f.mustWrite(t, "tracing/options/verbose", "1")
			}
			f.step(t, 3_000_000)
			f.mustWrite(t, "tracing/tracing_on", "0")
			tr := f.read(t, "tracing/trace")
			lines := traceLines(tr)
			if len(lines) < 2 {
				t.Fatalf("trace:\n%s", tr)
			}
			if want := latHeader(len(lines), !tt.verbose); !strings.HasPrefix(tr, want) {
				t.Errorf("header:\n%s\nwant\n%s", tr, want)
			}
			var abs, rel []uint64
			for i, l := range lines {
				m := tt.line.FindStringSubmatch(l)
				if m == nil {
					t.Fatalf("line %q", l)
				}
				switch {
				case tt.verbose:
					if idx, _ := strconv.ParseUint(m[3], 16, 64); idx != uint64(i) {
						t.Errorf("line %d has index %d", i, idx)
					}
					a, _ := strconv.ParseUint(m[5], 10, 64)
					r, _ := strconv.ParseUint(m[len(m)-2], 10, 64)
					if tt.clock == "local" {
						au, _ := strconv.ParseUint(m[6], 10, 64)
						ru, _ := strconv.ParseUint(m[8], 10, 64)
						a, r = a*1000+au, r*1000+ru
					} else {
						r, _ = strconv.ParseUint(m[6], 10, 64)
						ts, _ := strconv.ParseUint(m[4], 16, 64)
						// The counter stamped the live and max
						// buffers' time_start at the clock
						// change (1, 2), then the live one's at
						// the tracer's start (3).
						if ts-a != 3 {
							t.Errorf("%q: time stamp %d, %d since the start", l, ts, a)
						}
					}
					abs, rel = append(abs, a), append(rel, r)
				default:
					if pid := m[2]; !strings.HasSuffix(strings.TrimSpace(m[1]), "") || pid == "" {
						t.Errorf("line %q", l)
					}
					a, _ := strconv.ParseUint(m[4], 10, 64)
					abs = append(abs, a)
				}
			}
			for i := 1; i < len(abs); i++ {
				if abs[i] < abs[i-1] {
					t.Errorf("the time since the start goes back: %d then %d", abs[i-1], abs[i])
				}
				// The delay to the next entry is the difference of
				// their times, to a microsecond's rounding.
				if rel != nil && (abs[i]-abs[i-1] > rel[i-1]+1 || abs[i]-abs[i-1]+1 < rel[i-1]) {
					t.Errorf("entry %d: +%d, then %d after %d", i-1, rel[i-1], abs[i], abs[i-1])
				}
			}
			if rel != nil && rel[len(rel)-1] != 0 {
				t.Errorf("the last entry's delay is %d", rel[len(rel)-1])
			}
		})
	}
}

// What the latency format and verbose leave of the header and lines in
// other settings.
func TestLatencyFormatSettings(t *testing.T) {
	for _, tt := range []struct {
		name    string
		options []string // name=value in options/
		empty   bool     // the buffer emptied before the read
		header  string   // what trace starts with
		line    *regexp.Regexp
	}{
		{"empty", []string{"latency-format=1"}, true, "# tracer: function\n#\n", nil},
		{"empty verbose", []string{"latency-format=1", "verbose=1"}, true, "# tracer: function\n#\n", nil},
		{"verbose alone: no help", []string{"verbose=1"}, false, "# tracer: function\n#\n ",
			regexp.MustCompile(`^ +\S+-\d+ +\[000\] \S{5} +\d+\.\d{6}: vfs_read <-`)},
		{"raw: no latency context", []string{"latency-format=1", "raw=1"}, false, "# tracer: function\n#\n# function latency trace v1.1.5",
			regexp.MustCompile(`^\d+ 0 \d+ [0-9a-f]+ [0-9a-f]+$`)},
		{"no context-info: no header", []string{"latency-format=1", "context-info=0"}, false, "# tracer: function\n#\nvfs_read <-",
			regexp.MustCompile(`^vfs_read <-\S+$`)},
		{"sym-offset", []string{"latency-format=1", "sym-offset=1"}, false, "# tracer: function\n#\n# function latency trace v1.1.5",
			regexp.MustCompile(`^[ \S]{8}-\d+ +  0\S{5} +\d+us.: vfs_read\+0x[0-9a-f]+/0x[0-9a-f]+ <-\S+\+0x[0-9a-f]+/0x[0-9a-f]+$`)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := setup(t)
			f.mustWrite(t, "tracing/set_ftrace_filter", "vfs_read\n")
			f.mustWrite(t, "tracing/current_tracer", "function")
			f.step(t, 3_000_000)
			f.mustWrite(t, "tracing/tracing_on", "0")
			if tt.empty {
				f.mustWrite(t, "tracing/trace", "")
			}
			for _, o := range tt.options {
				name, v, _ := strings.Cut(o, "=")
				f.mustWrite(t, "tracing/options/"+name, v)
			}
			tr := f.read(t, "tracing/trace")
			if !strings.HasPrefix(tr, tt.header) || (tt.empty && tr != tt.header) {
				t.Errorf("trace:\n%s\nwant it to start with\n%s", tr, tt.header)
			}
			if tt.line == nil {
				return
			}
			lines := traceLines(tr)
			if len(lines) == 0 {
				t.Fatal("no entries")
			}
			for _, l := range lines {
				if !tt.line.MatchString(l) {
					t.Errorf("line %q", l)
				}
			}
		})
	}
}

// trace_pipe takes latency-format at its open; its iterator's index
// restarts at 1 at each read, and as it consumes an entry after
// printing it, the delay to the next is 0.
func TestLatencyFormatPipe(t *testing.T) {
	f := setup(t)
	f.mustWrite(t, "tracing/set_ftrace_filter", "vfs_read\n")
	f.mustWrite(t, "tracing/current_tracer", "function")
	f.mustWrite(t, "tracing/options/latency-format", "1")
	f.mustWrite(t, "tracing/options/verbose", "1")
	f.step(t, 3_000_000)
	f.mustWrite(t, "tracing/tracing_on", "0")
	pipe := f.pipeAll(t)
	verbose := regexp.MustCompile(`^ *\S+ +\d+   0 \d+ 00000000 ([0-9a-f]{8}) \[[0-9a-f]{8}\] \d+\.\d{3}ms \(\+0\.000ms\): vfs_read <-\S+$`)
	lines := traceLines(pipe)
	if len(lines) == 0 || strings.Contains(pipe, "#") {
		t.Fatalf("trace_pipe:\n%s", pipe)
	}
	for _, l := range lines {
		m := verbose.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("line %q", l)
			continue
		}
		if idx, _ := strconv.ParseUint(m[1], 16, 64); idx < 1 {
			t.Errorf("line %q: index %d", l, idx)
		}
	}
	if m := verbose.FindStringSubmatch(lines[0]); m == nil || m[1] != "00000001" {
		t.Errorf("first line %q, want index 1", lines[0])
	}
}

// The graph tracer shows the flags in a column of their own in the
// latency format, after the trace header.
func TestLatencyFormatGraph(t *testing.T) {
	f := setup(t)
	f.mustWrite(t, "tracing/set_graph_function", "vfs_read\n")
	f.mustWrite(t, "tracing/current_tracer", "function_graph")
	f.step(t, 3_000_000)
	f.mustWrite(t, "tracing/tracing_on", "0")
	f.mustWrite(t, "tracing/options/latency-format", "1")
	tr := f.read(t, "tracing/trace")
	want := "# tracer: function_graph\n#\n# function_graph latency trace v1.1.5 on 6.1.0-kpemu\n"
	legend := "#\n" +
		"#      _-----=> irqs-off        \n" +
		"#     / _----=> need-resched    \n" +
		"#    | / _---=> hardirq/softirq \n" +
		"#    || / _--=> preempt-depth   \n" +
		"#    ||| /                      \n" +
		"# CPU||||     DURATION                  FUNCTION CALLS\n" +
		"# |  ||||      |   |                     |   |   |   |\n"
	if !strings.HasPrefix(tr, want) || !strings.Contains(tr, legend) {
		t.Errorf("trace:\n%s", tr)
	}
	column := regexp.MustCompile(`^ 0\)  [.d][.nNp][.hHsz]\.\. \| `)
	n := 0
	for _, l := range traceLines(tr) {
		if strings.HasPrefix(l, " 0) ") && !strings.Contains(l, "=>") { // not a task switch's line
			n++
			if !column.MatchString(l) {
				t.Errorf("line %q", l)
			}
		}
	}
	if n == 0 {
		t.Errorf("no graph lines:\n%s", tr)
	}
}

// verbose puts each argument's type before its name in a system call's
// entry line (print_syscall_enter), at each read; hash-ptr leaves it.
func TestVerboseSyscalls(t *testing.T) {
	f := setup(t)
	f.mustWrite(t, "tracing/events/syscalls/sys_enter_read/enable", "1")
	f.step(t, 3_000_000)
	f.mustWrite(t, "tracing/events/syscalls/sys_enter_read/enable", "0")
	for _, tt := range []struct {
		options []string
		line    *regexp.Regexp
	}{
		{[]string{"verbose=0"}, regexp.MustCompile(`: sys_read\(fd: [0-9a-f]+, buf: [0-9a-f]+, count: [0-9a-f]+\)$`)},
		{[]string{"verbose=1"}, regexp.MustCompile(`: sys_read\(unsigned int fd: [0-9a-f]+, char \* buf: [0-9a-f]+, size_t count: [0-9a-f]+\)$`)},
		{[]string{"verbose=1", "hash-ptr=0"}, regexp.MustCompile(`: sys_read\(unsigned int fd: [0-9a-f]+, char \* buf: [0-9a-f]+, size_t count: [0-9a-f]+\)$`)},
		{[]string{"verbose=0", "hash-ptr=0"}, regexp.MustCompile(`: sys_read\(fd: [0-9a-f]+, buf: [0-9a-f]+, count: [0-9a-f]+\)$`)},
	} {
		for _, o := range tt.options {
			name, v, _ := strings.Cut(o, "=")
			f.mustWrite(t, "tracing/options/"+name, v)
		}
		lines := traceLines(f.read(t, "tracing/trace"))
		if len(lines) == 0 {
			t.Fatal("no sys_enter_read event")
		}
		for _, l := range lines {
			if !tt.line.MatchString(l) {
				t.Errorf("%v: %q", tt.options, l)
			}
		}
	}
}

// The snapshot file never takes the latency format
// (tracing_snapshot_open sets no TRACE_FILE_LAT_FMT).
func TestLatencyFormatSnapshot(t *testing.T) {
	f := setup(t)
	f.mustWrite(t, "tracing/set_ftrace_filter", "vfs_read\n")
	f.mustWrite(t, "tracing/current_tracer", "function")
	f.mustWrite(t, "tracing/options/latency-format", "1")
	f.step(t, 3_000_000)
	f.mustWrite(t, "tracing/snapshot", "1")
	f.step(t, 3_000_000) // the swap left the live buffer empty
	for _, tt := range []struct {
		file, header string
	}{
		{"tracing/snapshot", "# tracer: function\n#\n# entries-in-buffer/entries-written: "},
		{"tracing/trace", "# tracer: function\n#\n# function latency trace v1.1.5 on 6.1.0-kpemu\n"},
	} {
		if got := f.read(t, tt.file); !strings.HasPrefix(got, tt.header) {
			t.Errorf("%s:\n%.300s\nwant it to start with\n%s", tt.file, got, tt.header)
		}
	}
}

// verbose puts each field's format before it in a synthetic event's
// line (print_synth_event).
func TestVerboseSynth(t *testing.T) {
	f := setup(t)
	f.mustWrite(t, "tracing/synthetic_events", "rd u64 cnt; s64 ret;\n")
	f.mustWrite(t, "tracing/events/syscalls/sys_enter_read/trigger", "hist:keys=common_pid:c=count\n")
	f.mustWrite(t, "tracing/events/syscalls/sys_exit_read/trigger", "hist:keys=common_pid:r=ret:onmatch(syscalls.sys_enter_read).trace(rd,$c,$r)\n")
	f.mustWrite(t, "tracing/events/synthetic/rd/enable", "1")
	f.step(t, 3_000_000)
	f.mustWrite(t, "tracing/events/synthetic/rd/enable", "0")
	for _, tt := range []struct {
		verbose string
		line    *regexp.Regexp
	}{
		{"0", regexp.MustCompile(`: rd: cnt=(\d+) ret=(-?\d+)$`)},
		{"1", regexp.MustCompile(`: rd: %llu cnt=(\d+) %lld ret=(-?\d+)$`)},
		{"0", regexp.MustCompile(`: rd: cnt=(\d+) ret=(-?\d+)$`)},
	} {
		f.mustWrite(t, "tracing/options/verbose", tt.verbose)
		for _, file := range []string{"tracing/trace"} {
			lines := traceLines(f.read(t, file))
			if len(lines) == 0 {
				t.Fatal("no rd event")
			}
			for _, l := range lines {
				if !tt.line.MatchString(l) {
					t.Errorf("verbose %s: %q", tt.verbose, l)
				}
			}
		}
	}
	f.mustWrite(t, "tracing/options/verbose", "1")
	if pipe := f.pipeAll(t); !strings.Contains(pipe, ": rd: %llu cnt=") {
		t.Errorf("trace_pipe with verbose:\n%.400s", pipe)
	}
}
