package tracing

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"syscall"

	"github.com/kpemu/kpemu/kprobes"
	"github.com/kpemu/kpemu/tracing/filter"
)

// Inter-event hist triggers (trace_events_hist.c): references to other
// histograms' variables ($x, or sys.event.$x), resolved at each hit by
// looking the hit's key up in the variable's histogram (an expression's
// operand consuming the value, read_once), and the handlers:
// onmatch(sys.event), and onmax($var) and onchange($var) over a
// variable of the hist, which keep each entry's max or last value. Their
// trace(synth,params) or synth(params) action fires a synthetic event
// with the params' values: a param is a variable, a field of the event,
// or a field of another event (sys.event.field, or a field of the
// onmatch event), for which a hist with a synthetic_<field> variable is
// added to that event (field variables). save(fields) keeps the event's
// fields in the entry, printed under it; snapshot() takes the array's
// snapshot when the tracked value changes the way the handler tracks it
// (a conditional snapshot, trace.c's tracing_snapshot_cond). The
// synthetic event runs the triggers of its files (hist triggers and event
// probes on synthetic events) and is recorded where it is enabled.

const (
	histErrInvalidSubsysEvent histErr = "Invalid subsystem or event name"
	histErrSynthEventNotFound histErr = "Couldn't find synthetic event"
	histErrSynthCountMismatch histErr = "Param count doesn't match synthetic event field count"
	histErrParamNotFound      histErr = "Couldn't find param"
	histErrVarNotUnique       histErr = "Variable name not unique, need to use fully qualified name (subsys.event.var) for variable"
	histErrNoClosingParen     histErr = "No closing paren found"
	histErrOnxNotVar          histErr = "For onmax(x) or onchange(x), x must be a variable"
	histErrOnxVarNotFound     histErr = "Couldn't find onmax or onchange variable"
	histErrFieldVarCreateFail histErr = "Couldn't create field variable"
	histErrFieldVarParseFail  histErr = "Couldn't parse field variable"
	histErrActionMismatch     histErr = "Handler doesn't support action"
	histErrSubsysNotFound     histErr = "Missing subsystem"
	histErrSynthTypeMismatch  histErr = "Param type doesn't match synthetic event field type"
	histErrActionNotFound     histErr = "No action found"
	histErrEventFileNotFound  histErr = "Event file not found"
	histErrHistNotFound       histErr = "Matching event histogram not found"
	histErrHistCreateFail     histErr = "Couldn't create histogram for field"
	histErrSynthVarNotFound   histErr = "Couldn't find synthetic variable"
	histErrTooManyFieldVars   histErr = "Too many field variables defined"
	histActionsMax                    = 8 // HIST_ACTIONS_MAX
)

// histAction is an action_data: a handler (onmatch, or onmax and
// onchange over a variable of the hist) and its action (trace a
// synthetic event, or save() fields of the event).
type histAction struct {
	handler              string // "onmatch", "onmax", "onchange"
	trackVar             string // onmax/onchange: "$var" as written
	track                *histField
	save                 bool // the action is save(); params are fields
	saves                []*histField
	snapshot             bool // the action is snapshot()
	matchSys, matchEvent string
	name                 string // the action as written: "trace" or the synthetic event's name
	useTrace             bool
	synth                *event
	params               []string
	args                 []*histField // each param: a variable reference or a field of the event
}

// spec is print_onmatch_spec and print_track_data_spec.
func (a *histAction) spec(w *bytes.Buffer) {
	if a.handler != "onmatch" {
		fmt.Fprintf(w, ":%s(%s).%s(", a.handler, a.trackVar, a.name)
	} else {
		fmt.Fprintf(w, ":onmatch(%s.%s).%s(", a.matchSys, a.matchEvent, a.name)
	}
	if a.save {
		w.WriteString(strings.Join(a.params, ",") + ")")
		return
	}
	if a.useTrace {
		w.WriteString(a.synth.name)
	}
	for i, p := range a.params {
		if i > 0 || a.useTrace {
			w.WriteByte(',')
		}
		w.WriteString(p)
	}
	w.WriteByte(')')
}

// histFiles are the array's event files that may hold hist triggers;
// t.mu is held.
func (t *Tracing) histFiles(ta *TraceArray) []*eventFile {
	out := []*eventFile{ta.marker}
	for _, ev := range t.events {
		if f := ta.file(ev); f != nil {
			out = append(out, f)
		}
	}
	return out
}

// fileOf is find_event_file, ftrace/print included; t.mu is held.
func (t *Tracing) fileOf(ta *TraceArray, system, name string) *eventFile {
	if system == "ftrace" && name == markerEventName {
		return ta.marker
	}
	return ta.file(t.findEvent(system, name))
}

// varIn is find_file_var: the variable name of a hist trigger of f.
func varIn(f *eventFile, name string) (*histField, *histData) {
	set := f.triggers.Load()
	if set == nil {
		return nil, nil
	}
	for _, tr := range set.list {
		if tr.hist == nil {
			continue
		}
		for _, v := range tr.hist.hd.vars {
			if v.varName == name {
				return v, tr.hist.hd
			}
		}
	}
	return nil, nil
}

// findVar is find_event_var: in the named event's hists, else in the
// onmatch events', else in the one event of the array that has it.
func (p *histParser) findVar(system, event, name string) (*histField, *histData, error) {
	t, ta := p.t, p.ta
	if system == "" {
		for _, a := range p.hd.actions {
			if f := t.fileOf(ta, a.matchSys, a.matchEvent); f != nil {
				if v, hd := varIn(f, name); v != nil {
					return v, hd, nil
				}
			}
		}
		var found *eventFile
		for _, f := range t.histFiles(ta) {
			if v, _ := varIn(f, name); v != nil && f != found {
				if found != nil {
					return nil, nil, p.err(histErrVarNotUnique, name, syscall.EINVAL)
				}
				found = f
			}
		}
		if found == nil {
			return nil, nil, nil
		}
		v, hd := varIn(found, name)
		return v, hd, nil
	}
	f := t.fileOf(ta, system, event)
	if f == nil {
		return nil, nil, nil
	}
	v, hd := varIn(f, name)
	return v, hd, nil
}

// varRef is create_var_ref: a reference to var of hd, read at each hit.
func (p *histParser) varRef(v *histField, hd *histData, written, varName string) *histField {
	r := &histField{flags: hfVarRef, ref: v, refHD: hd, exprName: written, varName: varName, fsize: v.fsize, signed: v.signed,
		refIdx: len(p.hd.varRefs)}
	r.flags |= v.flags & (hfTimestamp | hfTimestampUsecs | hfString)
	if varName != "" {
		r.flags |= hfVar | hfAlias
	}
	p.hd.varRefs = append(p.hd.varRefs, r)
	return r
}

// parseVarRef is parse_atom's variable reference: "$x" or
// "sys.event.$x"; nil when s is none.
func (p *histParser) parseVarRef(s, varName string) (*histField, bool, error) {
	system, event, ref := "", "", s
	if i := strings.IndexByte(s, '.'); i >= 0 {
		if j := strings.IndexByte(s[i+1:], '.'); j >= 0 {
			system, event, ref = s[:i], s[i+1:i+1+j], s[i+2+j:]
		}
	}
	if !strings.HasPrefix(ref, "$") {
		return nil, false, nil
	}
	v, hd, err := p.findVar(system, event, ref[1:])
	if err != nil {
		return nil, true, err
	}
	if v == nil {
		_ = p.err(histErrVarNotFound, ref[1:], syscall.EINVAL)
		return nil, false, nil
	}
	written := ref[1:]
	if system != "" {
		written = system + "." + event + "." + ref[1:]
	}
	return p.varRef(v, hd, written, varName), true, nil
}

// parseActions is parse_actions: onmatch_parse, track_data_parse and
// action_parse.
func (p *histParser) parseActions(strs []string) error {
	for _, s := range strs {
		a := &histAction{}
		var rest string
		switch {
		case strings.HasPrefix(s, "onmatch("):
			a.handler = "onmatch"
			match, r, ok := strsep(strings.TrimPrefix(s, "onmatch("), ")")
			if !ok {
				return p.err(histErrNoClosingParen, s, syscall.EINVAL)
			}
			system, event, ok := strsep(match, ".")
			if !ok || system == "" || event == "" {
				return p.err(histErrSubsysNotFound, match, syscall.EINVAL)
			}
			if p.t.fileOf(p.ta, system, event) == nil {
				return p.err(histErrInvalidSubsysEvent, event, syscall.EINVAL)
			}
			a.matchSys, a.matchEvent, rest = system, event, r
		case strings.HasPrefix(s, "onmax("), strings.HasPrefix(s, "onchange("):
			h, r, _ := strsep(s, "(")
			v, r, ok := strsep(r, ")")
			if !ok {
				return p.err(histErrNoClosingParen, s, syscall.EINVAL)
			}
			a.handler, a.trackVar, rest = h, v, r
		}
		if !strings.HasPrefix(rest, ".") {
			return p.err(histErrActionNotFound, "", syscall.EINVAL)
		}
		name, params, ok := strsep(rest[1:], "(")
		if !ok || name == "" {
			return p.err(histErrActionNotFound, "", syscall.EINVAL)
		}
		i := strings.LastIndexByte(params, ')')
		if i < 0 {
			return p.err(histErrNoClosingParen, params, syscall.EINVAL)
		}
		params = params[:i]
		a.name = name
		var ps []string
		if params != "" {
			ps = strings.Split(params, ",")
			for i := range ps {
				ps[i] = strings.TrimFunc(ps[i], isSpaceRune)
			}
		}
		switch name {
		case "snapshot":
			if a.handler == "onmatch" {
				return p.err(histErrActionMismatch, name, syscall.EINVAL)
			}
			// snapshot() has no params; Linux drops what is written.
			a.snapshot = true
			p.hd.actions = append(p.hd.actions, a)
			continue
		case "save":
			if a.handler == "onmatch" {
				return p.err(histErrActionMismatch, name, syscall.EINVAL)
			}
			a.save, a.params = true, ps
			p.hd.actions = append(p.hd.actions, a)
			continue
		case "trace":
			if len(ps) == 0 {
				return p.err(histErrSynthEventNotFound, "", syscall.EINVAL)
			}
			a.useTrace, name, ps = true, ps[0], ps[1:]
		}
		a.params = ps
		a.synth = p.t.findSynth(name)
		if a.synth == nil {
			return p.err(histErrSynthEventNotFound, name, syscall.EINVAL)
		}
		p.hd.actions = append(p.hd.actions, a)
	}
	return nil
}

// createTrack is track_data_create's variable: $var, a variable of the
// hist itself.
func (p *histParser) createTrack(a *histAction) error {
	if !strings.HasPrefix(a.trackVar, "$") {
		return p.err(histErrOnxNotVar, a.trackVar, syscall.EINVAL)
	}
	name := a.trackVar[1:]
	for _, v := range p.hd.vars {
		if v.varName == name {
			a.track = p.varRef(v, p.hd, name, "")
			return nil
		}
	}
	return p.err(histErrOnxVarNotFound, a.trackVar, syscall.EINVAL)
}

// createSaves is the save() action's fields of the event.
func (p *histParser) createSaves(a *histAction) error {
	for _, prm := range a.params {
		ff, ok := p.fields[prm]
		size, own := p.sizes[prm]
		if !ok || size < 0 || ((prm == "comm" || prm == "COMM") && !own) {
			_ = p.err(histErrFieldNotFound, prm, syscall.EINVAL)
			_ = p.err(histErrFieldVarParseFail, prm, syscall.EINVAL)
			return p.err(histErrFieldVarCreateFail, prm, syscall.EINVAL)
		}
		f := &histField{field: prm, signed: ff.Signed, fsize: p.sizes[prm], varName: prm}
		if ff.Str {
			f.flags |= hfString
		}
		a.saves = append(a.saves, f)
	}
	return nil
}

// createActions is onmatch_create: each param a variable (the hist's
// own first, then the match event's) or a field of the event; their
// count the synthetic event's.
func (p *histParser) createActions() error {
	for _, a := range p.hd.actions {
		if a.handler != "onmatch" {
			if err := p.createTrack(a); err != nil {
				return err
			}
		}
		if a.save {
			if err := p.createSaves(a); err != nil {
				return err
			}
			continue
		}
		if a.snapshot {
			if err := p.ta.condSnapshotEnable(&histSnapCond{hd: p.hd, a: a}); err != nil {
				return err
			}
			continue
		}
		for _, prm := range a.params {
			var f *histField
			if strings.Contains(prm, "$") {
				system, event, ref := "", "", prm
				if i := strings.LastIndexByte(prm, '.'); i >= 0 {
					se := prm[:i]
					ref = prm[i+1:]
					system, event, _ = strsep(se, ".")
				}
				name := strings.TrimPrefix(ref, "$")
				if system == "" {
					for _, v := range p.hd.vars {
						if v.varName == name {
							f = p.varRef(v, p.hd, name, "")
						}
					}
				}
				if f == nil {
					if system == "" {
						system, event = a.matchSys, a.matchEvent
					}
					v, hd, err := p.findVar(system, event, name)
					if err != nil {
						return err
					}
					if v == nil { // the caret at the name, past its '$'
						return p.err(histErrParamNotFound, name, syscall.EINVAL)
					}
					if hd == p.hd {
						f = p.varRef(v, hd, name, "")
					} else {
						f = p.varRef(v, hd, prm, "")
					}
				}
			} else {
				var err error
				if f, err = p.fieldParam(a, prm); err != nil {
					return err
				}
			}
			// check_synth_field: a type other than the field's must
			// have its size and, for a number, its signedness.
			sf := a.synth.synth.fields
			if n := len(a.args); n < len(sf) && (f.fsize != sf[n].size || (!sf[n].str && f.signed != sf[n].signed)) &&
				!(sf[n].str && f.flags&hfString != 0 && sf[n].dynamic) {
				return p.err(histErrSynthTypeMismatch, prm, syscall.EINVAL)
			}
			a.args = append(a.args, f)
		}
		if len(a.args) != len(a.synth.synth.fields) {
			return p.err(histErrSynthCountMismatch, a.synth.name, syscall.EINVAL)
		}
	}
	return nil
}

// resolveRefs is resolve_var_refs: the references to other histograms'
// variables (self false) or to the hist's own (self true), read from
// the entry of key into h's refVals and refStrs; false when one is not
// set. Another hist's entry is looked up by as many bytes of key as its
// own keys have (tracing_map_lookup hashes and compares its map's
// key_size), so a hist keyed pid,lat finds the entry of pid in a hist
// keyed pid.
func (hd *histData) resolveRefs(key string, h *histHit, self bool, own *histElt) bool {
	vals, strs := h.refVals, h.refStrs
	for _, r := range hd.varRefs {
		if (r.refHD == hd) != self {
			continue
		}
		idx := -1
		for i, v := range r.refHD.vars {
			if v == r.ref {
				idx = i
			}
		}
		if idx < 0 {
			return false
		}
		if self {
			if own == nil || !own.varSet[idx] {
				return false
			}
			vals[r.refIdx] = own.vars[idx]
			if own.strs != nil {
				strs[r.refIdx] = own.strs[idx]
			}
			continue
		}
		k := key
		if n := r.refHD.keySize; len(k) > n {
			k = k[:n]
		}
		m := r.refHD.m
		m.mu.Lock()
		e := m.elts[k]
		if e == nil || !e.varSet[idx] {
			m.mu.Unlock()
			return false
		}
		vals[r.refIdx] = e.vars[idx]
		if e.strs != nil {
			strs[r.refIdx] = e.strs[idx]
		}
		if r.readOnce {
			e.varSet[idx] = false
		}
		m.mu.Unlock()
	}
	return true
}

// runActions runs the onmatch actions (action_trace): each fires its
// synthetic event with the params' values.
func (hd *histData) runActions(h *histHit, comm string, fire []*histAction) {
	for _, a := range fire {
		vals := make([]filter.Value, len(a.args))
		for i, f := range a.args {
			if f.flags&hfString != 0 {
				vals[i] = filter.Value{Str: f.str(h), IsStr: true}
			} else {
				vals[i] = filter.Value{Num: f.value(h)}
			}
		}
		if h.t != nil {
			h.t.fireSynth(a.synth, vals, h, comm)
		}
	}
}

// fireSynth is trace_synth: the synthetic event hits in every array
// whose file of it is armed, running that file's triggers over its
// fields (an event probe's over its record) and recording it where it
// is enabled.
func (t *Tracing) fireSynth(ev *event, vals []filter.Value, h *histHit, comm string) {
	pid := h.fields["common_pid"]
	fields := map[string]filter.Value{
		"common_pid": pid, "comm": {Str: comm, IsStr: true}, "common_type": {Num: uint64(ev.id)},
		"common_flags": {}, "common_preempt_count": {}, "cpu": {Num: uint64(h.cpu)},
	}
	for i, f := range ev.synth.fields {
		if i < len(vals) {
			fields[f.name] = vals[i]
		}
	}
	files := []*eventFile{&ev.top}
	if inst := ev.inst.Load(); inst != nil {
		files = append(files, *inst...)
	}
	regs := h.regs
	if regs == nil {
		regs = &kprobes.Regs{CPU: h.cpu}
	}
	var rec *synthRec
	for _, f := range files {
		if !f.enabled.Load() {
			continue
		}
		if rec == nil {
			rec = newSynthRecord(ev, vals, int(int64(pid.Num)))
		}
		post := t.runTriggersFields(f, fields, comm, h.cpu, &tpHit{rec: rec.rec, addr: synthRecAddr})
		if !f.softDisabled.Load() {
			rec.commit(f, fields, comm, h.cpu)
		}
		t.postTriggers(f, post, regs, 0)
	}
}

// synthRecAddr is where an event probe on a synthetic event finds the
// record kpemu built on the host, which is nowhere in the guest: a
// non-canonical address (neither TTBR0's nor TTBR1's half), which no
// guest pointer can be, so that $field of a string field is an address
// that reads the record's text (fetcher.readMem serves a hit's record)
// and nothing else.
const synthRecAddr = 0x00ff_0000_0000_0000

// synthRec is a synthetic event's record (trace_event_raw_event_synth)
// as its format lays it out, the common fields first: a u64 per number,
// STR_VAR_LEN_MAX bytes per fixed string, a __data_loc per dynamic
// string with the text after the fields; and its line,
// print_synth_event's. A stack field is not recorded (nil rec).
type synthRec struct {
	rec  record
	text string
}

func newSynthRecord(ev *event, vals []filter.Value, pid int) *synthRec {
	fixed := 0
	for _, f := range ev.synth.fields {
		if f.stack {
			return &synthRec{}
		}
		if f.str && !f.dynamic {
			fixed += strVarLenMax
		} else {
			fixed += 8
		}
	}
	raw := make([]byte, traceEntryHeadSize+fixed)
	binary.LittleEndian.PutUint16(raw, uint16(ev.id))
	binary.LittleEndian.PutUint32(raw[4:], uint32(int32(pid)))
	var dyn []byte
	var w bytes.Buffer
	w.WriteString(ev.name + ": ")
	off := traceEntryHeadSize
	for i, f := range ev.synth.fields {
		var v filter.Value
		if i < len(vals) {
			v = vals[i]
		}
		sep := " "
		if i == len(ev.synth.fields)-1 {
			sep = ""
		}
		switch {
		case f.str && f.dynamic:
			loc := traceEntryHeadSize + fixed + len(dyn)
			binary.LittleEndian.PutUint32(raw[off:], uint32(len(v.Str)+1)<<16|uint32(loc))
			dyn = append(append(dyn, v.Str...), 0)
			fmt.Fprintf(&w, "%s=%s%s", f.name, v.Str, sep)
			off += 8
		case f.str:
			s := v.Str
			if len(s) > strVarLenMax-1 {
				s = s[:strVarLenMax-1]
			}
			copy(raw[off:], s)
			fmt.Fprintf(&w, "%s=%s%s", f.name, s, sep)
			off += strVarLenMax
		default:
			binary.LittleEndian.PutUint64(raw[off:], v.Num)
			fmt.Fprintf(&w, "%s=%s%s", f.name, synthNum(f, v.Num), sep)
			off += 8
		}
	}
	return &synthRec{rec: append(raw, dyn...), text: w.String()}
}

// commit writes the record to ef's array while tracing is on and the
// event's filter lets it through.
func (r *synthRec) commit(ef *eventFile, fields map[string]filter.Value, comm string, cpu int) {
	ta, ev := ef.ta, ef.ev
	if r.rec == nil || !ta.on.Load() {
		return
	}
	if fl := ef.filter.Load(); fl != nil && !(*fl).Eval(fields) {
		return
	}
	raw := r.rec[traceEntryHeadSize:]
	e := traceEntry{kind: entryTracepoint, pid: r.rec.i32(4), nlen: uint16(len(ev.name)), typ: uint16(ev.id), text: r.text, raw: raw}
	ta.commit(cpu, comm, &e, traceEntryHeadSize+len(raw), nil)
}

// synthNum is print_synth_event_num_val: the value at the field's size,
// in its type's format.
func synthNum(f synthField, v uint64) string {
	switch f.size {
	case 1:
		v &= 0xff
		if f.signed {
			v = uint64(int64(int8(v)))
		}
	case 2:
		v &= 0xffff
		if f.signed {
			v = uint64(int64(int16(v)))
		}
	case 4:
		v &= 0xffffffff
		if f.signed {
			v = uint64(int64(int32(v)))
		}
	}
	switch {
	case f.typ == "gfp_t":
		return fmt.Sprintf("%x", v)
	case f.signed:
		return fmt.Sprintf("%d", int64(v))
	}
	return fmt.Sprintf("%d", v)
}

// track runs the actions on the entry e just updated (hist_trigger_actions),
// under its map's lock: onmax and onchange keep the entry's tracked value
// and its save() fields; the synthetic events to fire and the snapshots
// to take are returned, to be done once the lock is let go.
func (hd *histData) track(h *histHit, e *histElt) (fire []*histAction, snaps []histSnapHit) {
	for i, a := range hd.actions {
		if a.handler == "onmatch" {
			fire = append(fire, a)
			continue
		}
		v := h.refVals[a.track.refIdx]
		if e.tracked == nil {
			e.tracked = make([]uint64, len(hd.actions))
			e.saved = make([][]filter.Value, len(hd.actions))
		}
		if (a.handler == "onmax" && v <= e.tracked[i]) || (a.handler == "onchange" && v == e.tracked[i]) {
			continue
		}
		e.tracked[i] = v
		if a.snapshot {
			snaps = append(snaps, histSnapHit{a: a, val: v, key: e.key, comm: e.comm})
			continue
		}
		if !a.save {
			fire = append(fire, a)
			continue
		}
		sv := make([]filter.Value, len(a.saves))
		for j, f := range a.saves {
			sv[j] = h.fields[f.field]
		}
		e.saved[i] = sv
	}
	return fire, snaps
}

// printTracked is print_actions (track_data_print): each onmax and
// onchange action's value and saved fields of the entry.
func (hd *histData) printTracked(w *bytes.Buffer, e *histElt) {
	for i, a := range hd.actions {
		if a.handler == "onmatch" {
			continue
		}
		var v uint64
		if e.tracked != nil {
			v = e.tracked[i]
		}
		if a.handler == "onmax" {
			fmt.Fprintf(w, "\n\tmax: %10d", v)
		} else {
			fmt.Fprintf(w, "\n\tchanged: %10d", v)
		}
		if !a.save {
			continue
		}
		for j, f := range a.saves {
			var sv filter.Value
			if e.saved != nil && e.saved[i] != nil {
				sv = e.saved[i][j]
			}
			if f.flags&hfString != 0 {
				fmt.Fprintf(w, "  %s: %-32s", f.varName, sv.Str)
			} else {
				fmt.Fprintf(w, "  %s: %10d", f.varName, sv.Num)
			}
		}
	}
}

// fieldParam is trace_action_create_field_var: a param that is a field,
// of the event (name, or sys.event.name naming the event), else of
// another event (sys.event.name, or for onmatch a name of the match
// event), read through a synthetic_<name> variable of a hist that
// fieldVarHist adds to that event.
func (p *histParser) fieldParam(a *histAction, prm string) (*histField, error) {
	system, event, name := "", "", prm
	if s, rest, ok := strsep(prm, "."); ok {
		e, n, ok := strsep(rest, ".")
		if !ok {
			return nil, fmt.Errorf("%w: hist: param %q is neither a field nor sys.event.field", syscall.EINVAL, prm)
		}
		system, event, name = s, e, n
	}
	if system == "" || (system == p.ev.group && event == p.ev.name) {
		if ff, ok := p.fields[name]; ok {
			f := &histField{field: name, signed: ff.Signed, fsize: p.sizes[name]}
			if ff.Str {
				f.flags |= hfString
			}
			return f, nil
		}
		// create_target_field_var's create_field_var logs its
		// failure, which the fallback below may still mend.
		_ = p.err(histErrFieldNotFound, name, syscall.EINVAL)
		_ = p.err(histErrFieldVarParseFail, name, syscall.EINVAL)
	}
	if system == "" {
		if a.handler != "onmatch" {
			return nil, fmt.Errorf("%w: hist: param %q is no field of the event", syscall.EINVAL, prm)
		}
		system, event = a.matchSys, a.matchEvent
	}
	v, hd, err := p.fieldVarHist(system, event, name)
	if err != nil {
		return nil, err
	}
	return p.varRef(v, hd, system+"."+event+"."+v.varName, ""), nil
}

// fieldVarHist is create_field_var_hist: the variable synthetic_<field>
// of a hist on system.event, made (unless it is there already) as a
// hist keyed as the first hist on that event whose keys are the
// target's (find_compatible_hist), with that hist's filter, so that the
// target's key finds the field's value of that event's last hit.
func (p *histParser) fieldVarHist(system, event, field string) (*histField, *histData, error) {
	t := p.t
	if len(p.hd.fieldVarHists) >= synthFieldsMax {
		return nil, nil, p.err(histErrTooManyFieldVars, field, syscall.EINVAL)
	}
	f := t.fileOf(p.ta, system, event)
	if f == nil {
		return nil, nil, p.err(histErrEventFileNotFound, field, syscall.EINVAL)
	}
	compat := compatibleHist(p.hd, f)
	if compat == nil {
		return nil, nil, p.err(histErrHistNotFound, field, syscall.EINVAL)
	}
	name := "synthetic_" + field
	if v, hd := varIn(f, name); v != nil {
		return v, hd, nil
	}
	var cmd strings.Builder
	cmd.WriteString("keys=")
	for i, k := range compat.hist.hd.keys {
		if i > 0 {
			cmd.WriteByte(',')
		}
		cmd.WriteString(k.name(0))
	}
	fmt.Fprintf(&cmd, ":%s=%s", name, field)
	if compat.filter != nil {
		cmd.WriteString(" if " + compat.filterText)
	}
	if err := t.parseHistTrigger(f, false, cmd.String(), true); err != nil {
		_ = p.err(histErrHistCreateFail, field, syscall.EINVAL)
		return nil, nil, err
	}
	v, hd := varIn(f, name)
	if v == nil {
		return nil, nil, p.err(histErrSynthVarNotFound, field, syscall.EINVAL)
	}
	p.hd.fieldVarHists = append(p.hd.fieldVarHists, fieldVarHist{file: f, cmd: cmd.String()})
	return v, hd, nil
}

// fieldVarHist is a struct field_var_hist: a hist fieldVarHist added,
// by the command that made it, which removes it with its maker.
type fieldVarHist struct {
	file *eventFile
	cmd  string
}

// compatibleHist is find_compatible_hist: the first hist trigger of f
// whose keys are as many as hd's and each of the same kind and size
// (compatible_keys; kpemu's hist fields keep no C type, so a string is
// told from a number by its flag).
func compatibleHist(hd *histData, f *eventFile) *trigger {
	set := f.triggers.Load()
	if set == nil {
		return nil
	}
	for _, tr := range set.list {
		if tr.cmd.typ != ettHist {
			continue
		}
		keys := tr.hist.hd.keys
		if len(keys) != len(hd.keys) {
			continue
		}
		ok := true
		for i, k := range keys {
			o := hd.keys[i]
			if k.flags&(hfString|hfStacktrace) != o.flags&(hfString|hfStacktrace) || k.size != o.size || k.signed != o.signed {
				ok = false
			}
		}
		if ok {
			return tr
		}
	}
	return nil
}

// unregisterFieldVarHists is unregister_field_var_hists: the hists
// fieldVarHist added for hd go with it; t.mu is held.
func (t *Tracing) unregisterFieldVarHists(hd *histData) {
	for _, fv := range hd.fieldVarHists {
		if err := t.parseHistTrigger(fv.file, true, fv.cmd, true); err != nil {
			t.log.Warn("hist: removing a field variable's hist", "event", fv.file.ev.key(), "cmd", fv.cmd, "err", err)
		}
	}
	hd.fieldVarHists = nil
}

// histSnapCond is the snapshot() action's struct track_data, the array's
// conditional snapshot data (tr->cond_snapshot->cond_data): the value
// and the entry that took the snapshot last. Guarded by the array's
// snapshotState.mu.
type histSnapCond struct {
	hd      *histData
	a       *histAction
	val     uint64
	key     string
	comm    string
	updated bool
}

// histSnapHit is a struct snapshot_context: the entry whose tracked
// value changed, with the value.
type histSnapHit struct {
	a    *histAction
	val  uint64
	key  string
	comm string
}

// update is cond_snapshot_update: the snapshot is taken when the
// entry's tracked value passes the handler's check against the value of
// the last snapshot, which it then becomes. A snapshot that is no
// snapshot() action's (ctx nil: the snapshot trigger, which Linux would
// give a NULL context) is not taken.
func (c *histSnapCond) update(ctx *histSnapHit) bool {
	if ctx == nil {
		return false
	}
	if (c.a.handler == "onmax" && ctx.val <= c.val) || (c.a.handler == "onchange" && ctx.val == c.val) {
		return false
	}
	c.val, c.key, c.comm, c.updated = ctx.val, ctx.key, ctx.comm, true
	return true
}

// snapshot is save_track_data_snapshot: tracing_snapshot_cond on the
// hist's array, which says so in the trace and stops tracing when the
// snapshot is not allocated.
func (hd *histData) snapshot(h *histHit, ctx *histSnapHit) {
	if hd.ta == nil {
		return
	}
	if !hd.ta.takeSnapshotCond(ctx) {
		hd.ta.snapshotNotAllocated(h.cpu, 0)
	}
}

// condSnapshotEnable is tracing_snapshot_cond_enable: the snapshot is
// allocated, and the array takes c as its one conditional snapshot
// (EBUSY if it has one).
func (ta *TraceArray) condSnapshotEnable(c *histSnapCond) error {
	ta.allocSnapshotInstance()
	ta.snap.mu.Lock()
	defer ta.snap.mu.Unlock()
	if ta.snap.cond != nil {
		return fmt.Errorf("%w: the snapshot is taken by another hist's snapshot()", syscall.EBUSY)
	}
	ta.snap.cond = c
	return nil
}

// releaseSnapshot is track_data_destroy's tracing_snapshot_cond_disable:
// the array's conditional snapshot goes if hd's snapshot() holds it.
func (t *Tracing) releaseSnapshot(hd *histData) {
	ta := hd.ta
	if ta == nil {
		return
	}
	ta.snap.mu.Lock()
	if ta.snap.cond != nil && ta.snap.cond.hd == hd {
		ta.snap.cond = nil
	}
	ta.snap.mu.Unlock()
}

// printHistSnapshot is track_data_snapshot_print: under a hist with a
// snapshot() action, once the array's conditional snapshot was taken,
// the value and the key that took it.
func (t *Tracing) printHistSnapshot(w *bytes.Buffer, hd *histData) {
	ta := hd.ta
	if ta == nil {
		return
	}
	ta.snap.mu.Lock()
	var c histSnapCond
	if ta.snap.cond != nil {
		c = *ta.snap.cond
	}
	ta.snap.mu.Unlock()
	if !c.updated {
		return
	}
	var a *histAction
	for _, x := range hd.actions {
		if x.snapshot {
			a = x
			break
		}
	}
	if a == nil {
		return
	}
	w.WriteString("\nSnapshot taken (see tracing/snapshot).  Details:\n")
	fmt.Fprintf(w, "\ttriggering value { %s(%s) }: %10d", a.handler, a.trackVar, c.val)
	w.WriteString("\ttriggered by event with key: ")
	t.printHistKey(w, hd, &histElt{key: c.key, comm: c.comm})
	w.WriteByte('\n')
}
