package tracing

import (
	"bytes"
	"fmt"
	"strings"
	"syscall"

	"github.com/kpemu/kpemu/kprobes"
	"github.com/kpemu/kpemu/tracing/filter"
)

// Inter-event hist triggers (trace_events_hist.c): references to other
// histograms' variables ($x, or sys.event.$x), resolved at each hit by
// looking the hit's key up in the variable's histogram (and consuming
// the value, read_once), and the onmatch(sys.event) handler, whose
// trace(synth,params) or synth(params) action fires a synthetic event
// with the params' values. The synthetic event then runs the triggers
// of its files (hist triggers on synthetic events); kpemu does not yet
// write its record to the ring buffer. onmax, onchange, save() and
// snapshot() are refused.

const (
	histErrInvalidSubsysEvent histErr = "Invalid subsystem or event name"
	histErrSynthEventNotFound histErr = "Couldn't find synthetic event"
	histErrSynthCountMismatch histErr = "Param count doesn't match synthetic event field count"
	histErrParamNotFound      histErr = "Couldn't find param"
	histErrVarNotUnique       histErr = "Variable name not unique, need to use fully qualified name (subsys.event.var) for variable"
	histErrNoClosingParen     histErr = "No closing paren found"
	histErrActionNotFound     histErr = "No action found"
	histActionsMax                    = 8 // HIST_ACTIONS_MAX
)

// histAction is an action_data of the onmatch handler.
type histAction struct {
	matchSys, matchEvent string
	name                 string // the action as written: "trace" or the synthetic event's name
	useTrace             bool
	synth                *event
	params               []string
	args                 []*histField // each param: a variable reference or a field of the event
}

// spec is print_onmatch_spec.
func (a *histAction) spec(w *bytes.Buffer) {
	fmt.Fprintf(w, ":onmatch(%s.%s).%s(", a.matchSys, a.matchEvent, a.name)
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

// parseActions is parse_actions for the onmatch handler (onmatch_parse
// and action_parse).
func (p *histParser) parseActions(strs []string) error {
	for _, s := range strs {
		if !strings.HasPrefix(s, "onmatch(") {
			// onmax() and onchange() are not built.
			return fmt.Errorf("%w: hist: handler %q is not supported", syscall.EINVAL, s)
		}
		rest := strings.TrimPrefix(s, "onmatch(")
		match, rest, ok := strsep(rest, ")")
		if !ok {
			return p.err(histErrNoClosingParen, s, syscall.EINVAL)
		}
		system, event, ok := strsep(match, ".")
		if !ok || system == "" || event == "" {
			return p.err(histErrInvalidSubsysEvent, match, syscall.EINVAL)
		}
		if p.t.fileOf(p.ta, system, event) == nil {
			return p.err(histErrInvalidSubsysEvent, match, syscall.EINVAL)
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
		a := &histAction{matchSys: system, matchEvent: event, name: name}
		var ps []string
		if params != "" {
			ps = strings.Split(params, ",")
			for i := range ps {
				ps[i] = strings.TrimFunc(ps[i], isSpaceRune)
			}
		}
		switch name {
		case "save", "snapshot":
			return fmt.Errorf("%w: hist: onmatch does not take %s()", syscall.EINVAL, name)
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
		if len(p.hd.actions) == histActionsMax {
			return fmt.Errorf("%w: hist: too many actions", syscall.EINVAL)
		}
		p.hd.actions = append(p.hd.actions, a)
	}
	return nil
}

// createActions is onmatch_create: each param a variable (the hist's
// own first, then the match event's) or a field of the event; their
// count the synthetic event's.
func (p *histParser) createActions() error {
	for _, a := range p.hd.actions {
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
					if v == nil {
						return p.err(histErrParamNotFound, prm, syscall.EINVAL)
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
			a.args = append(a.args, f)
		}
		if len(a.args) != len(a.synth.synth.fields) {
			return p.err(histErrSynthCountMismatch, "", syscall.EINVAL)
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
func (hd *histData) runActions(h *histHit, comm string) {
	for _, a := range hd.actions {
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
		if f.enabled.Load() && f.triggers.Load() != nil {
			post := t.runTriggersFields(f, fields, comm, h.cpu)
			t.postTriggers(f, post, &kprobes.Regs{CPU: h.cpu}, 0)
		}
	}
}
