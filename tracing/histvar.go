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
// looking the hit's key up in the variable's histogram (and consuming
// the value, read_once), and the handlers: onmatch(sys.event), and
// onmax($var) and onchange($var) over a variable of the hist, which keep
// each entry's max or last value. Their trace(synth,params) or
// synth(params) action fires a synthetic event with the params' values;
// save(fields) keeps the event's fields in the entry, printed under it.
// The synthetic event runs the triggers of its files (hist triggers on
// synthetic events); kpemu does not yet write its record to the ring
// buffer, as Linux does when the synthetic event is enabled.
// snapshot() is refused.

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
	r.flags |= v.flags & (hfTimestamp | hfTimestampUsecs)
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
			return fmt.Errorf("%w: hist: snapshot() is not supported", syscall.EINVAL)
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
				ff, ok := p.fields[prm]
				if !ok {
					return p.err(histErrParamNotFound, prm, syscall.EINVAL)
				}
				f = &histField{field: prm, signed: ff.Signed, fsize: p.sizes[prm]}
				if ff.Str {
					f.flags |= hfString
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
// the entry of key; false when one is not set.
func (hd *histData) resolveRefs(key string, vals []uint64, self bool, own *histElt) bool {
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
			continue
		}
		m := r.refHD.m
		m.mu.Lock()
		e := m.elts[key]
		if e == nil || !e.varSet[idx] {
			m.mu.Unlock()
			return false
		}
		vals[r.refIdx] = e.vars[idx]
		e.varSet[idx] = false // read_once
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
				vals[i] = filter.Value{Str: h.fields[f.field].Str, IsStr: true}
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
// fields.
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
	for _, f := range files {
		if !f.enabled.Load() {
			continue
		}
		post := t.runTriggersFields(f, fields, comm, h.cpu)
		if !f.softDisabled.Load() {
			recordSynth(f, fields, vals, int(int64(pid.Num)), comm, h.cpu)
		}
		t.postTriggers(f, post, &kprobes.Regs{CPU: h.cpu}, 0)
	}
}

// recordSynth writes the synthetic event's record (trace_event_raw_event_synth)
// as its format lays it out: a u64 per number, STR_VAR_LEN_MAX bytes per
// fixed string, a __data_loc per dynamic string with the text after the
// fields; the line is print_synth_event's. A stack field is not
// recorded.
func recordSynth(ef *eventFile, fields map[string]filter.Value, vals []filter.Value, pid int, comm string, cpu int) {
	ta, ev := ef.ta, ef.ev
	if !ta.on.Load() {
		return
	}
	if fl := ef.filter.Load(); fl != nil && !(*fl).Eval(fields) {
		return
	}
	fixed := 0
	for _, f := range ev.synth.fields {
		if f.stack {
			return
		}
		if f.str && !f.dynamic {
			fixed += strVarLenMax
		} else {
			fixed += 8
		}
	}
	raw := make([]byte, fixed)
	var dyn []byte
	var w bytes.Buffer
	w.WriteString(ev.name + ": ")
	off := 0
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
	raw = append(raw, dyn...)
	e := traceEntry{kind: entryTracepoint, pid: int32(pid), nlen: uint16(len(ev.name)), typ: uint16(ev.id), text: w.String(), raw: raw}
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
// and its save() fields; the synthetic events to fire are returned, to
// be fired once the lock is let go.
func (hd *histData) track(h *histHit, e *histElt) []*histAction {
	var fire []*histAction
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
	return fire
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
