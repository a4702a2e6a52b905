package tracing

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/tracing/internal/kstr"
)

// The function commands of set_ftrace_filter ("func:command[:param]"),
// after Linux 6.1's function probes: ftrace.c's
// register_ftrace_function_probe, unregister_ftrace_function_probe_func
// and t_probe_show, trace_functions.c's traceon, traceoff, stacktrace,
// dump and cpudump, trace.c's snapshot and trace_events.c's enable_event
// and disable_event.
//
// Each command has two struct ftrace_probe_ops, one without a count and
// one with (the command written with a ":param"), and each ops that has
// functions is a struct ftrace_func_probe: an ftrace ops of its own,
// whose filter hash is the functions it runs on, registered while it has
// any, whatever the current tracer. A command removed with "!" is looked
// up by its ops too, so "!f:traceoff" removes what "f:traceoff" set and
// "!f:traceoff:0" what "f:traceoff:3" set.

// probeKind is a struct ftrace_probe_ops.
type probeKind uint8

const (
	probeTraceon probeKind = iota
	probeTraceonCount
	probeTraceoff
	probeTraceoffCount
	probeStacktrace
	probeStacktraceCount
	probeSnapshot
	probeSnapshotCount
	probeDump
	probeCpudump
	probeEnableEvent
	probeEnableEventCount
	probeDisableEvent
	probeDisableEventCount
)

// name is what the kind prints as its command.
func (k probeKind) name() string {
	switch k {
	case probeTraceon, probeTraceonCount:
		return "traceon"
	case probeTraceoff, probeTraceoffCount:
		return "traceoff"
	case probeStacktrace, probeStacktraceCount:
		return "stacktrace"
	case probeSnapshot, probeSnapshotCount:
		return "snapshot"
	case probeDump:
		return "dump"
	case probeCpudump:
		return "cpudump"
	case probeEnableEvent, probeEnableEventCount:
		return "enable_event"
	}
	return "disable_event"
}

// mapped reports whether the kind keeps data per function (its ops has
// an init, which fills a struct ftrace_func_mapper); the others print
// "unlimited".
func (k probeKind) mapped() bool {
	switch k {
	case probeTraceon, probeTraceoff, probeStacktrace, probeSnapshot, probeCpudump:
		return false
	}
	return true
}

// isEvent reports whether the kind is enable_event's or disable_event's.
func (k probeKind) isEvent() bool { return k >= probeEnableEvent }

// funcProbe is a struct ftrace_func_probe: one probe ops' functions and
// their data.
type funcProbe struct {
	kind probeKind
	ops  kernel.FtraceOps // its filter hash is the probe's functions
	// data is the ftrace_func_mapper, replaced whole under
	// functionTracer.probeMu and read without a lock by the callback.
	data atomic.Pointer[map[uint64]*probeData]
}

// probeData is a mapper entry: a function's count, or the
// event_probe_data that enable_event and disable_event share between the
// functions of one registration.
type probeData struct {
	count atomic.Int64 // the count kinds' count; -1 when written without a number
	ev    *eventProbeData
}

// eventProbeData is struct event_probe_data.
type eventProbeData struct {
	enable bool
	count  atomic.Int64 // -1: unlimited
	target *eventFile   // in the probe's array
	ref    int          // the functions that use it; guarded by functionTracer.probeMu
}

// lookup finds ip's data, nil when there is none.
func (p *funcProbe) lookup(ip uint64) *probeData {
	m := p.data.Load()
	if m == nil {
		return nil
	}
	return (*m)[ip]
}

// funcCommand is a struct ftrace_func_command's callback: the function
// glob (with its "!"), the command, and what followed the command's
// colon (hasParam false when no colon did).
func (ta *TraceArray) funcCommand(glob, command, param string, hasParam, enable, traceArray bool) error {
	var kind probeKind
	switch command {
	case "traceon":
		kind = pick(hasParam, probeTraceonCount, probeTraceon)
	case "traceoff":
		kind = pick(hasParam, probeTraceoffCount, probeTraceoff)
	case "stacktrace":
		kind = pick(hasParam, probeStacktraceCount, probeStacktrace)
	case "snapshot":
		kind = pick(hasParam, probeSnapshotCount, probeSnapshot)
	case "dump":
		// ftrace_dump_callback: dump only once.
		kind, param, hasParam = probeDump, "1", true
	case "cpudump":
		kind, param, hasParam = probeCpudump, "1", true
	case "enable_event", "disable_event":
		if !traceArray {
			return fmt.Errorf("%w: %s needs a trace array", syscall.ENODEV, command)
		}
		if !enable || !hasParam {
			return fmt.Errorf("%w: %s works in set_ftrace_filter only, with <system>:<event>", syscall.EINVAL, command)
		}
		return ta.eventEnableFunc(glob, command == "enable_event", param)
	default:
		return fmt.Errorf("%w: unknown function command %q", syscall.EINVAL, command)
	}
	if !traceArray {
		return fmt.Errorf("%w: %s needs a trace array", syscall.ENODEV, command)
	}
	// ftrace_trace_probe_callback
	if !enable {
		return fmt.Errorf("%w: function commands work in set_ftrace_filter only", syscall.EINVAL)
	}
	if rest, ok := strings.CutPrefix(glob, "!"); ok {
		return ta.unregisterFuncProbe(rest, kind)
	}
	count := int64(-1)
	if hasParam {
		number, _, _ := strings.Cut(param, ":")
		if number != "" {
			v, err := kstr.Strtoull(number, 0)
			if err != nil {
				return fmt.Errorf("%w: count %q", err, number)
			}
			count = int64(v) // an unsigned long that prints with %ld
		}
	}
	if kind == probeSnapshot || kind == probeSnapshotCount {
		ta.allocSnapshotInstance()
	}
	return ta.registerFuncProbe(glob, kind, func() *probeData {
		d := &probeData{}
		d.count.Store(count)
		return d
	})
}

func pick(cond bool, a, b probeKind) probeKind {
	if cond {
		return a
	}
	return b
}

// eventEnableFunc is event_enable_func: param is
// <system>:<event>[:count]; the event goes into soft mode for as long as
// a function of the registration uses it.
func (ta *TraceArray) eventEnableFunc(glob string, enable bool, param string) error {
	system, rest, found := strsep(param, ":")
	if !found {
		return fmt.Errorf("%w: needs <system>:<event>", syscall.EINVAL)
	}
	name, number, hasCount := strsep(rest, ":")
	ta.t.mu.Lock()
	defer ta.t.mu.Unlock()
	target := ta.file(ta.t.findEvent(system, name))
	if target == nil {
		return fmt.Errorf("%w: no event %s:%s", syscall.EINVAL, system, name)
	}
	kind := probeDisableEvent
	switch {
	case enable && hasCount:
		kind = probeEnableEventCount
	case enable:
		kind = probeEnableEvent
	case hasCount:
		kind = probeDisableEventCount
	}
	if rest, ok := strings.CutPrefix(glob, "!"); ok {
		return ta.unregisterFuncProbe(rest, kind)
	}
	ed := &eventProbeData{enable: enable, target: target}
	ed.count.Store(-1)
	if hasCount {
		v, err := parseCount(number)
		if err != nil {
			return err
		}
		ed.count.Store(v)
	}
	if err := ta.t.enableDisable(target, true, true); err != nil {
		return err
	}
	// register_ftrace_function_probe fails when no function joins, so
	// event_enable_func's ENOENT for none is never returned.
	err := ta.registerFuncProbe(glob, kind, func() *probeData {
		ed.ref++
		return &probeData{ev: ed}
	})
	if err != nil {
		if uerr := ta.t.enableDisable(target, false, true); uerr != nil {
			ta.t.log.Warn("ftrace: leaving soft mode", "event", target.ev.key(), "err", uerr)
		}
		return err
	}
	return nil
}

// registerFuncProbe is register_ftrace_function_probe: the functions
// matching glob join the kind's probe, each with data from newData (for
// the kinds that keep data). EINVAL when none matches or all of them had
// the probe already.
func (ta *TraceArray) registerFuncProbe(glob string, kind probeKind, newData func() *probeData) error {
	ft := &ta.ft
	ft.probeMu.Lock()
	defer ft.probeMu.Unlock()
	var probe *funcProbe
	for _, p := range ft.probes {
		if p.kind == kind {
			probe = p
			break
		}
	}
	isNew := probe == nil
	if isNew {
		probe = &funcProbe{kind: kind}
		probe.ops.Func = func(c kernel.FtraceCall) { ta.funcProbeCall(probe, c) }
	}
	old := probe.ops.Filter()
	hash := old.Clone()
	if ta.t.matchRecords(&hash, glob, nil) == 0 {
		return fmt.Errorf("%w: no function matches %q", syscall.EINVAL, glob)
	}
	data := map[uint64]*probeData{}
	if m := probe.data.Load(); m != nil {
		for ip, d := range *m {
			data[ip] = d
		}
	}
	count := 0
	for _, r := range ta.t.kp.Kernel().FtraceRecords() {
		if !hash.Has(r.IP) || old.Has(r.IP) {
			continue
		}
		if kind.mapped() {
			data[r.IP] = newData()
		}
		count++
	}
	if count == 0 {
		return fmt.Errorf("%w: every function matching %q has the probe", syscall.EINVAL, glob)
	}
	probe.data.Store(&data)
	k := ta.t.kp.Kernel()
	if err := k.FtraceSetHash(&probe.ops, true, hash); err != nil {
		return fmt.Errorf("setting the %s probe's functions: %w", kind.name(), err)
	}
	if isNew {
		if err := k.RegisterFtraceFunction(&probe.ops); err != nil {
			return fmt.Errorf("registering the %s probe: %w", kind.name(), err)
		}
		ft.probes = append([]*funcProbe{probe}, ft.probes...) // list_add: newest first
	}
	return nil
}

// unregisterFuncProbe is unregister_ftrace_function_probe_func: the
// kind's functions that match glob ("" or "*": all of them) leave its
// probe, which goes when it has none left. ENODEV when the kind has no
// probe, EINVAL when no function of it matches.
func (ta *TraceArray) unregisterFuncProbe(glob string, kind probeKind) error {
	var g *ftraceGlob
	if glob != "" && glob != "*" {
		pg, not := filterParseRegex(glob)
		if not {
			return fmt.Errorf("%w: a negated function probe", syscall.EINVAL)
		}
		g = &pg
	}
	ft := &ta.ft
	ft.probeMu.Lock()
	defer ft.probeMu.Unlock()
	idx := slices.IndexFunc(ft.probes, func(p *funcProbe) bool { return p.kind == kind })
	if idx < 0 {
		return fmt.Errorf("%w: no %s probe", syscall.ENODEV, kind.name())
	}
	probe := ft.probes[idx]
	k := ta.t.kp.Kernel()
	syms := k.Kallsyms()
	hash := probe.ops.Filter()
	var removed []uint64
	for _, r := range k.FtraceRecords() {
		if !hash.Has(r.IP) {
			continue
		}
		if g != nil {
			s, _, ok := syms.LookupAddr(r.IP)
			if !ok || !g.match(s.Name) {
				continue
			}
		}
		hash.Remove(r.IP)
		removed = append(removed, r.IP)
	}
	if len(removed) == 0 {
		return fmt.Errorf("%w: no %s probe matches %q", syscall.EINVAL, kind.name(), glob)
	}
	var err error
	if hash.Len() == 0 {
		// ftrace_shutdown, and release_probe frees the probe.
		err = k.UnregisterFtraceFunction(&probe.ops)
		ft.probes = slices.Delete(ft.probes, idx, idx+1)
	} else {
		err = k.FtraceSetHash(&probe.ops, true, hash)
	}
	data := map[uint64]*probeData{}
	if m := probe.data.Load(); m != nil {
		for ip, d := range *m {
			data[ip] = d
		}
	}
	for _, ip := range removed {
		d := data[ip]
		delete(data, ip)
		// event_enable_free: the last function of a registration takes
		// its event out of soft mode.
		if d != nil && d.ev != nil {
			if d.ev.ref--; d.ev.ref == 0 {
				if uerr := ta.t.enableDisable(d.ev.target, false, true); uerr != nil {
					ta.t.log.Warn("ftrace: leaving soft mode", "event", d.ev.target.ev.key(), "err", uerr)
				}
			}
		}
	}
	probe.data.Store(&data)
	if err != nil {
		return fmt.Errorf("removing %s probes: %w", kind.name(), err)
	}
	return nil
}

// showFuncProbes is t_probe_show over the probes, newest first: each
// function as its ops prints it (ftrace_probe_print, event_enable_print,
// ftrace_snapshot_print). Linux walks each probe's hash in bucket order;
// kpemu in record order.
func (ta *TraceArray) showFuncProbes(w *bytes.Buffer) {
	ft := &ta.ft
	ft.probeMu.Lock()
	probes := slices.Clone(ft.probes)
	ft.probeMu.Unlock()
	k := ta.t.kp.Kernel()
	syms := k.Kallsyms()
	recs := k.FtraceRecords()
	for _, p := range probes {
		hash := p.ops.Filter()
		for _, r := range recs {
			if !hash.Has(r.IP) {
				continue
			}
			printRec(w, syms, r.IP)
			w.WriteByte(':')
			d := p.lookup(r.IP)
			if p.kind.isEvent() {
				if d == nil || d.ev == nil {
					w.WriteString("\n")
					continue
				}
				fmt.Fprintf(w, "%s:%s:%s", p.kind.name(), d.ev.target.ev.group, d.ev.target.ev.name)
				if c := d.ev.count.Load(); c == -1 {
					w.WriteString(":unlimited\n")
				} else {
					fmt.Fprintf(w, ":count=%d\n", c)
				}
				continue
			}
			w.WriteString(p.kind.name())
			if d != nil {
				fmt.Fprintf(w, ":count=%d\n", d.count.Load())
			} else {
				w.WriteString(":unlimited\n")
			}
		}
	}
}

// funcProbeCall is function_trace_probe_call: the probe's ops->func for
// one call of one of its functions, on the vCPU, inside the hostcall.
func (ta *TraceArray) funcProbeCall(p *funcProbe, c kernel.FtraceCall) {
	d := p.lookup(c.IP)
	switch p.kind {
	case probeTraceon, probeTraceoff:
		ta.on.Store(p.kind == probeTraceon)
	case probeTraceonCount, probeTraceoffCount:
		// update_traceon_count: a count is spent only by a change.
		on := p.kind == probeTraceonCount
		if d == nil {
			return
		}
		old := d.count.Load()
		if old <= 0 || ta.on.Load() == on {
			return
		}
		ta.on.Store(on)
		d.count.CompareAndSwap(old, old-1)
	case probeStacktrace:
		ta.funcProbeStack(c)
	case probeStacktraceCount:
		// ftrace_stacktrace_count: only while tracing is on; a count
		// of -1 (no number) counts down without end, as on Linux.
		if d == nil || !ta.on.Load() {
			return
		}
		for {
			old := d.count.Load()
			if old == 0 {
				return
			}
			if d.count.CompareAndSwap(old, old-1) {
				ta.funcProbeStack(c)
				return
			}
		}
	case probeSnapshot, probeSnapshotCount:
		if p.kind == probeSnapshotCount && (d == nil || !takeCount(&d.count)) {
			return
		}
		if !ta.takeSnapshot() {
			ta.snapshotNotAllocated(c.CPU.Index(), ta.funcProbeFlags(c))
		}
	case probeDump, probeCpudump:
		if p.kind == probeDump && (d == nil || !takeCount(&d.count)) {
			return
		}
		cpu := -1
		if p.kind == probeCpudump {
			cpu = c.CPU.Index()
		}
		ta.ftraceDump(cpu)
	case probeEnableEvent, probeDisableEvent:
		if d != nil && d.ev != nil {
			d.ev.target.softDisabled.Store(!d.ev.enable) // update_event_probe
		}
	case probeEnableEventCount, probeDisableEventCount:
		// event_enable_count_probe: a count is spent only by a change.
		if d == nil || d.ev == nil {
			return
		}
		ed := d.ev
		for {
			old := ed.count.Load()
			if old == 0 || ed.enable == !ed.target.softDisabled.Load() {
				return
			}
			if old == -1 || ed.count.CompareAndSwap(old, old-1) {
				break
			}
		}
		ed.target.softDisabled.Store(!ed.enable)
	}
}

// takeCount is update_count and ftrace_count_snapshot's test: false when
// the count is spent (or not positive), else it is spent by one.
func takeCount(c *atomic.Int64) bool {
	for {
		old := c.Load()
		if old <= 0 {
			return false
		}
		if c.CompareAndSwap(old, old-1) {
			return true
		}
	}
}

// funcProbeFlags are the irqs-off and need-resched flags of a call, as
// the function tracer's records take them.
func (ta *TraceArray) funcProbeFlags(c kernel.FtraceCall) uint8 {
	const pstateI = 1 << 7 // the I bit of DAIF
	var flags uint8
	if c.CPU.PSTATE()&pstateI != 0 {
		flags |= traceFlagIrqsOff
	}
	k := ta.t.kp.Kernel()
	if k.NeedResched(k.CurrentTask(c.CPU.Index())) {
		flags |= traceFlagNeedResched
	}
	return flags
}

// funcProbeStack is ftrace_stacktrace's trace_stack: the stack at the
// traced function's entry, when tracing is on. Linux unwinds from its own
// frame and skips the tracer's frames (FTRACE_STACK_SKIP) down to the
// traced function; kpemu walks the frame records from the gate's frame
// (which ftrace_caller's frames link to the traced function's and its
// caller's) and skips those before the return address into the traced
// function.
func (ta *TraceArray) funcProbeStack(c kernel.FtraceCall) {
	if !ta.on.Load() {
		return
	}
	k := ta.t.kp.Kernel()
	_, pid := k.Current(c.CPU.Index())
	ta.funcStack(c, int32(pid), ta.funcProbeFlags(c))
}

// funcStack writes a TRACE_STACK entry of the stack at the traced
// function's entry (funcProbeStack's, and func_stack_trace's).
func (ta *TraceArray) funcStack(c kernel.FtraceCall, pid int32, flags uint8) {
	cpu := c.CPU.Index()
	frames := ta.t.unwind(cpu, 0, c.CPU.X(29))[1:]
	ret := c.IP + kernel.MCountInsnSize
	if i := slices.Index(frames, ret); i >= 0 {
		frames = frames[i:]
	}
	s := traceEntry{kind: entryStack, pid: pid, flags: flags, stack: frames}
	s.ts = ta.clock()
	ta.buf.Write(cpu, &s, s.ts, stackEntryHeadSize+8*len(s.stack))
}

// ftraceDump is ftrace_dump (DUMP_ALL for cpu < 0, else DUMP_ORIG of
// that CPU): tracing goes off, and the buffer's entries are printed and
// consumed. Linux prints them on the console; kpemu logs them on its own
// (the host's) log, as its guest console is.
func (ta *TraceArray) ftraceDump(cpu int) {
	ta.on.Store(false)
	lf := ta.lineFormat()
	lf.lat = true // ftrace_dump prints in the latency format, always
	entries, cpus := ta.buf.Snapshot(cpu)
	ta.t.log.Info("Dumping ftrace buffer:")
	if len(entries) == 0 {
		ta.t.log.Info("   (ftrace buffer empty)")
	} else {
		ta.t.log.Info("---------------------------------")
		var w bytes.Buffer
		for i := range entries {
			w.Reset()
			// Each line's iterator is reset (trace_iterator_reset)
			// before its entry is taken (index 1), and consumes it
			// after printing it (the next it peeks is itself).
			pos := latPos{idx: 1, nextTS: entries[i].ts, timeStart: ta.timeStart.Load()}
			ta.printLineAt(&w, cpus[i], &entries[i], lf, pos)
			ta.t.log.Info(strings.TrimSuffix(w.String(), "\n"))
		}
		ta.t.log.Info("---------------------------------")
	}
	if cpu < 0 {
		ta.buf.Reset()
	} else {
		ta.buf.CPU(cpu).Reset()
	}
}

// releaseFunctionProbes is clear_ftrace_function_probes: every function
// command of the array goes, the event ones taking their targets out of
// soft mode (under Tracing.mu, as eventEnableFunc holds it).
func (ta *TraceArray) releaseFunctionProbes() {
	ta.ft.probeMu.Lock()
	var kinds []probeKind
	for _, p := range ta.ft.probes {
		kinds = append(kinds, p.kind)
	}
	ta.ft.probeMu.Unlock()
	for _, kind := range kinds {
		var err error
		if kind.isEvent() {
			ta.t.mu.Lock()
			err = ta.unregisterFuncProbe("", kind)
			ta.t.mu.Unlock()
		} else {
			err = ta.unregisterFuncProbe("", kind)
		}
		if err != nil {
			ta.t.log.Warn("ftrace: removing the function commands", "kind", kind.name(), "err", err)
		}
	}
}
