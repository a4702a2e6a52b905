package tracing

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"github.com/kpemu/kpemu/debugfs"
	"github.com/kpemu/kpemu/kprobes"
	"github.com/kpemu/kpemu/tracing/internal/kstr"
	"github.com/kpemu/kpemu/tracing/ring"
)

// What the tracers write into the ring buffer (package ring) and how trace,
// trace_pipe and per_cpu/cpuN/{trace,trace_pipe} print it, after Linux
// 6.1's kernel/trace/trace.c (s_show, tracing_read_pipe, the headers) and
// trace_output.c (trace_print_context, trace_fn_trace, trace_stack_print).

// entryKind is the type of an entry (struct trace_entry's type).
type entryKind uint8

const (
	entryKprobe     entryKind = iota // a kprobe (or j:) event: ip, and text is the name then the arguments
	entryKretprobe                   // a kretprobe event: ip is the return address, parent the function
	entryFn                          // TRACE_FN: ip and parent
	entryPrint                       // TRACE_PRINT, a trace_printk: ip and text
	entryStack                       // TRACE_STACK: the stack the stacktrace option records
	entryMarker                      // TRACE_PRINT from trace_marker: text (infofiles.go)
	entryRawData                     // TRACE_RAW_DATA from trace_marker_raw: ip is the id, text the data (infofiles.go)
	entrySnapPuts                    // TRACE_PRINT from tracing_snapshot_instance_cond's trace_array_puts: text (snapshot.go)
	entryTracepoint                  // a static event: text is "name: " and what its TP_printk printed (tracepoint.go)
	entryGraphEnt                    // TRACE_GRAPH_ENT: ip is the function, raw its ftrace_graph_ent (fgraph.go)
	entryGraphRet                    // TRACE_GRAPH_RET: ip is the function, raw its ftrace_graph_ret (fgraph.go)
	entryRepeats                     // TRACE_FUNC_REPEATS: ip and parent, raw its func_repeats_entry (funcopts.go)
	entryUprobe                      // a uprobe event: ip is the probed user address (uprobe.go)
	entryUretprobe                   // a uretprobe event: ip is the return address, parent the function (uprobe.go)
)

// traceFlagNeedResched is TRACE_FLAG_NEED_RESCHED in common_flags (with
// traceFlagIrqsOff, the flags kpemu records).
const traceFlagNeedResched = 0x04

// traceEntry is one entry of the ring buffer.
type traceEntry struct {
	ts     uint64 // in the trace clock's unit (Tracing.clock)
	pid    int32
	flags  uint8 // common_flags: traceFlagIrqsOff, traceFlagNeedResched
	kind   entryKind
	nlen   uint16 // probe events: the length of the event's name at the start of text
	typ    uint16 // probe events: the event's id, common_type (the raw, hex and bin options print it: rawoutput.go)
	text   string // probe events: "myprobe fd=0x1", the arguments formatted at the hit; entryPrint: the message
	ip     uint64
	parent uint64
	stack  []uint64
	// raw is the record after its struct trace_entry, laid out as the
	// event's format says, for the binary readers (rawpage.go): every
	// kind but entryFn and entryStack, whose fields are ip, parent and
	// stack, keeps it. 8+len(raw) is the payload the ring accounts.
	raw []byte
}

// traceBuffer is the ring buffer of trace entries, ordered by their
// time stamps.
type traceBuffer = ring.Buffer[traceEntry]

func newTraceBuffer(ncpu int, size uint64) *traceBuffer {
	return ring.New[traceEntry](ncpu, size)
}

// Buffer sizes from trace.c.
const (
	// traceBufSizeBoot is the per-CPU size before expansion
	// (tracer_alloc_buffers: 1 byte, so two pages).
	traceBufSizeBoot = 1
	// traceBufSizeDefault is TRACE_BUF_SIZE_DEFAULT, the per-CPU size in
	// bytes the buffer expands to when tracing is first used.
	traceBufSizeDefault = 1441792
)

// Payload sizes: what each entry's record takes in the ring buffer, as
// Linux lays it out (trace_entries.h, trace_probe.h).
const (
	traceEntryHeadSize  = 8                       // struct trace_entry: type, flags, preempt_count, pid
	kprobeHeadSize      = traceEntryHeadSize + 8  // kprobe_trace_entry_head: ip
	ftraceEntrySize     = traceEntryHeadSize + 16 // ftrace_entry: ip, parent_ip
	printEntryHeadSize  = traceEntryHeadSize + 8  // print_entry: ip, then the text and its NUL
	stackEntryHeadSize  = traceEntryHeadSize + 8  // stack_entry: int size (and padding), then caller[]
	ftraceKstackEntries = 128                     // FTRACE_KSTACK_ENTRIES: PAGE_SIZE / 4 nesting levels / 8
)

// argsSize is the fixed part of an event's record after its head: the
// arguments (a string's is its 4-byte __data_loc; the bytes come on top,
// fetcher.dyn) and a j: event's parameters.
func argsSize(ev *event) int {
	n := 0
	for _, p := range ev.params {
		n += int(p.Size)
	}
	for _, a := range ev.args {
		n += a.typ.size * max(a.count, 1)
	}
	return n
}

// stackFrom is where the stacktrace option unwinds from: a pt_regs' pc
// and x29.
type stackFrom struct{ pc, fp uint64 }

// record writes one event, as kprobe_trace_func and print_kprobe_event.
func (t *Tracing) record(ef *eventFile, tp *traceProbe, regs *kprobes.Regs) {
	if !ef.ta.on.Load() {
		return
	}
	f := fetcher{t: t, regs: regs, args: tp.args}
	comm, pid := t.kp.Kernel().Current(regs.CPU)
	if !f.passes(ef, comm, pid, regs.CPU, traceFlagIrqsOff) {
		return
	}
	raw, text := t.formatHit(&f, tp.ev, tp.args, []uint64{regs.PC}, tp.ev.name) // __probe_ip
	e := traceEntry{kind: entryKprobe, pid: int32(pid), flags: traceFlagIrqsOff, ip: regs.PC, nlen: uint16(len(tp.ev.name)), typ: uint16(tp.ev.id), text: text, raw: raw}
	ef.ta.commit(regs.CPU, comm, &e, traceEntryHeadSize+len(raw), &stackFrom{regs.PC, regs.X[29]})
}

// formatHit formats a hit of ev as store_trace_args and the event's
// print do: the record is head's words (the probe's ip; or func and
// ret_ip) then args' fields, the line is prefix then args. It works in
// pooled scratch and returns both in one allocation (packed): every
// allocation of a hit is garbage whose collection the guest's thread
// pays for. f.raw is left on the returned record.
func (t *Tracing) formatHit(f *fetcher, ev *event, args []*probeArg, head []uint64, prefix ...string) (raw []byte, text string) {
	sc, _ := t.hitScratch.Get().(*hitScratch)
	if sc == nil {
		sc = new(hitScratch)
	}
	w := &sc.line
	w.Reset()
	for _, p := range prefix {
		w.WriteString(p)
	}
	f.startRaw(ev, 8*len(head), sc.raw)
	for i, v := range head {
		binary.LittleEndian.PutUint64(f.raw[8*i:], v)
	}
	for _, a := range args {
		f.format(w, a)
	}
	f.finish(w)
	raw, text = packed(f.raw, w.Bytes())
	sc.raw = f.raw[:0] // grown, maybe, by the arguments' strings
	t.hitScratch.Put(sc)
	f.raw = raw
	return raw, text
}

// hitScratch is where formatHit formats: the line and the record,
// reused through Tracing.hitScratch.
type hitScratch struct {
	line bytes.Buffer
	raw  []byte
}

// packed copies a hit's record and line into one allocation: they live
// and die together in the ring. raw's capacity ends at its length, so
// that no append reaches the text.
func packed(raw, line []byte) ([]byte, string) {
	b := make([]byte, len(raw)+len(line))
	copy(b, raw)
	copy(b[len(raw):], line)
	if len(line) == 0 {
		return b[:len(raw):len(raw)], ""
	}
	return b[:len(raw):len(raw)], unsafe.String(&b[len(raw)], len(line))
}

// probeRaw is a probe event's record after struct trace_entry, as
// store_trace_args lays it out: the head (ip; or func and ret_ip), the
// arguments, the strings.
func (t *Tracing) probeRaw(tp *traceProbe, regs *kprobes.Regs, head ...uint64) []byte {
	f := fetcher{t: t, regs: regs, args: tp.args}
	raw, _ := t.formatHit(&f, tp.ev, tp.args, head)
	return raw
}

// recordReturn writes one return event, as print_kretprobe_event:
// "(caller+off/size <- func)". A return handler runs with interrupts as
// the function left them, so its flags show no 'd'. Its stack starts at
// the return address, as Linux's trampoline handler sets the pc of the
// regs it passes on.
func (t *Tracing) recordReturn(ef *eventFile, tp *traceProbe, ri *kprobes.KretprobeInstance, regs *kprobes.Regs) {
	if !ef.ta.on.Load() {
		return
	}
	f := fetcher{t: t, regs: regs, args: tp.args}
	comm, pid := t.kp.Kernel().Current(regs.CPU)
	if !f.passes(ef, comm, pid, regs.CPU, 0) {
		return
	}
	raw, text := t.formatHit(&f, tp.ev, tp.args, []uint64{tp.kprobe().Addr, ri.RetAddr}, tp.ev.name) // __probe_func, __probe_ret_ip
	e := traceEntry{kind: entryKretprobe, pid: int32(pid), ip: ri.RetAddr, parent: tp.kprobe().Addr, nlen: uint16(len(tp.ev.name)), typ: uint16(tp.ev.id), text: text, raw: raw}
	ef.ta.commit(regs.CPU, comm, &e, traceEntryHeadSize+len(raw), &stackFrom{ri.RetAddr, regs.X[29]})
}

// commit writes e to cpu's buffer stamped by the trace clock, as
// trace_event_buffer_commit and trace_buffer_unlock_commit_regs do. It
// saves the task's comm for the comm column (trace_save_cmdline), and
// with the stacktrace option writes a TRACE_STACK entry after it, the
// kernel stack unwound from from (nil: the entry gets none, as Linux's
// function tracer's entries get none).
func (ta *TraceArray) commit(cpu int, comm string, e *traceEntry, payload int, from *stackFrom) {
	e.ts = ta.clock()
	ta.write(cpu, comm, e, payload, from)
}

// write is commit for an entry already stamped.
func (ta *TraceArray) write(cpu int, comm string, e *traceEntry, payload int, from *stackFrom) {
	if !ta.buf.Write(cpu, e, e.ts, payload) {
		return
	}
	if ta.recordsCmdline(e.kind) {
		ta.t.cmdlines.save(int(e.pid), comm)
	}
	if ta.flag(optRecordTgid) {
		ta.t.saveTgid(cpu, int(e.pid))
	}
	if from != nil && ta.flag(optStacktrace) {
		ta.commitStack(cpu, e.pid, e.flags, *from)
	}
}

// commitStack writes a TRACE_STACK entry of the guest stack from (the
// stacktrace option after an event, the stacktrace trigger).
func (ta *TraceArray) commitStack(cpu int, pid int32, flags uint8, from stackFrom) {
	s := traceEntry{kind: entryStack, pid: pid, flags: flags, stack: ta.t.unwind(cpu, from.pc, from.fp)}
	s.ts = ta.clock()
	ta.buf.Write(cpu, &s, s.ts, stackEntryHeadSize+8*len(s.stack))
}

// unwind is stack_trace_save_regs on arm64 (arch_stack_walk from a
// pt_regs): the pc, then the return address of each frame record up the
// x29 chain, until the final frame record (zeroed by kernel_entry at the
// top of every task's stack), a record that does not lie above the one
// before it, or FTRACE_KSTACK_ENTRIES. The addresses are kept raw, as
// Linux stores them.
func (t *Tracing) unwind(cpu int, pc, fp uint64) []uint64 {
	k := t.kp.Kernel()
	task := k.CurrentTask(cpu)
	out := []uint64{pc}
	for len(out) < ftraceKstackEntries && fp != 0 && fp&7 == 0 {
		next, err1 := k.Read64(fp)
		lr, err2 := k.Read64(fp + 8)
		if err1 != nil || err2 != nil || lr == 0 {
			break
		}
		// A return the graph tracer hijacked: the real one
		// (unwind_next's ftrace_graph_ret_addr).
		out = append(out, k.FgraphRetAddr(task, lr, next))
		if next <= fp {
			break
		}
		fp = next
	}
	return out
}

// lineFormat is what a read prints its lines with: the trace flags,
// whether the clock counts nanoseconds, and whether the latency format
// is on (TRACE_FILE_LAT_FMT), as the trace_iterator takes them at open.
type lineFormat struct {
	flags uint32
	inNS  bool
	lat   bool
	// synth, with verbose, are the synthetic events by id, whose
	// lines verbose changes (synth.go's printSynthVerbose).
	synth map[uint16]*event
}

func (ta *TraceArray) lineFormat() lineFormat {
	f := ta.opts.flags.Load()
	return lineFormat{flags: f, inNS: clockInNS(int(ta.opts.clockID.Load())), lat: f&optLatencyFmt != 0}
}

// readFormat is lineFormat for a read of trace or trace_pipe, which
// with verbose looks the synthetic events up (under Tracing.mu, which
// a vCPU's ftrace_dump must not wait for).
func (ta *TraceArray) readFormat() lineFormat {
	lf := ta.lineFormat()
	if lf.flags&optVerbose != 0 {
		lf.synth = ta.t.synthByID()
	}
	return lf
}

// printLine is printLineAt for an entry read alone: the last of its
// read, at index 0.
func (ta *TraceArray) printLine(w *bytes.Buffer, cpu int, e *traceEntry, lf lineFormat) {
	ta.printLineAt(w, cpu, e, lf, latPos{nextTS: e.ts, timeStart: ta.timeStart.Load()})
}

// printLineAt is print_trace_line in the default format: the context
// (trace_print_context, or in the latency format
// trace_print_lat_context at pos, when context-info is on), then the
// entry as its kind prints itself. A trace_printk or a trace_marker
// write (both TRACE_PRINT) with printk-msg-only (and trace_printk) on is
// its message alone.
func (ta *TraceArray) printLineAt(w *bytes.Buffer, cpu int, e *traceEntry, lf lineFormat, pos latPos) {
	if (e.kind == entryPrint || e.kind == entryMarker || e.kind == entrySnapPuts) && lf.flags&optTracePrintk != 0 && lf.flags&optPrintkMsgOnly != 0 {
		w.WriteString(e.text)
		w.WriteByte('\n')
		return
	}
	if lf.flags&(optRaw|optHex|optBin) != 0 {
		printRawLine(w, cpu, e, lf) // rawoutput.go
		return
	}
	if lf.flags&optContextInfo != 0 && lf.lat {
		var b [96]byte
		w.Write(ta.appendLatContext(b[:0], cpu, e, lf, pos))
	} else if lf.flags&optContextInfo != 0 {
		// "%16s-%-7d [%03d] ", the flags, then " %5lu.%06lu: " (or
		// " %12llu: " for a clock not in nanoseconds), appended by
		// hand: trace_pipe's reader spends its time here.
		var b [64]byte
		out := padLeft(b[:0], ta.t.cmdlines.find(int(e.pid)), 16)
		out = append(out, '-')
		out = padRight(out, strconv.AppendInt(nil, int64(e.pid), 10), 7)
		if lf.flags&optRecordTgid != 0 {
			out = ta.t.appendTgid(out, int(e.pid))
		}
		out = append(out, " ["...)
		out = appendZeroPad(out, uint64(cpu), 3)
		out = append(out, "] "...)
		if lf.flags&optIrqInfo != 0 {
			out = append(out, latFlags(e.flags)...)
		}
		out = append(out, ' ')
		if lf.inNS {
			us := (e.ts + 500) / 1000 // ns2usecs rounds
			out = padLeft(out, string(strconv.AppendUint(nil, us/1e6, 10)), 5)
			out = append(out, '.')
			out = appendZeroPad(out, us%1e6, 6)
		} else {
			out = padLeft(out, string(strconv.AppendUint(nil, e.ts, 10)), 12)
		}
		out = append(out, ": "...)
		w.Write(out)
	}
	sym := lf.flags & optSymMask
	switch e.kind {
	case entryKprobe:
		// print_kprobe_event: the address always with its offset.
		w.WriteString(e.text[:e.nlen])
		w.WriteString(": (")
		ta.t.printIPSym(w, e.ip, sym|optSymOffset)
		w.WriteByte(')')
		w.WriteString(e.text[e.nlen:])
	case entryKretprobe:
		// print_kretprobe_event: "(caller+off/size <- func)".
		w.WriteString(e.text[:e.nlen])
		w.WriteString(": (")
		ta.t.printIPSym(w, e.ip, sym|optSymOffset)
		w.WriteString(" <- ")
		ta.t.printIPSym(w, e.parent, sym&^optSymOffset)
		w.WriteByte(')')
		w.WriteString(e.text[e.nlen:])
	case entryUprobe:
		// print_uprobe_event: "(0x%lx)", no symbol.
		w.WriteString(e.text[:e.nlen])
		w.WriteString(": (0x")
		w.WriteString(strconv.FormatUint(e.ip, 16))
		w.WriteByte(')')
		w.WriteString(e.text[e.nlen:])
	case entryUretprobe:
		// "(0x%lx <- 0x%lx)": the return address, the function.
		w.WriteString(e.text[:e.nlen])
		w.WriteString(": (0x")
		w.WriteString(strconv.FormatUint(e.ip, 16))
		w.WriteString(" <- 0x")
		w.WriteString(strconv.FormatUint(e.parent, 16))
		w.WriteByte(')')
		w.WriteString(e.text[e.nlen:])
	case entryFn:
		// trace_fn_trace: "func <-parent", the parent with
		// print-parent and when there is one.
		ta.t.printIPSym(w, e.ip, sym)
		if sym&optPrintParent != 0 && e.parent != 0 {
			w.WriteString(" <-")
			ta.t.printIPSym(w, e.parent, sym)
		}
	case entryPrint:
		// trace_print_print: "%ps: text".
		ta.t.printIPSym(w, e.ip, sym)
		w.WriteString(": ")
		w.WriteString(e.text)
	case entryStack:
		// trace_stack_print.
		w.WriteString("<stack trace>")
		for _, pc := range e.stack {
			w.WriteString("\n => ")
			ta.t.printIPSym(w, pc, sym)
		}
	case entryMarker, entryRawData:
		printMarker(w, e)
	case entrySnapPuts:
		printSnapshotPuts(w, e, sym)
	case entryTracepoint:
		ta.printTracepoint(w, e, lf)
	case entryRepeats:
		ta.printFuncRepeats(w, e, sym, lf.inNS)
	}
	w.WriteByte('\n')
}

// padLeft appends s right-aligned in width (%*s).
func padLeft(out []byte, s string, width int) []byte {
	for i := len(s); i < width; i++ {
		out = append(out, ' ')
	}
	return append(out, s...)
}

// padRight appends s left-aligned in width (%-*s).
func padRight(out, s []byte, width int) []byte {
	out = append(out, s...)
	for i := len(s); i < width; i++ {
		out = append(out, ' ')
	}
	return out
}

// appendZeroPad appends v in at least width digits (%0*lu).
func appendZeroPad(out []byte, v uint64, width int) []byte {
	var d [20]byte
	s := strconv.AppendUint(d[:0], v, 10)
	for i := len(s); i < width; i++ {
		out = append(out, '0')
	}
	return append(out, s...)
}

// latFlags is trace_print_lat_fmt: irqs-off ('d'), need-resched ('N'),
// hardirq/softirq, preempt-depth and migrate-disable. The reference
// kernel (Debian's 6.1, PREEMPT_VOLUNTARY) counts no preemption and
// kpemu records no hardirq or softirq context, so those are '.'.
func latFlags(flags uint8) string {
	f := []byte(".....")
	if flags&traceFlagIrqsOff != 0 {
		f[0] = 'd'
	}
	if flags&traceFlagNeedResched != 0 {
		f[1] = 'N'
	}
	return string(f)
}

// printIPSym is seq_print_ip_sym: 0 as "0", else the symbol alone
// (kallsyms_lookup) or with sym-offset "sym+0xoff/0xsize [mod]"
// (sprint_symbol), the kretprobe trampoline as "[unknown/kretprobe'd]",
// an address without a symbol as 0x%08lx (0x%lx with sym-offset), and
// with sym-addr " <%016lx>" after it.
func (t *Tracing) printIPSym(w *bytes.Buffer, addr uint64, sym uint32) {
	if addr == 0 {
		w.WriteByte('0')
		return
	}
	syms := t.kp.Kernel().Kallsyms()
	s, _, ok := syms.LookupAddr(addr)
	switch {
	case ok && s.Name == "__kretprobe_trampoline" && s.Addr == addr:
		w.WriteString("[unknown/kretprobe'd]") // kretprobed()
	case sym&optSymOffset != 0 && ok:
		// sprint_symbol: "name+0xoff/0xsize [mod]".
		var b [40]byte
		w.WriteString(s.Name)
		out := append(b[:0], "+0x"...)
		out = strconv.AppendUint(out, addr-s.Addr, 16)
		out = append(out, "/0x"...)
		out = strconv.AppendUint(out, s.Size, 16)
		w.Write(out)
		if s.Module != "" {
			w.WriteString(" [" + s.Module + "]")
		}
	case sym&optSymOffset != 0:
		fmt.Fprintf(w, "0x%x", addr)
	case ok && s.Name != "":
		w.WriteString(s.Name)
	default:
		fmt.Fprintf(w, "0x%08x", addr)
	}
	if sym&optSymAddr != 0 {
		fmt.Fprintf(w, " <%016x>", addr)
	}
}

// writeHeader is s_show's header for rb: the tracer, then with
// context-info print_func_help_header_irq (irq-info) or
// print_func_help_header, each after print_event_info's counts, which are
// every CPU's even in a per_cpu file, as Linux's. help, when not nil, is
// what s_show prints instead of the column headers when the file shows
// nothing (print_snapshot_help: the snapshot files' help).
func (ta *TraceArray) writeHeader(w *bytes.Buffer, lf lineFormat, rb *traceBuffer, cpu int, help func(*bytes.Buffer)) {
	tracer := ta.currentTracer()
	fmt.Fprintf(w, "# tracer: %s\n#\n", tracer)
	if help != nil && rb.Empty(cpu) {
		help(w)
		return
	}
	if tracer == tracerFunctionGraph {
		// The tracer's print_header: print_graph_headers_flags,
		// after print_trace_header in the latency format (which the
		// graph takes from the flags, not the open).
		if lf.flags&optContextInfo != 0 && lf.flags&optLatencyFmt != 0 {
			if rb.Empty(cpu) {
				return
			}
			ta.writeTraceHeader(w, rb)
		}
		ta.t.graphHeader(w, lf)
		return
	}
	if lf.flags&optContextInfo == 0 {
		return
	}
	if lf.lat {
		ta.writeLatHeader(w, lf, rb, cpu)
		return
	}
	if lf.flags&optVerbose != 0 {
		return // trace_default_header prints no help with verbose
	}
	entries, written := rb.Totals()
	fmt.Fprintf(w, "# entries-in-buffer/entries-written: %d/%d   #P:%d\n#\n", entries, written, rb.NumCPUs())
	// record-tgid adds the TGID column, and moves the flags' legend
	// right of it.
	tgid := lf.flags&optRecordTgid != 0
	if lf.flags&optIrqInfo == 0 {
		tg, bar := "", ""
		if tgid {
			tg, bar = "   TGID   ", "     |    "
		}
		fmt.Fprintf(w, "#           TASK-PID    %s CPU#     TIMESTAMP  FUNCTION\n", tg)
		fmt.Fprintf(w, "#              | |      %s   |         |         |\n", bar)
		return
	}
	prec := 2
	if tgid {
		prec = 12
	}
	sp := strings.Repeat(" ", prec)
	fmt.Fprintf(w, "#                            %s  _-----=> irqs-off/BH-disabled\n", sp)
	fmt.Fprintf(w, "#                            %s / _----=> need-resched\n", sp)
	fmt.Fprintf(w, "#                            %s| / _---=> hardirq/softirq\n", sp)
	fmt.Fprintf(w, "#                            %s|| / _--=> preempt-depth\n", sp)
	fmt.Fprintf(w, "#                            %s||| / _-=> migrate-disable\n", sp)
	fmt.Fprintf(w, "#                            %s|||| /     delay\n", sp)
	fmt.Fprintf(w, "#           TASK-PID  %s CPU#  |||||  TIMESTAMP  FUNCTION\n", "     TGID   "[:prec])
	fmt.Fprintf(w, "#              | |    %s   |   |||||     |         |\n", "       |    "[:prec])
}

// showTrace is the trace file.
func (ta *TraceArray) showTrace(_ context.Context, w *bytes.Buffer) error {
	ta.showTraceCPU(w, -1)
	return nil
}

// showTraceCPU is trace (cpu < 0) or per_cpu/cpuN/trace: the header,
// then the unread entries by time stamp. When the buffer has overrun
// (and annotate is on), a CPU whose first entry comes after others' is
// announced, as test_cpu_buff_start does (never for the first two
// entries: s_next counts the first one as 0).
func (ta *TraceArray) showTraceCPU(w *bytes.Buffer, cpu int) {
	ta.t.syncMirror()
	ta.showBuffer(w, ta.buf, cpu, nil)
}

// showBuffer is s_show over rb, the live buffer or the snapshot's
// (snapshot.go), with help as writeHeader takes it.
func (ta *TraceArray) showBuffer(w *bytes.Buffer, rb *traceBuffer, cpu int, help func(*bytes.Buffer)) {
	lf := ta.readFormat()
	if rb != ta.buf {
		lf.lat = false // tracing_snapshot_open sets no TRACE_FILE_LAT_FMT
	}
	// test_cpu_buff_start is print_trace_fmt's: raw, hex and bin
	// announce nothing.
	annotate := lf.flags&optAnnotate != 0 && lf.flags&(optRaw|optHex|optBin) == 0 && rb.Overruns() > 0
	ta.writeHeader(w, lf, rb, cpu, help)
	entries, cpus := rb.Snapshot(cpu)
	timeStart := ta.timeStart.Load()
	started := make([]bool, rb.NumCPUs())
	var gp *graphPrinter
	var nextSame []int // the index of the next entry of the same CPU, -1 for none
	var skip []bool    // a leaf's return, printed with its entry
	if ta.currentTracer() == tracerFunctionGraph {
		gp = ta.newGraphPrinter(lf) // the tracer's open: graph_trace_open
		nextSame = make([]int, len(entries))
		skip = make([]bool, len(entries))
		last := make([]int, rb.NumCPUs())
		for i := range last {
			last[i] = -1
		}
		for i := len(entries) - 1; i >= 0; i-- {
			nextSame[i] = last[cpus[i]]
			last[cpus[i]] = i
		}
	}
	for i := range entries {
		c := cpus[i]
		if gp != nil {
			// The tracer's print_line comes first (print_trace_line).
			if skip[i] {
				continue
			}
			next := func() (*traceEntry, bool) {
				if j := nextSame[i]; j >= 0 {
					return &entries[j], true
				}
				return nil, false
			}
			handled, leaf := gp.print(w, c, &entries[i], next)
			if leaf {
				skip[nextSame[i]] = true
			}
			if handled {
				continue
			}
		}
		if annotate && !started[c] {
			started[c] = true
			if i > 1 {
				fmt.Fprintf(w, "##### CPU %d buffer started ####\n", c)
			}
		}
		pos := latPos{idx: int64(i), nextTS: entries[i].ts, timeStart: timeStart}
		if i+1 < len(entries) {
			pos.nextTS = entries[i+1].ts
		}
		ta.printLineAt(w, c, &entries[i], lf, pos)
	}
}

// pageSize is PAGE_SIZE: a trace_pipe read returns at most one page
// less a byte.
const pageSize = 4096

// pipeReader is one open of trace_pipe or per_cpu/cpuN/trace_pipe: the
// trace_iterator tracing_open_pipe makes, with what a read formatted
// and did not return.
type pipeReader struct {
	mu       sync.Mutex // iter->mutex: one read of an open at a time
	ta       *TraceArray
	cpu      int // < 0: every CPU
	nonblock bool
	lat      bool // latency-format at the open (TRACE_FILE_LAT_FMT)
	left     []byte
	pos      int64         // bytes returned: after the first, tracing_on 0 and an empty buffer are end of file
	graph    *graphPrinter // the graph tracer's pipe_open state, when it was current at the open

	w, line bytes.Buffer // kept from read to read, not to grow them again
}

// openTracePipe returns trace_pipe's OpenRead for cpu (< 0: all).
func (ta *TraceArray) openTracePipe(cpu int) func(context.Context, int) (debugfs.Reader, error) {
	return func(_ context.Context, flags int) (debugfs.Reader, error) {
		r := &pipeReader{ta: ta, cpu: cpu, nonblock: flags&syscall.O_NONBLOCK != 0, lat: ta.flag(optLatencyFmt)}
		if ta.currentTracer() == tracerFunctionGraph {
			r.graph = ta.newGraphPrinter(ta.lineFormat())
		}
		return debugfs.ReadFunc(r.read), nil
	}
}

// read is tracing_read_pipe: what the last read left, else wait until
// the buffer has entries (tracing_wait_pipe: EAGAIN for O_NONBLOCK, end
// of file once something was read and tracing is off), then consume
// entries oldest first across the CPUs, printing each (after "CPU:n
// [LOST m EVENTS]" when overruns took some since the last one), until
// the read's count (at most PAGE_SIZE - 1) is reached or the next line
// would not fit the page-sized trace_seq; what the count leaves of the
// last line is the next read's.
func (r *pipeReader) read(ctx context.Context, p []byte, _ int64) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.left) > 0 {
		n := copy(p, r.left)
		r.left = r.left[n:]
		r.pos += int64(n)
		return n, nil
	}
	ta := r.ta
	for ta.buf.Empty(r.cpu) {
		if nonblock(ctx, r.nonblock) { // rawpage.go
			return 0, syscall.EAGAIN
		}
		if !ta.on.Load() && r.pos > 0 {
			return 0, nil
		}
		wait := ta.buf.Waiter()
		if !ta.buf.Empty(r.cpu) {
			break
		}
		select {
		case <-ctx.Done():
			return 0, syscall.EINTR
		case <-wait:
		}
	}
	cnt := min(len(p), pageSize-1)
	lf := ta.readFormat()
	lf.lat = r.lat
	// iter->idx is zeroed at every read, and counts the entries it
	// takes from 1.
	var idx int64
	// A tracer changed since the open is opened anew, as
	// tracing_read_pipe does: the graph's printer, or none.
	if graph := ta.currentTracer() == tracerFunctionGraph; graph != (r.graph != nil) {
		r.graph = nil
		if graph {
			r.graph = ta.newGraphPrinter(lf)
		}
	}
	w, line := &r.w, &r.line
	w.Reset()
	for w.Len() < cnt {
		e, cpu, seq, lost, ok := ta.buf.PeekNext(r.cpu)
		if !ok {
			break
		}
		line.Reset()
		if lost > 0 {
			fmt.Fprintf(line, "CPU:%d [LOST %d EVENTS]\n", cpu, lost)
		}
		handled, leaf := false, false
		var saved graphCPU
		if g := r.graph; g != nil {
			g.lf = lf
			saved = g.cpus[cpu]
			next := func() (*traceEntry, bool) {
				n, ok := ta.buf.PeekAfter(cpu, seq)
				return &n, ok
			}
			handled, leaf = g.print(line, cpu, &e, next)
		}
		idx++
		if !handled {
			// The entry is consumed after it is printed, so the
			// next one trace_find_next_entry peeks is itself: the
			// relative time is always 0.
			ta.printLineAt(line, cpu, &e, lf, latPos{idx: idx, nextTS: e.ts, timeStart: ta.timeStart.Load()})
		}
		if w.Len() > 0 && w.Len()+line.Len() >= pageSize {
			if r.graph != nil {
				r.graph.cpus[cpu] = saved // printed again by the next read
			}
			break // it does not fit the trace_seq (PAGE_SIZE with its NUL): the next read's
		}
		if ta.buf.ConsumeIf(cpu, seq) {
			if leaf {
				ta.buf.ConsumeIf(cpu, seq+1) // the leaf's return, printed with it
			}
			w.Write(line.Bytes())
		}
	}
	n := copy(p[:cnt], w.Bytes())
	r.left = append(r.left[:0], w.Bytes()[n:]...)
	r.pos += int64(n)
	return n, nil
}

// showStats is per_cpu/cpuN/stats (tracing_stats_read).
func (ta *TraceArray) showStats(cpu int) func(context.Context, *bytes.Buffer) error {
	return func(_ context.Context, w *bytes.Buffer) error {
		inNS := clockInNS(int(ta.opts.clockID.Load()))
		s := ta.buf.CPU(cpu).Stats()
		entries, overrun, commitOverrun, bytes := s.Entries, s.Overrun, s.CommitOverrun, s.Bytes
		oldest, dropped, read := s.OldestTS, s.Dropped, s.Read
		now := ta.clock()
		fmt.Fprintf(w, "entries: %d\noverrun: %d\ncommit overrun: %d\nbytes: %d\n", entries, overrun, commitOverrun, bytes)
		if inNS {
			o, n := (oldest+500)/1000, (now+500)/1000
			fmt.Fprintf(w, "oldest event ts: %5d.%06d\nnow ts: %5d.%06d\n", o/1e6, o%1e6, n/1e6, n%1e6)
		} else {
			fmt.Fprintf(w, "oldest event ts: %d\nnow ts: %d\n", oldest, now)
		}
		fmt.Fprintf(w, "dropped events: %d\nread events: %d\n", dropped, read)
		return nil
	}
}

// Buffer sizes in KiB, as buffer_size_kb and buffer_total_size_kb show
// them.

// showBufferSize is buffer_size_kb (cpu < 0) or per_cpu/cpuN/
// buffer_size_kb: tracing_entries_read. The top file shows "X" when the
// CPUs differ, and before the buffer was first used "N (expanded: M)",
// M the size it will take then.
func (ta *TraceArray) showBufferSize(cpu int) func(context.Context, *bytes.Buffer) error {
	return func(_ context.Context, w *bytes.Buffer) error {
		ta.opts.sizeMu.Lock()
		defer ta.opts.sizeMu.Unlock()
		sizes := ta.bufferSizes()
		if cpu >= 0 {
			fmt.Fprintf(w, "%d\n", sizes[cpu]>>10)
			return nil
		}
		for _, s := range sizes {
			if s != sizes[0] {
				w.WriteString("X\n")
				return nil
			}
		}
		if !ta.opts.expanded {
			fmt.Fprintf(w, "%d (expanded: %d)\n", sizes[0]>>10, traceBufSizeDefault>>10)
		} else {
			fmt.Fprintf(w, "%d\n", sizes[0]>>10)
		}
		return nil
	}
}

// showBufferTotalSize is buffer_total_size_kb: the CPUs' sizes in KiB,
// added up.
func (ta *TraceArray) showBufferTotalSize(_ context.Context, w *bytes.Buffer) error {
	ta.opts.sizeMu.Lock()
	defer ta.opts.sizeMu.Unlock()
	var total, expanded uint64
	for _, s := range ta.bufferSizes() {
		total += s >> 10
		expanded += traceBufSizeDefault >> 10
	}
	if ta.opts.expanded {
		fmt.Fprintf(w, "%d\n", total)
	} else {
		fmt.Fprintf(w, "%d (expanded: %d)\n", total, expanded)
	}
	return nil
}

// bufferSizes is each CPU's buffer in bytes; t.top.opts.sizeMu is held.
func (ta *TraceArray) bufferSizes() []uint64 {
	out := make([]uint64, ta.buf.NumCPUs())
	for i := range out {
		out[i] = ta.buf.CPU(i).SizeBytes()
	}
	return out
}

// writeBufferSize is tracing_entries_write: a size in KiB (kstrtoul,
// base 10; 0 is EINVAL) for one CPU or all; the buffer takes the pages
// it needs, at least two. Linux's arithmetic is unsigned long's, so a
// size whose bytes wrap round is what it wraps to.
func (ta *TraceArray) writeBufferSize(cpu int) func(context.Context, []byte, int64) (int, error) {
	return func(_ context.Context, p []byte, _ int64) (int, error) {
		v, err := kstr.StrtoulFromUser(p)
		if err != nil {
			return 0, err
		}
		if v == 0 {
			return 0, syscall.EINVAL
		}
		ta.opts.sizeMu.Lock()
		defer ta.opts.sizeMu.Unlock()
		if err := ta.resizeBuffer(v<<10, cpu); err != nil {
			return 0, err
		}
		return len(p), nil
	}
}

// resizeBuffer is __tracing_resize_ring_buffer: whoever sets a size
// settles it, so the buffer is expanded from then on. More pages than
// the guest has RAM is ENOMEM (__rb_allocate_pages' si_mem_available
// check). t.top.opts.sizeMu is held.
func (ta *TraceArray) resizeBuffer(size uint64, cpu int) error {
	ta.opts.expanded = true
	ta.opts.settled.Store(true)
	n := ring.PagesFor(size)
	if n > ta.t.kp.Kernel().Machine().RAMSize()/pageSize {
		return syscall.ENOMEM
	}
	// The snapshot, when allocated, takes the same size, with no swap
	// between the two resizes.
	ta.snap.mu.Lock()
	defer ta.snap.mu.Unlock()
	for i := range ta.buf.NumCPUs() {
		if cpu < 0 || i == cpu {
			ta.buf.CPU(i).Resize(int(n))
		}
	}
	ta.resizeSnapshot(int(n), cpu)
	return nil
}

// updateBuffers is tracing_update_buffers: the first use of tracing
// (enabling an event, setting a tracer, a trace_printk) expands the
// buffer from the two pages a CPU has at boot to TRACE_BUF_SIZE_DEFAULT.
func (ta *TraceArray) updateBuffers() {
	if ta.opts.settled.Load() {
		return // every trace_printk comes here: no lock once settled
	}
	ta.opts.sizeMu.Lock()
	defer ta.opts.sizeMu.Unlock()
	if !ta.opts.expanded {
		_ = ta.resizeBuffer(traceBufSizeDefault, -1) // 1.4 MiB per CPU fits any guest kpemu boots
	}
}

// resetOnlineCPUs is tracing_reset_online_cpus: every CPU's buffer
// emptied, and the time the latency format counts from set to now.
func (ta *TraceArray) resetOnlineCPUs() {
	ta.buf.Reset()
	ta.timeStart.Store(ta.clock())
}

// resetCPU is tracing_reset_cpu: per_cpu/cpuN/trace opened with O_TRUNC
// empties that CPU's buffer alone.
func (ta *TraceArray) resetCPU(cpu int) func(context.Context) error {
	return func(context.Context) error {
		ta.buf.CPU(cpu).Reset()
		return nil
	}
}

// stripSpace is strstrip: isspace() bytes off both ends.
func stripSpace(s string) string { return strings.Trim(s, " \t\n\v\f\r") }

// recordUprobe writes one uprobe event, as __uprobe_trace_func and
// print_uprobe_event: the probed address (vaddr[0]), or for a return
// probe the function and the return address (vaddr[0], vaddr[1]), then
// the arguments, fetched from the user registers and memory. Linux's
// handler runs on the way back to user space (uprobe_notify_resume), with
// interrupts on and no preemption count, so the flags are "....." (the
// oracle's); kpemu's runs in the BRK exception, but records Linux's.
func (t *Tracing) recordUprobe(ef *eventFile, tp *traceProbe, regs *kprobes.Regs, fn uint64, uh *uprobeHit) {
	if !ef.ta.on.Load() {
		return
	}
	f := fetcher{t: t, regs: regs, args: tp.up.args, uprobe: uh}
	comm, pid := t.kp.Kernel().Current(regs.CPU)
	if !f.passes(ef, comm, pid, regs.CPU, 0) {
		return
	}
	e := traceEntry{kind: entryUprobe, pid: int32(pid), ip: regs.PC, nlen: uint16(len(tp.ev.name)), typ: uint16(tp.ev.id)}
	head := []uint64{regs.PC} // __probe_ip
	if tp.ev.isReturn {
		head = []uint64{fn, regs.PC} // __probe_func, __probe_ret_ip
		e.kind, e.parent = entryUretprobe, fn
	}
	e.raw, e.text = t.formatHit(&f, tp.ev, tp.up.args, head, tp.ev.name)
	// The stacktrace option's stack is the kernel's where the handler
	// runs, as Linux's (from uprobe_dispatcher down to el0t_64_sync): here
	// the guest's, from its break hook's gate down to its vector.
	var from *stackFrom
	if m := t.kp.Kernel().Machine(); regs.CPU >= 0 && regs.CPU < m.NumCPUs() {
		c := m.CPU(regs.CPU)
		from = &stackFrom{c.PC(), c.X(29)}
	}
	ef.ta.commit(regs.CPU, comm, &e, traceEntryHeadSize+len(f.raw), from)
}
