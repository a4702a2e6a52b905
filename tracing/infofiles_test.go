package tracing_test

import (
	"context"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/kpemu/kpemu/debugfs"
)

// The files of infofiles.go as a fresh Linux 6.1 shows them (the
// oracle's transcript, 2 CPUs): saved_cmdlines_size is what 128 comms'
// pages hold, and nothing is saved or filtered yet.
func TestInfoFilesFresh(t *testing.T) {
	f := setupCPUs(t, 2)
	for file, want := range map[string]string{
		"saved_cmdlines_size":     "6552\n",
		"saved_cmdlines":          "",
		"saved_tgids":             "",
		"printk_formats":          "",
		"timestamp_mode":          "[delta] absolute\n",
		"buffer_percent":          "50\n",
		"tracing_thresh":          "0\n",
		"tracing_max_latency":     "0\n",
		"tracing_cpumask":         "3\n",
		"options/record-tgid":     "0\n",
		"options/markers":         "1\n",
		"options/disable_on_free": "0\n",
	} {
		if got := f.read(t, "tracing/"+file); got != want {
			t.Errorf("%s: %q, want %q", file, got, want)
		}
	}
	// dyn_ftrace_total_info counts the records available_filter_functions
	// lists.
	m := regexp.MustCompile(`^(\d+) pages:(\d+) groups: (\d+)\n$`).FindStringSubmatch(f.read(t, "tracing/dyn_ftrace_total_info"))
	if m == nil {
		t.Fatalf("dyn_ftrace_total_info: %q", f.read(t, "tracing/dyn_ftrace_total_info"))
	}
	if n := len(f.aff(t)); m[1] != strconv.Itoa(n) || m[3] == "0" {
		t.Errorf("dyn_ftrace_total_info %q, with %d functions", m[0], n)
	}
	// Files without a read fail reads with EINVAL; files without a write
	// fail writes so.
	for _, file := range []string{"trace_marker", "trace_marker_raw", "free_buffer"} {
		if _, err := f.tree.ReadFile("tracing/" + file); errnoOf(err) != syscall.EINVAL {
			t.Errorf("reading %s: %v, want EINVAL", file, err)
		}
	}
	for _, file := range []string{"saved_cmdlines", "saved_tgids", "printk_formats", "timestamp_mode", "dyn_ftrace_total_info"} {
		if err := f.write("tracing/"+file, "1\n", true); errnoOf(err) != syscall.EINVAL {
			t.Errorf("writing %s: %v, want EINVAL", file, err)
		}
	}
}

// The writable files parse as Linux 6.1's do, with its errnos, and a bad
// write changes nothing (the oracle's answers).
func TestInfoFileWrites(t *testing.T) {
	f := setupCPUs(t, 2)
	r := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	runSteps(t, f, []writeStep{
		{file: "saved_cmdlines_size", data: "0\n", errno: syscall.EINVAL, reads: r("saved_cmdlines_size", "6552\n")},
		{file: "saved_cmdlines_size", data: "32769\n", errno: syscall.EINVAL},
		{file: "saved_cmdlines_size", data: "abc\n", errno: syscall.EINVAL},
		{file: "saved_cmdlines_size", data: "-1\n", errno: syscall.EINVAL},
		{file: "saved_cmdlines_size", data: " 5", errno: syscall.EINVAL},
		{file: "saved_cmdlines_size", data: "5 ", errno: syscall.EINVAL},
		{file: "saved_cmdlines_size", data: "0x10", errno: syscall.EINVAL, reads: r("saved_cmdlines_size", "6552\n")},
		{file: "saved_cmdlines_size", data: "32768\n", reads: r("saved_cmdlines_size", "45874\n")},
		{file: "saved_cmdlines_size", data: "1\n", reads: r("saved_cmdlines_size", "6552\n")},
		{file: "saved_cmdlines_size", data: "6553\n", reads: r("saved_cmdlines_size", "19659\n")},

		{file: "buffer_percent", data: "0\n", reads: r("buffer_percent", "0\n")},
		{file: "buffer_percent", data: "100\n", reads: r("buffer_percent", "100\n")},
		{file: "buffer_percent", data: "101\n", errno: syscall.EINVAL, reads: r("buffer_percent", "100\n")},
		{file: "buffer_percent", data: "-1\n", errno: syscall.EINVAL},
		{file: "buffer_percent", data: "abc\n", errno: syscall.EINVAL},
		{file: "buffer_percent", data: " 7", errno: syscall.EINVAL},
		{file: "buffer_percent", data: "7 ", errno: syscall.EINVAL, reads: r("buffer_percent", "100\n")},

		{file: "tracing_thresh", data: "100\n", reads: r("tracing_thresh", "100\n")},
		{file: "tracing_thresh", data: "abc\n", errno: syscall.EINVAL, reads: r("tracing_thresh", "100\n")},
		{file: "tracing_thresh", data: "-1\n", errno: syscall.EINVAL, reads: r("tracing_thresh", "100\n")},
		{file: "tracing_thresh", data: "18446744073709551\n", reads: r("tracing_thresh", "18446744073709551\n")},
		{file: "tracing_thresh", data: "18446744073709552\n", reads: r("tracing_thresh", "0\n")}, // the ns wrap
		{file: "tracing_max_latency", data: "250\n", reads: r("tracing_max_latency", "250\n")},
		{file: "tracing_max_latency", data: "x\n", errno: syscall.EINVAL, reads: r("tracing_max_latency", "250\n")},

		{file: "tracing_cpumask", data: "1\n", reads: r("tracing_cpumask", "1\n")},
		{file: "tracing_cpumask", data: "0\n", reads: r("tracing_cpumask", "0\n")},
		{file: "tracing_cpumask", data: "4\n", errno: syscall.EOVERFLOW, reads: r("tracing_cpumask", "0\n")},
		{file: "tracing_cpumask", data: "7\n", errno: syscall.EOVERFLOW},
		{file: "tracing_cpumask", data: "xyz\n", errno: syscall.EINVAL},
		{file: "tracing_cpumask", data: "ffffffff\n", errno: syscall.EOVERFLOW},
		{file: "tracing_cpumask", data: "0,3\n", errno: syscall.EOVERFLOW},
		{file: "tracing_cpumask", data: "100000000\n", errno: syscall.EOVERFLOW},
		{file: "tracing_cpumask", data: "0x3", errno: syscall.EINVAL, reads: r("tracing_cpumask", "0\n")},
		{file: "tracing_cpumask", data: "2", reads: r("tracing_cpumask", "2\n")},
		{file: "tracing_cpumask", data: "\n", reads: r("tracing_cpumask", "0\n")},
		{file: "tracing_cpumask", data: " 3", reads: r("tracing_cpumask", "3\n")},
		{file: "tracing_cpumask", data: "1 ", reads: r("tracing_cpumask", "1\n")},
		{file: "tracing_cpumask", data: "00000003", reads: r("tracing_cpumask", "3\n")},
	})
}

// contextRE is a trace line's context for the idle task (an in-process
// write has no writer) on cpu, up to the function.
func contextRE(pid string, cpu int) string {
	return `^ +<idle>-` + pid + ` +\[00` + strconv.Itoa(cpu) + `\] \.\.\.\.\. +\d+\.\d{6}: `
}

// trace_marker writes TRACE_PRINT entries as Linux 6.1's: a newline ends
// each unless it ends with one, at most TRACE_BUF_SIZE bytes a write, and
// the record sizes of the oracle's stats.
func TestTraceMarker(t *testing.T) {
	f := setupCPUs(t, 2)
	for _, m := range []string{"no newline", "tab\there\n\n", "\n", strings.Repeat("a", 1030)} {
		if err := f.write("tracing/trace_marker", m, true); err != nil {
			t.Fatalf("writing %q: %v", m, err)
		}
	}
	var got []string
	for _, l := range strings.Split(f.read(t, "tracing/trace"), "\n") {
		if !strings.HasPrefix(l, "#") {
			got = append(got, regexp.MustCompile(contextRE("0", 0)).ReplaceAllString(l, "|"))
		}
	}
	want := []string{
		"|tracing_mark_write: no newline",
		"|tracing_mark_write: tab\there",
		"",
		"|tracing_mark_write: ",
		"|tracing_mark_write: " + strings.Repeat("a", 1024), // one write(2) takes 1024 bytes
		"|tracing_mark_write: aaaaaa",                       // and the writer writes the rest
		"",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("trace:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Three small records of 32 bytes, two with a time extend (the
	// fixture's clock moves 1.2 s a read), as the oracle's 112, then
	// 1052 and 32 with their extends.
	if got := statsField(f.read(t, "tracing/per_cpu/cpu0/stats"), "bytes"); got != strconv.Itoa(112+1060+40) {
		t.Errorf("cpu0 bytes: %s", got)
	}
	if got := f.read(t, "tracing/buffer_size_kb"); got != "7 (expanded: 1408)\n" {
		t.Errorf("a marker expanded the buffer: %q", got)
	}
	// printk-msg-only shows a marker's text alone.
	if err := f.write("tracing/options/printk-msg-only", "1", true); err != nil {
		t.Fatal(err)
	}
	if got := f.read(t, "tracing/trace"); !strings.Contains(got, "\nno newline\ntab\there\n\n\n") {
		t.Errorf("printk-msg-only:\n%s", got)
	}
}

func statsField(stats, key string) string {
	for _, l := range strings.Split(stats, "\n") {
		if v, ok := strings.CutPrefix(l, key+": "); ok {
			return v
		}
	}
	return ""
}

// When the buffer does not record, a marker is EBADF; with the markers
// option off, EINVAL; and a raw marker of a bad size is EINVAL first.
func TestTraceMarkerErrors(t *testing.T) {
	f := setupCPUs(t, 2)
	steps := []struct {
		setFile, setData string // before the writes, "" for none
		marker, raw      syscall.Errno
	}{
		{"tracing_on", "0", syscall.EBADF, syscall.EBADF},
		{"tracing_on", "1", 0, 0},
		{"options/markers", "0", syscall.EINVAL, syscall.EINVAL},
		{"options/markers", "1", 0, 0},
		{"tracing_cpumask", "2", syscall.EBADF, syscall.EBADF}, // markers go to CPU 0
		{"tracing_cpumask", "1", 0, 0},
	}
	for _, s := range steps {
		if err := f.write("tracing/"+s.setFile, s.setData, true); err != nil {
			t.Fatalf("%s: %v", s.setFile, err)
		}
		if err := f.write("tracing/trace_marker", "m\n", true); errnoOf(err) != s.marker {
			t.Errorf("after %s=%s: trace_marker: %v, want errno %d", s.setFile, s.setData, err, s.marker)
		}
		if err := f.write("tracing/trace_marker_raw", "\x01\x00\x00\x00ab", true); errnoOf(err) != s.raw {
			t.Errorf("after %s=%s: trace_marker_raw: %v, want errno %d", s.setFile, s.setData, err, s.raw)
		}
	}
	for _, bad := range []string{"abc", "\x01\x00", strings.Repeat("d", 3073)} {
		if err := f.write("tracing/trace_marker_raw", bad, true); errnoOf(err) != syscall.EINVAL {
			t.Errorf("trace_marker_raw of %d bytes: %v, want EINVAL", len(bad), err)
		}
	}
	if n := strings.Count(f.read(t, "tracing/trace"), "tracing_mark_write: m\n"); n != 3 {
		t.Errorf("%d markers recorded, want 3", n)
	}
	if got := statsField(f.read(t, "tracing/per_cpu/cpu1/stats"), "entries"); got != "0" {
		t.Errorf("cpu1 entries: %s", got)
	}
}

// trace_marker_raw shows the id and the record's bytes after it, as
// trace_raw_data: the data, then zeros up to the record's size.
func TestTraceMarkerRaw(t *testing.T) {
	f := setupCPUs(t, 1)
	for _, m := range []string{"\x01\x00\x00\x00abc", "\x02\x00\x00\x00", "\xff\xff\xff\xff0123456789abcdef"} {
		if err := f.write("tracing/trace_marker_raw", m, true); err != nil {
			t.Fatalf("writing %q: %v", m, err)
		}
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSuffix(f.read(t, "tracing/trace"), "\n"), "\n") {
		if !strings.HasPrefix(l, "#") {
			got = append(got, regexp.MustCompile(contextRE("0", 0)).ReplaceAllString(l, "|"))
		}
	}
	want := []string{
		"|# 1 buf: 61 62 63 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"|# 2 buf: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"|# ffffffff buf: 30 31 32 33 34 35 36 37 38 39 61 62 63 64 65 66 00 00 00 00",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("trace:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// 3072 bytes: 1024 of them a record (a short write), so the rest
	// is two more.
	if err := f.write("tracing/trace", "", true); err != nil {
		t.Fatal(err)
	}
	if err := f.write("tracing/trace_marker_raw", strings.Repeat("d", 3072), true); err != nil {
		t.Fatal(err)
	}
	tr := f.read(t, "tracing/trace")
	if n := strings.Count(tr, "# 64646464 buf: "+strings.TrimSuffix(strings.Repeat("64 ", 1020), " ")+" 00 00 00 00\n"); n != 3 {
		t.Errorf("%d records of 1024 bytes:\n%.400s", n, tr)
	}
}

// A marker's writer is the process that wrote (the FUSE caller); its
// comm and tgid are saved only while something records them (an enabled
// event with record-cmd), as Linux saves them at the writer's next
// context switch then.
func TestTraceMarkerWriter(t *testing.T) {
	f := setupCPUs(t, 1)
	pid := os.Getpid()
	write := func(text string) {
		t.Helper()
		ctx := debugfs.WithCaller(context.Background(), debugfs.Caller{Pid: pid})
		h, err := f.tree.Open(ctx, "tracing/trace_marker", os.O_WRONLY)
		if err != nil {
			t.Fatal(err)
		}
		defer h.Release()
		if _, err := h.Write(ctx, []byte(text), 0); err != nil {
			t.Fatal(err)
		}
	}
	write("nobody records\n")
	tr := f.read(t, "tracing/trace")
	if !regexp.MustCompile(`(?m)^ +<\.\.\.>-` + strconv.Itoa(pid) + ` +\[000\] \.{5} +\d+\.\d{6}: tracing_mark_write: nobody records$`).MatchString(tr) {
		t.Errorf("without a recording event:\n%s", tr)
	}
	for _, w := range [][2]string{{"kprobe_events", "p:rd vfs_read"}, {"events/kprobes/rd/enable", "1"}, {"options/record-tgid", "1"}} {
		if err := f.write("tracing/"+w[0], w[1], false); err != nil {
			t.Fatalf("%s: %v", w[0], err)
		}
	}
	write("recorded\n")
	comm, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Skip("no /proc:", err)
	}
	name := strings.TrimSpace(string(comm))
	if got := f.read(t, "tracing/saved_cmdlines"); !strings.Contains(got, strconv.Itoa(pid)+" "+name+"\n") {
		t.Errorf("saved_cmdlines:\n%s", got)
	}
	tgid := "-------"
	if pid <= 32768 { // the guest's pid_max bounds saved_tgids
		tgid = strconv.Itoa(os.Getpid())
		if got := f.read(t, "tracing/saved_tgids"); !strings.Contains(got, strconv.Itoa(pid)+" "+tgid+"\n") {
			t.Errorf("saved_tgids:\n%s", got)
		}
	}
	tr = f.read(t, "tracing/trace")
	if !regexp.MustCompile(`(?m)^ +` + regexp.QuoteMeta(name) + `-` + strconv.Itoa(pid) + ` +\( *` + tgid + `\) \[000\] \.{5} +\d+\.\d{6}: tracing_mark_write: recorded$`).MatchString(tr) {
		t.Errorf("with record-tgid:\n%s", tr)
	}
}

// record-tgid adds the TGID column to the header, as
// print_func_help_header_irq and print_func_help_header print it.
func TestRecordTgidHeader(t *testing.T) {
	f := setupCPUs(t, 2)
	for _, w := range [][2]string{{"options/record-tgid", "1"}, {"trace_marker", "with tgid\n"}} {
		if err := f.write("tracing/"+w[0], w[1], true); err != nil {
			t.Fatal(err)
		}
	}
	tr := f.read(t, "tracing/trace")
	want := `#                                          _-----=> irqs-off/BH-disabled
#                                         / _----=> need-resched
#                                        | / _---=> hardirq/softirq
#                                        || / _--=> preempt-depth
#                                        ||| / _-=> migrate-disable
#                                        |||| /     delay
#           TASK-PID       TGID    CPU#  |||||  TIMESTAMP  FUNCTION
#              | |           |       |   |||||     |         |
          <idle>-0       (-------) [000] .....`
	if !strings.Contains(tr, want) {
		t.Errorf("trace:\n%s\nwant\n%s", tr, want)
	}
	if err := f.write("tracing/options/irq-info", "0", true); err != nil {
		t.Fatal(err)
	}
	tr = f.read(t, "tracing/trace")
	want = `#           TASK-PID       TGID    CPU#     TIMESTAMP  FUNCTION
#              | |           |       |         |         |
          <idle>-0       (-------) [000]  `
	if !strings.Contains(tr, want) {
		t.Errorf("trace without irq-info:\n%s\nwant\n%s", tr, want)
	}
}

// free_buffer shrinks the buffer to two pages a CPU at the close of an
// open, and with disable_on_free turns tracing off.
func TestFreeBuffer(t *testing.T) {
	f := setupCPUs(t, 2)
	runSteps(t, f, []writeStep{
		{file: "buffer_size_kb", data: "1408\n", reads: map[string]string{"buffer_size_kb": "1410\n"}},
		{file: "free_buffer", data: "anything", reads: map[string]string{"buffer_size_kb": "7\n", "buffer_total_size_kb": "14\n", "tracing_on": "1\n"}},
		{file: "buffer_size_kb", data: "1408\n"},
		{file: "options/disable_on_free", data: "1\n"},
		{file: "free_buffer", data: "\n", reads: map[string]string{"per_cpu/cpu1/buffer_size_kb": "7\n", "tracing_on": "0\n"}},
	})
}

// tracing_cpumask stops recording on the CPUs it leaves out, where
// events are committed; record-tgid saves the tgids of the tasks that
// hit an event and shows them in the TGID column.
func TestCpumaskAndTgidOnGuestEvents(t *testing.T) {
	f := setupCPUs(t, 2)
	for _, w := range [][2]string{{"kprobe_events", "p:rd vfs_read"}, {"tracing_cpumask", "2"}, {"options/record-tgid", "1"}, {"events/kprobes/rd/enable", "1"}} {
		if err := f.write("tracing/"+w[0], w[1], false); err != nil {
			t.Fatalf("%s: %v", w[0], err)
		}
	}
	lineRE := regexp.MustCompile(`^ +\S+-(\d+) +\( *(\d+)\) \[(\d{3})\] d\.{4} +\d+\.\d{6}: rd: \(`)
	n := 0
	for i := 0; i < 20 && n == 0; i++ {
		f.step(t, 2_000_000)
		for _, l := range strings.Split(f.read(t, "tracing/trace"), "\n") {
			if !strings.Contains(l, " rd: (") {
				continue
			}
			m := lineRE.FindStringSubmatch(l)
			if m == nil {
				t.Fatalf("line without a tgid: %q", l)
			}
			if m[3] != "001" {
				t.Fatalf("a CPU out of tracing_cpumask recorded %q", l)
			}
			if !strings.Contains(f.read(t, "tracing/saved_tgids"), m[1]+" "+m[2]+"\n") {
				t.Fatalf("saved_tgids lacks %s %s:\n%s", m[1], m[2], f.read(t, "tracing/saved_tgids"))
			}
			n++
		}
	}
	if n == 0 {
		t.Fatal("no vfs_read recorded on CPU 1")
	}
	if got := statsField(f.read(t, "tracing/per_cpu/cpu0/stats"), "entries"); got != "0" {
		t.Errorf("cpu0 entries: %s", got)
	}
}
