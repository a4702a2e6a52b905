package tracing

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kpemu/kpemu/debugfs"
	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/kprobes"
)

// newTestTracing is a Tracing on a booted guest that is never run, with
// a clock the test sets.
func newTestTracing(t *testing.T, ncpu int) (*Tracing, *uint64) {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	k, err := kernel.Boot(kernel.Config{Logger: log, NumCPUs: ncpu})
	if err != nil {
		t.Fatal(err)
	}
	kp, err := kprobes.New(k, log)
	if err != nil {
		t.Fatal(err)
	}
	clock := new(uint64)
	tr, err := New(kp, debugfs.NewTree(), "tracing", func() time.Duration { return time.Duration(*clock) }, log)
	if err != nil {
		t.Fatal(err)
	}
	return tr, clock
}

// printk writes a trace_printk entry "0: text" on cpu at ts.
func printk(tr *Tracing, cpu int, ts uint64, text string) {
	e := traceEntry{kind: entryPrint, pid: 1, flags: traceFlagIrqsOff, text: text, ts: ts}
	tr.top.buf.Write(cpu, &e, e.ts, printEntryHeadSize+len(text)+1)
}

func (tr *Tracing) testPipe(cpu int) func(context.Context, []byte, int64) (int, error) {
	read, _ := tr.top.openTracePipe(cpu)(context.Background(), 0)
	return read.Read
}

// trace_pipe takes entries oldest first across the CPUs, keeps what a
// short read leaves of a line for the next read (which returns only
// that), stops before a line that would overflow its page-sized
// trace_seq, and reports overrun events before the next entry.
func TestTracePipe(t *testing.T) {
	tr, _ := newTestTracing(t, 2)
	tr.cmdlines.save(1, "init")
	line := func(cpu int, ts, text string) string {
		return "            init-1       [00" + cpu2s(cpu) + "] d....     0.0000" + ts + ": 0: " + text + "\n"
	}
	ctx := context.Background()
	printk(tr, 1, 10_000, "a")
	printk(tr, 0, 20_000, "b")
	printk(tr, 1, 30_000, "c")
	read := tr.testPipe(-1)
	buf := make([]byte, 10)
	n, err := read(ctx, buf, 0)
	if err != nil || string(buf[:n]) != line(1, "10", "a")[:10] {
		t.Fatalf("first read %q %v", buf[:n], err)
	}
	big := make([]byte, 8192)
	n, _ = read(ctx, big, 0)
	if want := line(1, "10", "a")[10:]; string(big[:n]) != want {
		t.Errorf("second read %q, want the rest of the line %q", big[:n], want)
	}
	n, _ = read(ctx, big, 0)
	if want := line(0, "20", "b") + line(1, "30", "c"); string(big[:n]) != want {
		t.Errorf("third read %q, want %q", big[:n], want)
	}

	// 100 lines of 64 bytes: one read takes the 63 that fit the 4095
	// bytes a trace_seq holds, and leaves nothing over.
	for i := 0; i < 100; i++ {
		printk(tr, 0, 40_000, strings.Repeat("x", 64-len(line(0, "40", ""))))
	}
	n, _ = read(ctx, big, 0)
	if n != 63*64 || tr.top.buf.CPU(0).Stats().Read != 1+63 {
		t.Errorf("a full read returned %d bytes and read %d entries, want %d and 64", n, tr.top.buf.CPU(0).Stats().Read, 63*64)
	}
	n, _ = read(ctx, big, 0)
	if n != 37*64 {
		t.Errorf("the rest: %d bytes, want %d", n, 37*64)
	}

	// Overruns: the next read announces them.
	tr.top.buf.Reset()
	for cpu := range tr.top.buf.NumCPUs() {
		tr.top.buf.CPU(cpu).Resize(2)
	}
	for i := 0; i < 500; i++ {
		printk(tr, 1, uint64(50_000+i), "yyyy")
	}
	lost := tr.top.buf.CPU(1).Stats().Overrun
	if lost == 0 {
		t.Fatal("no overrun")
	}
	n, _ = read(ctx, big, 0)
	if got, want := string(big[:n]), fmt.Sprintf("CPU:1 [LOST %d EVENTS]\n", lost); !strings.HasPrefix(got, want) {
		t.Errorf("after overruns: %q, want it to start %q", got[:min(len(got), 80)], want)
	}
	n, _ = read(ctx, big, 0)
	if strings.Contains(string(big[:n]), "LOST") {
		t.Errorf("LOST reported twice: %q", big[:n])
	}
}

func cpu2s(cpu int) string { return string(rune('0' + cpu)) }

// tracing_wait_pipe: an empty pipe blocks until an entry comes, or
// returns end of file once the open read something and tracing is off;
// O_NONBLOCK is EAGAIN; an interrupted wait is EINTR.
func TestTracePipeWait(t *testing.T) {
	tr, _ := newTestTracing(t, 1)
	ctx := context.Background()
	buf := make([]byte, 4096)

	nb, _ := tr.top.openTracePipe(-1)(ctx, syscall.O_NONBLOCK)
	if _, err := nb.Read(ctx, buf, 0); !errors.Is(err, syscall.EAGAIN) {
		t.Errorf("O_NONBLOCK on empty: %v, want EAGAIN", err)
	}

	read := tr.testPipe(0)
	done := make(chan string)
	go func() {
		n, _ := read(ctx, buf, 0)
		done <- string(buf[:n])
	}()
	time.Sleep(10 * time.Millisecond) // let it block: the test holds either way
	printk(tr, 0, 1000, "wake")
	if got := <-done; !strings.HasSuffix(got, ": 0: wake\n") {
		t.Errorf("woken read %q", got)
	}

	tr.top.on.Store(false)
	if n, err := read(ctx, buf, 0); n != 0 || err != nil {
		t.Errorf("tracing off, empty, after a read: %d %v, want end of file", n, err)
	}
	fresh := tr.testPipe(-1)
	cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := fresh(cctx, buf, 0); !errors.Is(err, syscall.EINTR) {
		t.Errorf("tracing off, empty, nothing read yet: %v, want to block (EINTR)", err)
	}
}

// The trace file merges the CPUs by time stamp; after overruns (with
// annotate) a CPU that starts later than the first two entries is
// announced; per_cpu files show their CPU with every CPU's counts.
func TestTraceShowMergeAndAnnotate(t *testing.T) {
	tr, _ := newTestTracing(t, 2)
	for cpu := range tr.top.buf.NumCPUs() {
		tr.top.buf.CPU(cpu).Resize(2)
	}
	for i := 0; i < 3; i++ {
		printk(tr, 0, uint64(1000+i), "zero")
	}
	for i := 0; i < 500; i++ {
		printk(tr, 1, uint64(2000+i), strings.Repeat("o", 40))
	}
	show := func(cpu int) string {
		var w bytes.Buffer
		tr.top.showTraceCPU(&w, cpu)
		return w.String()
	}
	out := show(-1)
	cpu1 := tr.top.buf.CPU(1).Stats().Entries
	if want := fmt.Sprintf("# entries-in-buffer/entries-written: %d/503   #P:2\n", 3+cpu1); !strings.Contains(out, want) || cpu1 == 500 {
		t.Errorf("header: %s, want %s", out[:200], want)
	}
	body := strings.Split(out, "\n")[12:]
	if !strings.Contains(body[2], "zero") || body[3] != "##### CPU 1 buffer started ####" || !strings.Contains(body[4], "[001]") {
		t.Errorf("merge/annotate:\n%s", strings.Join(body[:6], "\n"))
	}
	if strings.Count(out, "#####") != 1 {
		t.Errorf("%d annotations, want 1", strings.Count(out, "#####"))
	}
	tr.top.setTraceFlag(optAnnotate, false)
	if strings.Contains(show(-1), "#####") {
		t.Error("annotated with annotate off")
	}
	one := show(1)
	if !strings.Contains(one, fmt.Sprintf("entries-in-buffer/entries-written: %d/503", 3+cpu1)) || strings.Contains(one, "zero") || uint64(strings.Count(one, "[001]")) != cpu1 {
		t.Errorf("per_cpu/cpu1/trace: %d lines of cpu1", strings.Count(one, "[001]"))
	}
}

// The line formats of trace_output.c under the options that change them.
func TestPrintLineFormats(t *testing.T) {
	tr, _ := newTestTracing(t, 1)
	k := tr.kp.Kernel()
	sym := func(name string) uint64 {
		s, ok := k.Kallsyms().LookupName(name)
		if !ok {
			t.Fatalf("no %s", name)
		}
		return s.Addr
	}
	read, ksys := sym("vfs_read"), sym("ksys_read")
	readSize := func() string {
		s, _ := k.Kallsyms().LookupName("vfs_read")
		return strings.TrimPrefix(strings.SplitN(k.Kallsyms().Format(s.Addr), "/", 2)[1], "")
	}()
	tr.cmdlines.save(7, "cat")
	ts := uint64(18_170_375_600) // 18.1703756 s: printed rounded
	kp := traceEntry{kind: entryKprobe, pid: 7, flags: traceFlagIrqsOff, ts: ts, ip: read, nlen: 2, text: "rd fd=0x1"}
	counted := kp
	counted.ts = 3
	kr := traceEntry{kind: entryKretprobe, pid: 7, ts: ts, ip: ksys + 0x7c, parent: read, nlen: 2, text: "rr"}
	fn := traceEntry{kind: entryFn, pid: 7, ts: ts, ip: read + 4, parent: ksys + 0x7c}
	st := traceEntry{kind: entryStack, pid: 7, flags: traceFlagIrqsOff, ts: ts, stack: []uint64{read, ksys + 0x7c}}
	pr := traceEntry{kind: entryPrint, pid: 7, flags: traceFlagIrqsOff, ts: ts, ip: ksys, text: "hello"}
	// The oracle's uprobe lines (busybox's entry and _init).
	up := traceEntry{kind: entryUprobe, pid: 7, ts: ts, ip: 0x400580, nlen: 3, text: "ent a0=0x0 c=\"true\""}
	ur := traceEntry{kind: entryUretprobe, pid: 7, ts: ts, ip: 0x404c54, parent: 0x400280, nlen: 3, text: "ret rv=0x0"}
	ctx := "             cat-7       [000] d....    18.170376: "
	ctxOn := "             cat-7       [000] .....    18.170376: "
	ksysOff := strings.SplitN(k.Kallsyms().Format(ksys+0x7c), "/", 2)
	tests := []struct {
		name  string
		e     traceEntry
		flags uint32
		inNS  bool
		want  string
	}{
		{"kprobe", kp, optDefault, true, ctx + "rd: (vfs_read+0x0/" + readSize + ") fd=0x1\n"},
		{"kprobe, sym-addr", kp, optDefault | optSymAddr, true, ctx + "rd: (vfs_read+0x0/" + readSize + " <" + hex16(read) + ">) fd=0x1\n"},
		{"kretprobe", kr, optDefault, true, ctxOn + "rr: (" + ksysOff[0] + "/" + ksysOff[1] + " <- vfs_read)\n"},
		{"kretprobe, sym-addr", kr, optDefault | optSymAddr, true, ctxOn + "rr: (" + ksysOff[0] + "/" + ksysOff[1] + " <" + hex16(ksys+0x7c) + "> <- vfs_read <" + hex16(read) + ">)\n"},
		{"uprobe", up, optDefault, true, ctxOn + "ent: (0x400580) a0=0x0 c=\"true\"\n"},
		{"uprobe, sym-offset and sym-addr: no symbol", up, optDefault | optSymOffset | optSymAddr, true, ctxOn + "ent: (0x400580) a0=0x0 c=\"true\"\n"},
		{"uretprobe", ur, optDefault, true, ctxOn + "ret: (0x404c54 <- 0x400280) rv=0x0\n"},
		{"function", fn, optDefault, true, ctxOn + "vfs_read <-ksys_read\n"},
		{"function, noprint-parent", fn, optDefault &^ optPrintParent, true, ctxOn + "vfs_read\n"},
		{"function, sym-offset", fn, optDefault | optSymOffset, true, ctxOn + "vfs_read+0x4/" + readSize + " <-" + ksysOff[0] + "/" + ksysOff[1] + "\n"},
		{"stack", st, optDefault, true, ctx + "<stack trace>\n => vfs_read\n => ksys_read\n"},
		{"stack, sym-offset", st, optDefault | optSymOffset, true, ctx + "<stack trace>\n => vfs_read+0x0/" + readSize + "\n => " + ksysOff[0] + "/" + ksysOff[1] + "\n"},
		{"noirq-info", kp, optDefault &^ optIrqInfo, true, "             cat-7       [000]     18.170376: rd: (vfs_read+0x0/" + readSize + ") fd=0x1\n"},
		{"nocontext-info", st, optDefault &^ optContextInfo, true, "<stack trace>\n => vfs_read\n => ksys_read\n"},
		{"counter clock", counted, optDefault, false, "             cat-7       [000] d....            3: rd: (vfs_read+0x0/" + readSize + ") fd=0x1\n"},
		{"trace_printk", pr, optDefault, true, ctx + "ksys_read: hello\n"},
		{"printk-msg-only", pr, optDefault | optPrintkMsgOnly, true, "hello\n"},
		{"printk-msg-only without trace_printk", pr, optDefault&^optTracePrintk | optPrintkMsgOnly, true, ctx + "ksys_read: hello\n"},
	}
	for _, tt := range tests {
		var w bytes.Buffer
		tr.top.printLine(&w, 0, &tt.e, lineFormat{flags: tt.flags, inNS: tt.inNS})
		if w.String() != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, w.String(), tt.want)
		}
	}
}

func hex16(v uint64) string {
	const digits = "0123456789abcdef"
	b := make([]byte, 16)
	for i := 15; i >= 0; i-- {
		b[i] = digits[v&15]
		v >>= 4
	}
	return string(b)
}

// The saved command lines: a pid's comm until its slot goes round to
// another pid; "<...>" then, and "<idle>" for pid 0.
func TestSavedCmdlines(t *testing.T) {
	var s savedCmdlines
	if got := s.find(5); got != "<...>" {
		t.Errorf("unknown pid: %q", got)
	}
	s.save(5, "sh")
	s.save(5, "cat") // exec: the newest comm
	if got := s.find(5); got != "cat" {
		t.Errorf("pid 5: %q", got)
	}
	if got := s.find(5 + pidMaxDefault); got != "<...>" {
		t.Errorf("a pid sharing the low bits: %q", got)
	}
	for pid := 100; pid < 100+savedCmdlinesNum(savedCmdlinesDefault); pid++ { // 6552 slots
		s.save(pid, "x")
	}
	if got := s.find(5); got != "<...>" {
		t.Errorf("pid 5 after its slot went round: %q", got)
	}
	if got := s.find(0); got != "<idle>" {
		t.Errorf("pid 0: %q", got)
	}
}

// BenchmarkCommitToPipe measures the ring buffer alone, without a guest:
// a writer commits kprobe-sized events on two CPUs as fast as it can
// while a reader drains trace_pipe, and reports the events delivered per
// second and the share the writer overran. One op is one event written.
func BenchmarkCommitToPipe(b *testing.B) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	k, err := kernel.Boot(kernel.Config{Logger: log, NumCPUs: 2})
	if err != nil {
		b.Fatal(err)
	}
	kp, err := kprobes.New(k, log)
	if err != nil {
		b.Fatal(err)
	}
	var clock atomic.Uint64
	tr, err := New(kp, debugfs.NewTree(), "tracing", func() time.Duration { return time.Duration(clock.Add(1000)) }, log)
	if err != nil {
		b.Fatal(err)
	}
	tr.top.updateBuffers()
	vfsRead, _ := k.Kallsyms().LookupName("vfs_read")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	read := tr.testPipe(-1)
	var delivered atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 64<<10)
		for {
			n, err := read(ctx, buf, 0)
			if err != nil {
				return
			}
			delivered.Add(int64(bytes.Count(buf[:n], []byte(": rd: ("))))
		}
	}()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		e := traceEntry{kind: entryKprobe, pid: 1, flags: traceFlagIrqsOff, ip: vfsRead.Addr, nlen: 2, text: "rd"}
		tr.top.commit(i&1, "bench", &e, kprobeHeadSize, nil)
	}
	for delivered.Load()+int64(tr.top.buf.Overruns()) < int64(b.N) && time.Since(start) < time.Minute {
		time.Sleep(time.Millisecond)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	cancel()
	<-done
	b.ReportMetric(float64(delivered.Load())/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(tr.top.buf.Overruns())/float64(b.N), "overrun/op")
}
