package tracing_test

import (
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// errnoOf is the errno err carries (0 for nil).
func errnoOf(err error) syscall.Errno {
	var e syscall.Errno
	if err == nil || !errors.As(err, &e) {
		return 0
	}
	return e
}

// writeStep is one write to a file and what must follow: the errno, and
// then what files read.
type writeStep struct {
	file, data string
	errno      syscall.Errno
	reads      map[string]string
}

func runSteps(t *testing.T, f *fixture, steps []writeStep) {
	t.Helper()
	for _, s := range steps {
		err := f.write("tracing/"+s.file, s.data, true)
		if got := errnoOf(err); got != s.errno || (err != nil) != (s.errno != 0) {
			t.Errorf("write %q to %s: %v, want errno %d", s.data, s.file, err, s.errno)
		}
		for file, want := range s.reads {
			if got := f.read(t, "tracing/"+file); got != want {
				t.Errorf("after %q > %s: %s reads %q, want %q", s.data, s.file, file, got, want)
			}
		}
	}
}

// buffer_size_kb, buffer_total_size_kb and per_cpu/cpuN/buffer_size_kb
// as Linux 6.1 reads and writes them (the oracle's transcript, 2 CPUs):
// two pages a CPU until tracing is first used, sizes in whole pages of
// 4080 bytes, kstrtoul's syntax.
func TestBufferSizeFiles(t *testing.T) {
	f := setupCPUs(t, 2)
	r := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for file, want := range map[string]string{
		"buffer_size_kb":              "7 (expanded: 1408)\n",
		"buffer_total_size_kb":        "14 (expanded: 2816)\n",
		"per_cpu/cpu0/buffer_size_kb": "7\n",
		"per_cpu/cpu1/buffer_size_kb": "7\n",
	} {
		if got := f.read(t, "tracing/"+file); got != want {
			t.Errorf("fresh %s: %q, want %q", file, got, want)
		}
	}
	// Enabling an event expands the buffer to TRACE_BUF_SIZE_DEFAULT.
	if err := f.write("tracing/kprobe_events", "p:rd vfs_read\n", false); err != nil {
		t.Fatal(err)
	}
	runSteps(t, f, []writeStep{
		{file: "events/kprobes/rd/enable", data: "1\n", reads: r("buffer_size_kb", "1410\n", "buffer_total_size_kb", "2820\n", "per_cpu/cpu0/buffer_size_kb", "1410\n")},
		{file: "events/kprobes/rd/enable", data: "0\n"},
		{file: "buffer_size_kb", data: "0\n", errno: syscall.EINVAL, reads: r("buffer_size_kb", "1410\n")},
		{file: "buffer_size_kb", data: "abc\n", errno: syscall.EINVAL},
		{file: "buffer_size_kb", data: "-1\n", errno: syscall.EINVAL},
		{file: "buffer_size_kb", data: " 8\n", errno: syscall.EINVAL},
		{file: "buffer_size_kb", data: "8 \n", errno: syscall.EINVAL},
		{file: "buffer_size_kb", data: "8x\n", errno: syscall.EINVAL},
		{file: "buffer_size_kb", data: "0x10\n", errno: syscall.EINVAL},
		{file: "buffer_size_kb", data: "8\n\n", errno: syscall.EINVAL},
		{file: "buffer_size_kb", data: "\n", errno: syscall.EINVAL, reads: r("buffer_size_kb", "1410\n")},
		{file: "buffer_size_kb", data: "99999999999999999999\n", errno: syscall.ERANGE},
		{file: "buffer_size_kb", data: "+8\n", reads: r("buffer_size_kb", "11\n")},
		{file: "buffer_size_kb", data: "1", reads: r("buffer_size_kb", "7\n", "buffer_total_size_kb", "14\n")},
		{file: "buffer_size_kb", data: "7\n", reads: r("buffer_size_kb", "7\n")},
		{file: "buffer_size_kb", data: "9\n", reads: r("buffer_size_kb", "11\n", "buffer_total_size_kb", "22\n")},
		{file: "buffer_size_kb", data: "100\n", reads: r("buffer_size_kb", "103\n", "buffer_total_size_kb", "206\n")},
		{file: "buffer_size_kb", data: "1408\n", reads: r("buffer_size_kb", "1410\n")},
		// unsigned long arithmetic: the bytes wrap round to a tiny size.
		{file: "buffer_size_kb", data: "18446744073709551615\n", reads: r("buffer_size_kb", "7\n")},
		{file: "buffer_size_kb", data: "1073741824\n", errno: syscall.ENOMEM, reads: r("buffer_size_kb", "7\n")},
		{file: "buffer_size_kb", data: "1410\n"},
		{file: "per_cpu/cpu1/buffer_size_kb", data: "20\n", reads: r("buffer_size_kb", "X\n", "buffer_total_size_kb", "1433\n", "per_cpu/cpu0/buffer_size_kb", "1410\n", "per_cpu/cpu1/buffer_size_kb", "23\n")},
		{file: "per_cpu/cpu1/buffer_size_kb", data: "0\n", errno: syscall.EINVAL},
		{file: "buffer_total_size_kb", data: "8\n", errno: syscall.EINVAL},
		{file: "per_cpu/cpu0/stats", data: "8\n", errno: syscall.EINVAL},
		{file: "trace_pipe", data: "8\n", errno: syscall.EINVAL},
		{file: "per_cpu/cpu0/trace_pipe", data: "8\n", errno: syscall.EINVAL},
		{file: "per_cpu/cpu0/trace", data: "x\n"},
	})
}

// The modes of the files, as the transcript's ls -l shows them.
func TestBufferFileModes(t *testing.T) {
	f := setupCPUs(t, 2)
	for file, want := range map[string]fs.FileMode{
		"buffer_size_kb": 0o640, "buffer_total_size_kb": 0o440, "trace_clock": 0o640, "trace_options": 0o640,
		"options/overwrite": 0o640, "options/test_nop_refuse": 0o640,
		"per_cpu": fs.ModeDir | 0o750, "per_cpu/cpu1": fs.ModeDir | 0o750,
		"per_cpu/cpu1/buffer_size_kb": 0o640, "per_cpu/cpu1/stats": 0o440, "per_cpu/cpu1/trace": 0o640, "per_cpu/cpu1/trace_pipe": 0o440,
	} {
		n, err := f.tree.Lookup("tracing/" + file)
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		if n.Mode() != want {
			t.Errorf("%s: mode %v, want %v", file, n.Mode(), want)
		}
	}
	if _, err := f.tree.Lookup("tracing/per_cpu/cpu2"); err == nil {
		t.Error("per_cpu/cpu2 on a 2-CPU machine")
	}
}

// trace_clock: the list with the current clock in brackets, writes of a
// name (white space stripped, under 64 bytes), and a change empties the
// buffer.
func TestTraceClockFile(t *testing.T) {
	f := setupCPUs(t, 1)
	list := func(cur string) string {
		s := " local global counter uptime perf mono mono_raw boot tai "
		return strings.TrimSpace(strings.Replace(s, " "+cur+" ", " ["+cur+"] ", 1)) + "\n"
	}
	r := func(cur string) map[string]string { return map[string]string{"trace_clock": list(cur)} }
	if got := f.read(t, "tracing/trace_clock"); got != list("local") {
		t.Errorf("trace_clock %q", got)
	}
	runSteps(t, f, []writeStep{
		{file: "trace_clock", data: "bogus\n", errno: syscall.EINVAL, reads: r("local")},
		{file: "trace_clock", data: "global\n", reads: r("global")},
		{file: "trace_clock", data: " counter \n", reads: r("counter")},
		{file: "trace_clock", data: "Local\n", errno: syscall.EINVAL, reads: r("counter")},
		{file: "trace_clock", data: "\n", errno: syscall.EINVAL},
		{file: "trace_clock", data: "local", reads: r("local")},
		{file: "trace_clock", data: "uptime\n\n", reads: r("uptime")},
		{file: "trace_clock", data: "mono_raw\ttai\n", errno: syscall.EINVAL, reads: r("uptime")},
		{file: "trace_clock", data: "x23456789012345678901234567890123456789012345678901234567890\n", errno: syscall.EINVAL},
		{file: "trace_clock", data: "tai" + strings.Repeat(" ", 61), errno: syscall.EINVAL},
		{file: "trace_clock", data: "tai" + strings.Repeat(" ", 60), reads: r("tai")},
		{file: "trace_clock", data: "local\n", reads: r("local")},
	})
}

// The timestamps each clock prints, from events of the running guest:
// seconds with microseconds for the clocks in nanoseconds (tai is the
// time of day), a right-aligned integer for counter and uptime; a
// clock change empties the buffer.
func TestTraceClockFormats(t *testing.T) {
	f := setupCPUs(t, 1)
	if err := f.write("tracing/kprobe_events", "p:rd vfs_read\n", false); err != nil {
		t.Fatal(err)
	}
	tsOf := regexp.MustCompile(`^ +\S+-\d+ +\[000\] d\.\.\.\. ( {0,4}\d+\.\d{6}| +\d+): rd: \(vfs_read\+0x0/0x[0-9a-f]+\)$`)
	for _, tt := range []struct {
		clock string
		ts    *regexp.Regexp
	}{
		// tracing_set_clock stamps the live and the max buffer's
		// time_start with the new clock: counter's first event is 3
		// (as on Debian's 6.1).
		{"counter", regexp.MustCompile(`^ {11}3$`)},
		{"uptime", regexp.MustCompile(`^ {5,}\d+$`)},
		{"tai", regexp.MustCompile(`^9\d{8}\.\d{6}$`)}, // the deterministic RTC counts from 2000
		{"mono", regexp.MustCompile(`^ {0,4}\d+\.\d{6}$`)},
		{"local", regexp.MustCompile(`^ {0,4}\d+\.\d{6}$`)},
	} {
		if err := f.write("tracing/trace_clock", tt.clock, true); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(f.read(t, "tracing/trace"), " rd: ") {
			t.Errorf("%s: the clock change left entries", tt.clock)
		}
		if err := f.write("tracing/events/kprobes/rd/enable", "1", true); err != nil {
			t.Fatal(err)
		}
		f.step(t, 2_000_000)
		if err := f.write("tracing/events/kprobes/rd/enable", "0", true); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(f.read(t, "tracing/trace")), "\n")
		first := lines[len(lines)-countEntries(lines)]
		m := tsOf.FindStringSubmatch(first)
		if m == nil || !tt.ts.MatchString(m[1]) {
			t.Errorf("%s: first line %q", tt.clock, first)
		}
		stats := f.read(t, "tracing/per_cpu/cpu0/stats")
		if inNS := !strings.Contains("counter uptime", tt.clock); inNS != regexp.MustCompile(`(?m)^now ts: +\d+\.\d{6}$`).MatchString(stats) {
			t.Errorf("%s: stats:\n%s", tt.clock, stats)
		}
	}
}

func countEntries(lines []string) int {
	n := 0
	for _, l := range lines {
		if !strings.HasPrefix(l, "#") {
			n++
		}
	}
	return n
}

// trace_options lists the options kpemu implements in Linux's order and
// then the nop tracer's; both it and options/NAME set them, with
// Linux's parsing and errnos.
func TestTraceOptionsFile(t *testing.T) {
	f := setupCPUs(t, 1)
	// Debian's 6.1 arm64, less blk's options.
	want := "print-parent\nnosym-offset\nnosym-addr\nnoverbose\nnoraw\nnohex\nnobin\nnoblock\ntrace_printk\nannotate\nnouserstacktrace\nnosym-userobj\nnoprintk-msg-only\ncontext-info\nnolatency-format\nrecord-cmd\nnorecord-tgid\noverwrite\nnodisable_on_free\nirq-info\nmarkers\nnoevent-fork\nnopause-on-trace\nhash-ptr\nfunction-trace\nnofunction-fork\nnodisplay-graph\nnostacktrace\nnotest_nop_accept\nnotest_nop_refuse\n"
	if got := f.read(t, "tracing/trace_options"); got != want {
		t.Fatalf("trace_options:\n%s\nwant\n%s", got, want)
	}
	opt := func(name string) string {
		for _, l := range strings.Split(f.read(t, "tracing/trace_options"), "\n") {
			if strings.TrimPrefix(l, "no") == name {
				return l
			}
		}
		return "(missing)"
	}
	steps := []struct {
		file, data string
		errno      syscall.Errno
		option     string // trace_options' line for the option after it
		value      string // and options/ file's
	}{
		{"trace_options", "nooverwrite\n", 0, "nooverwrite", "0\n"},
		{"trace_options", "bogus\n", syscall.EINVAL, "nooverwrite", "0\n"},
		{"trace_options", "no\n", syscall.EINVAL, "nooverwrite", "0\n"},
		{"trace_options", " overwrite \n", 0, "overwrite", "1\n"},
		{"trace_options", "OVERWRITE\n", syscall.EINVAL, "overwrite", "1\n"},
		{"trace_options", "overwrite stacktrace\n", syscall.EINVAL, "overwrite", "1\n"},
		{"trace_options", "nooverwrite\n\n", 0, "nooverwrite", "0\n"},
		{"trace_options", "overwrite" + strings.Repeat(" ", 55), syscall.EINVAL, "nooverwrite", "0\n"},
		{"options/overwrite", "1\n", 0, "overwrite", "1\n"},
		{"options/overwrite", "2\n", syscall.EINVAL, "overwrite", "1\n"},
		{"options/overwrite", "x\n", syscall.EINVAL, "overwrite", "1\n"},
		{"options/overwrite", " 1\n", syscall.EINVAL, "overwrite", "1\n"},
		{"options/overwrite", "1 \n", syscall.EINVAL, "overwrite", "1\n"},
		{"options/overwrite", "\n", syscall.EINVAL, "overwrite", "1\n"},
		{"options/overwrite", "0\n", 0, "nooverwrite", "0\n"},
		{"options/overwrite", "01\n", 0, "overwrite", "1\n"},
		{"options/overwrite", "+0", 0, "nooverwrite", "0\n"},
		{"options/overwrite", "1", 0, "overwrite", "1\n"},
		{"trace_options", "stacktrace", 0, "stacktrace", "1\n"},
		{"trace_options", "nostacktrace", 0, "nostacktrace", "0\n"},
		{"trace_options", "test_nop_refuse\n", syscall.EINVAL, "notest_nop_refuse", "0\n"},
		{"options/test_nop_refuse", "1\n", syscall.EINVAL, "notest_nop_refuse", "0\n"},
		{"trace_options", "test_nop_accept\n", 0, "test_nop_accept", "1\n"},
		{"options/test_nop_accept", "0\n", 0, "notest_nop_accept", "0\n"},
		{"trace_options", "latency-format\n", 0, "latency-format", "1\n"},
		{"options/latency-format", "0\n", 0, "nolatency-format", "0\n"},
		{"trace_options", "nohash-ptr\n", 0, "nohash-ptr", "0\n"},
		{"trace_options", "hash-ptr\n", 0, "hash-ptr", "1\n"},
		// The function tracer's options are set through
		// trace_options only while it is the tracer (Debian's 6.1).
		{"trace_options", "func_stack_trace\n", syscall.EINVAL, "(missing)", "0\n"},
		{"trace_options", "nofunc-no-repeats\n", syscall.EINVAL, "(missing)", "0\n"},
		// blk's options are not there: kpemu has no block layer.
		{"trace_options", "blk_classic\n", syscall.EINVAL, "(missing)", ""},
		// raw, hex and bin (rawoutput.go).
		{"trace_options", "raw\n", 0, "raw", "1\n"},
		{"options/hex", "1\n", 0, "hex", "1\n"},
		{"options/bin", "2\n", syscall.EINVAL, "nobin", "0\n"},
		{"trace_options", "bin", 0, "bin", "1\n"},
		{"trace_options", "nobin", 0, "nobin", "0\n"},
		{"options/hex", "0", 0, "nohex", "0\n"},
		{"trace_options", "noraw\n", 0, "noraw", "0\n"},
	}
	for _, s := range steps {
		err := f.write("tracing/"+s.file, s.data, true)
		if errnoOf(err) != s.errno || (err != nil) != (s.errno != 0) {
			t.Errorf("%q > %s: %v, want errno %d", s.data, s.file, err, s.errno)
		}
		name := strings.TrimPrefix(s.option, "no")
		if s.option == "(missing)" {
			name = strings.TrimPrefix(strings.TrimSpace(s.data), "no")
		}
		if got := opt(name); got != s.option {
			t.Errorf("after %q > %s: trace_options says %q, want %q", s.data, s.file, got, s.option)
		}
		if s.value != "" {
			if got := f.read(t, "tracing/options/"+name); got != s.value {
				t.Errorf("after %q > %s: options/%s reads %q, want %q", s.data, s.file, name, got, s.value)
			}
		}
	}
	// The nop tracer's options are listed while nop is the tracer and
	// set through trace_options only then; their files take writes
	// whichever tracer runs, as Linux's.
	if err := f.write("tracing/current_tracer", "function", true); err != nil {
		t.Fatal(err)
	}
	if got := f.read(t, "tracing/trace_options"); strings.Contains(got, "test_nop") || !strings.HasSuffix(got, "nostacktrace\nnofunc_stack_trace\nnofunc-no-repeats\n") {
		t.Errorf("trace_options under function:\n%s", got)
	}
	if err := f.write("tracing/trace_options", "test_nop_accept", true); errnoOf(err) != syscall.EINVAL {
		t.Errorf("test_nop_accept under function: %v, want EINVAL", err)
	}
	if err := f.write("tracing/options/test_nop_accept", "1", true); err != nil {
		t.Errorf("options/test_nop_accept under function: %v", err)
	}
	if err := f.write("tracing/current_tracer", "nop", true); err != nil {
		t.Fatal(err)
	}
}

// A buffer of two pages a CPU overruns: the stats and the header count
// as Linux's ring buffer does (entries written include those overrun),
// and without overwrite the new events are dropped instead.
func TestOverwriteAccounting(t *testing.T) {
	f := setupCPUs(t, 2)
	for _, s := range []string{"tracing/buffer_size_kb:1", "tracing/kprobe_events:p:rd vfs_read"} {
		file, data, _ := strings.Cut(s, ":")
		if err := f.write(file, data, true); err != nil {
			t.Fatal(err)
		}
	}
	type stats struct{ entries, overrun, dropped, bytes, read uint64 }
	stat := func(cpu int) stats {
		var s stats
		for _, l := range strings.Split(f.read(t, fmt.Sprintf("tracing/per_cpu/cpu%d/stats", cpu)), "\n") {
			k, v, _ := strings.Cut(l, ": ")
			n, _ := strconv.ParseUint(v, 10, 64)
			switch k {
			case "entries":
				s.entries = n
			case "overrun":
				s.overrun = n
			case "dropped events":
				s.dropped = n
			case "bytes":
				s.bytes = n
			case "read events":
				s.read = n
			}
		}
		return s
	}
	header := regexp.MustCompile(`entries-in-buffer/entries-written: (\d+)/(\d+)   #P:2`)
	run := func() (stats, stats, uint64, uint64) {
		t.Helper()
		if err := f.write("tracing/events/kprobes/rd/enable", "1", true); err != nil {
			t.Fatal(err)
		}
		f.step(t, 30_000_000)
		if err := f.write("tracing/events/kprobes/rd/enable", "0", true); err != nil {
			t.Fatal(err)
		}
		m := header.FindStringSubmatch(f.read(t, "tracing/trace"))
		if m == nil {
			t.Fatal("no header")
		}
		e, _ := strconv.ParseUint(m[1], 10, 64)
		w, _ := strconv.ParseUint(m[2], 10, 64)
		return stat(0), stat(1), e, w
	}
	s0, s1, entries, written := run()
	if s0.overrun+s1.overrun == 0 || s0.dropped+s1.dropped != 0 {
		t.Fatalf("overwrite: %+v %+v: want overruns and no drops", s0, s1)
	}
	if entries != s0.entries+s1.entries || written != entries+s0.overrun+s1.overrun {
		t.Errorf("header %d/%d, stats %+v %+v", entries, written, s0, s1)
	}
	for _, s := range []stats{s0, s1} {
		// A 20-byte event, with an 8-byte time extend before each but
		// a page's first (the test's clock moves 1.23 s a read, past
		// the 2^27 ns a delta holds): 146 to a page; at most two
		// pages, and at least one once a CPU wrapped.
		if s.entries > 292 || s.bytes > 8160 || s.overrun > 0 && s.entries < 146 {
			t.Errorf("a two-page CPU buffer holds %+v", s)
		}
	}
	if got := countEntries(strings.Split(strings.TrimSpace(f.read(t, "tracing/trace")), "\n")); uint64(got) != entries {
		t.Errorf("trace shows %d entries, header says %d", got, entries)
	}

	// A trace_pipe read of a CPU that overran reports it, consumes,
	// and the header follows: entries written counts only what the
	// buffer still holds or overran.
	over := 0
	if s0.overrun == 0 {
		over = 1
	}
	h, err := f.tree.Open(t.Context(), fmt.Sprintf("tracing/per_cpu/cpu%d/trace_pipe", over), 0)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	n, err := h.Read(t.Context(), buf, 0)
	h.Release()
	if err != nil || !regexp.MustCompile(fmt.Sprintf(`^CPU:%d \[LOST \d+ EVENTS\]\n`, over)).Match(buf[:n]) {
		t.Errorf("first trace_pipe read: %q %v", buf[:min(n, 100)], err)
	}
	a0, a1 := stat(0), stat(1)
	if a0.read+a1.read == 0 || a0.entries+a0.read != s0.entries || a1.entries+a1.read != s1.entries {
		t.Errorf("after the read: %+v %+v, before %+v %+v", a0, a1, s0, s1)
	}

	// echo > per_cpu/cpu0/trace empties CPU 0 alone; echo > trace all.
	if err := f.write("tracing/per_cpu/cpu0/trace", "", true); err != nil {
		t.Fatal(err)
	}
	if z, o := stat(0), stat(1); z != (stats{}) || o != a1 {
		t.Errorf("after clearing cpu0: %+v %+v", z, o)
	}
	if err := f.write("tracing/trace", "\n", true); err != nil {
		t.Fatal(err)
	}
	if z, o := stat(0), stat(1); z != (stats{}) || o != (stats{}) {
		t.Errorf("after echo > trace: %+v %+v", z, o)
	}

	if err := f.write("tracing/options/overwrite", "0", true); err != nil {
		t.Fatal(err)
	}
	s0, s1, entries, written = run()
	if s0.overrun+s1.overrun != 0 || s0.dropped+s1.dropped == 0 || written != entries {
		t.Errorf("no overwrite: %+v %+v %d/%d: want drops and no overruns", s0, s1, entries, written)
	}
	for _, s := range []stats{s0, s1} {
		// The test's clock moves 1.2 s an event: each but a page's
		// first needs a time extend, 28 bytes.
		if s.dropped > 0 && (s.entries != 2*(1+(4080-20)/28) || s.bytes != 8160) {
			t.Errorf("a full CPU buffer without overwrite holds %+v, want 292 events and 8160 bytes", s)
		}
	}
}

// With the stacktrace option every event is followed by a <stack trace>
// entry of the same task, its frames unwound from the probe's pt_regs:
// the probed function first, then the return addresses up the frame
// records (at a function's entry its caller's own caller comes next, as
// on arm64 Linux), bare names, or with sym-offset as %pS.
func TestStacktraceOption(t *testing.T) {
	f := setupCPUs(t, 1)
	for _, s := range []string{"tracing/kprobe_events:p:rd vfs_read\nr:rr vfs_read\n", "tracing/options/stacktrace:1", "tracing/events/kprobes/enable:1"} {
		file, data, _ := strings.Cut(s, ":")
		if err := f.write(file, data, true); err != nil {
			t.Fatal(err)
		}
	}
	f.step(t, 3_000_000)
	if err := f.write("tracing/events/kprobes/enable", "0", true); err != nil {
		t.Fatal(err)
	}
	ctx := regexp.MustCompile(`^( +\S+-\d+ +\[000\]) (d|\.)\.\.\.\. +\d+\.\d{6}: (.*)$`)
	frame := regexp.MustCompile(`^ => [A-Za-z_][A-Za-z0-9_.]*$`)
	check := func(trace string, offsets bool) {
		t.Helper()
		lines := strings.Split(strings.TrimSuffix(trace, "\n"), "\n")
		stacks := 0
		var prev []string
		for i := 0; i < len(lines); i++ {
			m := ctx.FindStringSubmatch(lines[i])
			if m == nil {
				continue
			}
			if m[3] != "<stack trace>" {
				prev = m
				continue
			}
			stacks++
			if prev == nil || prev[1] != m[1] || prev[2] != m[2] {
				t.Fatalf("a stack not after its event:\n%s\n%s", strings.Join(prev, "|"), lines[i])
			}
			var frames []string
			for i+1 < len(lines) && strings.HasPrefix(lines[i+1], " => ") {
				i++
				frames = append(frames, lines[i])
			}
			first := " => vfs_read"
			if strings.HasPrefix(prev[3], "rr: (") {
				first = " => " + strings.SplitN(strings.TrimPrefix(prev[3], "rr: ("), "+", 2)[0]
			}
			if offsets {
				first += "+0x"
			}
			if len(frames) < 2 || !strings.HasPrefix(frames[0], first) {
				t.Errorf("stack of %q: %q", prev[3], frames)
			}
			for _, fr := range frames {
				if offsets != strings.Contains(fr, "+0x") || !offsets && !frame.MatchString(fr) {
					t.Errorf("frame %q", fr)
				}
			}
			prev = nil
		}
		if stacks < 4 {
			t.Errorf("%d stack traces", stacks)
		}
	}
	check(f.read(t, "tracing/trace"), false)
	if err := f.write("tracing/options/sym-offset", "1", true); err != nil {
		t.Fatal(err)
	}
	check(f.read(t, "tracing/trace"), true)
}

// With record-cmd off the comms of tasks not seen before print as
// "<...>".
func TestRecordCmdOff(t *testing.T) {
	f := setupCPUs(t, 1)
	for _, s := range []string{"tracing/options/record-cmd:0", "tracing/kprobe_events:p:rd vfs_read", "tracing/events/kprobes/rd/enable:1"} {
		file, data, _ := strings.Cut(s, ":")
		if err := f.write(file, data, true); err != nil {
			t.Fatal(err)
		}
	}
	f.step(t, 2_000_000)
	trace := f.read(t, "tracing/trace")
	if !strings.Contains(trace, "           <...>-") || regexp.MustCompile(`(?m)^ +[a-z]+\S*-\d+ +\[`).MatchString(trace) {
		t.Errorf("record-cmd off:\n%s", trace[:min(len(trace), 1500)])
	}
}
