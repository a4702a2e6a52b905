package tracing

import (
	"bytes"
	"context"
	"fmt"
	"github.com/kpemu/kpemu/kprobes"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/kpemu/kpemu/debugfs"
	"github.com/kpemu/kpemu/tracing/internal/kstr"
)

// The files at the tracing root around the trace array that are neither
// the buffer's nor a tracer's, after Linux 6.1's trace.c: trace_marker
// and trace_marker_raw (user space writes into the buffer),
// saved_cmdlines, saved_cmdlines_size and saved_tgids, printk_formats,
// dyn_ftrace_total_info, timestamp_mode, buffer_percent, free_buffer,
// tracing_thresh, tracing_max_latency and tracing_cpumask.

// arrayInfo is what these files keep of a trace array beside its
// buffer; saved_tgids, printk_formats and tracing_thresh are global
// (Tracing's).
type arrayInfo struct {
	bufferPercent atomic.Uint32 // tr->buffer_percent
	maxLatency    atomic.Uint64 // tr->max_latency, in ns

	cpumaskMu sync.Mutex // guards cpumask; the ring buffer keeps its own copy per CPU
	cpumask   []uint32   // tr->tracing_cpumask, 32 CPUs a word
}

// Limits from trace.c and trace.h.
const (
	rawDataMaxSize       = 1024 * 3               // RAW_DATA_MAX_SIZE: trace_marker_raw's largest write
	faultedSize          = len("<faulted>")       // FAULTED_SIZE: room a marker keeps for "<faulted>"
	faultSizeID          = faultedSize + 4        // FAULT_SIZE_ID: the same with the raw marker's id
	rawEntryHead         = traceEntryHeadSize + 4 // struct raw_data_entry: the trace_entry and the id
	taskCommLen          = 16                     // TASK_COMM_LEN
	bufferPercentDefault = 50
)

// markerCPU is the CPU trace_marker's and trace_marker_raw's records
// go to. Linux records a marker on the CPU its writer runs on; kpemu's
// writers are host processes, which run on no guest CPU, so the records
// go to CPU 0, the same for every write, so that runs stay
// deterministic. A tracing_cpumask without CPU 0 makes marker writes
// fail with EBADF, as Linux's do from a CPU the mask leaves out.
const markerCPU = 0

// createInfoFiles creates the files of this file.
func (t *Tracing) createInfoFiles() error {
	t.fmts.k, t.fmts.log = t.kp.Kernel(), t.log
	t.kp.Kernel().RegisterModuleNotifier(t.fmts.moduleCallback)
	ro := func(show func(*bytes.Buffer)) debugfs.FileOps {
		return debugfs.FileOps{Show: func(_ context.Context, w *bytes.Buffer) error { show(w); return nil }}
	}
	files := []struct {
		name string
		mode uint32
		ops  debugfs.FileOps
	}{
		{"saved_cmdlines", 0o440, ro(t.cmdlines.show)},
		{"saved_cmdlines_size", 0o640, debugfs.FileOps{Show: t.showSavedCmdlinesSize, Write: t.writeSavedCmdlinesSize}},
		{"saved_tgids", 0o440, ro(t.tgids.show)},
		{"printk_formats", 0o440, ro(t.fmts.show)},
		{"dyn_ftrace_total_info", 0o440, ro(t.showDynFtraceTotalInfo)},
		{"tracing_thresh", 0o640, nsecsFile(&t.thresh)},
	}
	for _, f := range files {
		if _, err := t.tree.CreateFile(path.Join(t.dir, f.name), fsMode(f.mode), f.ops); err != nil {
			return fmt.Errorf("creating %s/%s: %w", t.dir, f.name, err)
		}
	}
	return nil
}

// writeMarker is tracing_mark_write: EINVAL with the markers option off;
// at most TRACE_BUF_SIZE bytes of the write are taken (the count returned
// says so, and the writer writes the rest as another marker); a newline
// ends the text unless it ends with one. A buffer that does not record
// (tracing_on 0, tracing_cpumask without the CPU, full without
// overwrite) is EBADF, "as if not open for write". The record's payload
// is Linux's: the print_entry, the bytes, a NUL and room for a newline,
// at least what "<faulted>" would need.
func (ta *TraceArray) writeMarker(ctx context.Context, p []byte, _ int64) (int, error) {
	if !ta.flag(optMarkers) {
		return 0, syscall.EINVAL
	}
	cnt := min(len(p), traceBufSize)
	size := printEntryHeadSize + cnt + 2
	if cnt < faultedSize {
		size += faultedSize - cnt
	}
	text := cstring(p[:cnt]) // trace_print_print's %s ends at a NUL
	// The entry's text is kept without the newline its line ends with,
	// as a trace_printk's is. (Linux looks at buf[cnt - 1] even for an
	// empty write, which is the ip's last byte, never a newline.)
	text = strings.TrimSuffix(text, "\n")
	// The record: buf is the bytes written, a newline unless they end
	// with one, and a NUL.
	end := "\n\x00"
	if cnt > 0 && p[cnt-1] == '\n' {
		end = "\x00"
	}
	e := traceEntry{kind: entryMarker, text: text, raw: printRecord(0, string(p[:cnt]), end, size)}
	// The triggers see buf before its newline is added, NUL-ended.
	if err := ta.commitMarker(ctx, &e, size, cstring(p[:cnt])); err != nil {
		return 0, err
	}
	return cnt, nil
}

// writeMarkerRaw is tracing_mark_raw_write: an id of 4 bytes (the
// writer's byte order, little-endian on arm64) and data, 4 to
// RAW_DATA_MAX_SIZE bytes or EINVAL, of which TRACE_BUF_SIZE are taken;
// EINVAL with the markers option off, EBADF when the buffer does not
// record.
func (ta *TraceArray) writeMarkerRaw(ctx context.Context, p []byte, _ int64) (int, error) {
	if !ta.flag(optMarkers) {
		return 0, syscall.EINVAL
	}
	if len(p) < 4 || len(p) > rawDataMaxSize {
		return 0, syscall.EINVAL
	}
	cnt := min(len(p), traceBufSize)
	size := traceEntryHeadSize + 4 + cnt // sizeof(*entry) + cnt: Linux's count takes the id twice
	if cnt < faultSizeID {
		size += faultSizeID - cnt
	}
	id := uint64(p[0]) | uint64(p[1])<<8 | uint64(p[2])<<16 | uint64(p[3])<<24
	raw := make([]byte, size-traceEntryHeadSize) // id, then the data; the rest is zero
	copy(raw, p[:cnt])
	e := traceEntry{kind: entryRawData, ip: id, text: string(p[4:cnt]), raw: raw}
	if err := ta.commitMarker(ctx, &e, size, ""); err != nil {
		return 0, err
	}
	return cnt, nil
}

// commitMarker writes a marker's entry for the writer ctx names, on
// markerCPU. The writer is the host process that wrote, its pid the one
// the line shows, as Linux shows the writing task's; a write made
// in-process has no writer and shows as pid 0. Its comm and tgid are
// saved only while Linux would save them at the writer's next context
// switch: while something records comms (record-cmd with an enabled
// event or the function tracer), and tgids (record-tgid as well), so that
// "<...>" shows where Linux shows it. The flags are a system call's: none.
func (ta *TraceArray) commitMarker(ctx context.Context, e *traceEntry, payload int, buf string) error {
	if !ta.on.Load() {
		return syscall.EBADF
	}
	pid := 0
	if c, ok := debugfs.CallerOf(ctx); ok {
		pid = c.Pid
	}
	e.pid = int32(pid)
	e.ts = ta.clock()
	if !ta.buf.Write(markerCPU, e, e.ts, payload) {
		return syscall.EBADF
	}
	// tracing_mark_write runs ftrace/print's triggers on the reserved
	// entry: what they record (a synthetic event) lands after it.
	if e.kind == entryMarker && ta.marker.triggers.Load() != nil {
		comm := ""
		if pid != 0 {
			comm, _ = hostTask(pid)
		}
		post := ta.t.markerTriggers(ta, pid, comm, buf)
		ta.t.postTriggers(ta.marker, post, &kprobes.Regs{CPU: markerCPU}, 0)
	}
	if pid != 0 && ta.flag(optRecordCmd) && ta.t.recordingTaskinfo() {
		comm, tgid := hostTask(pid)
		if comm != "" {
			ta.t.cmdlines.save(pid, comm)
		}
		if ta.flag(optRecordTgid) && tgid != 0 {
			ta.t.tgids.save(pid, tgid)
		}
	}
	return nil
}

// recordingTaskinfo is sched_cmdline_ref > 0: an event is enabled or a
// tracer other than nop is on, in any array.
func (t *Tracing) recordingTaskinfo() bool {
	t.mu.Lock()
	arrays := t.arrays()
	t.mu.Unlock()
	for _, ta := range arrays {
		if ta.currentTracer() != tracerNop {
			return true
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, ev := range t.events {
		if ev.armed.Load() {
			return true
		}
	}
	return false
}

// hostTask reads the comm and the tgid of the host thread pid from
// /proc: "" and 0 when it is gone.
func hostTask(pid int) (comm string, tgid int) {
	dir := "/proc/" + strconv.Itoa(pid)
	if b, err := os.ReadFile(dir + "/comm"); err == nil {
		comm = strings.TrimSuffix(string(b), "\n")
		if len(comm) > taskCommLen-1 {
			comm = comm[:taskCommLen-1]
		}
	}
	if b, err := os.ReadFile(dir + "/status"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "Tgid:"); ok {
				tgid, _ = strconv.Atoi(strings.TrimSpace(v))
			}
		}
	}
	return comm, tgid
}

// printMarker prints a trace_marker entry as trace_print_print does
// ("%ps: %s", the ip being tracing_mark_write's own) and a
// trace_marker_raw entry as trace_raw_data: the id, then every byte of
// the record after it, which is the data and the slack the record's
// 4-byte rounding and its minimum size leave. Linux shows whatever the
// ring buffer's memory held there; kpemu shows zeros.
func printMarker(w *bytes.Buffer, e *traceEntry) {
	if e.kind == entryMarker {
		w.WriteString("tracing_mark_write: ")
		w.WriteString(e.text)
		return
	}
	fmt.Fprintf(w, "# %x buf:", uint32(e.ip))
	n := len(e.text) + 4 // the write's count: the id and the data
	payload := rawEntryHead + n
	if n < faultSizeID {
		payload += faultSizeID - n
	}
	shown := (payload+3)&^3 - rawEntryHead
	const hexDigits = "0123456789abcdef"
	for i := 0; i < shown; i++ {
		var c byte
		if i < len(e.text) {
			c = e.text[i]
		}
		w.Write([]byte{' ', hexDigits[c>>4], hexDigits[c&15]})
	}
}

// savedCmdlinesHead is sizeof(struct saved_cmdlines_buffer) on arm64:

func (t *Tracing) showSavedCmdlinesSize(_ context.Context, w *bytes.Buffer) error {
	fmt.Fprintf(w, "%d\n", t.cmdlines.num())
	return nil
}

// writeSavedCmdlinesSize is tracing_saved_cmdlines_size_write: kstrtoul
// base 10, 1 to PID_MAX_DEFAULT (EINVAL otherwise); the comms saved so
// far go with the old buffer.
func (t *Tracing) writeSavedCmdlinesSize(_ context.Context, p []byte, _ int64) (int, error) {
	v, err := kstr.StrtoulFromUser(p)
	if err != nil {
		return 0, err
	}
	if v == 0 || v > pidMaxDefault {
		return 0, syscall.EINVAL
	}
	s := &t.cmdlines
	s.mu.Lock()
	s.reset(savedCmdlinesNum(int(v)))
	s.mu.Unlock()
	return len(p), nil
}

// saveTgid saves the tgid of cpu's current task for pid, the task of an
// entry committed on cpu (record-tgid).
func (t *Tracing) saveTgid(cpu, pid int) {
	if pid == 0 {
		return
	}
	t.tgids.save(pid, t.kp.Kernel().CurrentTgid(cpu))
}

// appendTgid is trace_print_context's tgid column: "(%7d) " of the
// saved tgid, "(-------) " without one; out ends with the pid's column.
func (t *Tracing) appendTgid(out []byte, pid int) []byte {
	tgid := t.tgids.find(pid)
	if tgid == 0 {
		return append(out, " (-------)"...)
	}
	out = append(out, " ("...)
	out = padLeft(out, strconv.Itoa(tgid), 7)
	return append(out, ')')
}

// showDynFtraceTotalInfo is dyn_ftrace_total_info (ftrace_debug_read):
// the records, then the pages and the groups of pages ftrace allocated
// for them. Each of the core kernel and the loaded modules gets its own
// pages, as ftrace_process_locs allocates them: runs of 16-byte struct
// dyn_ftrace records in the largest power of two of pages the rest
// fills. kpemu counts them from the records there are now; Linux keeps
// the pages of a module's init functions after it frees their records.
func (t *Tracing) showDynFtraceTotalInfo(w *bytes.Buffer) {
	syms := t.kp.Kernel().Kallsyms()
	var order []string
	count := map[string]int{}
	recs := t.kp.Kernel().FtraceRecords()
	for _, r := range recs {
		mod := ""
		if s, _, ok := syms.LookupAddr(r.IP); ok {
			mod = s.Module
		}
		if _, ok := count[mod]; !ok {
			order = append(order, mod)
		}
		count[mod]++
	}
	var pages, groups int
	for _, mod := range order {
		p, g := ftracePages(count[mod])
		pages += p
		groups += g
	}
	fmt.Fprintf(w, "%d pages:%d groups: %d\n", len(recs), pages, groups)
}

// ftracePages is ftrace_allocate_pages for n records: the pages and the
// groups.
func ftracePages(n int) (pages, groups int) {
	const perPage = pageSize / 16 // ENTRIES_PER_PAGE: sizeof(struct dyn_ftrace) is 16 on arm64
	for n > 0 {
		need := (n + perPage - 1) / perPage
		order := 0
		for 2<<order <= need {
			order++
		}
		pages += 1 << order
		groups++
		n -= min(n, perPage<<order)
	}
	return pages, groups
}

func (ta *TraceArray) showBufferPercent(_ context.Context, w *bytes.Buffer) error {
	fmt.Fprintf(w, "%d\n", ta.info.bufferPercent.Load())
	return nil
}

// writeBufferPercent is buffer_percent_write: kstrtoul base 10, at most
// 100 (EINVAL otherwise). It is how full a CPU's buffer must be before a
// blocked splice of trace_pipe_raw wakes. Linux 6.1's read(2) of
// trace_pipe_raw and trace_pipe wake at the first event whatever it is,
// and kpemu's trace_pipe_raw cannot be spliced (rawpage.go), so it is
// kept and shown.
func (ta *TraceArray) writeBufferPercent(_ context.Context, p []byte, _ int64) (int, error) {
	v, err := kstr.StrtoulFromUser(p)
	if err != nil {
		return 0, err
	}
	if v > 100 {
		return 0, syscall.EINVAL
	}
	ta.info.bufferPercent.Store(uint32(v))
	return len(p), nil
}

// nsecsFile is tracing_thresh's and tracing_max_latency's file
// (tracing_nsecs_read and tracing_nsecs_write): microseconds, kept in
// nanoseconds in an unsigned long that the multiplication wraps. kpemu
// has no latency tracer to set or heed them.
func nsecsFile(v *atomic.Uint64) debugfs.FileOps {
	return debugfs.FileOps{
		Show: func(_ context.Context, w *bytes.Buffer) error {
			if ns := v.Load(); ns == ^uint64(0) {
				w.WriteString("-1\n")
			} else {
				fmt.Fprintf(w, "%d\n", int64(ns/1000))
			}
			return nil
		},
		Write: func(_ context.Context, p []byte, _ int64) (int, error) {
			us, err := kstr.StrtoulFromUser(p)
			if err != nil {
				return 0, err
			}
			v.Store(us * 1000)
			return len(p), nil
		},
	}
}

// freeBufferOpen is one open of free_buffer for writing: its writes are
// taken and dropped, its close frees the buffer, once.
type freeBufferOpen struct {
	ta   *TraceArray
	once sync.Once
}

func (o *freeBufferOpen) Write(_ context.Context, p []byte, _ int64) (int, error) {
	return len(p), nil
}

func (o *freeBufferOpen) Close(context.Context) { o.once.Do(o.ta.freeBuffer) }

var _ debugfs.OpenFile = (*freeBufferOpen)(nil)

func (ta *TraceArray) openFreeBuffer(context.Context, int) (debugfs.OpenFile, error) {
	return &freeBufferOpen{ta: ta}, nil
}

// openReadFreeBuffer: Linux frees the buffer at the release of any open
// of free_buffer, a read-only one too (root may open it so), whose reads
// fail with EINVAL, as the file has no read. kpemu sees no release of a
// read-only open, so such an open frees the buffer when it opens.
func (ta *TraceArray) openReadFreeBuffer(context.Context, int) (debugfs.Reader, error) {
	ta.freeBuffer()
	return debugfs.ReadFunc(func(context.Context, []byte, int64) (int, error) { return 0, syscall.EINVAL }), nil
}

// freeBuffer is tracing_free_buffer_release: tracing off with
// disable_on_free, then the buffer shrunk to its least, two pages a CPU,
// keeping the newest of what it held.
func (ta *TraceArray) freeBuffer() {
	if ta.flag(optStopOnFree) {
		ta.on.Store(false)
	}
	ta.opts.sizeMu.Lock()
	defer ta.opts.sizeMu.Unlock()
	_ = ta.resizeBuffer(0, -1) // two pages never exceed the guest's RAM
}

// showCpumask is tracing_cpumask_read: "%*pb" over the guest's CPUs,
// 32-bit words in hex from the highest, the highest as wide as its CPUs
// need, the others 8 digits, with commas between.
func (ta *TraceArray) showCpumask(_ context.Context, w *bytes.Buffer) error {
	ta.info.cpumaskMu.Lock()
	mask := append([]uint32(nil), ta.info.cpumask...)
	ta.info.cpumaskMu.Unlock()
	nbits := ta.buf.NumCPUs()
	chunk := nbits % 32
	if chunk == 0 {
		chunk = 32
	}
	for i := len(mask) - 1; i >= 0; i-- {
		if i != len(mask)-1 {
			w.WriteByte(',')
		}
		fmt.Fprintf(w, "%0*x", (chunk+3)/4, mask[i])
		chunk = 32
	}
	w.WriteByte('\n')
	return nil
}

// writeCpumask is tracing_cpumask_write: an empty write is EINVAL, else
// the mask is cpumask_parse_user's, and the CPUs it leaves out stop
// recording (ring_buffer_record_disable_cpu) while those it takes back
// start again. A mask of no CPU is taken, as Linux takes it.
func (ta *TraceArray) writeCpumask(_ context.Context, p []byte, _ int64) (int, error) {
	if len(p) == 0 {
		return 0, syscall.EINVAL
	}
	ncpu := ta.buf.NumCPUs()
	mask, err := parseBitmap(cstring(p), ncpu)
	if err != nil {
		return 0, err
	}
	ta.info.cpumaskMu.Lock()
	defer ta.info.cpumaskMu.Unlock()
	for cpu := 0; cpu < ncpu; cpu++ {
		ta.buf.CPU(cpu).SetRecording(mask[cpu/32]&(1<<(cpu%32)) != 0)
	}
	ta.info.cpumask = mask
	return len(p), nil
}

// parseBitmap is bitmap_parse for a mask of nbits bits (nr_cpumask_bits
// is nr_cpu_ids, as in Debian's arm64 kernel, which has
// CPUMASK_OFFSTACK): up to the first newline, comma-separated chunks of
// at most 8 hex digits, 32 bits each, read from the end; white space
// around them and empty chunks are allowed. A bad character is EINVAL;
// more chunks than the mask has, a chunk of more than 8 digits, or a bit
// past nbits is EOVERFLOW.
func parseBitmap(s string, nbits int) ([]uint32, error) {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	words := (nbits + 31) / 32
	bitmap := make([]uint32, words)
	left := words
	endOfRegion := func(c byte) bool { return c == ',' || parserSpace(c) }
	hexVal := func(c byte) int {
		switch lc := c | 0x20; {
		case c >= '0' && c <= '9':
			return int(c - '0')
		case lc >= 'a' && lc <= 'f':
			return int(lc-'a') + 10
		}
		return -1
	}
	end := len(s) - 1
	for chunk := 0; ; chunk++ {
		for end >= 0 && endOfRegion(s[end]) {
			end--
		}
		if end < 0 {
			break
		}
		if left == 0 {
			return nil, syscall.EOVERFLOW
		}
		left--
		// bitmap_get_x32_reverse.
		var v uint32
		done := false
		for i := 0; i < 32; i += 4 {
			c := hexVal(s[end])
			end--
			if c < 0 {
				return nil, syscall.EINVAL
			}
			v |= uint32(c) << i
			if end < 0 || endOfRegion(s[end]) {
				done = true
				break
			}
		}
		if !done {
			c := hexVal(s[end])
			end--
			if c >= 0 {
				return nil, syscall.EOVERFLOW
			}
		}
		bitmap[chunk] = v
	}
	for b := nbits; b < (words-left)*32; b++ {
		if bitmap[b/32]&(1<<(b%32)) != 0 {
			return nil, syscall.EOVERFLOW
		}
	}
	return bitmap, nil
}
