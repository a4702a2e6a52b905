package tracing

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/kpemu/kpemu/kprobes"
	"github.com/kpemu/kpemu/tracing/filter"
	"github.com/kpemu/kpemu/tracing/internal/kstr"
)

// Event triggers (events/<group>/<event>/trigger), after Linux 6.1's
// kernel/trace/trace_events_trigger.c: traceon, traceoff, snapshot,
// stacktrace, enable_event and disable_event, each with an optional ":N" count and "if <filter>"
// over the triggering event's fields; "!cmd" removes.
//
// An event with a trigger is armed even while it is not enabled: Linux's
// soft mode (trace_events.c's SOFT_MODE and SOFT_DISABLED), in which the
// probes hit and the triggers run but the event's own records are
// dropped. enable_event and disable_event put their target in soft mode
// when the trigger is set, so that firing only flips the target's
// softDisabled flag: arming kernel text needs kernel.StopMachine, which
// cannot run from a probe handler on a vCPU.
//
// The hit path is __kprobe_trace_func's, in the dispatchers, around the
// record (a call at the top of the record could not run what must come
// after it): callTriggers runs the triggers that need no record, or, when
// some need one (a filter, or a post trigger such as traceoff), those
// whose filter the event's fields pass; then the event is recorded unless
// it is soft-disabled; then postTriggers runs traceoff
// (EVENT_CMD_FL_POST_TRIGGER), so that the event that turned tracing off
// is the last one in the buffer, as on Linux.

// triggerType is enum event_trigger_type: one bit per kind of trigger. Two
// triggers of one type cannot sit on one event (traceon and traceoff share
// theirs, and enable_event and disable_event theirs per target).
type triggerType uint8

const (
	ettTraceOnOff  triggerType = 1 << 0 // ETT_TRACE_ONOFF
	ettSnapshot    triggerType = 1 << 1 // ETT_SNAPSHOT
	ettStacktrace  triggerType = 1 << 2 // ETT_STACKTRACE
	ettEventEnable triggerType = 1 << 3 // ETT_EVENT_ENABLE
	ettHist        triggerType = 1 << 4 // ETT_EVENT_HIST (hist.go)
	ettHistEnable  triggerType = 1 << 5 // ETT_HIST_ENABLE: enable_hist, disable_hist
	ettEventEprobe triggerType = 1 << 6 // ETT_EVENT_EPROBE: an event probe's hidden trigger (eprobe.go)
)

// triggerWriteMax is PAGE_SIZE: a write to a trigger file must be shorter.
const triggerWriteMax = 4096

// availableTriggers is what an event's trigger file shows when it holds no
// trigger: Linux lists its registered commands in registration order,
// Debian's 6.1 (CONFIG_HIST_TRIGGERS) ending with enable_hist,
// disable_hist and hist.
const availableTriggers = "# Available triggers:\n# traceon traceoff snapshot stacktrace enable_event disable_event enable_hist disable_hist hist\n"

// triggerCmd is a struct event_command.
type triggerCmd struct {
	name string
	typ  triggerType
	// post is EVENT_CMD_FL_POST_TRIGGER: the trigger runs after the
	// event is committed, so the event needs its record built first.
	post bool
	on   bool // traceon (else traceoff); enable_event (else disable_event)
}

// lookupTriggerCmd finds a command by name, as trigger_process_regex walks
// trigger_commands.
func lookupTriggerCmd(name string) (triggerCmd, bool) {
	switch name {
	case "traceon":
		return triggerCmd{name: name, typ: ettTraceOnOff, on: true}, true
	case "traceoff":
		return triggerCmd{name: name, typ: ettTraceOnOff, post: true}, true
	case "snapshot":
		return triggerCmd{name: name, typ: ettSnapshot}, true
	case "stacktrace":
		return triggerCmd{name: name, typ: ettStacktrace, post: true}, true
	case "enable_event":
		return triggerCmd{name: name, typ: ettEventEnable, on: true}, true
	case "disable_event":
		return triggerCmd{name: name, typ: ettEventEnable}, true
	case "enable_hist":
		return triggerCmd{name: name, typ: ettHistEnable, on: true}, true
	case "disable_hist":
		return triggerCmd{name: name, typ: ettHistEnable}, true
	case "hist":
		return triggerCmd{name: name, typ: ettHist}, true
	}
	return triggerCmd{}, false
}

// trigger is a struct event_trigger_data.
type trigger struct {
	cmd triggerCmd
	// count is how many more times the trigger may fire; -1 is
	// unlimited. Linux keeps it in an unsigned long printed with %ld,
	// so ":18446744073709551615" is unlimited too.
	count      atomic.Int64
	filter     filter.Node // nil: every hit
	filterText string      // as shown after " if "
	target     *eventFile  // enable_event, disable_event: in the array of the trigger's event

	// The hist trigger's (hist.go): its data, its pause (data->paused,
	// which event_triggers_call skips), the named trigger whose data it
	// shares, and, on a named trigger, how many triggers share it
	// (guarded by Tracing.mu).
	hist      *histTrigger
	paused    atomic.Bool
	named     *trigger
	namedRefs int
	// probe is the event probe's file an eprobe trigger records in
	// (struct eprobe_data's file); nil for the user's triggers.
	probe *eventFile
}

// hasUserTriggers reports whether list holds a trigger the user set: an
// event probe's hidden ones neither show in the trigger file nor count
// in the soft-mode reference the user's triggers hold together.
func hasUserTriggers(list []*trigger) bool {
	for _, tr := range list {
		if tr.probe == nil {
			return true
		}
	}
	return false
}

// triggerSet is an event's triggers, replaced whole under Tracing.mu and
// read without a lock by the hit path.
type triggerSet struct {
	list []*trigger // newest first, as list_add_rcu leaves Linux's list
	// cond is EVENT_FILE_FL_TRIGGER_COND: some trigger has a filter or
	// runs after the commit, so every trigger waits for the record.
	cond bool
}

func newTriggerSet(list []*trigger) *triggerSet {
	if len(list) == 0 {
		return nil
	}
	s := &triggerSet{list: list}
	for _, tr := range list {
		// EVENT_CMD_FL_NEEDS_REC: a filter, a post trigger, a hist, an
		// event probe
		if tr.filter != nil || tr.cmd.post || tr.cmd.typ == ettHist || tr.probe != nil {
			s.cond = true
		}
	}
	return s
}

// take counts one firing: false when the count is spent.
func (tr *trigger) take() bool {
	for {
		c := tr.count.Load()
		switch {
		case c == -1:
			return true
		case c == 0:
			return false
		case tr.count.CompareAndSwap(c, c-1):
			return true
		}
	}
}

// print is event_trigger_print and event_enable_trigger_print.
func (tr *trigger) print(w *bytes.Buffer) {
	w.WriteString(tr.cmd.name)
	if tr.target != nil {
		fmt.Fprintf(w, ":%s:%s", tr.target.ev.group, tr.target.ev.name)
	}
	if c := tr.count.Load(); c == -1 {
		w.WriteString(":unlimited")
	} else {
		fmt.Fprintf(w, ":count=%d", c)
	}
	if tr.filter != nil {
		fmt.Fprintf(w, " if %s\n", tr.filterText)
	} else {
		w.WriteByte('\n')
	}
}

// showTrigger is the trigger file's read (trigger_show): the triggers, or
// the available commands when there are none.
func (t *Tracing) showTrigger(ev *eventFile) func(context.Context, *bytes.Buffer) error {
	return func(_ context.Context, w *bytes.Buffer) error {
		t.mu.Lock()
		defer t.mu.Unlock()
		set := ev.triggers.Load()
		if set == nil || !hasUserTriggers(set.list) { // the oracle's, with an event probe's
			w.WriteString(availableTriggers)
			return nil
		}
		for _, tr := range set.list {
			if tr.probe != nil { // eprobe_trigger_print prints nothing
				continue
			}
			if tr.hist != nil {
				tr.printHist(w)
				continue
			}
			tr.print(w)
		}
		return nil
	}
}

// writeTrigger is event_trigger_regex_write: one command per write, the
// buffer stripped of surrounding blanks. `echo > trigger` writes an
// empty command, EINVAL, after its O_TRUNC removed the hist triggers
// (truncTrigger).
func (t *Tracing) writeTrigger(ev *eventFile) func(context.Context, []byte, int64) (int, error) {
	return func(_ context.Context, p []byte, _ int64) (int, error) {
		if len(p) == 0 {
			return 0, nil
		}
		if len(p) >= triggerWriteMax {
			return 0, fmt.Errorf("%w: a trigger command of %d bytes", syscall.EINVAL, len(p))
		}
		s := string(p)
		if i := strings.IndexByte(s, 0); i >= 0 { // memdup_user_nul: a C string
			s = s[:i]
		}
		s = strings.TrimFunc(s, func(r rune) bool { return r < 0x80 && isSpace(byte(r)) }) // strim
		t.mu.Lock()
		defer t.mu.Unlock()
		// A write that raced with the event's removal must not arm the
		// dead event or put a target in soft mode for good.
		if t.eventGone(ev) {
			return 0, fmt.Errorf("%w: event %s was removed", syscall.ENODEV, ev.ev.key())
		}
		if err := t.processTrigger(ev, s); err != nil {
			return 0, err
		}
		return len(p), nil
	}
}

// truncTrigger is event_trigger_regex_open with O_TRUNC: the commands
// with an unreg_all (hist, enable_hist and disable_hist) drop all their
// triggers of the event.
func (t *Tracing) truncTrigger(ev *eventFile) func(context.Context) error {
	return func(context.Context) error {
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.eventGone(ev) {
			return syscall.ENODEV
		}
		t.unregAllHist(ev)
		return nil
	}
}

// strsep is C's strsep: the text before the first byte of delims and the
// text after it; found is false (rest "") when there is none, where C
// leaves the rest pointer NULL.
func strsep(s, delims string) (tok, rest string, found bool) {
	if i := strings.IndexAny(s, delims); i >= 0 {
		return s[:i], s[i+1:], true
	}
	return s, "", false
}

func skipSpaces(s string) string {
	for s != "" && isSpace(s[0]) {
		s = s[1:]
	}
	return s
}

// processTrigger is trigger_process_regex; t.mu is held.
func (t *Tracing) processTrigger(ev *eventFile, buff string) error {
	glob, next, hasNext := strsep(skipSpaces(buff), ": \t")
	if hasNext {
		next = skipSpaces(next)
		hasNext = next != ""
	}
	name := strings.TrimPrefix(glob, "!")
	cmd, ok := lookupTriggerCmd(name)
	if !ok {
		return fmt.Errorf("%w: unknown trigger command %q", syscall.EINVAL, name)
	}
	remove := strings.HasPrefix(glob, "!")
	if cmd.typ == ettHist {
		return t.parseHistTrigger(ev, remove, next, hasNext)
	}
	if cmd.typ == ettEventEnable || cmd.typ == ettHistEnable {
		return t.parseEnableTrigger(ev, cmd, remove, next, hasNext)
	}
	return t.parseTrigger(ev, cmd, remove, next, hasNext)
}

// separateFilter is event_trigger_separate_filter: "[param] [if filter]".
// A command whose param is optional takes one only when it starts with a
// digit (the count); anything else is the filter.
func separateFilter(pf string, has, paramRequired bool) (param string, hasParam bool, filter string, hasFilter bool, err error) {
	if !has {
		if paramRequired {
			return "", false, "", false, fmt.Errorf("%w: the trigger needs a parameter", syscall.EINVAL)
		}
		return "", false, "", false, nil
	}
	if !paramRequired && !isDigit(pf[0]) {
		return "", false, pf, true, nil
	}
	param, rest, found := strsep(pf, " \t")
	if found {
		filter = skipSpaces(rest)
		hasFilter = filter != ""
	}
	return param, true, filter, hasFilter, nil
}

// parseTriggerNum is event_trigger_parse_num: the count before any
// further ':', in kstrtoul's bases.
func parseTriggerNum(tr *trigger, param string) error {
	v, err := parseCount(param)
	if err != nil {
		return err
	}
	tr.count.Store(v)
	return nil
}

// parseCount is the count of a trigger or an enable_event/disable_event
// function command: the text before any further ':', in kstrtoul's
// bases; empty is EINVAL.
func parseCount(param string) (int64, error) {
	number, _, _ := strsep(param, ":")
	if number == "" {
		return 0, fmt.Errorf("%w: an empty count", syscall.EINVAL)
	}
	v, err := kstr.Strtoull(number, 0)
	if err != nil {
		return 0, fmt.Errorf("count %q: %w", number, err)
	}
	return int64(v), nil
}

// setTriggerFilter is set_trigger_filter: "if <filter>", the filter over
// the fields of the event the trigger is on. A bad filter is only an
// errno: create_event_filter is called with set_str false, so neither the
// event's filter file nor error_log hears of it.
func setTriggerFilter(tr *trigger, ev *event, s string) error {
	word, expr, found := strsep(s, " \t")
	if word != "if" || !found {
		return fmt.Errorf("%w: %q is not \"if <filter>\"", syscall.EINVAL, s)
	}
	if pe := filter.Check(expr, filterFields(ev)); pe != nil {
		return fmt.Errorf("trigger filter %q: %w", expr, pe.Errno)
	}
	n, err := filter.Parse(expr, filterFields(ev))
	if err != nil {
		return fmt.Errorf("trigger filter %q: %w", expr, err)
	}
	tr.filter, tr.filterText = n, expr
	return nil
}

// parseTrigger is event_trigger_parse: traceon, traceoff, snapshot,
// stacktrace.
func (t *Tracing) parseTrigger(ev *eventFile, cmd triggerCmd, remove bool, next string, hasNext bool) error {
	param, hasParam, filter, hasFilter, err := separateFilter(next, hasNext, false)
	if err != nil {
		return err
	}
	if remove { // the count and filter are not looked at
		t.unregisterTrigger(ev, cmd.typ, nil)
		return nil
	}
	tr := &trigger{cmd: cmd}
	tr.count.Store(-1)
	if hasParam {
		if err := parseTriggerNum(tr, param); err != nil {
			return err
		}
	}
	if hasFilter {
		if err := setTriggerFilter(tr, ev.ev, filter); err != nil {
			return err
		}
	}
	if cmd.typ == ettSnapshot {
		// register_snapshot_trigger: the snapshot is allocated first,
		// and stays so if the registration then fails.
		ev.ta.allocSnapshotInstance()
	}
	return t.registerTrigger(ev, tr)
}

// parseEnableTrigger is event_enable_trigger_parse:
// <system>:<event>[:count] [if filter]. The target goes into soft mode
// before the trigger is registered, and leaves it if registration fails.
func (t *Tracing) parseEnableTrigger(ev *eventFile, cmd triggerCmd, remove bool, next string, hasNext bool) error {
	param, _, filter, hasFilter, err := separateFilter(next, hasNext, true)
	if err != nil {
		return err
	}
	system, rest, found := strsep(param, ":")
	if !found {
		return fmt.Errorf("%w: %s needs <system>:<event>", syscall.EINVAL, cmd.name)
	}
	name, count, hasCount := strsep(rest, ":")
	target := ev.ta.file(t.findEvent(system, name))
	if target == nil {
		return fmt.Errorf("%w: no event %s:%s", syscall.EINVAL, system, name)
	}
	if remove {
		t.unregisterTrigger(ev, cmd.typ, target)
		return nil
	}
	tr := &trigger{cmd: cmd, target: target}
	tr.count.Store(-1)
	if hasCount {
		if err := parseTriggerNum(tr, count); err != nil {
			return err
		}
	}
	if hasFilter {
		if err := setTriggerFilter(tr, ev.ev, filter); err != nil {
			return err
		}
	}
	if err := t.enableDisable(target, true, true); err != nil {
		return err
	}
	if err := t.registerTrigger(ev, tr); err != nil {
		if uerr := t.enableDisable(target, false, true); uerr != nil {
			t.log.Warn("trigger: leaving soft mode", "event", target.ev.key(), "err", uerr)
		}
		return err
	}
	return nil
}

// findEvent is find_event_file; t.mu is held.
func (t *Tracing) findEvent(system, name string) *event {
	for _, ev := range t.events {
		if ev.group == system && ev.name == name {
			return ev
		}
	}
	return nil
}

// registerTrigger is register_trigger and event_enable_register_trigger:
// EEXIST for a second trigger of the same type (and target); the first
// trigger puts its event in soft mode (trace_event_trigger_enable_disable).
// t.mu is held.
func (t *Tracing) registerTrigger(ev *eventFile, tr *trigger) error {
	old := ev.triggers.Load()
	var list []*trigger
	if old != nil {
		list = old.list
	}
	for _, o := range list {
		if o.cmd.typ == tr.cmd.typ && o.target == tr.target {
			return fmt.Errorf("%w: %s already has a %s trigger", syscall.EEXIST, ev.ev.key(), o.cmd.name)
		}
	}
	ev.triggers.Store(newTriggerSet(append([]*trigger{tr}, list...)))
	if !hasUserTriggers(list) {
		if err := t.enableDisable(ev, true, true); err != nil {
			ev.triggers.Store(old)
			return err
		}
	}
	return nil
}

// unregisterTrigger is unregister_trigger and
// event_enable_unregister_trigger: removing what is not there is no
// error. The last trigger takes its event out of soft mode, and an
// enable_event or disable_event trigger its target. t.mu is held.
func (t *Tracing) unregisterTrigger(ev *eventFile, typ triggerType, target *eventFile) {
	t.dropTrigger(ev, func(tr *trigger) bool { return tr.cmd.typ == typ && tr.target == target })
}

// dropTrigger takes the first of ev's triggers that match says is the
// one out, as unregisterTrigger does; false if there is none. t.mu is
// held.
func (t *Tracing) dropTrigger(ev *eventFile, match func(*trigger) bool) bool {
	old := ev.triggers.Load()
	if old == nil {
		return false
	}
	for i, tr := range old.list {
		if !match(tr) {
			continue
		}
		list := append(append([]*trigger(nil), old.list[:i]...), old.list[i+1:]...)
		ev.triggers.Store(newTriggerSet(list))
		// An event probe's trigger holds its own reference; the
		// user's hold one together.
		if tr.probe != nil || !hasUserTriggers(list) {
			if err := t.enableDisable(ev, false, true); err != nil {
				t.log.Warn("trigger: leaving soft mode", "event", ev.ev.key(), "err", err)
			}
		}
		if tr.target != nil {
			if err := t.enableDisable(tr.target, false, true); err != nil {
				t.log.Warn("trigger: leaving soft mode", "event", tr.target.ev.key(), "err", err)
			}
		}
		return true
	}
	return false
}

// callTriggers runs on the vCPU that hit an armed event, before the event
// is recorded; it returns the post triggers to run once the record is
// done and whether the event is to be recorded at all.
//
// Without a conditional trigger it is trace_trigger_soft_disabled: every
// trigger fires now, before the record and whether tracing is on or not
// (traceon turns tracing on in time for the event's own record). With one,
// it is the record's half (event_triggers_call with the record): the
// record was reserved first, in the ring buffer while tracing is on and in
// a scratch buffer that is never read while it is off, so a traceon that
// fires now does not save this event; each trigger whose filter passes
// fires, or waits for postTriggers if it is a post trigger; the event's
// own filter is applied after them (by the record), so it hides nothing
// from the triggers. Either way a soft-disabled event is not recorded.
func (t *Tracing) callTriggers(ev *eventFile, regs *kprobes.Regs, flags uint64) (post triggerType, record bool) {
	return t.callTriggersHit(ev, regs, flags, nil, nil, nil)
}

// callTriggersProbe is callTriggers for a hit of probe tp, whose own
// arguments (an appended probe's) the triggers' filters read.
func (t *Tracing) callTriggersProbe(ev *eventFile, tp *traceProbe, regs *kprobes.Regs, flags uint64) (post triggerType, record bool) {
	return t.callTriggersHit(ev, regs, flags, nil, tp.args, nil)
}

// pidIgnored is trace_event_ignore_this_pid for a hit: a static event's
// as its tracepoint's pid probes left it (tracepoint.go).
func (t *Tracing) pidIgnored(ta *TraceArray, cpu int, hit *tpHit) bool {
	if hit != nil {
		return hit.ignored
	}
	return ta.eventPidIgnored(cpu)
}

// callTriggersHit is callTriggers for a hit that may be a static
// event's (hit non-nil), whose record the filters read, or a probe's
// with its own arguments (args non-nil).
func (t *Tracing) callTriggersHit(ev *eventFile, regs *kprobes.Regs, flags uint64, hit *tpHit, args []*probeArg, uh *uprobeHit) (post triggerType, record bool) {
	set := ev.triggers.Load()
	if set == nil {
		return 0, !ev.softDisabled.Load() && !t.pidIgnored(ev.ta, regs.CPU, hit)
	}
	if !set.cond {
		// __trace_trigger_soft_disabled reads the flags before the
		// triggers run: an event that enables itself is recorded from
		// its next hit on.
		soft := ev.softDisabled.Load()
		for _, tr := range set.list {
			t.fire(ev.ta, tr, regs, flags)
		}
		return 0, !soft && !t.pidIgnored(ev.ta, regs.CPU, hit) // then EVENT_FILE_FL_PID_FILTER's test
	}
	// trace_event_buffer_reserve reserves no record for a task the pid
	// filters ignore (pidfilter.go), so no conditional trigger sees it.
	if t.pidIgnored(ev.ta, regs.CPU, hit) {
		return 0, false
	}
	reserved := ev.ta.on.Load()
	var fields map[string]filter.Value
	var comm string
	for _, tr := range set.list {
		if tr.paused.Load() {
			continue
		}
		if fields == nil && (tr.filter != nil || tr.hist != nil) {
			var pid int
			comm, pid = t.kp.Kernel().Current(regs.CPU)
			f := fetcher{t: t, regs: regs, hit: hit, args: args, uprobe: uh}
			// Nothing keeps the map past the triggers (a hist's
			// save() copies values), so it goes back to the pool.
			m, _ := t.fieldMaps.Get().(map[string]filter.Value)
			if m == nil {
				m = make(map[string]filter.Value, 16)
			}
			fields = f.fieldsInto(m, ev.ev, comm, pid, regs.CPU, flags)
		}
		if tr.filter != nil && !tr.filter.Eval(fields) {
			continue
		}
		if tr.hist != nil {
			t.histHit(ev.ta, tr.hist.hd, fields, comm, regs)
			continue
		}
		if tr.probe != nil {
			t.eprobeTraceFunc(tr.probe, hit, regs, flags)
			continue
		}
		// A snapshot swaps the buffers between the record's reserve
		// and its commit on Linux, so the event goes to the snapshot:
		// here the swap waits for the record.
		if tr.cmd.post || tr.cmd.typ == ettSnapshot {
			post |= tr.cmd.typ
			continue
		}
		t.fire(ev.ta, tr, regs, flags)
	}
	if fields != nil {
		clear(fields)
		t.fieldMaps.Put(fields)
	}
	return post, reserved && !ev.softDisabled.Load()
}

// postTriggers is event_triggers_post_call: after the record, every
// trigger of the types callTriggers deferred; a deferred snapshot first,
// as Linux swaps before the commit that the post triggers follow.
func (t *Tracing) postTriggers(ev *eventFile, post triggerType, regs *kprobes.Regs, flags uint64) {
	if post == 0 {
		return
	}
	set := ev.triggers.Load()
	if set == nil {
		return
	}
	for _, first := range []bool{true, false} {
		for _, tr := range set.list {
			if tr.cmd.typ&post != 0 && (tr.cmd.typ == ettSnapshot) == first {
				t.fire(ev.ta, tr, regs, flags)
			}
		}
	}
}

// fire runs one trigger (its ops->trigger) on the hit in regs. A count is
// spent only when the trigger changes something: traceon when tracing is
// off, traceoff when it is on, enable_event when the target is
// soft-disabled, disable_event when it is not; stacktrace spends one per
// firing and records the guest stack at the hit (from the probe's pt_regs,
// as the stacktrace option does, where Linux unwinds its own frames and
// skips the tracing ones) when tracing is on; snapshot spends one per
// firing and swaps the buffers (snapshot.go).
func (t *Tracing) fire(ta *TraceArray, tr *trigger, regs *kprobes.Regs, flags uint64) {
	switch tr.cmd.typ {
	case ettSnapshot:
		// snapshot_count_trigger: every firing spends one.
		if tr.take() && !ta.takeSnapshot() {
			ta.snapshotNotAllocated(regs.CPU, uint8(flags))
		}
	case ettStacktrace:
		if !tr.take() || !ta.on.Load() {
			return
		}
		_, pid := t.kp.Kernel().Current(regs.CPU)
		ta.commitStack(regs.CPU, int32(pid), uint8(flags), stackFrom{pc: regs.PC, fp: regs.X[29]})
	case ettTraceOnOff:
		if ta.on.Load() == tr.cmd.on || !tr.take() {
			return
		}
		ta.on.Store(tr.cmd.on)
	case ettHistEnable:
		// hist_enable_count_trigger: every firing spends one.
		if !tr.take() {
			return
		}
		if set := tr.target.triggers.Load(); set != nil {
			for _, h := range set.list {
				if h.cmd.typ == ettHist {
					h.paused.Store(!tr.cmd.on)
				}
			}
		}
	case ettEventEnable:
		// Only a flag: the target was armed when the trigger was set.
		if tr.target.softDisabled.Load() != tr.cmd.on || !tr.take() {
			return
		}
		tr.target.softDisabled.Store(!tr.cmd.on)
	}
}

// histHit runs a hist trigger on one hit of an event of ta.
func (t *Tracing) histHit(ta *TraceArray, hd *histData, fields map[string]filter.Value, comm string, regs *kprobes.Regs) {
	h := histHit{fields: fields, cpu: regs.CPU, t: t, regs: regs}
	if hd.timestmp {
		h.ts, h.inNS = ta.clock(), clockInNS(int(ta.opts.clockID.Load()))
	}
	hd.hit(&h, comm)
}
