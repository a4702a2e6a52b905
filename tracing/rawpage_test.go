package tracing_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/kpemu/kpemu/internal/waitfor"
)

// A reader of trace_pipe_raw written from the text files alone, as
// trace-cmd's libtraceevent reads them: events/header_page for the
// page's layout, events/header_event for the event header's codes, and
// each event's format file for its record. It knows nothing of kpemu.

// rawField is one field line of a format file.
type rawField struct {
	ctype, name          string
	offset, size, signed int
}

// rawFormat is a format file.
type rawFormat struct {
	name     string
	id       int
	fields   []rawField
	printFmt string
}

var fieldLine = regexp.MustCompile(`^\tfield:(.*) ([^ ;]+);\toffset:(\d+);\tsize:(\d+);\tsigned:(\d+);$`)

func parseFormat(t *testing.T, text string) rawFormat {
	t.Helper()
	var f rawFormat
	for _, l := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(l, "name: "):
			f.name = l[6:]
		case strings.HasPrefix(l, "ID: "):
			f.id, _ = strconv.Atoi(l[4:])
		case strings.HasPrefix(l, "print fmt: "):
			f.printFmt = l[11:]
		case strings.HasPrefix(l, "\tfield:"):
			m := fieldLine.FindStringSubmatch(l)
			if m == nil {
				t.Fatalf("format %s: bad field line %q", f.name, l)
			}
			off, _ := strconv.Atoi(m[3])
			size, _ := strconv.Atoi(m[4])
			sg, _ := strconv.Atoi(m[5])
			f.fields = append(f.fields, rawField{m[1], m[2], off, size, sg})
		}
	}
	return f
}

// pageLayout is what header_page and header_event say.
type pageLayout struct {
	tsOff, commitOff, commitSize, dataOff, dataSize int
	padding, extend, stamp, dataMax                 uint32
}

func parseHeaders(t *testing.T, page, event string) pageLayout {
	t.Helper()
	var l pageLayout
	for _, line := range strings.Split(page, "\n") {
		m := regexp.MustCompile(`field: (.*) (\w+);\toffset:(\d+);\tsize:(\d+);`).FindStringSubmatch(line)
		if m == nil {
			continue
		}
		off, _ := strconv.Atoi(m[3])
		size, _ := strconv.Atoi(m[4])
		switch m[2] {
		case "timestamp":
			l.tsOff = off
		case "commit":
			l.commitOff, l.commitSize = off, size
		case "data":
			l.dataOff, l.dataSize = off, size
		}
	}
	code := func(re string) uint32 {
		m := regexp.MustCompile(re).FindStringSubmatch(event)
		if m == nil {
			t.Fatalf("header_event lacks %s:\n%s", re, event)
		}
		v, _ := strconv.Atoi(m[1])
		return uint32(v)
	}
	l.padding = code(`padding +: type == (\d+)`)
	l.extend = code(`time_extend : type == (\d+)`)
	l.stamp = code(`time_stamp : type == (\d+)`)
	l.dataMax = code(`data max type_len +== (\d+)`)
	if !strings.Contains(event, "type_len    :    5 bits") || !strings.Contains(event, "time_delta  :   27 bits") {
		t.Fatalf("header_event's bit fields changed:\n%s", event)
	}
	return l
}

// rawEvent is a record found in a page.
type rawEvent struct {
	cpu int
	ts  uint64
	rec []byte
}

// decodeRawPage decodes one page as kbuffer does.
func decodeRawPage(t *testing.T, l pageLayout, cpu int, p []byte) []rawEvent {
	t.Helper()
	ts := binary.LittleEndian.Uint64(p[l.tsOff:])
	commit := binary.LittleEndian.Uint64(p[l.commitOff:]) & (1<<30 - 1) // the flags are above
	data := p[l.dataOff:]
	if int(commit) > l.dataSize {
		t.Fatalf("commit %d beyond the data", commit)
	}
	var out []rawEvent
	for off := 0; off < int(commit); {
		h := binary.LittleEndian.Uint32(data[off:])
		typ, delta := h&31, uint64(h>>5)
		switch {
		case typ == l.padding:
			return out
		case typ == l.extend:
			ts += delta + uint64(binary.LittleEndian.Uint32(data[off+4:]))<<27
			off += 8
		case typ == l.stamp:
			t.Fatalf("cpu%d: an absolute time stamp", cpu)
		case typ == 0:
			n := int(binary.LittleEndian.Uint32(data[off+4:])) - 4
			ts += delta
			out = append(out, rawEvent{cpu, ts, data[off+8 : off+8+n]})
			off += 8 + n
		case typ <= l.dataMax:
			n := int(typ) * 4
			ts += delta
			out = append(out, rawEvent{cpu, ts, data[off+4 : off+4+n]})
			off += 4 + n
		default:
			t.Fatalf("cpu%d: type_len %d", cpu, typ)
		}
	}
	return out
}

// value is a field's value as text: numbers in decimal, char arrays to
// their NUL, __data_loc strings.
func (fd rawField) value(rec []byte) string {
	if strings.HasPrefix(fd.ctype, "__data_loc") {
		loc := binary.LittleEndian.Uint32(rec[fd.offset:])
		off, n := int(loc&0xffff), int(loc>>16)
		if n == 0 {
			return "(fault)"
		}
		return strings.TrimRight(string(rec[off:off+n]), "\x00")
	}
	if strings.HasPrefix(fd.ctype, "char") && strings.HasSuffix(fd.name, "]") {
		b := rec[fd.offset : fd.offset+fd.size]
		if i := strings.IndexByte(string(b), 0); i >= 0 {
			b = b[:i]
		}
		return string(b)
	}
	var v uint64
	for i := fd.size - 1; i >= 0; i-- {
		v = v<<8 | uint64(rec[fd.offset+i])
	}
	if fd.signed == 1 && fd.size < 8 {
		sh := 64 - 8*fd.size
		return strconv.FormatInt(int64(v<<sh)>>sh, 10)
	}
	if fd.signed == 1 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatUint(v, 10)
}

func (f rawFormat) field(name string) rawField {
	for _, fd := range f.fields {
		if fd.name == name || strings.HasPrefix(fd.name, name+"[") {
			return fd
		}
	}
	return rawField{}
}

// readRawPages reads cpu's trace_pipe_raw with O_NONBLOCK until EAGAIN.
func readRawPages(t *testing.T, f *fixture, file string) [][]byte {
	t.Helper()
	ctx := context.Background()
	h, err := f.tree.Open(ctx, file, os.O_RDONLY|syscall.O_NONBLOCK)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	var pages [][]byte
	for {
		buf := make([]byte, 8192)
		n, err := h.Read(ctx, buf, 0)
		if errors.Is(err, syscall.EAGAIN) {
			return pages
		}
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if n != 4096 {
			t.Fatalf("%s: a read of 8192 returned %d, want one page", file, n)
		}
		pages = append(pages, buf[:n])
	}
}

// TestTracePipeRawDecodes records kprobe and kretprobe events with
// arguments, the sched events, the function tracer, trace_marker and
// trace_marker_raw writes and stack traces, then decodes every CPU's
// trace_pipe_raw with the reader above and finds the events trace
// shows, in its order, with its times, pids and field values.
func TestTracePipeRawDecodes(t *testing.T) {
	f := setupCPUs(t, 2)
	must := func(file, data string) {
		t.Helper()
		if err := f.write("tracing/"+file, data, false); err != nil {
			t.Fatalf("%s < %q: %v", file, data, err)
		}
	}
	must("set_ftrace_filter", "vfs_read\n")
	must("current_tracer", "function") // first: a tracer change empties the buffer
	must("kprobe_events", `p:rd vfs_read fd=%x0:x32 cnt=%x2:u64 big=%x2:s16 c=$comm imm=\"immstr":string bits=%x2:b3@1/32 arr=+0(%x0):u8[2]`+"\n")
	must("kprobe_events", "r:rdret vfs_read ret=$retval:s64\n")
	must("events/kprobes/enable", "1\n")
	must("events/sched/enable", "1\n")
	must("trace_marker", "hello marker\n")
	must("trace_marker", "no newline")
	must("trace_marker_raw", "ABCDxyz")
	f.step(t, 3_000_000)
	must("options/stacktrace", "1")
	f.step(t, 1_000_000)
	must("options/stacktrace", "0")
	must("tracing_on", "0")

	trace := f.read(t, "tracing/trace")
	var lines []string
	for _, l := range strings.Split(trace, "\n") {
		if l != "" && !strings.HasPrefix(l, "#") && !strings.HasPrefix(l, " => ") {
			lines = append(lines, l)
		}
	}

	layout := parseHeaders(t, f.read(t, "tracing/events/header_page"), f.read(t, "tracing/events/header_event"))
	formats := map[int]rawFormat{}
	for _, dir := range []string{"kprobes/rd", "kprobes/rdret", "sched/sched_switch", "sched/sched_waking", "sched/sched_wakeup",
		"sched/sched_wakeup_new", "sched/sched_process_fork", "sched/sched_process_exit", "sched/sched_process_free",
		"ftrace/function", "ftrace/print", "ftrace/kernel_stack", "ftrace/raw_data"} {
		fm := parseFormat(t, f.read(t, "tracing/events/"+dir+"/format"))
		formats[fm.id] = fm
	}
	var evs []rawEvent
	for cpu := 0; cpu < 2; cpu++ {
		for _, p := range readRawPages(t, f, fmt.Sprintf("tracing/per_cpu/cpu%d/trace_pipe_raw", cpu)) {
			evs = append(evs, decodeRawPage(t, layout, cpu, p)...)
		}
	}
	// trace's order: by time, the lower CPU first on a tie.
	sort.SliceStable(evs, func(i, j int) bool {
		if evs[i].ts != evs[j].ts {
			return evs[i].ts < evs[j].ts
		}
		return evs[i].cpu < evs[j].cpu
	})
	if len(evs) != len(lines) {
		t.Fatalf("decoded %d events, trace shows %d lines:\n%s", len(evs), len(lines), trace)
	}
	seen := map[string]int{}
	argRe := regexp.MustCompile(`(\w+)=(\\"%s\\"|0x%Lx|0x%x|%Lu|%u|%Ld|%d)`)
	for i, e := range evs {
		line := lines[i]
		fm, ok := formats[int(binary.LittleEndian.Uint16(e.rec))]
		if !ok {
			t.Fatalf("event %d: common_type %d has no format; line %q", i, binary.LittleEndian.Uint16(e.rec), line)
		}
		seen[fm.name]++
		pid := fm.field("common_pid").value(e.rec)
		us := (e.ts + 500) / 1000
		ctx := fmt.Sprintf("-%-7s [%03d] ", pid, e.cpu)
		stamp := fmt.Sprintf(" %5d.%06d: ", us/1e6, us%1e6)
		if !strings.Contains(line, ctx) || !strings.Contains(line, stamp) {
			t.Errorf("event %d (%s, pid %s, cpu %d, %s): line %q", i, fm.name, pid, e.cpu, stamp, line)
			continue
		}
		body := line[strings.Index(line, stamp)+len(stamp):]
		switch fm.name {
		case "rd", "rdret":
			// Each argument as the print fmt converts it.
			for _, m := range argRe.FindAllStringSubmatch(fm.printFmt, -1) {
				fd := fm.field(m[1])
				v := fd.value(e.rec)
				switch m[2] {
				case "0x%Lx", "0x%x":
					n, _ := strconv.ParseUint(v, 10, 64)
					v = fmt.Sprintf("0x%x", n)
				case `\"%s\"`:
					v = `"` + v + `"`
				}
				if want := " " + m[1] + "=" + v; !strings.Contains(body+" ", want+" ") {
					t.Errorf("event %d: %s has %s, line %q", i, fm.name, want, line)
				}
			}
			if arr := fm.field("arr"); arr.size == 2 {
				want := fmt.Sprintf(" arr={%d,%d}", e.rec[arr.offset], e.rec[arr.offset+1])
				if !strings.Contains(body, want) {
					t.Errorf("event %d: %s has %s, line %q", i, fm.name, want, line)
				}
			}
		case "function":
			ip, _ := strconv.ParseUint(fm.field("ip").value(e.rec), 10, 64)
			parent, _ := strconv.ParseUint(fm.field("parent_ip").value(e.rec), 10, 64)
			want := f.symName(t, ip) + " <-" + f.symName(t, parent)
			if body != want {
				t.Errorf("event %d: function %q, line %q", i, want, body)
			}
		case "print":
			want := "tracing_mark_write: " + strings.TrimSuffix(fm.field("buf").cstring(e.rec), "\n")
			if body != want {
				t.Errorf("event %d: print %q, line %q", i, want, body)
			}
		case "raw_data":
			if want := "# " + fmt.Sprintf("%x", binary.LittleEndian.Uint32(e.rec[8:])) + " buf: 78 79 7a "; !strings.HasPrefix(body, want) {
				t.Errorf("event %d: raw_data %q, line %q", i, want, body)
			}
		case "kernel_stack":
			if body != "<stack trace>" {
				t.Errorf("event %d: kernel_stack, line %q", i, body)
			}
		default: // the sched events: every field the line names
			if !strings.HasPrefix(body, fm.name+": ") {
				t.Errorf("event %d: %s, line %q", i, fm.name, body)
			}
			for _, fd := range fm.fields[4:] {
				name := strings.Split(fd.name, "[")[0]
				m := regexp.MustCompile(`[ :]` + name + `=(\S+)`).FindStringSubmatch(body)
				if m == nil || strings.HasSuffix(name, "state") {
					continue
				}
				if v := fd.value(e.rec); strings.TrimLeft(m[1], "0") != strings.TrimLeft(v, "0") {
					t.Errorf("event %d: %s %s=%s, line %q", i, fm.name, name, v, line)
				}
			}
		}
	}
	for _, name := range []string{"rd", "rdret", "sched_switch", "function", "print", "raw_data", "kernel_stack"} {
		if seen[name] == 0 {
			t.Errorf("no %s event decoded (seen %v)", name, seen)
		}
	}
}

// cstring is a char buf[] field: the rest of the record to its NUL.
func (fd rawField) cstring(rec []byte) string {
	b := rec[fd.offset:]
	if i := strings.IndexByte(string(b), 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// symName is the symbol trace prints for addr.
func (f *fixture) symName(t *testing.T, addr uint64) string {
	t.Helper()
	s, _, ok := f.k.Kallsyms().LookupAddr(addr)
	switch {
	case !ok:
		return fmt.Sprintf("0x%x", addr)
	case s.Name == "__kretprobe_trampoline" && s.Addr == addr:
		return "[unknown/kretprobe'd]" // trace's kretprobed(), as Linux prints it
	}
	return s.Name
}

// events/ftrace/ is Linux 6.1 arm64's: the same events, each with its
// format (checked through the decoder: the ids are the TRACE_* types),
// an id file only for function and print, and no enable files.
func TestFtraceEventsDir(t *testing.T) {
	f := setup(t)
	nodes, err := f.tree.ReadDir("tracing/events/ftrace")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range nodes {
		names = append(names, n.Name())
	}
	want := "bprint bputs branch context_switch func_repeats funcgraph_entry funcgraph_exit function hwlat kernel_stack mmiotrace_map mmiotrace_rw osnoise print raw_data timerlat user_stack wakeup"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("events/ftrace: %s\nwant %s", got, want)
	}
	for _, tt := range []struct {
		event  string
		id     int
		idFile bool
		fields string // after the common ones
	}{
		{"function", 1, true, "ip parent_ip"},
		{"kernel_stack", 4, false, "size caller[8]"},
		{"print", 5, true, "ip buf[]"},
		{"bprint", 6, false, "ip fmt buf[]"},
		{"user_stack", 12, false, "tgid caller[8]"},
		{"bputs", 14, false, "ip str"},
		{"raw_data", 18, false, "id buf[]"},
		{"func_repeats", 19, false, "ip parent_ip count top_delta_ts bottom_delta_ts"},
	} {
		fm := parseFormat(t, f.read(t, "tracing/events/ftrace/"+tt.event+"/format"))
		var fields []string
		for _, fd := range fm.fields[4:] {
			fields = append(fields, fd.name)
		}
		if fm.name != tt.event || fm.id != tt.id || strings.Join(fields, " ") != tt.fields {
			t.Errorf("%s: name %s id %d fields %v", tt.event, fm.name, fm.id, fields)
		}
		id, err := f.tree.ReadFile("tracing/events/ftrace/" + tt.event + "/id")
		switch {
		case tt.idFile && string(id) != fmt.Sprintf("%d\n", tt.id):
			t.Errorf("%s/id: %q %v", tt.event, id, err)
		case !tt.idFile && errnoOf(err) != syscall.ENOENT:
			t.Errorf("%s/id: %v, want ENOENT", tt.event, err)
		}
	}
	for _, p := range []string{"tracing/events/ftrace/enable", "tracing/events/ftrace/function/enable"} {
		if _, err := f.tree.ReadFile(p); errnoOf(err) != syscall.ENOENT {
			t.Errorf("%s: %v, want ENOENT", p, err)
		}
	}
}

// trace_pipe_raw's reads, as tracing_buffers_read on the reference
// kernel: two markers and a read of 100 bytes take the page with both
// (commit 64), whose next 100 bytes the next read returns; a read of
// 8192 returns one page; an empty buffer is EAGAIN with O_NONBLOCK; a
// count too small for the page's header reads 0 and consumes nothing;
// a blocking read waits for an event.
func TestTracePipeRawReads(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	const file = "tracing/per_cpu/cpu0/trace_pipe_raw"
	open := func(flags int) func([]byte) (int, error) {
		h, err := f.tree.Open(ctx, file, os.O_RDONLY|flags)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(h.Release)
		return func(p []byte) (int, error) { return h.Read(ctx, p, 0) }
	}
	marker := func(s string) {
		if err := f.write("tracing/trace_marker", s, false); err != nil {
			t.Fatal(err)
		}
	}
	// The counter clock: deltas of 1, whatever the host's speed.
	if err := f.write("tracing/trace_clock", "counter", true); err != nil {
		t.Fatal(err)
	}
	read := open(syscall.O_NONBLOCK)
	if _, err := read(make([]byte, 4096)); !errors.Is(err, syscall.EAGAIN) {
		t.Fatalf("empty: %v, want EAGAIN", err)
	}
	marker("hi\n")
	marker("hi2\n")
	for _, size := range []int{1, 16} {
		if n, err := read(make([]byte, size)); n != 0 || err != nil {
			t.Errorf("a read of %d: %d %v, want 0", size, n, err)
		}
	}
	p := make([]byte, 100)
	if n, err := read(p); n != 100 || err != nil {
		t.Fatalf("read 100: %d %v", n, err)
	}
	// The page: time stamp, commit 64, the two events of 32 bytes
	// (type_len 7: 28 bytes of record, the text, its NUL and the
	// marker's slack), the first one's delta 0.
	if c := binary.LittleEndian.Uint64(p[8:]); c != 64 {
		t.Errorf("commit %d, want 64", c)
	}
	if h := binary.LittleEndian.Uint32(p[16:]); h != 7 {
		t.Errorf("first event header %#x, want type_len 7, delta 0", h)
	}
	wantRec := []byte{5, 0, 0, 0, 0, 0, 0, 0 /* print, no flags, pid 0 */, 0, 0, 0, 0, 0, 0, 0, 0 /* ip */, 'h', 'i', '\n', 0, 0, 0, 0, 0, 0, 0, 0, 0}
	if got := p[20:48]; string(got) != string(wantRec) {
		t.Errorf("first record % x\nwant % x", got, wantRec)
	}
	if h := binary.LittleEndian.Uint32(p[48:]); h != 7|1<<5 {
		t.Errorf("second event header %#x, want type_len 7, delta 1", h)
	}
	if string(p[52+16:52+20]) != "hi2\n" {
		t.Errorf("second record % x", p[52:80])
	}
	rest := make([]byte, 8192)
	if n, err := read(rest); n != 4096-100 || err != nil {
		t.Errorf("the rest of the page: %d %v, want %d", n, err, 4096-100)
	}
	if _, err := read(rest); !errors.Is(err, syscall.EAGAIN) {
		t.Errorf("after the page: %v, want EAGAIN", err)
	}

	// A blocking read returns once an event comes.
	blocking := open(0)
	got := make(chan int, 1)
	go func() {
		n, _ := blocking(make([]byte, 4096))
		got <- n
	}()
	marker("wake")
	if n := waitfor.Recv(t, "the blocking read", got); n != 4096 {
		t.Errorf("blocking read: %d", n)
	}
}

// snapshot_raw reads the snapshot buffer: what `echo 1 > snapshot`
// swapped out of the live one.
func TestSnapshotRaw(t *testing.T) {
	f := setup(t)
	if err := f.write("tracing/trace_marker", "before the snapshot\n", false); err != nil {
		t.Fatal(err)
	}
	if err := f.write("tracing/snapshot", "1\n", false); err != nil {
		t.Fatal(err)
	}
	layout := parseHeaders(t, f.read(t, "tracing/events/header_page"), f.read(t, "tracing/events/header_event"))
	pages := readRawPages(t, f, "tracing/per_cpu/cpu0/snapshot_raw")
	if len(pages) != 1 {
		t.Fatalf("%d pages in the snapshot", len(pages))
	}
	evs := decodeRawPage(t, layout, 0, pages[0])
	if len(evs) != 1 || !strings.Contains(string(evs[0].rec), "before the snapshot\n") {
		t.Errorf("snapshot_raw: %v", evs)
	}
	if live := readRawPages(t, f, "tracing/per_cpu/cpu0/trace_pipe_raw"); len(live) != 0 {
		t.Errorf("the live buffer has %d pages after the swap", len(live))
	}
}
