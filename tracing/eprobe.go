package tracing

import (
	"bytes"
	"fmt"
	"strings"
	"syscall"

	"github.com/kpemu/kpemu/kprobes"
	"github.com/kpemu/kpemu/tracing/filter"
)

// Event probes, after Linux 6.1's kernel/trace/trace_eprobe.c:
// `e[:[GRP/][ENAME]] SYSTEM.EVENT [FETCHARGS] [if FILTER]` in
// dynamic_events makes an event (group eprobes by default, named as the
// event it attaches to) whose arguments are fetched from the attached
// static event's record: $FIELD is one of its fields, $comm current's
// comm. Enabling it hangs a hidden trigger on the attached event's file
// in the same array (enable_eprobe): the attached event goes into soft
// mode, so its tracepoint fires without recording, and the trigger, with
// the `if FILTER` over the attached event's fields as its filter, writes
// the event probe's record, `NAME: (SYSTEM.EVENT) arg=...`.

const eprobeGroup = "eprobes" // EPROBE_EVENT_SYSTEM

// eprobe is what a trace_eprobe adds to its event.
type eprobe struct {
	// attached is a static or a synthetic event: find_and_get_event
	// skips the kprobe, uprobe and event probe events (and kpemu's j:).
	attached *event
	fields   []epField // the attached event's fields, as $FIELD finds them
	// filterStr is the filter as Linux rebuilds it from the words after
	// "if", one space between them; filter its parse over the attached
	// event's fields. Both empty without one.
	filterStr string
	filter    filter.Node
}

// createEprobe is __trace_eprobe_create; errCanceled when argv is not an
// event probe's definition.
func (t *Tracing) createEprobe(argv []string) error {
	if len(argv) < 2 || argv[0][0] != 'e' {
		return errCanceled
	}
	pl := &probeLog{sys: "event_probe", argv: argv}
	err := t.createEprobeLogged(argv, pl)
	pl.flush(&t.top.errlog, t.now())
	return err
}

func (t *Tracing) createEprobeLogged(argv []string, pl *probeLog) error {
	group, name := eprobeGroup, ""
	head := argv[0]
	hasName := false
	if i := strings.IndexByte(head[1:], ':'); i >= 0 {
		spec := head[1+i+1:]
		g, n, err := parseEventName(spec, len(head)-len(spec), pl)
		if err != nil {
			return err
		}
		if g != "" {
			group = g
		}
		name, hasName = n, n != ""
	}

	pl.index = 1
	sys, sysEvent, err := parseEventName(argv[1], 0, pl)
	if err != nil || sys == "" || sysEvent == "" {
		return parseError(pl, 0, errNoEventInfo)
	}
	if !hasName {
		name = sysEvent
		if len(name) > maxEventNameLen-1 { // strscpy into MAX_EVENT_NAME_LEN
			name = name[:maxEventNameLen-1]
		}
	}

	args := argv[2:]
	var filterWords []string
	hasFilter := false
	for i, a := range args {
		if a == "if" {
			filterWords, args, hasFilter = args[i+1:], args[:i], true
			break
		}
	}

	t.mu.Lock()
	defer t.mu.Unlock()
	attached := t.findEvent(sys, sysEvent)
	if attached == nil || attached.static == nil && attached.synth == nil {
		pl.logErr(0, errBadAttachEvent)
		return fmt.Errorf("%w: no event %s.%s to attach to", syscall.ENODEV, sys, sysEvent)
	}
	ep := &eprobe{attached: attached, fields: attachedFields(attached)}
	if hasFilter {
		pl.index = len(argv) - len(filterWords)
		if err := t.parseEprobeFilter(ep, filterWords, pl); err != nil {
			return err
		}
	}

	ev := &event{group: group, name: name, eprobe: ep}
	ctx := argContext{tpoint: true}
	syms := t.kp.Kernel().Kallsyms()
	for i, a := range args {
		if i >= maxTraceArgs {
			break
		}
		pl.index = i + 2
		pa, err := parseProbeArg(a, i, ev.args, ctx, syms, pl)
		if err != nil {
			return err
		}
		if err := resolveTPArg(pa, ep); err != nil {
			pl.logErr(0, errBadAttachArg)
			return err
		}
		// @SYM: traceprobe_update_arg, whose ENOENT is not logged.
		if err := t.updateArgs([]*probeArg{pa}); err != nil {
			return err
		}
		ev.args = append(ev.args, pa)
	}

	// trace_probe_register_event_call: any event of the name, static,
	// probe or synthetic, is EEXIST.
	if t.events[ev.key()] != nil {
		pl.index = 0
		pl.logErr(0, errEventExist)
		return fmt.Errorf("%w: %s is another event", syscall.EEXIST, ev.key())
	}
	if err := t.createEventFiles(ev); err != nil {
		return err
	}
	ev.id = t.nextID
	t.nextID++
	t.addEvent(ev)
	tp := &traceProbe{ev: ev, args: ev.args}
	ev.probes = append(ev.probes, tp)
	t.probes = append(t.probes, tp)
	return nil
}

// parseEprobeFilter is trace_eprobe_parse_filter: the words after "if"
// joined again, parsed over the attached event's fields as
// create_event_filter does with set_str, so that a bad filter is logged
// as the filter file logs it. t.mu is held.
func (t *Tracing) parseEprobeFilter(ep *eprobe, words []string, pl *probeLog) error {
	if len(words) == 0 {
		return parseError(pl, 0, errNoEPFilter)
	}
	s := strings.Join(words, " ")
	fields := filterFields(ep.attached)
	if pe := filter.Check(s, fields); pe != nil {
		e := errLogEntry{ts: t.now(), loc: "event filter parse error", msg: filter.ErrErrno.String(), cmd: s}
		if pe.Code > filter.ErrNone {
			e.msg, e.pos = pe.Code.String(), pe.Pos
		}
		t.top.errlog.add(e)
		return fmt.Errorf("eprobe filter %q: %w", s, pe.Errno)
	}
	n, err := filter.Parse(s, fields)
	if err != nil {
		return fmt.Errorf("eprobe filter %q: %w", s, err)
	}
	ep.filterStr, ep.filter = s, n
	return nil
}

// epField is a field of an event probe's attached event, as
// get_event_field reads it.
type epField struct {
	tpField
	dyn bool // a __data_loc string (FILTER_DYN_STRING)
}

// attachedFields are ev's fields (trace_get_fields: not the common
// ones): a static event's, or a synthetic event's as
// synth_event_define_fields lays them out, each in a u64 slot but a
// char[N], which has STR_VAR_LEN_MAX bytes.
func attachedFields(ev *event) []epField {
	var out []epField
	if ev.static != nil {
		for _, f := range ev.static.fields {
			f.name, _, _ = strings.Cut(f.name, "[") // args[6] is the field args
			out = append(out, epField{tpField: f})
		}
		return out
	}
	off := traceEntryHeadSize
	for _, f := range ev.synth.fields {
		fd := epField{tpField: tpField{ctype: f.typ, name: f.name, offset: off, size: 8, signed: f.signed}}
		switch {
		case f.str && f.dynamic:
			fd.dyn, fd.size = true, 4
		case f.str:
			fd.str, fd.size = true, strVarLenMax
		case !f.stack:
			fd.size = f.size
		}
		out = append(out, fd)
		if f.str && !f.dynamic {
			off += strVarLenMax
		} else {
			off += 8
		}
	}
	return out
}

// resolveTPArg is trace_eprobe_tp_arg_update for an argument whose
// fetch starts with $NAME: the attached event's field NAME, else, for
// comm and COMM, current's comm; ENOENT for anything else.
func resolveTPArg(pa *probeArg, ep *eprobe) error {
	in := &pa.code[0]
	if in.op != opTPArg {
		return nil
	}
	for i := range ep.fields {
		if ep.fields[i].name == in.data {
			in.field, in.data = &ep.fields[i], ""
			return nil
		}
	}
	if in.data == "comm" || in.data == "COMM" {
		in.op, in.data = opTPComm, ""
		return nil
	}
	return fmt.Errorf("%w: %s has no field %s", syscall.ENOENT, ep.attached.key(), in.data)
}

// eprobeAttached reports whether an event probe is attached to ev, which
// holds a reference on it (trace_event_try_get_ref); t.mu is held.
func (t *Tracing) eprobeAttached(ev *event) bool {
	for _, tp := range t.probes {
		if tp.ev.eprobe != nil && tp.ev.eprobe.attached == ev {
			return true
		}
	}
	return false
}

// showEprobe is eprobe_dyn_event_show.
func showEprobe(w *bytes.Buffer, ev *event) {
	a := ev.eprobe.attached
	fmt.Fprintf(w, "e:%s/%s %s.%s%s\n", ev.group, ev.name, a.group, a.name, argsString(ev.args))
}

// matchEprobe is eprobe_dyn_event_match for the arguments after the
// name: none matches; else the first is the attached SYSTEM/EVENT (or
// SYSTEM.EVENT), and any more must match the arguments.
func matchEprobe(ev *event, argv []string) bool {
	if len(argv) == 0 {
		return true
	}
	slash := strings.IndexByte(argv[0], '/')
	if slash < 0 {
		slash = strings.IndexByte(argv[0], '.')
	}
	if slash < 0 {
		return false
	}
	a := ev.eprobe.attached
	// strncmp over the system's length as written: a prefix of the
	// attached system matches, as in Linux.
	if !strings.HasPrefix(a.group, argv[0][:slash]) || a.name != argv[0][slash+1:] {
		return false
	}
	return len(argv) == 1 || matchArgs(ev.args, argv[1:])
}

// armEprobe is enable_eprobe and disable_eprobe: the hidden trigger on
// the attached event's file in f's array, recording into f. Like
// Linux, the trigger goes on with the event's first enabled file and
// off with its last, looked for in that last file's array, so an event
// probe enabled in two arrays records in the first, and one disabled
// last in another array than its first stays hooked until it goes
// (removeEprobeTriggers). t.mu is held.
func (t *Tracing) armEprobe(f *eventFile, on bool) error {
	ep := f.ev.eprobe
	target := f.ta.file(ep.attached)
	if target == nil {
		return fmt.Errorf("%w: no %s in the array", syscall.ENOENT, ep.attached.key())
	}
	if !on {
		t.dropTrigger(target, func(tr *trigger) bool { return tr.probe != nil && tr.probe.ev == f.ev })
		return nil
	}
	tr := &trigger{cmd: triggerCmd{name: "eprobe", typ: ettEventEprobe}, probe: f, filter: ep.filter, filterText: ep.filterStr}
	tr.count.Store(-1)
	var list []*trigger
	if old := target.triggers.Load(); old != nil {
		list = old.list
	}
	// list_add_tail_rcu: after the user's triggers.
	target.triggers.Store(newTriggerSet(append(append([]*trigger(nil), list...), tr)))
	if err := t.enableDisable(target, true, true); err != nil {
		t.dropTrigger(target, func(o *trigger) bool { return o == tr })
		return err
	}
	return nil
}

// removeEprobeTriggers takes out of every array the triggers of ev, an
// event probe that goes. Linux frees the event and leaves a trigger its
// enable left behind (armEprobe) pointing at it; kpemu drops it.
// t.mu is held.
func (t *Tracing) removeEprobeTriggers(ev *event) {
	for _, ta := range t.arrays() {
		if target := ta.file(ev.eprobe.attached); target != nil {
			for t.dropTrigger(target, func(tr *trigger) bool { return tr.probe != nil && tr.probe.ev == ev }) {
			}
		}
	}
}

// eprobeTraceFunc is eprobe_trigger_func and __eprobe_trace_func: a hit
// of the attached event, whose record is hit's, becomes a hit of the
// event probe's file f: its own triggers, then its record unless it is
// soft-disabled, in the context (flags) of the attached event's hit.
func (t *Tracing) eprobeTraceFunc(f *eventFile, hit *tpHit, regs *kprobes.Regs, flags uint64) {
	h := &tpHit{rec: hit.rec, addr: hit.addr}
	post, rec := t.callTriggersHit(f, regs, flags, h, nil, nil)
	if rec {
		t.recordEprobe(f, h, regs, flags)
	}
	t.postTriggers(f, post, regs, flags)
}

// recordEprobe writes the event probe's record, struct
// eprobe_trace_entry_head (the common fields alone) then the arguments,
// with print_eprobe_event's line.
func (t *Tracing) recordEprobe(ef *eventFile, hit *tpHit, regs *kprobes.Regs, flags uint64) {
	if !ef.ta.on.Load() {
		return
	}
	ev := ef.ev
	comm, pid := t.kp.Kernel().Current(regs.CPU)
	f := fetcher{t: t, regs: regs, hit: hit}
	if !f.passes(ef, comm, pid, regs.CPU, flags) {
		return
	}
	a := ev.eprobe.attached
	raw, text := t.formatHit(&f, ev, ev.args, nil, ev.name, ": (", a.group, ".", a.name, ")")
	e := traceEntry{kind: entryTracepoint, pid: int32(pid), flags: uint8(flags), nlen: uint16(len(ev.name)), typ: uint16(ev.id), text: text, raw: raw}
	ef.ta.commit(regs.CPU, comm, &e, traceEntryHeadSize+len(raw), &stackFrom{regs.PC, regs.X[29]})
}

// showEprobeFormat is an event probe's format file: the common fields,
// the arguments from offset 8, and traceprobe_set_print_fmt's
// PROBE_PRINT_EVENT print fmt, which has no probe address.
func showEprobeFormat(w *bytes.Buffer, ev *event) {
	common, _ := recordFields(ev)
	fmt.Fprintf(w, "name: %s\nID: %d\nformat:\n", ev.name, ev.id)
	for _, f := range common {
		writeProbeFormatField(w, f)
	}
	w.WriteByte('\n')
	off := traceEntryHeadSize
	for _, a := range ev.args {
		n := max(a.count, 1)
		ctype := a.typ.fieldType()
		if a.count > 0 {
			ctype = fmt.Sprintf("%s[%d]", ctype, a.count)
		}
		writeProbeFormatField(w, field{ctype, a.name, off, a.typ.size * n, a.typ.signed})
		off += a.typ.size * n
	}
	w.WriteString("\nprint fmt: \"")
	var args []string
	for _, a := range ev.args {
		fmtArg(w, a, &args)
	}
	w.WriteByte('"')
	for _, a := range args {
		w.WriteString(", " + a)
	}
	w.WriteByte('\n')
}
