package tracing

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/kpemu/kpemu/debugfs"
	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/tracing/internal/kstr"
)

// The function tracer and the ftrace files of tracefs, after Linux 6.1's
// kernel/trace/ftrace.c (available_filter_functions, enabled_functions,
// and the regex files set_ftrace_filter and set_ftrace_notrace with their
// parser and match rules), trace_functions.c (the "function" tracer) and
// trace_output.c (trace_fn_trace). The ftrace core, its records and the
// patching of call sites, is the kernel's (kernel.FtraceOps and friends).

// Tracer names. availableTracers is what available_tracers lists: Linux's
// register_tracer puts each new tracer first, and nop is registered
// before function, function before function_graph. An instance lists
// only the tracers that allow instances (trace_ok_for_array), which
// function_graph does not.
const (
	tracerNop                = "nop"
	tracerFunction           = "function"
	availableTracers         = tracerFunctionGraph + " " + tracerFunction + " " + tracerNop + "\n"
	availableInstanceTracers = tracerFunction + " " + tracerNop + "\n"
)

// ftraceBuffMax is FTRACE_BUFF_MAX, KSYM_SYMBOL_LEN + 4: the longest
// word the regex files' parser takes is one byte less. KSYM_SYMBOL_LEN is
// 666 on a 64-bit 6.1 kernel: sizeof("%s+%#lx/%#lx [%s %s]") 21, the name
// 511, two longs 38, the module name 55, the build id 40, and 1.
const ftraceBuffMax = 666 + 4

// functionTracer is the top-level trace array's function tracer state:
// the current tracer and the trace array's ftrace ops (global_ops), whose
// hashes set_ftrace_filter and set_ftrace_notrace edit.
type functionTracer struct {
	mu      sync.Mutex // trace_types_lock: current
	current string
	ops     kernel.FtraceOps
	// mode is the TRACE_FUNC_OPT_* flags the callback was chosen
	// for (tr->ops->func), and repeats tr->last_func_repeats, made
	// when func-no-repeats is first used (funcopts.go).
	mode    atomic.Uint32
	repeats atomic.Pointer[[]funcRepeats]

	modMu      sync.Mutex      // ftrace_lock, for the lists below
	modTrace   []ftraceModLoad // tr->mod_trace: "func:mod:module" for modules not loaded yet, newest first
	modNotrace []ftraceModLoad // tr->mod_notrace

	// probeMu guards probes, tr->func_probes: set_ftrace_filter's
	// function commands, newest first (funcprobe.go). Taken after
	// Tracing.mu.
	probeMu sync.Mutex
	probes  []*funcProbe
}

// modList is the array's cached :mod: commands for its filter hash
// (filter) or its notrace hash; nil for no array.
func (ta *TraceArray) modList(filter bool) *[]ftraceModLoad {
	switch {
	case ta == nil:
		return nil
	case filter:
		return &ta.ft.modTrace
	default:
		return &ta.ft.modNotrace
	}
}

// ftraceModLoad is a struct ftrace_mod_load: a :mod: command cached until
// its module loads.
type ftraceModLoad struct {
	fn, module string
}

// initFtrace creates the ftrace files only the top directory has and
// the stack tracer; each array's function tracer is its own
// (initFunctionTracer, from TraceArray.createFiles).
func (t *Tracing) initFtrace() error {
	files := []struct {
		name string
		ops  debugfs.FileOps
	}{
		{"available_filter_functions", debugfs.FileOps{Show: t.showAvailableFilterFunctions}},
		{"enabled_functions", debugfs.FileOps{Show: t.showEnabledFunctions}},
	}
	for _, f := range files {
		if _, err := t.tree.CreateFile(path.Join(t.dir, f.name), fsMode(0o440), f.ops); err != nil {
			return fmt.Errorf("creating %s/%s: %w", t.dir, f.name, err)
		}
	}
	if err := t.initGraph(); err != nil {
		return err
	}
	if err := t.initProfiler(); err != nil {
		return err
	}
	return t.initStackTracer()
}

// initFunctionTracer sets up the array's function tracer (nop until
// current_tracer says otherwise) and its filter files.
func (ta *TraceArray) initFunctionTracer() error {
	ft := &ta.ft
	ft.current = tracerNop
	ft.ops.Func = ta.functionTraceCall
	if ta == ta.t.top {
		// One notifier for every array's, so that an instance's goes
		// with it (the kernel's notifiers are never unregistered).
		ta.t.kp.Kernel().RegisterModuleNotifier(ta.t.ftraceModulesCallback)
	}
	files := []struct {
		name   string
		filter bool
	}{
		{"set_ftrace_filter", true},
		{"set_ftrace_notrace", false},
	}
	for _, f := range files {
		if _, err := ta.t.tree.CreateFile(path.Join(ta.dir, f.name), fsMode(0o640), ta.t.regexFileOps(&ft.ops, f.filter, ta)); err != nil {
			return fmt.Errorf("creating %s/%s: %w", ta.dir, f.name, err)
		}
	}
	return nil
}

// ftraceModulesCallback is each array's ftraceModuleCallback.
func (t *Tracing) ftraceModulesCallback(ev kernel.ModuleEvent) {
	t.mu.Lock()
	arrays := t.arrays()
	t.mu.Unlock()
	for _, ta := range arrays {
		ta.ftraceModuleCallback(ev)
	}
}

// currentTracer is the name current_tracer shows.
func (ta *TraceArray) currentTracer() string {
	ta.ft.mu.Lock()
	defer ta.ft.mu.Unlock()
	return ta.ft.current
}

func (ta *TraceArray) showCurrentTracer(_ context.Context, w *bytes.Buffer) error {
	w.WriteString(ta.currentTracer() + "\n")
	return nil
}

// writeCurrentTracer is tracing_set_trace_write: at most MAX_TRACER_SIZE
// (100) bytes, trimmed, name a tracer (EINVAL otherwise). Changing the
// tracer resets the old one (the function tracer unregisters its ops),
// clears the buffer (tracer_init's tracing_reset_online_cpus) and
// starts the new one; the same tracer again changes nothing.
func (ta *TraceArray) writeCurrentTracer(_ context.Context, p []byte, _ int64) (int, error) {
	const maxTracerSize = 100
	name := p
	if len(name) > maxTracerSize {
		name = name[:maxTracerSize]
	}
	if err := ta.setTracer(strings.TrimSpace(string(name))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// setTracer is tracing_set_tracer, which first expands the buffer
// (even for a name it then refuses).
func (ta *TraceArray) setTracer(name string) error {
	ta.updateBuffers()
	ft := &ta.ft
	ft.mu.Lock()
	defer ft.mu.Unlock()
	switch {
	case name == tracerNop, name == tracerFunction:
	case name == tracerFunctionGraph && ta == ta.t.top:
	default:
		return syscall.EINVAL // no such tracer, or not for an instance (trace_ok_for_array)
	}
	if name == ft.current {
		return nil
	}
	k := ta.t.kp.Kernel()
	switch ft.current {
	case tracerFunction:
		// function_trace_reset: tracing_stop_function_trace.
		if err := k.UnregisterFtraceFunction(&ft.ops); err != nil {
			return err
		}
	case tracerFunctionGraph:
		// graph_trace_reset.
		if err := k.UnregisterFtraceGraph(&ta.t.graph.ops); err != nil {
			return err
		}
	}
	ft.current = tracerNop
	ta.resetOnlineCPUs() // tracer_init
	switch name {
	case tracerFunction:
		// function_trace_init: select_trace_function,
		// handle_func_repeats, tracing_start_function_trace.
		ta.t.funcMu.Lock()
		ta.startFuncMode(ta.t.funcFlags.Load())
		ta.t.funcMu.Unlock()
		if err := k.RegisterFtraceFunction(&ft.ops); err != nil {
			return err
		}
	case tracerFunctionGraph:
		// graph_trace_init: register_ftrace_graph.
		if err := k.RegisterFtraceGraph(&ta.t.graph.ops); err != nil {
			return err
		}
	}
	ft.current = name
	return nil
}

// availableTracers is available_tracers' text for the array.
func (ta *TraceArray) availableTracers() string {
	if ta == ta.t.top {
		return availableTracers
	}
	return availableInstanceTracers
}

// functionTraceCall is the function tracer's callback: one TRACE_FN
// entry per call unless tracing is off (function_trace_call), with
// func_stack_trace a TRACE_STACK entry after it
// (function_stack_trace_call), with func-no-repeats a call like the last
// one counted instead (function_no_repeats_trace_call, which counts
// while tracing is off too). It runs on the vCPU, inside the hostcall.
func (ta *TraceArray) functionTraceCall(c kernel.FtraceCall) {
	mode := ta.ft.mode.Load()
	if !ta.on.Load() && mode&funcOptNoRepeats == 0 {
		return
	}
	k := ta.t.kp.Kernel()
	cpu := c.CPU.Index()
	if ta.pids.fn.ignoresCurrent(k, cpu) {
		return // ftrace_pid_func: set_ftrace_pid, set_ftrace_notrace_pid (pidfilter.go)
	}
	comm, pid := k.Current(cpu)
	const pstateI = 1 << 7 // the I bit of DAIF
	e := traceEntry{kind: entryFn, pid: int32(pid), ip: c.IP, parent: c.ParentIP}
	if c.CPU.PSTATE()&pstateI != 0 {
		e.flags |= traceFlagIrqsOff
	}
	if k.NeedResched(k.CurrentTask(cpu)) {
		e.flags |= traceFlagNeedResched
	}
	if mode&funcOptNoRepeats != 0 {
		if r := ta.ft.repeats.Load(); r != nil && cpu < len(*r) {
			last := &(*r)[cpu]
			last.mu.Lock()
			repeat := ta.isRepeat(last, c.IP, c.ParentIP)
			if !repeat {
				ta.processRepeats(cpu, comm, e.pid, e.flags, last, c.IP, c.ParentIP)
			}
			last.mu.Unlock()
			if repeat {
				return
			}
		}
		if !ta.on.Load() {
			return
		}
	}
	ta.commit(cpu, comm, &e, ftraceEntrySize, nil)
	if mode&funcOptStack != 0 {
		// __trace_stack(tr, trace_ctx, STACK_SKIP): the stack down
		// from the traced function, as the stacktrace command's.
		ta.funcStack(c, e.pid, e.flags)
	}
}

// printRec is print_rec: %ps of a record's ip, "name [mod]" for a module's.
func printRec(w *bytes.Buffer, syms *kernel.Kallsyms, ip uint64) {
	s, _, ok := syms.LookupAddr(ip)
	if !ok {
		fmt.Fprintf(w, "0x%x", ip)
		return
	}
	w.WriteString(s.Name)
	if s.Module != "" {
		fmt.Fprintf(w, " [%s]", s.Module)
	}
}

// showAvailableFilterFunctions is available_filter_functions: every
// record, in record order.
func (t *Tracing) showAvailableFilterFunctions(_ context.Context, w *bytes.Buffer) error {
	syms := t.kp.Kernel().Kallsyms()
	for _, r := range t.kp.Kernel().FtraceRecords() {
		printRec(w, syms, r.IP)
		w.WriteByte('\n')
	}
	return nil
}

// showEnabledFunctions is enabled_functions: the records whose call site
// calls the trampoline, with how many ops take each and R when it goes
// through ftrace_regs_caller (kpemu has no IPMODIFY or direct callers).
func (t *Tracing) showEnabledFunctions(_ context.Context, w *bytes.Buffer) error {
	syms := t.kp.Kernel().Kallsyms()
	for _, r := range t.kp.Kernel().FtraceRecords() {
		if !r.Enabled {
			continue
		}
		printRec(w, syms, r.IP)
		regs := "  "
		if r.Regs {
			regs = " R"
		}
		fmt.Fprintf(w, " (%d)%s%s%s\n", r.Count, regs, "  ", "  ")
	}
	return nil
}

// regexFileOps are the operations of a file like set_ftrace_filter
// (ftrace_filter_fops): reads list the hash, an open for writing builds a
// new hash (empty with O_TRUNC, else the current one) from its writes,
// and its close installs it. filter selects the ops' filter hash, else its
// notrace hash; ta is the trace array whose function tracer ops is, with
// its cached :mod: commands, nil for an ops of no trace array
// (stack_trace_filter).
func (t *Tracing) regexFileOps(ops *kernel.FtraceOps, filter bool, ta *TraceArray) debugfs.FileOps {
	return debugfs.FileOps{
		Show: func(_ context.Context, w *bytes.Buffer) error {
			t.showRegex(w, ops, filter, ta)
			return nil
		},
		Open: func(_ context.Context, flags int) (debugfs.OpenFile, error) {
			it := &regexIter{t: t, ta: ta, ops: ops, filter: filter, mods: ta.modList(filter), parser: traceParser{size: ftraceBuffMax}}
			if flags&os.O_TRUNC != 0 {
				if ta != nil {
					ta.ft.modMu.Lock()
					*it.mods = nil // clear_ftrace_mod_list
					ta.ft.modMu.Unlock()
				}
			} else if filter {
				it.hash = ops.Filter()
			} else {
				it.hash = ops.Notrace()
			}
			return it, nil
		},
	}
}

// showRegex is t_show over the hash: "#### all functions enabled ####"
// (or "#### no functions disabled ####" for a notrace hash) when it is
// empty, else its functions in record order; then the cached :mod:
// commands; then, in set_ftrace_filter, the function commands.
func (t *Tracing) showRegex(w *bytes.Buffer, ops *kernel.FtraceOps, filter bool, ta *TraceArray) {
	h := ops.Notrace()
	if filter {
		h = ops.Filter()
	}
	if h.Empty() {
		if filter {
			w.WriteString("#### all functions enabled ####\n")
		} else {
			w.WriteString("#### no functions disabled ####\n")
		}
	} else {
		syms := t.kp.Kernel().Kallsyms()
		for _, r := range t.kp.Kernel().FtraceRecords() {
			if h.Has(r.IP) {
				printRec(w, syms, r.IP)
				w.WriteByte('\n')
			}
		}
	}
	if ta != nil {
		ta.ft.modMu.Lock()
		for _, m := range *ta.modList(filter) {
			fmt.Fprintf(w, "%s:mod:%s\n", m.fn, m.module)
		}
		ta.ft.modMu.Unlock()
	}
	if filter && ta != nil { // FTRACE_ITER_DO_PROBES: a trace array's set_ftrace_filter
		ta.showFuncProbes(w)
	}
}

// regexIter is an open for writing of a regex file (struct
// ftrace_iterator): the hash its writes build and their parser.
type regexIter struct {
	t      *Tracing
	ta     *TraceArray // the array whose function tracer ops is; nil for stack_trace_filter
	ops    *kernel.FtraceOps
	filter bool
	mods   *[]ftraceModLoad // ta's cached :mod: commands for the hash; nil without ta

	mu     sync.Mutex // guards everything below
	hash   kernel.FtraceHash
	parser traceParser
	pos    int64 // *ppos: bytes written so far
}

// Write is ftrace_regex_write: one word per call (trace_get_user), which
// is matched into the open's hash; the count consumed comes back, and the
// writer writes the rest again. A word that reaches the end of the write
// waits for the next write (or the close) to end.
func (it *regexIter) Write(_ context.Context, p []byte, _ int64) (int, error) {
	it.mu.Lock()
	defer it.mu.Unlock()
	return it.parser.write(&it.pos, p, func(word string) error {
		return it.t.processRegex(&it.hash, word, it.filter, it.ta)
	})
}

// Close is ftrace_regex_release: a word still in the parser is matched
// (its error goes nowhere, as a release cannot fail), the hash of a
// trace array's filter is marked as waiting for modules while :mod:
// commands are cached (FTRACE_HASH_FL_MOD), and the ops gets the hash.
func (it *regexIter) Close(context.Context) {
	it.mu.Lock()
	defer it.mu.Unlock()
	if word, ok := it.parser.rest(); ok {
		if err := it.t.processRegex(&it.hash, word, it.filter, it.ta); err != nil {
			it.t.log.Debug("ftrace: a filter word at close did not match", "word", word, "err", err)
		}
	}
	if it.filter && it.ta != nil {
		it.ta.ft.modMu.Lock()
		it.hash.Mod = len(*it.mods) > 0
		it.ta.ft.modMu.Unlock()
	}
	if err := it.t.kp.Kernel().FtraceSetHash(it.ops, it.filter, it.hash); err != nil {
		it.t.log.Error("ftrace: installing a filter", "err", err)
	}
}

// traceParser is struct trace_parser with trace_get_user.
type traceParser struct {
	buf  []byte
	size int // the buffer's size: words are at most size-1 bytes
	cont bool
	fail bool
}

func (p *traceParser) clear()        { p.cont = false; p.buf = p.buf[:0] }
func (p *traceParser) loaded() bool  { return !p.fail && len(p.buf) != 0 }
func (p *traceParser) word() string  { return string(p.buf) }
func parserSpace(c byte) bool        { return isSpace(c) || c == 0xa0 } // the kernel's isspace(): Latin-1 NBSP too
func (p *traceParser) full() bool    { return len(p.buf) >= p.size-1 }
func (p *traceParser) put(c byte)    { p.buf = append(p.buf, c) }
func (p *traceParser) failed() error { p.fail = true; return syscall.EINVAL }

// write is a write(2) of a file that takes one word per call
// (ftrace_regex_write, ftrace_graph_write): it reads a word of b into the
// parser (the first write of an open starts afresh, *pos being the bytes
// written so far) and hands a finished one to use; a word that reaches
// the end of b waits for the next write or the close (rest). It returns
// the count consumed, and the writer writes the rest again.
func (p *traceParser) write(pos *int64, b []byte, use func(word string) error) (int, error) {
	if *pos == 0 {
		p.clear()
	}
	read, err := p.get(b)
	if err != nil {
		return 0, err
	}
	*pos += int64(read)
	if p.loaded() && !p.cont {
		word := p.word()
		p.clear()
		if err := use(word); err != nil {
			return 0, err
		}
	}
	return read, nil
}

// rest is the word a release still finds in the parser, if any.
func (p *traceParser) rest() (string, bool) {
	if !p.loaded() {
		return "", false
	}
	word := p.word()
	p.clear()
	return word, true
}

// get is trace_get_user: skip white space (unless a word continues from
// the last write), read one word, and report how many bytes that took,
// including the one white-space byte that ended it. EINVAL for a word
// longer than the buffer.
func (p *traceParser) get(u []byte) (int, error) {
	i := 0
	ch := u[i]
	i++
	if !p.cont {
		for i < len(u) && parserSpace(ch) {
			ch = u[i]
			i++
		}
		p.buf = p.buf[:0]
		if parserSpace(ch) || ch == 0 {
			return i, nil // only spaces were written
		}
	}
	for i < len(u) && !parserSpace(ch) && ch != 0 {
		if p.full() {
			return 0, p.failed()
		}
		p.put(ch)
		ch = u[i]
		i++
	}
	switch {
	case parserSpace(ch) || ch == 0:
		p.cont = false
	case !p.full():
		p.cont = true
		p.put(ch)
	default:
		return 0, p.failed()
	}
	return i, nil
}

// processRegex is ftrace_process_regex: "func" matches records into the
// hash (EINVAL when none matches), "func:mod:module" is the mod command,
// the function commands (traceon, traceoff, stacktrace, snapshot, dump,
// cpudump, enable_event, disable_event) are funcprobe.go's, and any
// other command is EINVAL. enable is true for a filter hash; ta is nil
// for an ops of no trace array, whose function commands the top array
// takes.
func (t *Tracing) processRegex(hash *kernel.FtraceHash, buff string, enable bool, ta *TraceArray) error {
	fn, next, found := strings.Cut(buff, ":")
	if !found {
		if t.matchRecords(hash, fn, nil) == 0 {
			return syscall.EINVAL
		}
		return nil
	}
	command, param, hasParam := strings.Cut(next, ":")
	arr := ta
	if arr == nil {
		arr = t.top
	}
	if command == "mod" {
		return arr.ftraceModCallback(hash, fn, param, enable, ta.modList(enable))
	}
	return arr.funcCommand(fn, command, param, hasParam, enable, ta != nil)
}

// ftraceModCallback is ftrace_mod_callback: the functions matching fn in
// the modules matching module; if none matches, the command is cached
// for when the module loads (cache_mod). ENODEV for a hash of no trace
// array.
func (ta *TraceArray) ftraceModCallback(hash *kernel.FtraceHash, fn, module string, enable bool, mods *[]ftraceModLoad) error {
	if mods == nil {
		return syscall.ENODEV
	}
	if ta.t.matchRecords(hash, fn, &module) != 0 {
		return nil
	}
	return ta.cacheMod(fn, module, mods)
}

// cacheMod is cache_mod: "!func" drops cached commands of the module
// (all of them for "!*"; EINVAL if none); otherwise the command is kept,
// newest first, unless the module is loaded (EINVAL: it matched nothing).
func (ta *TraceArray) cacheMod(fn, module string, mods *[]ftraceModLoad) error {
	ta.ft.modMu.Lock()
	defer ta.ft.modMu.Unlock()
	if strings.HasPrefix(fn, "!") {
		fn = fn[1:]
		var keep []ftraceModLoad
		for _, m := range *mods {
			if m.module == module && (fn == "*" || m.fn == fn) {
				continue
			}
			keep = append(keep, m)
		}
		if len(keep) == len(*mods) {
			return syscall.EINVAL
		}
		*mods = keep
		return nil
	}
	if _, _, ok := ta.t.kp.Kernel().Module(module); ok {
		return syscall.EINVAL
	}
	*mods = append([]ftraceModLoad{{fn: fn, module: module}}, *mods...)
	return nil
}

// ftraceModuleCallback is process_cached_mods, run as a module comes (its
// records are in place by then): the cached :mod: commands of the trace
// array that name it are matched into the ops' hashes, and dropped.
func (ta *TraceArray) ftraceModuleCallback(ev kernel.ModuleEvent) {
	if ev.State != kernel.ModuleComing {
		return
	}
	ft := &ta.ft
	for _, filter := range []bool{true, false} {
		mods := &ft.modNotrace
		if filter {
			mods = &ft.modTrace
		}
		ft.modMu.Lock()
		var run, keep []ftraceModLoad
		for _, m := range *mods {
			if m.module == ev.Module.Name {
				run = append(run, m)
			} else {
				keep = append(keep, m)
			}
		}
		*mods = keep
		left := len(keep) > 0
		ft.modMu.Unlock()
		if len(run) == 0 {
			continue
		}
		h := ft.ops.Notrace()
		if filter {
			h = ft.ops.Filter()
		}
		for _, m := range run {
			mod := ev.Module.Name
			ta.t.matchRecords(&h, m.fn, &mod)
		}
		if filter && !left {
			h.Mod = false
		}
		if err := ta.t.kp.Kernel().FtraceSetHash(&ft.ops, filter, h); err != nil {
			ta.t.log.Error("ftrace: applying cached :mod: commands", "module", ev.Module.Name, "err", err)
		}
	}
}

// Match types of filter_parse_regex.
const (
	matchFull = iota
	matchFrontOnly
	matchMiddleOnly
	matchEndOnly
	matchGlob
	matchIndex
)

// ftraceGlob is struct ftrace_glob.
type ftraceGlob struct {
	search string
	typ    int
}

// filterParseRegex is filter_parse_regex: a leading '!' negates; a
// leading digit is an index; '*' at the start, the end or both makes an
// end, front or middle match; any other '*', '?', '[' or '\' makes a glob.
func filterParseRegex(buff string) (g ftraceGlob, not bool) {
	if strings.HasPrefix(buff, "!") {
		not, buff = true, buff[1:]
	}
	g = ftraceGlob{search: buff, typ: matchFull}
	if buff != "" && buff[0] >= '0' && buff[0] <= '9' {
		g.typ = matchIndex
		return g, not
	}
scan:
	for i := 0; i < len(buff); i++ {
		switch buff[i] {
		case '*':
			switch {
			case i == 0:
				g.typ = matchEndOnly
			case i == len(buff)-1:
				if g.typ == matchEndOnly {
					g.typ = matchMiddleOnly
				} else {
					g.typ = matchFrontOnly
				}
				buff = buff[:i]
				break scan
			default: // the pattern continues: a full glob
				g.typ = matchGlob
				return g, not
			}
		case '[', '?', '\\':
			g.typ = matchGlob
			return g, not
		}
	}
	g.search = buff
	if strings.HasPrefix(buff, "*") {
		g.search = buff[1:]
	}
	return g, not
}

// match is ftrace_match.
func (g ftraceGlob) match(str string) bool {
	switch g.typ {
	case matchFull:
		return str == g.search
	case matchFrontOnly:
		return strings.HasPrefix(str, g.search)
	case matchMiddleOnly:
		return strings.Contains(str, g.search)
	case matchEndOnly:
		return strings.HasSuffix(str, g.search)
	case matchGlob:
		return kstr.GlobMatch(g.search, str)
	}
	return false
}

// matchRecords is match_records: every record whose function matches fn
// (and, with mod, whose module matches *mod) enters the hash, or leaves
// it for "!fn". An index ("3") names the record of that 1-based
// position. It returns how many matched, as a boolean count: 0 or 1.
func (t *Tracing) matchRecords(hash *kernel.FtraceHash, fn string, mod *string) int {
	k := t.kp.Kernel()
	funcG, clearFilter := filterParseRegex(fn)
	var modG ftraceGlob
	excludeMod := false
	if mod != nil {
		modG, excludeMod = filterParseRegex(*mod)
	}
	enter := func(ip uint64) {
		if clearFilter {
			hash.Remove(ip)
		} else {
			hash.Add(ip)
		}
	}
	recs := k.FtraceRecords()
	if funcG.typ == matchIndex {
		// add_rec_by_index: simple_strtoul(search, NULL, 0), from 1.
		idx := kstr.SimpleStrtoul(funcG.search)
		if idx == 0 || idx > uint64(len(recs)) {
			return 0
		}
		enter(recs[idx-1].IP)
		return 1
	}
	syms := k.Kallsyms()
	found := 0
	for _, r := range recs {
		s, _, ok := syms.LookupAddr(r.IP)
		if !ok {
			continue
		}
		if mod != nil && !matchModule(s.Module, modG, excludeMod) {
			continue
		}
		if mod != nil && funcG.search == "" || funcG.match(s.Name) {
			enter(r.IP)
			found = 1
		}
	}
	return found
}

// matchModule is ftrace_match_record's module test: a blank module
// matches every module's functions (the core kernel's with "!"); else
// the module must match, or not match with "!".
func matchModule(modname string, modG ftraceGlob, exclude bool) bool {
	if modG.search == "" {
		return exclude != (modname != "")
	}
	matches := modname != "" && modG.match(modname)
	return matches != exclude
}
