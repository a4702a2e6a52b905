package tracing

import (
	"sync/atomic"

	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/kprobes"
	"github.com/kpemu/kpemu/tracing/filter"
)

// The trace events, after Linux 6.1's kernel/trace/trace_events.c: the
// list of events every root shares (kprobe, uprobe and static ones),
// and enabling one, which arms its probes or turns its tracepoint on.

// event is a trace_event_call with its trace_probe_event: a named event
// with one or more probes, the same for every tracing root.
type event struct {
	group, name string
	isReturn    bool
	isJprobe    bool           // kpemu's j: events
	isUprobe    bool           // uprobe_events' events (uprobe.go)
	marker      bool           // ftrace/print, trace_marker's (markerev.go)
	params      []kernel.Param // j: events: the function's parameters, from DWARF
	static      *staticEvent   // a TRACE_EVENT on a guest tracepoint (tracepoint.go); nil for the dynamic events
	synth       *synthEvent    // a synthetic event's fields (synth.go); nil for the others
	eprobe      *eprobe        // an event probe's attachment (eprobe.go); nil for the others
	args        []*probeArg
	probes      []*traceProbe
	id          int

	// top is the event's state in the top trace array. Linux
	// gives each array a trace_event_file of every event: inst holds
	// the instances' (nil while there are none, so that a hit costs
	// one more load then).
	top  eventFile
	inst atomic.Pointer[[]*eventFile]

	// armed is the probes' state: some array's file of the event is
	// enabled (or in soft mode); nOn counts those files, guarded by
	// Tracing.mu. Read by the dispatcher.
	armed atomic.Bool
	nOn   int

	// perf are the perf counters on the event (perf.go), nil while
	// there are none; each arms it as one more enabled file.
	perf atomic.Pointer[[]*perfCounter]
}

// eventFile is a trace_event_file: what one trace array keeps of an
// event, its enable, filter and triggers.
type eventFile struct {
	ev *event
	ta *TraceArray

	// enabled is EVENT_FILE_FL_ENABLED: the probes are armed, because
	// the event is enabled or in soft mode. Read by the dispatcher.
	enabled    atomic.Bool
	filter     atomic.Pointer[filter.Node] // nil: every hit is recorded
	filterText string                      // as written; guarded by Tracing.mu

	// Soft mode (trigger.go): smRef counts the triggers that keep the
	// event armed (its own, as one, and each enable_event or
	// disable_event aimed at it); guarded by Tracing.mu. softDisabled
	// is EVENT_FILE_FL_SOFT_DISABLED: armed, but its records are
	// dropped; triggers flip it on the vCPU.
	smRef        int
	softDisabled atomic.Bool
	triggers     atomic.Pointer[triggerSet] // nil: none

	// noDir: the array has no events/GROUP/EVENT/ for the event, as
	// Linux's event_create_dir could not make it (a group named like
	// a file of events/, an event like one of its group's): the event
	// works without its files. Guarded by Tracing.mu.
	noDir bool
}

func (e *event) key() string { return e.group + "/" + e.name }

// addEvent and dropEvent add ev to t.events and take it out; t.mu is held.
func (t *Tracing) addEvent(ev *event) {
	t.events[ev.key()] = ev
	t.groups[ev.group]++
}

func (t *Tracing) dropEvent(ev *event) {
	if t.events[ev.key()] != ev {
		return
	}
	delete(t.events, ev.key())
	if t.groups[ev.group]--; t.groups[ev.group] == 0 {
		delete(t.groups, ev.group)
	}
}

// setEnabled is ftrace_event_enable_disable: an enable file's 0 or 1. In
// soft mode 0 only soft-disables the event, which stays armed for its
// triggers; t.mu is held.
func (t *Tracing) setEnabled(ev *eventFile, on bool) error {
	ev.ta.updateBuffers() // event_enable_write's tracing_update_buffers
	return t.enableDisable(ev, on, false)
}

// enableDisable is __ftrace_event_enable_disable on one array's file of
// an event; soft takes or drops a soft-mode reference (a trigger's)
// instead. t.mu is held.
func (t *Tracing) enableDisable(ev *eventFile, enable, soft bool) error {
	if !enable {
		var disarm bool
		if soft {
			if ev.smRef--; ev.smRef > 0 {
				return nil
			}
			// Leaving soft mode: an event a trigger (or a write of 1)
			// enabled meanwhile stays enabled.
			disarm = ev.softDisabled.Load()
		} else {
			disarm = ev.smRef == 0
		}
		var err error
		if disarm && ev.enabled.Load() {
			err = t.armProbes(ev, false)
		}
		ev.softDisabled.Store(ev.smRef > 0)
		return err
	}
	if soft {
		if ev.smRef++; ev.smRef > 1 {
			return nil
		}
	} else {
		ev.softDisabled.Store(false)
	}
	if ev.enabled.Load() {
		return nil
	}
	// Soft-disabled before the probes are armed, so that no record
	// slips out.
	ev.softDisabled.Store(soft)
	if err := t.armProbes(ev, true); err != nil {
		if soft {
			ev.smRef--
			ev.softDisabled.Store(false)
		}
		return err
	}
	return nil
}

// batchArming runs fn, which enables or disables events, and arms and
// disarms their probes at its end, in one stop of the machine for each;
// t.mu is held. It returns fn's error, else the arming's first.
func (t *Tracing) batchArming(fn func() error) error {
	t.arming = map[bool][]*kprobes.Kprobe{}
	err := fn()
	b := t.arming
	t.arming = nil
	if aerr := t.kp.SetDisabledMany(b[false], true); err == nil {
		err = aerr
	}
	if aerr := t.kp.SetDisabledMany(b[true], false); err == nil {
		err = aerr
	}
	return err
}

// armProbes enables or disables one array's file of the event, and arms
// or disarms the event's probes with its first file enabled and its last
// disabled: at once, or at the end of the batch (batchArming) that is
// under way. t.mu is held.
func (t *Tracing) armProbes(f *eventFile, on bool) error {
	if f.enabled.Load() == on {
		return nil
	}
	f.enabled.Store(on)
	ev := f.ev
	if on {
		ev.nOn++
	} else {
		ev.nOn--
	}
	if (ev.nOn > 0) == ev.armed.Load() {
		return nil
	}
	ev.armed.Store(on)
	// undo takes back the file's and the event's state when arming fails.
	undo := func(err error) error {
		if err == nil {
			return nil
		}
		ev.armed.Store(!on)
		if on {
			ev.nOn--
		} else {
			ev.nOn++
		}
		f.enabled.Store(!on)
		return err
	}
	if ev.eprobe != nil {
		// enable_trace_eprobe with the first file, disable_trace_eprobe
		// with the last: the trigger on the attached event.
		return undo(t.armEprobe(f, on))
	}
	if ev.isUprobe {
		return undo(t.armUprobes(ev, on))
	}
	if ev.static != nil {
		// trace_event_reg: the tracepoint's static key.
		return t.setTracepoint(ev.static.tp, on)
	}
	for _, tp := range ev.probes {
		// __enable_trace_kprobe: a probe whose module went is skipped.
		if !tp.registered || t.kp.Gone(tp.kprobe()) {
			continue
		}
		if b := t.arming; b != nil {
			b[on] = append(b[on], tp.kprobe())
			continue
		}
		var err error
		if on {
			err = t.kp.Enable(tp.kprobe())
		} else {
			err = t.kp.Disable(tp.kprobe())
		}
		if err != nil {
			return err
		}
	}
	return nil
}
