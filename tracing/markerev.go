package tracing

import (
	"github.com/kpemu/kpemu/kprobes"
	"github.com/kpemu/kpemu/tracing/filter"
)

// The ftrace/print event as trace_marker's triggers see it (trace.c's
// tr->trace_marker_file): each array's events/ftrace/print has a trigger
// and a hist file, and a write to the array's trace_marker that
// records runs them over the print entry's fields, as
// tracing_mark_write calls event_triggers_call before the commit and
// event_triggers_post_call after it.

// markerEventName is trace_marker's event in events/ftrace/.
const markerEventName = "print"

// newMarkerEvent is the ftrace/print event, id TRACE_PRINT. Its
// fields are the print_entry's: ip, and buf, a dynamic array the
// triggers cannot use (a field of size 0).
func newMarkerEvent() *event {
	return &event{group: "ftrace", name: markerEventName, id: 5, marker: true}
}

// eventGone reports whether ev's event or array went away while a
// write waited for Tracing.mu; t.mu is held.
func (t *Tracing) eventGone(ev *eventFile) bool {
	if ev.ta.removed.Load() {
		return true
	}
	return !ev.ev.marker && t.events[ev.ev.key()] != ev.ev
}

// markerTriggers runs the triggers of ta's ftrace/print for a write of
// pid (comm) to trace_marker that is being recorded: all but the post
// triggers now, and it returns the types to run after the commit. buf
// is the text written.
func (t *Tracing) markerTriggers(ta *TraceArray, pid int, comm, buf string) triggerType {
	ev := ta.marker
	fields := map[string]filter.Value{
		"common_pid": {Num: uint64(int64(pid))}, "comm": {Str: comm, IsStr: true},
		"common_type": {Num: uint64(ev.ev.id)}, "common_flags": {}, "common_preempt_count": {},
		"cpu": {Num: markerCPU}, "ip": {}, "buf": {Str: buf, IsStr: true},
	}
	return t.runTriggersFields(ev, fields, comm, markerCPU, nil)
}

// runTriggersFields runs the triggers of ev over a record whose fields
// are fields (event_triggers_call with a record): all but the post
// triggers now; it returns the types to run after the commit. hit is
// the record an event probe on ev reads (a synthetic event's), or nil.
func (t *Tracing) runTriggersFields(ev *eventFile, fields map[string]filter.Value, comm string, cpu int, hit *tpHit) triggerType {
	set := ev.triggers.Load()
	if set == nil {
		return 0
	}
	regs := &kprobes.Regs{CPU: cpu}
	var post triggerType
	for _, tr := range set.list {
		if tr.paused.Load() || (tr.filter != nil && !tr.filter.Eval(fields)) {
			continue
		}
		if tr.hist != nil {
			h := histHit{fields: fields, cpu: cpu, t: t}
			if tr.hist.hd.timestmp {
				h.ts, h.inNS = ev.ta.clock(), clockInNS(int(ev.ta.opts.clockID.Load()))
			}
			tr.hist.hd.hit(&h, comm)
			continue
		}
		if tr.probe != nil {
			if hit != nil {
				t.eprobeTraceFunc(tr.probe, hit, regs, 0)
			}
			continue
		}
		if tr.cmd.post || tr.cmd.typ == ettSnapshot {
			post |= tr.cmd.typ
			continue
		}
		t.fire(ev.ta, tr, regs, 0)
	}
	return post
}
