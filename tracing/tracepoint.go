package tracing

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sort"
	"strconv"

	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/kprobes"
	"github.com/kpemu/kpemu/tracing/filter"
)

// Static trace events: Linux's TRACE_EVENT()s on the guest's tracepoints
// (kernel.Tracepoint), after include/trace/events/sched.h and signal.h
// and kernel/trace/trace_events.c. Each has its events/GROUP/EVENT/
// directory from boot, with Linux 6.1's format (the same fields,
// offsets, sizes and print fmt, as the reference kernel prints them),
// its id (the reference kernel's), enable, filter and trigger.
//
// Enabling one (or arming it for a trigger) turns its tracepoint's
// static key on; the guest's iterator then fills the record as the
// event's TP_fast_assign does and hands it over (HC_TRACEPOINT). The
// host runs the triggers, the pid filters, the event's filter over the
// record's fields, and writes the record to the ring buffer, its size
// the record's, with the line TP_printk makes.

// tpField is one field of a static event's record after the common ones.
type tpField struct {
	ctype        string
	name         string
	offset, size int
	signed       bool
	str          bool // a char array: filters compare it as a string
	ptrStr       bool // a char *: filters compare the string it points to
}

// staticEvent is one TRACE_EVENT: its record and how it prints.
type staticEvent struct {
	group, name string
	id          int // the reference kernel's (Debian's 6.1 arm64)
	size        int // sizeof(struct trace_event_raw_<class>)
	fields      []tpField
	printFmt    string                          // the format file's print fmt
	print       func(w *bytes.Buffer, r record) // TP_printk
	// printFlags, for an event whose output depends on the trace
	// flags of the array read (hash-ptr for a %p, verbose for a
	// system call's argument types), is its output in print's stead.
	printFlags func(w *bytes.Buffer, r record, flags uint32)
	// other is the pid of the task the event is about besides
	// current, whom the pid filters' sched probes also look at
	// (sched_switch's next, the woken task); -1 for none.
	other func(r record) int
	tp    *kernel.Tracepoint
	// from, if not nil, makes the event's record from its tracepoint's
	// (the syscalls events from raw_syscalls'), which is then at least
	// the tracepoint's event's size.
	from func(raw record) record
	// bare: the line is print's alone, without "name: " (the syscalls
	// events' own output functions).
	bare bool
}

// record is a static event's record, struct trace_entry first.
type record []byte

func (r record) i32(off int) int32  { return int32(binary.LittleEndian.Uint32(r[off:])) }
func (r record) i64(off int) int64  { return int64(binary.LittleEndian.Uint64(r[off:])) }
func (r record) u64(off int) uint64 { return binary.LittleEndian.Uint64(r[off:]) }

// str is a char[n] field as %s prints it: up to its NUL.
func (r record) str(off, n int) string {
	b := r[off : off+n]
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// value is the field as a filter sees it.
func (r record) value(f tpField) filter.Value {
	if f.str {
		return filter.Value{Str: r.str(f.offset, f.size), IsStr: true}
	}
	var v uint64
	switch f.size {
	case 4:
		v = uint64(binary.LittleEndian.Uint32(r[f.offset:]))
		if f.signed {
			v = uint64(int64(int32(v)))
		}
	case 8:
		v = r.u64(f.offset)
	}
	return filter.Value{Num: v}
}

func commField(name string, off int) tpField {
	return tpField{ctype: "char", name: name, offset: off, size: 16, str: true}
}
func pidField(name string, off int) tpField {
	return tpField{"pid_t", name, off, 4, true, false, false}
}
func intField(name string, off int) tpField { return tpField{"int", name, off, 4, true, false, false} }
func ulongField(name string, off int) tpField {
	return tpField{"unsigned long", name, off, 8, false, false, false}
}

// The sched_switch prev_state's TASK_REPORT_MAX and its flag names,
// as __print_flags lists them.
const taskReportMax = 0x100

func noOther(record) int { return -1 }

// staticEventDefs are the static events kpemu has, in the reference
// kernel's id order.
func staticEventDefs() []*staticEvent {
	processFields := []tpField{commField("comm", 8), pidField("pid", 24), intField("prio", 28)}
	printProcess := func(w *bytes.Buffer, r record) {
		fmt.Fprintf(w, "comm=%s pid=%d prio=%d", r.str(8, 16), r.i32(24), r.i32(28))
	}
	const processFmt = `"comm=%s pid=%d prio=%d", REC->comm, REC->pid, REC->prio`
	wakeupFields := []tpField{commField("comm", 8), pidField("pid", 24), intField("prio", 28), intField("target_cpu", 32)}
	printWakeup := func(w *bytes.Buffer, r record) {
		fmt.Fprintf(w, "comm=%s pid=%d prio=%d target_cpu=%03d", r.str(8, 16), r.i32(24), r.i32(28), r.i32(32))
	}
	const wakeupFmt = `"comm=%s pid=%d prio=%d target_cpu=%03d", REC->comm, REC->pid, REC->prio, REC->target_cpu`
	wakee := func(r record) int { return int(r.i32(24)) }
	return []*staticEvent{
		{group: "signal", name: "signal_deliver", id: 134, size: 40,
			fields:   []tpField{intField("sig", 8), intField("errno", 12), intField("code", 16), ulongField("sa_handler", 24), ulongField("sa_flags", 32)},
			printFmt: `"sig=%d errno=%d code=%d sa_handler=%lx sa_flags=%lx", REC->sig, REC->errno, REC->code, REC->sa_handler, REC->sa_flags`,
			print: func(w *bytes.Buffer, r record) {
				fmt.Fprintf(w, "sig=%d errno=%d code=%d sa_handler=%x sa_flags=%x", r.i32(8), r.i32(12), r.i32(16), r.u64(24), r.u64(32))
			}, other: noOther},
		{group: "signal", name: "signal_generate", id: 135, size: 48,
			fields:   []tpField{intField("sig", 8), intField("errno", 12), intField("code", 16), commField("comm", 20), pidField("pid", 36), intField("group", 40), intField("result", 44)},
			printFmt: `"sig=%d errno=%d code=%d comm=%s pid=%d grp=%d res=%d", REC->sig, REC->errno, REC->code, REC->comm, REC->pid, REC->group, REC->result`,
			print: func(w *bytes.Buffer, r record) {
				fmt.Fprintf(w, "sig=%d errno=%d code=%d comm=%s pid=%d grp=%d res=%d", r.i32(8), r.i32(12), r.i32(16), r.str(20, 16), r.i32(36), r.i32(40), r.i32(44))
			}, other: noOther},
		{group: "sched", name: "sched_process_fork", id: 258, size: 48,
			fields:   []tpField{commField("parent_comm", 8), pidField("parent_pid", 24), commField("child_comm", 28), pidField("child_pid", 44)},
			printFmt: `"comm=%s pid=%d child_comm=%s child_pid=%d", REC->parent_comm, REC->parent_pid, REC->child_comm, REC->child_pid`,
			print: func(w *bytes.Buffer, r record) {
				fmt.Fprintf(w, "comm=%s pid=%d child_comm=%s child_pid=%d", r.str(8, 16), r.i32(24), r.str(28, 16), r.i32(44))
			}, other: noOther},
		{group: "sched", name: "sched_process_exit", id: 261, size: 32, fields: processFields, printFmt: processFmt, print: printProcess, other: noOther},
		{group: "sched", name: "sched_process_free", id: 262, size: 32, fields: processFields, printFmt: processFmt, print: printProcess, other: noOther},
		{group: "sched", name: "sched_switch", id: 264, size: 64,
			fields: []tpField{commField("prev_comm", 8), pidField("prev_pid", 24), intField("prev_prio", 28), {"long", "prev_state", 32, 8, true, false, false},
				commField("next_comm", 40), pidField("next_pid", 56), intField("next_prio", 60)},
			printFmt: schedSwitchFmt, print: printSchedSwitch,
			other: func(r record) int { return int(r.i32(56)) }},
		{group: "sched", name: "sched_wakeup_new", id: 265, size: 36, fields: wakeupFields, printFmt: wakeupFmt, print: printWakeup, other: wakee},
		{group: "sched", name: "sched_wakeup", id: 266, size: 36, fields: wakeupFields, printFmt: wakeupFmt, print: printWakeup, other: wakee},
		{group: "sched", name: "sched_waking", id: 267, size: 36, fields: wakeupFields, printFmt: wakeupFmt, print: printWakeup, other: wakee},
	}
}

// schedSwitchFmt is sched_switch's print fmt, TASK_REPORT_MAX and the
// state bits expanded as the reference kernel's format file shows them.
const schedSwitchFmt = `"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s next_pid=%d next_prio=%d", REC->prev_comm, REC->prev_pid, REC->prev_prio, (REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1)) ? __print_flags(REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1), "|", { 0x00000001, "S" }, { 0x00000002, "D" }, { 0x00000004, "T" }, { 0x00000008, "t" }, { 0x00000010, "X" }, { 0x00000020, "Z" }, { 0x00000040, "P" }, { 0x00000080, "I" }) : "R", REC->prev_state & (((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) ? "+" : "", REC->next_comm, REC->next_pid, REC->next_prio`

// printSchedSwitch is sched_switch's TP_printk.
func printSchedSwitch(w *bytes.Buffer, r record) {
	fmt.Fprintf(w, "prev_comm=%s prev_pid=%d prev_prio=%d prev_state=", r.str(8, 16), r.i32(24), r.i32(28))
	st := uint64(r.i64(32))
	if s := st & (taskReportMax - 1); s != 0 {
		printFlags(w, s, "|", []flagName{{0x01, "S"}, {0x02, "D"}, {0x04, "T"}, {0x08, "t"}, {0x10, "X"}, {0x20, "Z"}, {0x40, "P"}, {0x80, "I"}})
	} else {
		w.WriteByte('R')
	}
	if st&taskReportMax != 0 {
		w.WriteByte('+')
	}
	fmt.Fprintf(w, " ==> next_comm=%s next_pid=%d next_prio=%d", r.str(40, 16), r.i32(56), r.i32(60))
}

// flagName is one of __print_flags' {mask, name} pairs.
type flagName struct {
	mask uint64
	name string
}

// printFlags is trace_print_flags_seq: each name whose mask is all set,
// delim between, and what no name took as 0x%lx.
func printFlags(w *bytes.Buffer, flags uint64, delim string, names []flagName) {
	first := true
	for _, n := range names {
		if flags&n.mask != n.mask || n.mask == 0 {
			continue
		}
		if !first {
			w.WriteString(delim)
		}
		first = false
		w.WriteString(n.name)
		flags &^= n.mask
	}
	if flags != 0 {
		if !first {
			w.WriteString(delim)
		}
		w.WriteString("0x" + strconv.FormatUint(flags, 16))
	}
}

// tpHit is a static event's hit as the triggers and filters see it.
type tpHit struct {
	rec     record
	addr    uint64 // where rec is in the guest (kernel.TracepointHit.RecordAddr)
	ignored bool   // the pid filters drop it
}

// initStaticEvents makes the directories of the static events whose
// tracepoints the guest has, and routes their hits. Called by New.
func (t *Tracing) initStaticEvents() error {
	k := t.kp.Kernel()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.static = make(map[*kernel.Tracepoint]*event)
	t.flagEvents = make(map[uint16]*staticEvent)
	t.tpUsers = make(map[*kernel.Tracepoint]int)
	add := func(def *staticEvent, tp *kernel.Tracepoint) (*event, error) {
		def.tp = tp
		ev := &event{group: def.group, name: def.name, static: def, id: def.id}
		if err := t.createEventFiles(ev); err != nil {
			return nil, err
		}
		t.addEvent(ev)
		return ev, nil
	}
	sym := func(a uint64) string { return k.Kallsyms().Format(a) }
	for _, def := range append(append(staticEventDefs(), rawSyscallDefs()...), kmemEventDefs(sym)...) {
		tp, ok := k.Tracepoint(def.name)
		if !ok {
			continue
		}
		ev, err := add(def, tp)
		if err != nil {
			return err
		}
		t.static[tp] = ev
		if def.printFlags != nil {
			t.flagEvents[uint16(def.id)] = def
		}
	}
	// The syscalls events hang off the raw tracepoints.
	enter, exit := syscallEventDefs(k)
	t.syscalls = make(map[*kernel.Tracepoint]map[int64]*event)
	for _, side := range []struct {
		tp   string
		defs map[int64]*staticEvent
	}{{"sys_enter", enter}, {"sys_exit", exit}} {
		tp, ok := k.Tracepoint(side.tp)
		if !ok {
			continue
		}
		byNR := make(map[int64]*event, len(side.defs))
		for nr, def := range side.defs {
			ev, err := add(def, tp)
			if err != nil {
				return err
			}
			if def.printFlags != nil {
				t.flagEvents[uint16(def.id)] = def
			}
			byNR[nr] = ev
		}
		t.syscalls[tp] = byNR
	}
	k.SetTracepointHandler(t.tracepointHit)
	return nil
}

// setTracepoint turns tp's static key on with the first armed event on
// it and off with the last (the raw_syscalls and syscalls events share
// theirs, as Linux's sys_refcount_enter and the tracepoint's probes
// count). t.mu is held.
func (t *Tracing) setTracepoint(tp *kernel.Tracepoint, on bool) error {
	n := t.tpUsers[tp]
	next := n + 1
	if !on {
		if n <= 0 {
			return nil
		}
		next = n - 1
	}
	if (n > 0) != (next > 0) {
		// the key flips only with the first and the last user; a
		// failed flip leaves the count as it was
		if err := t.kp.Kernel().SetTracepointEnabled(tp, on); err != nil {
			return err
		}
	}
	t.tpUsers[tp] = next
	return nil
}

// tracepointHit is the probe Linux's trace_event_raw_event_<call>
// is: on the vCPU, inside HC_TRACEPOINT.
func (t *Tracing) tracepointHit(h kernel.TracepointHit) {
	ev := t.static[h.TP]
	if ev == nil || len(h.Record) < ev.static.size {
		return
	}
	if ev.armed.Load() {
		t.staticHit(ev, h)
	}
	// ftrace_syscall_enter/exit: the event of the call's number.
	if byNR := t.syscalls[h.TP]; byNR != nil {
		if sev := byNR[record(h.Record).i64(8)]; sev != nil && sev.armed.Load() {
			h.Record = sev.static.from(record(h.Record))
			t.staticHit(sev, h)
		}
	}
}

// staticHit is one static event's hit.
func (t *Tracing) staticHit(ev *event, h kernel.TracepointHit) {
	k := t.kp.Kernel()
	cpu := h.CPU.Index()
	regs := &kprobes.Regs{PC: h.PC, CPU: cpu}
	regs.X[29] = h.FP
	const pstateI = 1 << 7 // the I bit of DAIF
	var flags uint64
	if h.CPU.PSTATE()&pstateI != 0 {
		flags |= traceFlagIrqsOff
	}
	if k.NeedResched(k.CurrentTask(cpu)) {
		flags |= traceFlagNeedResched
	}
	if ev.perf.Load() != nil {
		rec := record(h.Record)
		t.perfHit(ev, &fetcher{t: t, regs: regs, hit: &tpHit{rec: rec, addr: h.RecordAddr}}, flags, func() []byte {
			return append([]byte(nil), rec[traceEntryHeadSize:ev.static.size]...)
		})
	}
	if f := &ev.top; f.enabled.Load() {
		t.traceEventRawEvent(f, h, regs, flags)
	}
	if inst := ev.inst.Load(); inst != nil {
		for _, f := range *inst {
			if f.enabled.Load() {
				t.traceEventRawEvent(f, h, regs, flags)
			}
		}
	}
}

// traceEventRawEvent is trace_event_raw_event_<call> for one array's
// file of the event.
func (t *Tracing) traceEventRawEvent(f *eventFile, h kernel.TracepointHit, regs *kprobes.Regs, flags uint64) {
	hit := &tpHit{rec: record(h.Record), addr: h.RecordAddr, ignored: t.staticPidIgnored(f, regs.CPU, record(h.Record))}
	post, rec := t.callTriggersHit(f, regs, flags, hit, nil, nil)
	if rec {
		t.recordStatic(f, regs, flags, hit)
	}
	t.postTriggers(f, post, regs, flags)
}

// staticPidIgnored is trace_event_ignore_this_pid as the pid filters'
// sched probes leave it: sched_switch is kept when prev or next is
// traced (event_filter_pid_sched_switch_probe_pre), a wake-up when
// the waker or the woken is (event_filter_pid_sched_wakeup_probe_pre).
func (t *Tracing) staticPidIgnored(f *eventFile, cpu int, r record) bool {
	if !f.ta.eventPidIgnored(cpu) {
		return false
	}
	other := f.ev.static.other(r)
	if other < 0 {
		return true
	}
	l := f.ta.pids.event.lists.Load()
	return l == nil || l.ignores(other)
}

// recordStatic writes the event's record, as trace_event_buffer_commit,
// with the line TP_printk makes.
func (t *Tracing) recordStatic(ef *eventFile, regs *kprobes.Regs, flags uint64, hit *tpHit) {
	if !ef.ta.on.Load() {
		return
	}
	ev := ef.ev
	comm, pid := t.kp.Kernel().Current(regs.CPU)
	f := fetcher{t: t, regs: regs, hit: hit}
	if !f.passes(ef, comm, pid, regs.CPU, flags) {
		return
	}
	var w bytes.Buffer
	if !ev.static.bare {
		w.WriteString(ev.name)
		w.WriteString(": ")
	}
	ev.static.printText(&w, hit.rec)
	raw := append([]byte(nil), hit.rec[traceEntryHeadSize:ev.static.size]...)
	e := traceEntry{kind: entryTracepoint, pid: int32(pid), flags: uint8(flags), nlen: uint16(len(ev.name)), typ: uint16(ev.id), text: w.String(), raw: raw}
	ef.ta.commit(regs.CPU, comm, &e, ev.static.size, &stackFrom{regs.PC, regs.X[29]})
}

// printText is the event's output as the commit records it, with the
// default flags (hash-ptr on, verbose off).
func (s *staticEvent) printText(w *bytes.Buffer, r record) {
	if s.printFlags != nil {
		s.printFlags(w, r, optDefault)
		return
	}
	s.print(w, r)
}

// printTracepoint prints a static event's entry after its context: the
// text made at the commit, or, for an event whose output depends on
// flags the reader has away from their defaults, the record printed
// again with them (Linux formats every entry when it is read).
func (ta *TraceArray) printTracepoint(w *bytes.Buffer, e *traceEntry, lf lineFormat) {
	if ev := lf.synth[e.typ]; ev != nil && printSynthVerbose(w, ev.name, ev.synth, e.raw) {
		return
	}
	if lf.flags&(optHashPtr|optVerbose) != optHashPtr {
		if s := ta.t.flagEvents[e.typ]; s != nil && int(e.nlen) <= len(e.text) {
			rec := make(record, traceEntryHeadSize, traceEntryHeadSize+len(e.raw))
			rec = append(rec, e.raw...)
			if len(rec) >= s.size {
				if !s.bare {
					w.WriteString(e.text[:e.nlen])
					w.WriteString(": ")
				}
				s.printFlags(w, rec, lf.flags)
				return
			}
		}
	}
	w.WriteString(e.text)
}

// showStaticFormat is the format file of a static event.
func showStaticFormat(w *bytes.Buffer, ev *event) {
	common, _ := recordFields(ev)
	fmt.Fprintf(w, "name: %s\nID: %d\nformat:\n", ev.name, ev.id)
	for _, f := range common {
		writeFormatField(w, f)
	}
	w.WriteByte('\n')
	for _, f := range ev.static.fields {
		name := f.name
		if f.str {
			name += "[" + strconv.Itoa(f.size) + "]" // __array(char, name, len)
		}
		writeFormatField(w, field{f.ctype, name, f.offset, f.size, f.signed})
	}
	fmt.Fprintf(w, "\nprint fmt: %s\n", ev.static.printFmt)
}

// writeFormatField is one "field:" line of a format file.
func writeFormatField(w *bytes.Buffer, f field) {
	s := 0
	if f.signed {
		s = 1
	}
	fmt.Fprintf(w, "\tfield:%s %s;\toffset:%d;\tsize:%d;\tsigned:%d;\n", f.ctype, f.name, f.offset, f.size, s)
}

// sortEvents orders evs as Linux's tr->events list: the dynamic events
// newest first (each list_add'ed when made), then the static ones in
// the order of their ids, as event_trace_enable adds them at boot.
func sortEvents(evs []*event) {
	sort.Slice(evs, func(i, j int) bool {
		a, b := evs[i], evs[j]
		if (a.static == nil) != (b.static == nil) {
			return a.static == nil
		}
		if a.static != nil {
			return a.id < b.id
		}
		return a.id > b.id
	})
}
