package tracing

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/kpemu/kpemu/debugfs"
	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/tracing/internal/kstr"
)

// The function_graph tracer, after Linux 6.1's trace_functions_graph.c
// (the tracer, its options and its output), ftrace.c's set_graph_function
// and set_graph_notrace, and trace.h's ftrace_graph_addr and
// ftrace_graph_ignore_func. The return hooking is the kernel's
// (kernel.FgraphOps, kernel/fgraph.go): a call of a function the top
// array's set_ftrace_filter takes enters the graph, and its return comes
// back through the guest's return_to_handler.

const tracerFunctionGraph = "function_graph"

// Graph tracer flags (trace.h's TRACE_GRAPH_*).
const (
	graphPrintOverrun  = 1 << 0
	graphPrintCPU      = 1 << 1
	graphPrintOverhead = 1 << 2
	graphPrintProc     = 1 << 3
	graphPrintDuration = 1 << 4
	graphPrintAbsTime  = 1 << 5
	graphPrintIrqs     = 1 << 7
	graphPrintTail     = 1 << 8
	graphSleepTime     = 1 << 9
	graphGraphTime     = 1 << 10

	// graphDefault is tracer_flags' initial value.
	graphDefault = graphPrintCPU | graphPrintOverhead | graphPrintDuration | graphPrintIrqs | graphSleepTime | graphGraphTime
)

// graphOptions are trace_opts, in order. graph-time is there as with
// CONFIG_FUNCTION_PROFILER, which kpemu has (profile.go).
func graphOptions() []traceOption {
	return []traceOption{
		{"funcgraph-overrun", graphPrintOverrun},
		{"funcgraph-cpu", graphPrintCPU},
		{"funcgraph-overhead", graphPrintOverhead},
		{"funcgraph-proc", graphPrintProc},
		{"funcgraph-duration", graphPrintDuration},
		{"funcgraph-abstime", graphPrintAbsTime},
		{"funcgraph-irqs", graphPrintIrqs},
		{"funcgraph-tail", graphPrintTail},
		{"sleep-time", graphSleepTime},
		{"graph-time", graphGraphTime},
	}
}

// Record sizes after struct trace_entry: ftrace_graph_ent (func, depth)
// and ftrace_graph_ret (func, depth, overrun, calltime, rettime), both
// __packed.
const (
	graphEntRawSize = 12
	graphRetRawSize = 32

	traceTypeGraphRet = 10 // TRACE_GRAPH_RET
	traceTypeGraphEnt = 11 // TRACE_GRAPH_ENT

	traceGraphIndent = 2 // TRACE_GRAPH_INDENT
)

// graphState is what Linux keeps in globals for the graph tracer: its
// flags, fgraph_max_depth, the set_graph_function and set_graph_notrace
// hashes (ftrace_graph_hash, ftrace_graph_notrace_hash), and the
// fgraph_ops the top array registers.
type graphState struct {
	flags    atomic.Uint32
	maxDepth atomic.Uint32
	hash     atomic.Pointer[graphHash]
	notrace  atomic.Pointer[graphHash]
	hashMu   sync.Mutex // graph_lock: one writer of the hashes at a time

	irqStart, irqEnd uint64 // __irqentry_text_start, __irqentry_text_end
	ops              kernel.FgraphOps
}

// graphHash is a live set_graph_function or set_graph_notrace hash:
// the set, and the order g_show lists it in. Never changed once stored.
type graphHash struct {
	set   kernel.FtraceHash
	order []uint64
}

// initGraph sets the graph tracer up and creates the top directory's
// files: max_graph_depth, set_graph_function, set_graph_notrace.
func (t *Tracing) initGraph() error {
	g := &t.graph
	g.flags.Store(graphDefault)
	g.hash.Store(&graphHash{})
	g.notrace.Store(&graphHash{})
	syms := t.kp.Kernel().Kallsyms()
	if s, ok := syms.LookupName("__irqentry_text_start"); ok {
		g.irqStart = s.Addr
	}
	if s, ok := syms.LookupName("__irqentry_text_end"); ok {
		g.irqEnd = s.Addr
	}
	ta := t.top
	g.ops = kernel.FgraphOps{
		Entry:  ta.graphEntry,
		Return: ta.graphReturn,
		Filter: &ta.ft.ops,
		Clock:  func() uint64 { return uint64(t.now()) },
	}
	files := []struct {
		name string
		ops  debugfs.FileOps
	}{
		{"max_graph_depth", debugfs.FileOps{Show: t.showMaxGraphDepth, Write: t.writeMaxGraphDepth}},
		{"set_graph_function", t.graphFileOps(&g.hash, true)},
		{"set_graph_notrace", t.graphFileOps(&g.notrace, false)},
	}
	for _, f := range files {
		if _, err := t.tree.CreateFile(path.Join(t.dir, f.name), fsMode(0o640), f.ops); err != nil {
			return fmt.Errorf("creating %s/%s: %w", t.dir, f.name, err)
		}
	}
	return nil
}

// showMaxGraphDepth is graph_depth_read: "%d\n" of the unsigned depth.
func (t *Tracing) showMaxGraphDepth(_ context.Context, w *bytes.Buffer) error {
	fmt.Fprintf(w, "%d\n", int32(t.graph.maxDepth.Load()))
	return nil
}

// writeMaxGraphDepth is graph_depth_write: kstrtoul base 10, kept as an
// unsigned int.
func (t *Tracing) writeMaxGraphDepth(_ context.Context, p []byte, _ int64) (int, error) {
	v, err := kstr.StrtoulFromUser(p)
	if err != nil {
		return 0, err
	}
	t.graph.maxDepth.Store(uint32(v))
	return len(p), nil
}

// graphFileOps are set_graph_function's (filter) or set_graph_notrace's
// operations (ftrace_graph_fops): a read lists the hash, or "####
// all functions enabled ####" (set_graph_function) or "#### no
// functions disabled ####" when it is empty; an open for writing starts
// from the hash (empty with O_TRUNC), its writes' words are matched in,
// and its close installs it.
func (t *Tracing) graphFileOps(h *atomic.Pointer[graphHash], filter bool) debugfs.FileOps {
	return debugfs.FileOps{
		Show: func(_ context.Context, w *bytes.Buffer) error {
			cur := h.Load()
			if cur.set.Len() == 0 {
				if filter {
					w.WriteString("#### all functions enabled ####\n")
				} else {
					w.WriteString("#### no functions disabled ####\n")
				}
				return nil
			}
			// g_show prints %ps: no module.
			for _, ip := range cur.order {
				t.printIPSym(w, ip, 0)
				w.WriteByte('\n')
			}
			return nil
		},
		Open: func(_ context.Context, flags int) (debugfs.OpenFile, error) {
			// __ftrace_graph_open: a new hash of the default size,
			// empty with O_TRUNC, else a copy of the live one.
			it := &graphIter{t: t, dst: h, parser: traceParser{size: ftraceBuffMax}}
			if flags&os.O_TRUNC == 0 {
				cur := h.Load()
				it.hash = cur.set.Clone()
				it.order = copyOrdered(ftraceHashDefaultBits, cur.order)
			} else {
				it.order = newOrderedHash(ftraceHashDefaultBits)
			}
			return it, nil
		},
	}
}

// graphIter is an open for writing of set_graph_function or
// set_graph_notrace (struct ftrace_graph_data).
type graphIter struct {
	t   *Tracing
	dst *atomic.Pointer[graphHash]

	mu     sync.Mutex
	hash   kernel.FtraceHash
	order  *orderedHash // hash, in Linux's order
	parser traceParser
	pos    int64
}

// Write is ftrace_graph_write: one word per call, matched into the hash.
func (it *graphIter) Write(_ context.Context, p []byte, _ int64) (int, error) {
	it.mu.Lock()
	defer it.mu.Unlock()
	return it.parser.write(&it.pos, p, func(word string) error {
		return it.t.graphSetHash(&it.hash, it.order, word)
	})
}

// Close is ftrace_graph_release: a word left in the parser is matched,
// and the hash replaces the live one.
func (it *graphIter) Close(context.Context) {
	it.mu.Lock()
	defer it.mu.Unlock()
	if word, ok := it.parser.rest(); ok {
		if err := it.t.graphSetHash(&it.hash, it.order, word); err != nil {
			it.t.log.Debug("ftrace: a graph filter word at close did not match", "word", word, "err", err)
		}
	}
	// ftrace_graph_release: __ftrace_hash_move sizes it anew.
	it.t.graph.hashMu.Lock()
	it.dst.Store(&graphHash{set: it.hash.Clone(), order: it.order.moved().order()})
	it.t.graph.hashMu.Unlock()
}

// graphSetHash is ftrace_graph_set_hash: each record whose function
// matches enters the hash, or leaves it with "!"; EINVAL when nothing
// matched (for "!", when nothing left). No index and no :mod: here.
func (t *Tracing) graphSetHash(hash *kernel.FtraceHash, order *orderedHash, word string) error {
	g, not := filterParseRegex(word)
	k := t.kp.Kernel()
	syms := k.Kallsyms()
	fail := true
	for _, r := range k.FtraceRecords() {
		s, _, ok := syms.LookupAddr(r.IP)
		if !ok || g.typ == matchIndex || !g.match(s.Name) {
			continue
		}
		switch {
		case !not:
			fail = false
			if !hash.Has(r.IP) {
				hash.Add(r.IP)
				order.add(r.IP)
			}
		case hash.Has(r.IP):
			hash.Remove(r.IP)
			order.remove(r.IP)
			fail = false
		}
	}
	if fail {
		return syscall.EINVAL
	}
	return nil
}

// graphFlag reports whether the graph tracer flag is set.
func (t *Tracing) graphFlag(mask uint32) bool { return t.graph.flags.Load()&mask != 0 }

// graphOptionFile is options/NAME of a graph tracer option
// (trace_options_fops): it works whichever tracer is current.
func (t *Tracing) graphOptionFile(mask uint32) debugfs.FileOps {
	return boolOptionFile(func() bool { return t.graphFlag(mask) }, func(on bool) error {
		t.setGraphFlag(mask, on)
		return nil
	})
}

// setGraphFlag is func_graph_set_flag and the flag's change.
func (t *Tracing) setGraphFlag(mask uint32, on bool) {
	if mask == graphSleepTime {
		t.kp.Kernel().SetFgraphSleepTime(on) // ftrace_graph_sleep_time_control
	}
	if on {
		t.graph.flags.Or(mask)
	} else {
		t.graph.flags.And(^mask)
	}
}

// graphEntry is trace_graph_entry: whether the graph takes this call,
// and its funcgraph_entry record.
func (ta *TraceArray) graphEntry(gt kernel.FgraphTask, ent *kernel.FgraphEnt) bool {
	t := ta.t
	rec := gt.Rec
	if rec.Notrace {
		return false
	}
	if t.graph.notrace.Load().set.Has(ent.Func) {
		// ftrace_graph_notrace_addr: nothing below it is traced
		// until it returns, which must come back to clear the bit.
		rec.Notrace = true
		return true
	}
	k := t.kp.Kernel()
	cpu := gt.CPU.Index()
	if ta.pids.fn.ignoresCurrent(k, cpu) {
		return false // ftrace_trace_task
	}
	if t.graphIgnoreFunc(rec, ent) {
		return false
	}
	if t.thresh.Load() != 0 {
		return true // only the returns are recorded
	}
	if !ta.on.Load() {
		return false // the reserve fails: no return either
	}
	raw := make([]byte, graphEntRawSize)
	binary.LittleEndian.PutUint64(raw, ent.Func)
	binary.LittleEndian.PutUint32(raw[8:], uint32(int32(ent.Depth)))
	ta.commitGraph(gt, entryGraphEnt, traceTypeGraphEnt, ent.Func, raw)
	return true
}

// graphIgnoreFunc is ftrace_graph_ignore_func with ftrace_graph_addr:
// trace a call nested in a set_graph_function function or of one, at a
// depth under max_graph_depth (0: any).
func (t *Tracing) graphIgnoreFunc(rec *kernel.FgraphRecursion, ent *kernel.FgraphEnt) bool {
	in := rec.Graph
	if !in {
		h := &t.graph.hash.Load().set
		switch {
		case h.Len() == 0:
			in = true
		case h.Has(ent.Func):
			rec.Graph = true
			rec.Depth = ent.Depth
			in = true
		}
	}
	md := t.graph.maxDepth.Load()
	return !in || ent.Depth < 0 || md != 0 && ent.Depth >= int(md)
}

// graphReturn is trace_graph_return (trace_graph_thresh_return while
// tracing_thresh is set).
func (ta *TraceArray) graphReturn(gt kernel.FgraphTask, ret *kernel.FgraphRet) {
	rec := gt.Rec
	if rec.Graph && ret.Depth == rec.Depth {
		rec.Graph = false // ftrace_graph_addr_finish
	}
	if rec.Notrace {
		rec.Notrace = false
		return
	}
	if th := ta.t.thresh.Load(); th != 0 && ret.RetTime-ret.CallTime < th {
		return
	}
	if !ta.on.Load() {
		return
	}
	raw := make([]byte, graphRetRawSize)
	binary.LittleEndian.PutUint64(raw, ret.Func)
	binary.LittleEndian.PutUint32(raw[8:], uint32(int32(ret.Depth)))
	binary.LittleEndian.PutUint32(raw[12:], uint32(ret.Overrun))
	binary.LittleEndian.PutUint64(raw[16:], ret.CallTime)
	binary.LittleEndian.PutUint64(raw[24:], ret.RetTime)
	ta.commitGraph(gt, entryGraphRet, traceTypeGraphRet, ret.Func, raw)
}

// commitGraph writes a graph record, with the interrupt and
// need-resched flags of the moment.
func (ta *TraceArray) commitGraph(gt kernel.FgraphTask, kind entryKind, typ uint16, fn uint64, raw []byte) {
	k := ta.t.kp.Kernel()
	cpu := gt.CPU.Index()
	comm, pid := k.Current(cpu)
	const pstateI = 1 << 7
	e := traceEntry{kind: kind, typ: typ, pid: int32(pid), ip: fn, raw: raw}
	if gt.CPU.PSTATE()&pstateI != 0 {
		e.flags |= traceFlagIrqsOff
	}
	if k.NeedResched(gt.Task) {
		e.flags |= traceFlagNeedResched
	}
	ta.commit(cpu, comm, &e, traceEntryHeadSize+len(raw), nil)
}

// graphEnt and graphRet decode a record.
func graphEnt(e *traceEntry) (fn uint64, depth int) {
	return binary.LittleEndian.Uint64(e.raw), int(int32(binary.LittleEndian.Uint32(e.raw[8:])))
}

type graphRetRec struct {
	fn                uint64
	depth             int
	overrun           uint32
	calltime, rettime uint64
}

func graphRet(e *traceEntry) graphRetRec {
	r := e.raw
	return graphRetRec{
		fn:       binary.LittleEndian.Uint64(r),
		depth:    int(int32(binary.LittleEndian.Uint32(r[8:]))),
		overrun:  binary.LittleEndian.Uint32(r[12:]),
		calltime: binary.LittleEndian.Uint64(r[16:]),
		rettime:  binary.LittleEndian.Uint64(r[24:]),
	}
}

// The output.

// graphHeader is __print_graph_headers_flags (without latency-format,
// which kpemu lacks); nothing without context-info.
func (t *Tracing) graphHeader(w *bytes.Buffer, lf lineFormat) {
	if lf.flags&optContextInfo == 0 {
		return
	}
	flags := t.graph.flags.Load()
	lat := lf.flags&optLatencyFmt != 0
	if lat {
		// print_lat_header: the flags' legend, under the columns
		// before them.
		size := 0
		if flags&graphPrintAbsTime != 0 {
			size += 16
		}
		if flags&graphPrintCPU != 0 {
			size += 4
		}
		if flags&graphPrintProc != 0 {
			size += 17
		}
		sp := strings.Repeat(" ", size)
		fmt.Fprintf(w, "#%s  _-----=> irqs-off        \n", sp)
		fmt.Fprintf(w, "#%s / _----=> need-resched    \n", sp)
		fmt.Fprintf(w, "#%s| / _---=> hardirq/softirq \n", sp)
		fmt.Fprintf(w, "#%s|| / _--=> preempt-depth   \n", sp)
		fmt.Fprintf(w, "#%s||| /                      \n", sp)
	}
	w.WriteByte('#')
	if flags&graphPrintAbsTime != 0 {
		w.WriteString("     TIME       ")
	}
	if flags&graphPrintCPU != 0 {
		w.WriteString(" CPU")
	}
	if flags&graphPrintProc != 0 {
		w.WriteString("  TASK/PID       ")
	}
	if lat {
		w.WriteString("||||   ")
	}
	if flags&graphPrintDuration != 0 {
		w.WriteString("  DURATION   ")
	}
	w.WriteString("               FUNCTION CALLS\n")
	w.WriteByte('#')
	if flags&graphPrintAbsTime != 0 {
		w.WriteString("      |         ")
	}
	if flags&graphPrintCPU != 0 {
		w.WriteString(" |  ")
	}
	if flags&graphPrintProc != 0 {
		w.WriteString("   |    |        ")
	}
	if lat {
		w.WriteString("||||   ")
	}
	if flags&graphPrintDuration != 0 {
		w.WriteString("   |   |      ")
	}
	w.WriteString("               |   |   |   |\n")
}

// graphCPU is struct fgraph_cpu_data.
type graphCPU struct {
	lastPid    int32
	depth      int
	depthIrq   int
	enterFuncs [kernel.FtraceRetFuncDepth]uint64
}

// graphPrinter is a reader's struct fgraph_data (graph_trace_open): what
// the lines printed so far leave for the next.
type graphPrinter struct {
	ta       *TraceArray
	flags    uint32
	lf       lineFormat
	cpuWidth int // max_bytes_for_cpu
	cpus     []graphCPU
}

func (ta *TraceArray) newGraphPrinter(lf lineFormat) *graphPrinter {
	n := ta.buf.NumCPUs()
	p := &graphPrinter{ta: ta, flags: ta.t.graph.flags.Load(), lf: lf, cpuWidth: len(strconv.Itoa(n - 1)), cpus: make([]graphCPU, n)}
	for i := range p.cpus {
		p.cpus[i].lastPid = -1
		p.cpus[i].depthIrq = -1
	}
	return p
}

// print is print_graph_function_flags for e from cpu. next gives the
// entry after it on the same CPU, for the leaf test. handled is false
// for what the graph leaves to the default output (TRACE_FN,
// TRACE_STACK); leaf is true when next was printed with e and must be
// skipped.
func (p *graphPrinter) print(w *bytes.Buffer, cpu int, e *traceEntry, next func() (*traceEntry, bool)) (handled, leaf bool) {
	switch e.kind {
	case entryGraphEnt:
		return true, p.printEntry(w, cpu, e, next)
	case entryGraphRet:
		p.printReturn(w, cpu, e)
		return true, false
	case entryFn, entryStack:
		return false, false
	}
	p.printComment(w, cpu, e)
	return true, false
}

// printEntry is print_graph_entry.
func (p *graphPrinter) printEntry(w *bytes.Buffer, cpu int, e *traceEntry, next func() (*traceEntry, bool)) bool {
	fn, depth := graphEnt(e)
	if p.checkIrqEntry(cpu, fn, depth) {
		return false
	}
	p.prologue(w, cpu, e, traceTypeGraphEnt, fn)
	// get_return_for_leaf.
	if n, ok := next(); ok && n.kind == entryGraphRet && n.pid == e.pid {
		if r := graphRet(n); r.fn == fn {
			p.entryLeaf(w, cpu, e, fn, depth, r)
			return true
		}
	}
	// print_graph_entry_nested.
	c := &p.cpus[cpu]
	c.depth = depth
	if depth >= 0 && depth < len(c.enterFuncs) {
		c.enterFuncs[depth] = fn
	}
	p.duration(w, 0, fillFull)
	indent(w, depth)
	p.ta.t.printIPSym(w, fn, 0)
	w.WriteString("() {\n")
	return false
}

// entryLeaf is print_graph_entry_leaf.
func (p *graphPrinter) entryLeaf(w *bytes.Buffer, cpu int, e *traceEntry, fn uint64, depth int, r graphRetRec) {
	c := &p.cpus[cpu]
	c.depth = depth - 1
	if depth >= 0 && depth < len(c.enterFuncs) {
		c.enterFuncs[depth] = 0
	}
	p.duration(w, r.rettime-r.calltime, fillNone)
	indent(w, depth)
	p.ta.t.printIPSym(w, fn, 0)
	w.WriteString("();\n")
	p.irq(w, cpu, e, r.fn, traceTypeGraphRet)
}

// printReturn is print_graph_return.
func (p *graphPrinter) printReturn(w *bytes.Buffer, cpu int, e *traceEntry) {
	r := graphRet(e)
	if p.checkIrqReturn(cpu, r.depth) {
		return
	}
	c := &p.cpus[cpu]
	c.depth = r.depth - 1
	match := true
	if r.depth >= 0 && r.depth < len(c.enterFuncs) {
		match = c.enterFuncs[r.depth] == r.fn
		c.enterFuncs[r.depth] = 0
	}
	p.prologue(w, cpu, e, 0, 0)
	p.duration(w, r.rettime-r.calltime, fillNone)
	indent(w, r.depth)
	if match && p.flags&graphPrintTail == 0 {
		w.WriteString("}\n")
	} else {
		w.WriteString("} /* ")
		p.ta.t.printIPSym(w, r.fn, 0)
		w.WriteString(" */\n")
	}
	if p.flags&graphPrintOverrun != 0 {
		fmt.Fprintf(w, " (Overruns: %d)\n", r.overrun)
	}
	p.irq(w, cpu, e, r.fn, traceTypeGraphRet)
}

// printComment is print_graph_comment: any other entry, as its own
// output without context, between "/* " and " */".
func (p *graphPrinter) printComment(w *bytes.Buffer, cpu int, e *traceEntry) {
	depth := p.cpus[cpu].depth
	p.prologue(w, cpu, e, 0, 0)
	p.duration(w, 0, fillFull)
	if depth > 0 {
		for i := 0; i < (depth+1)*traceGraphIndent; i++ {
			w.WriteByte(' ')
		}
	}
	w.WriteString("/* ")
	var body bytes.Buffer
	switch e.kind {
	case entryPrint, entryMarker, entrySnapPuts:
		body.WriteString(e.text) // trace_print_printk_msg_only
	default:
		lf := p.lf
		lf.flags &^= optContextInfo
		p.ta.printLine(&body, cpu, e, lf)
	}
	b := bytes.TrimSuffix(body.Bytes(), []byte("\n"))
	w.Write(b)
	w.WriteString(" */\n")
}

func indent(w *bytes.Buffer, depth int) {
	for i := 0; i < depth*traceGraphIndent; i++ {
		w.WriteByte(' ')
	}
}

// prologue is print_graph_prologue: the context-switch lines, the irq
// arrow of an entry into __irqentry_text, then the columns.
func (p *graphPrinter) prologue(w *bytes.Buffer, cpu int, e *traceEntry, typ int, addr uint64) {
	p.verifPid(w, cpu, e.pid)
	if typ != 0 {
		p.irq(w, cpu, e, addr, typ)
	}
	if p.lf.flags&optContextInfo == 0 {
		return
	}
	p.columns(w, cpu, e)
}

// columns are the absolute time, CPU, proc and latency columns.
func (p *graphPrinter) columns(w *bytes.Buffer, cpu int, e *traceEntry) {
	if p.flags&graphPrintAbsTime != 0 {
		// print_graph_abs_time: microseconds truncated.
		fmt.Fprintf(w, "%5d.%06d |  ", e.ts/1e9, e.ts%1e9/1000)
	}
	if p.flags&graphPrintCPU != 0 {
		p.printCPU(w, cpu)
	}
	if p.flags&graphPrintProc != 0 {
		p.proc(w, e.pid)
		w.WriteString(" | ")
	}
	if p.lf.flags&optLatencyFmt != 0 {
		// print_graph_lat_fmt: the graph reads latency-format at
		// each line, not at the open.
		w.WriteByte(' ')
		w.WriteString(latFlags(e.flags))
		w.WriteString(" | ")
	}
}

// printCPU is print_graph_cpu.
func (p *graphPrinter) printCPU(w *bytes.Buffer, cpu int) {
	fmt.Fprintf(w, " %*d) ", p.cpuWidth, cpu)
}

// proc is print_graph_proc: "comm-pid" (comm cut to 7 bytes) centred in
// TRACE_GRAPH_PROCINFO_LENGTH (14).
func (p *graphPrinter) proc(w *bytes.Buffer, pid int32) {
	comm := p.ta.t.cmdlines.find(int(pid))
	if len(comm) > 7 {
		comm = comm[:7]
	}
	pidStr := strconv.Itoa(int(pid))
	spaces := 0
	if l := len(comm) + len(pidStr) + 1; l < 14 {
		spaces = 14 - l
	}
	for i := 0; i < spaces/2; i++ {
		w.WriteByte(' ')
	}
	w.WriteString(comm + "-" + pidStr)
	for i := 0; i < spaces-spaces/2; i++ {
		w.WriteByte(' ')
	}
}

// verifPid is verif_pid: a line around "prev => next" when the CPU's
// task changed since its last line.
func (p *graphPrinter) verifPid(w *bytes.Buffer, cpu int, pid int32) {
	c := &p.cpus[cpu]
	if c.lastPid == pid {
		return
	}
	prev := c.lastPid
	c.lastPid = pid
	if prev == -1 {
		return
	}
	w.WriteString(" ------------------------------------------\n")
	p.printCPU(w, cpu)
	p.proc(w, prev)
	w.WriteString(" => ")
	p.proc(w, pid)
	w.WriteString("\n ------------------------------------------\n\n")
}

// inIrqText reports whether addr is in __irqentry_text.
func (p *graphPrinter) inIrqText(addr uint64) bool {
	g := &p.ta.t.graph
	return addr >= g.irqStart && addr < g.irqEnd
}

// irq is print_graph_irq: the "==========>" or "<==========" line at
// an entry into or return from __irqentry_text.
func (p *graphPrinter) irq(w *bytes.Buffer, cpu int, e *traceEntry, addr uint64, typ int) {
	if !p.inIrqText(addr) {
		return
	}
	if p.lf.flags&optContextInfo != 0 {
		p.columns(w, cpu, e)
	}
	p.duration(w, 0, fillStart)
	if typ == traceTypeGraphEnt {
		w.WriteString("==========>")
	} else {
		w.WriteString("<==========")
	}
	p.duration(w, 0, fillEnd)
	w.WriteByte('\n')
}

// checkIrqEntry is check_irq_entry: without funcgraph-irqs, the lines
// inside __irqentry_text functions are not printed.
func (p *graphPrinter) checkIrqEntry(cpu int, addr uint64, depth int) bool {
	if p.flags&graphPrintIrqs != 0 {
		return false
	}
	c := &p.cpus[cpu]
	if c.depthIrq >= 0 {
		return true
	}
	if !p.inIrqText(addr) {
		return false
	}
	c.depthIrq = depth
	return true
}

// checkIrqReturn is check_irq_return.
func (p *graphPrinter) checkIrqReturn(cpu int, depth int) bool {
	if p.flags&graphPrintIrqs != 0 {
		return false
	}
	c := &p.cpus[cpu]
	if c.depthIrq == -1 {
		return false
	}
	if c.depthIrq >= depth {
		c.depthIrq = -1
	}
	return true
}

// What print_graph_duration fills instead of a duration (FLAGS_FILL_*).
const (
	fillNone = iota
	fillFull
	fillStart
	fillEnd
)

// duration is print_graph_duration.
func (p *graphPrinter) duration(w *bytes.Buffer, d uint64, fill int) {
	if p.flags&graphPrintDuration == 0 || p.lf.flags&optContextInfo == 0 {
		return
	}
	switch fill {
	case fillFull:
		w.WriteString("              |  ")
		return
	case fillStart:
		w.WriteString("  ")
		return
	case fillEnd:
		w.WriteString(" |")
		return
	}
	if p.flags&graphPrintOverhead != 0 {
		w.WriteByte(traceFindMark(d))
		w.WriteByte(' ')
	} else {
		w.WriteString("  ")
	}
	printGraphDuration(w, d)
	w.WriteString("|  ")
}

// traceFindMark is trace_find_mark: the overhead marker of a duration
// in nanoseconds.
func traceFindMark(d uint64) byte {
	marks := []struct {
		val uint64
		sym byte
	}{{1e9, '$'}, {1e8, '@'}, {1e7, '*'}, {1e6, '#'}, {1e5, '!'}, {1e4, '+'}}
	for _, m := range marks {
		if d > m.val {
			return m.sym
		}
	}
	return ' '
}

// printGraphDuration is trace_print_graph_duration: microseconds with
// up to three decimals, at most seven digits in all, then " us " and
// spaces to eight columns.
func printGraphDuration(w *bytes.Buffer, d uint64) {
	usecs := strconv.FormatUint(d/1000, 10)
	nsecsRem := d % 1000
	w.WriteString(usecs)
	n := len(usecs)
	if n < 7 {
		ns := fmt.Sprintf("%03d", nsecsRem)
		// snprintf(nsecs_str, min(sizeof(nsecs_str), 8 - len), ...)
		if lim := min(5, 8-n) - 1; len(ns) > lim {
			ns = ns[:lim]
		}
		w.WriteString("." + ns)
		n += len(ns) + 1
	}
	w.WriteString(" us ")
	for i := n; i < 8; i++ {
		w.WriteByte(' ')
	}
}

// orderedHash is a struct ftrace_hash as far as its order goes: entries
// in 1<<bits buckets by hash_long(ip, bits), each bucket newest first.
// set_graph_function and set_graph_notrace list their hash in that
// order (g_show), so kpemu keeps it as Linux builds it.
type orderedHash struct {
	bits    int
	buckets [][]uint64
}

const (
	ftraceHashDefaultBits = 10 // FTRACE_HASH_DEFAULT_BITS
	ftraceHashMaxBits     = 12 // FTRACE_HASH_MAX_BITS
)

func newOrderedHash(bits int) *orderedHash {
	return &orderedHash{bits: bits, buckets: make([][]uint64, 1<<bits)}
}

// key is ftrace_hash_key: hash_long(ip, bits), 0 without bits.
func (h *orderedHash) key(ip uint64) int {
	if h.bits == 0 {
		return 0
	}
	const goldenRatio64 = 0x61C8864680B583EB
	return int(ip * goldenRatio64 >> (64 - h.bits))
}

// add is __add_hash_entry: at the head of its bucket.
func (h *orderedHash) add(ip uint64) {
	k := h.key(ip)
	h.buckets[k] = append([]uint64{ip}, h.buckets[k]...)
}

// remove is free_hash_entry.
func (h *orderedHash) remove(ip uint64) {
	k := h.key(ip)
	b := h.buckets[k]
	for i, v := range b {
		if v == ip {
			h.buckets[k] = append(b[:i:i], b[i+1:]...)
			return
		}
	}
}

// order is the hash's entries as g_show lists them.
func (h *orderedHash) order() []uint64 {
	var out []uint64
	for _, b := range h.buckets {
		out = append(out, b...)
	}
	return out
}

// copyOrdered is alloc_and_copy_ftrace_hash(bits, src) of a hash whose
// order is src.
func copyOrdered(bits int, src []uint64) *orderedHash {
	h := newOrderedHash(bits)
	for _, ip := range src {
		h.add(ip)
	}
	return h
}

// moved is __ftrace_hash_move's dup_hash: a hash of fls(count/2) bits
// (at most FTRACE_HASH_MAX_BITS) that takes the entries in h's order.
func (h *orderedHash) moved() *orderedHash {
	src := h.order()
	bits := 0
	for n := len(src) / 2; n > 0; n >>= 1 {
		bits++
	}
	return copyOrdered(min(bits, ftraceHashMaxBits), src)
}
