package tracing

import (
	"errors"
	"io/fs"
	"strings"
	"syscall"
	"testing"
)

// The snapshot files' texts as the oracle (Debian's 6.1 arm64 under QEMU)
// printed them: `cat snapshot` and `cat per_cpu/cpu0/snapshot` while the
// snapshot is freed, then allocated and empty.
const (
	snapHead      = "# tracer: nop\n#\n"
	snapFreed     = "#\n# * Snapshot is freed *\n#\n"
	snapAllocated = "#\n# * Snapshot is allocated *\n#\n"
	snapMainHelp  = "# Snapshot commands:\n" +
		"# echo 0 > snapshot : Clears and frees snapshot buffer\n" +
		"# echo 1 > snapshot : Allocates snapshot buffer, if not already allocated.\n" +
		"#                      Takes a snapshot of the main buffer.\n" +
		"# echo 2 > snapshot : Clears snapshot buffer (but does not allocate or free)\n" +
		"#                      (Doesn't have to be '2' works with any number that\n" +
		"#                       is not a '0' or '1')\n"
	snapCPUHelp = "# Snapshot commands:\n" +
		"# echo 0 > snapshot : Invalid for per_cpu snapshot file.\n" +
		"# echo 1 > snapshot : Not supported with this kernel.\n" +
		"#                     Must use main snapshot file to allocate.\n" +
		"# echo 2 > snapshot : Clears this cpu's snapshot buffer (but does not allocate)\n" +
		"#                      (Doesn't have to be '2' works with any number that\n" +
		"#                       is not a '0' or '1')\n"
)

// records is the text of the trace_printk records in a trace or
// snapshot file, each with its CPU, "0:text".
func records(out string) string {
	var got []string
	for _, l := range strings.Split(out, "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		i := strings.Index(l, "] ")
		j := strings.LastIndex(l, ": ")
		if i < 0 || j < 0 {
			got = append(got, l)
			continue
		}
		got = append(got, l[i-1:i]+":"+l[j+2:])
	}
	return strings.Join(got, " ")
}

// TestSnapshotFile replays the oracle's session on the snapshot files:
// each write's errno, and what snapshot, trace and the per-CPU files
// show after it. Records are written straight into the live buffer
// (printk), so "A" is a record on CPU 0 with the text A.
func TestSnapshotFile(t *testing.T) {
	tr, _ := newTestTracing(t, 2)
	read := func(p string) string {
		t.Helper()
		b, err := tr.tree.ReadFile("tracing/" + p)
		if err != nil {
			t.Fatalf("reading %s: %v", p, err)
		}
		return string(b)
	}
	ts := uint64(1000)
	steps := []struct {
		name   string
		put    []string // records to write first: "cpu:text"
		file   string
		data   string
		errno  syscall.Errno
		snap   string // what snapshot shows: its help text, or records
		trace  string // records of trace; "" is not looked at, "none" is no records
		cpu1   string // per_cpu/cpu1/snapshot: its help text, or records
		buffer string // buffer_size_kb
	}{
		{name: "fresh", snap: snapFreed + snapMainHelp, cpu1: snapFreed + snapCPUHelp, buffer: "7 (expanded: 1408)\n"},
		// tracing_update_buffers comes before the number is parsed.
		{name: "abc", file: "snapshot", data: "abc\n", errno: syscall.EINVAL, snap: snapFreed + snapMainHelp, buffer: "1410\n"},
		{name: "empty", file: "snapshot", data: "\n", errno: syscall.EINVAL},
		{name: "negative", file: "snapshot", data: "-1\n", errno: syscall.EINVAL},
		{name: "leading blank", file: "snapshot", data: " 1\n", errno: syscall.EINVAL, snap: snapFreed + snapMainHelp},
		{name: "overflow", file: "snapshot", data: "18446744073709551616\n", errno: syscall.ERANGE},
		{name: "free freed", file: "snapshot", data: "0\n", snap: snapFreed + snapMainHelp},
		{name: "clear freed", file: "snapshot", data: "2\n", snap: snapFreed + snapMainHelp},
		{name: "per-cpu free", file: "per_cpu/cpu1/snapshot", data: "0\n", errno: syscall.EINVAL},
		{name: "per-cpu clear", file: "per_cpu/cpu1/snapshot", data: "2\n"},
		{name: "per-cpu swap", file: "per_cpu/cpu1/snapshot", data: "1\n", errno: syscall.EINVAL, snap: snapFreed + snapMainHelp},
		{name: "other number freed", file: "snapshot", data: "7\n", snap: snapFreed + snapMainHelp},
		// The first snapshot swaps in an empty buffer.
		{name: "take", put: []string{"0:A"}, file: "snapshot", data: "1\n", snap: "0:A", trace: "none", cpu1: snapAllocated + snapCPUHelp},
		// The next one gives the live buffer the last snapshot back.
		{name: "swap back", put: []string{"0:B", "1:C"}, file: "snapshot", data: "1\n", snap: "0:B 1:C", trace: "0:A", cpu1: "1:C"},
		{name: "per-cpu clear allocated", file: "per_cpu/cpu1/snapshot", data: "2\n", snap: "0:B", trace: "0:A", cpu1: snapAllocated + snapCPUHelp},
		{name: "clear", file: "snapshot", data: "5\n", snap: snapAllocated + snapMainHelp, trace: "0:A"},
		{name: "empty swap", file: "snapshot", data: "1\n", snap: "0:A", trace: "none"},
		{name: "free", put: []string{"1:D"}, file: "snapshot", data: "0\n", snap: snapFreed + snapMainHelp, trace: "1:D", cpu1: snapFreed + snapCPUHelp},
	}
	for _, s := range steps {
		for _, p := range s.put {
			printk(tr, int(p[0]-'0'), ts, p[2:])
			ts++
		}
		if s.file != "" {
			err := tr.tree.WriteFile("tracing/"+s.file, []byte(s.data), true)
			var got syscall.Errno
			if err != nil && !errors.As(err, &got) {
				t.Errorf("%s: %v is no errno", s.name, err)
			}
			if got != s.errno {
				t.Errorf("%s: write %q to %s: errno %v, want %v", s.name, s.data, s.file, err, s.errno)
			}
		}
		check := func(file, want string) {
			t.Helper()
			switch want {
			case "":
				return
			case "none":
				want = ""
			}
			got := read(file)
			if strings.HasPrefix(want, "#") {
				if got != snapHead+want {
					t.Errorf("%s: %s:\n%s\nwant\n%s", s.name, file, got, snapHead+want)
				}
				return
			}
			if r := records(got); r != want {
				t.Errorf("%s: %s holds %q, want %q:\n%s", s.name, file, r, want, got)
			}
		}
		check("snapshot", s.snap)
		check("trace", s.trace)
		check("per_cpu/cpu1/snapshot", s.cpu1)
		if s.buffer != "" {
			if got := read("buffer_size_kb"); got != s.buffer {
				t.Errorf("%s: buffer_size_kb %q, want %q", s.name, got, s.buffer)
			}
		}
	}
}

// A snapshot with records shows trace's header with the snapshot's own
// counts, as the oracle's did after `echo 1 > snapshot`.
func TestSnapshotHeader(t *testing.T) {
	tr, _ := newTestTracing(t, 1)
	printk(tr, 0, 1000, "AAA")
	if err := tr.tree.WriteFile("tracing/snapshot", []byte("1\n"), true); err != nil {
		t.Fatal(err)
	}
	printk(tr, 0, 2000, "BBB")
	printk(tr, 0, 3000, "CCC")
	b, err := tr.tree.ReadFile("tracing/snapshot")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	if got, want := strings.Join(lines[:4], ""), "# tracer: nop\n#\n# entries-in-buffer/entries-written: 1/1   #P:1\n#\n"; got != want {
		t.Errorf("snapshot header %q, want %q", got, want)
	}
	if got, want := lines[4], "#                                _-----=> irqs-off/BH-disabled\n"; got != want {
		t.Errorf("snapshot's column header starts %q, want %q", got, want)
	}
	b, _ = tr.tree.ReadFile("tracing/trace")
	if !strings.Contains(string(b), "# entries-in-buffer/entries-written: 2/2   #P:1\n") {
		t.Errorf("trace after the snapshot:\n%s", b)
	}
}

// The snapshot takes the live buffer's size when allocated and follows
// buffer_size_kb while allocated; freed, it is two pages a CPU again.
func TestSnapshotFollowsBufferSize(t *testing.T) {
	tr, _ := newTestTracing(t, 2)
	pages := func() []int {
		var out []int
		for cpu := range tr.top.snap.buf.NumCPUs() {
			out = append(out, tr.top.snap.buf.CPU(cpu).Pages())
		}
		return out
	}
	steps := []struct {
		file, data string
		want       [2]int
	}{
		{"buffer_size_kb", "8\n", [2]int{2, 2}}, // freed: not resized
		{"snapshot", "1\n", [2]int{3, 3}},       // 8 KiB: 3 pages of 4080 bytes
		{"buffer_size_kb", "16\n", [2]int{5, 5}},
		{"per_cpu/cpu1/buffer_size_kb", "4\n", [2]int{5, 2}},
		{"snapshot", "1\n", [2]int{5, 2}},
		{"snapshot", "0\n", [2]int{2, 2}},
		{"buffer_size_kb", "12\n", [2]int{2, 2}},
	}
	for _, s := range steps {
		if err := tr.tree.WriteFile("tracing/"+s.file, []byte(s.data), true); err != nil {
			t.Fatalf("%s <- %q: %v", s.file, s.data, err)
		}
		if got := pages(); got[0] != s.want[0] || got[1] != s.want[1] {
			t.Errorf("after %q > %s: snapshot pages %v, want %v", s.data, s.file, got, s.want)
		}
	}
}

// A snapshot of a full buffer keeps all its records: the size goes with
// the buffer (the oracle: 300 trace_marker writes into 8 KiB, then
// `echo 1 > snapshot` shows "entries-in-buffer/entries-written: 300/300").
func TestSnapshotKeepsOverrunCounts(t *testing.T) {
	tr, _ := newTestTracing(t, 1)
	if err := tr.tree.WriteFile("tracing/buffer_size_kb", []byte("4\n"), true); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 400; i++ {
		printk(tr, 0, uint64(1000+i), strings.Repeat("x", 20))
	}
	want, written := tr.top.buf.Totals()
	if want == written {
		t.Fatalf("no overrun: %d/%d", want, written)
	}
	if err := tr.tree.WriteFile("tracing/snapshot", []byte("1\n"), true); err != nil {
		t.Fatal(err)
	}
	if e, w := tr.top.snap.buf.Totals(); e != want || w != written {
		t.Errorf("snapshot totals %d/%d, want %d/%d", e, w, want, written)
	}
	if e, w := tr.top.buf.Totals(); e != 0 || w != 0 {
		t.Errorf("live totals after the snapshot %d/%d, want 0/0", e, w)
	}
}

// A change of trace_clock empties the snapshot too (tracing_set_clock).
func TestSnapshotClockReset(t *testing.T) {
	tr, _ := newTestTracing(t, 1)
	printk(tr, 0, 1000, "A")
	if err := tr.tree.WriteFile("tracing/snapshot", []byte("1\n"), true); err != nil {
		t.Fatal(err)
	}
	if err := tr.tree.WriteFile("tracing/trace_clock", []byte("global\n"), true); err != nil {
		t.Fatal(err)
	}
	b, _ := tr.tree.ReadFile("tracing/snapshot")
	if want := snapHead + snapAllocated + snapMainHelp; string(b) != want {
		t.Errorf("snapshot after a clock change:\n%s", b)
	}
}

func TestSnapshotFileModes(t *testing.T) {
	tr, _ := newTestTracing(t, 2)
	for _, p := range []string{"snapshot", "per_cpu/cpu0/snapshot", "per_cpu/cpu1/snapshot"} {
		n, err := tr.tree.Lookup("tracing/" + p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if n.Mode() != fs.FileMode(0o640) {
			t.Errorf("%s: mode %v, want -rw-r-----", p, n.Mode())
		}
	}
}

// README has the lines Linux 6.1 prints with CONFIG_TRACER_SNAPSHOT (the
// oracle's `grep -n snapshot README`), the trigger ones after
// stacktrace's.
func TestSnapshotReadme(t *testing.T) {
	tr, _ := newTestTracing(t, 1)
	b, err := tr.tree.ReadFile("tracing/README")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"\n\n  snapshot\t\t- Like 'trace' but shows the content of the static\n" +
			"\t\t\t  snapshot buffer. Read the contents for more\n" +
			"\t\t\t  information\n" +
			"  stack_trace\t\t- Shows the max stack trace when active\n",
		"\t            disable_event:<system>:<event>\n\t            enable_hist:<system>:<event>\n\t            disable_hist:<system>:<event>\n" +
			"\t\t    stacktrace\n\t\t    snapshot\n\t\t    hist (see below)\n\t   example: echo traceoff > events/block/block_unplug/trigger\n",
		// The hist actions, snapshot() last (CONFIG_TRACER_SNAPSHOT).
		"\t        save(field,...)                      - save current event fields\n" +
			"\t        snapshot()                           - snapshot the trace buffer\n\n",
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("README lacks %q", want)
		}
	}
}
