package tracing

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"syscall"
	"unicode"

	"github.com/kpemu/kpemu/debugfs"
	"github.com/kpemu/kpemu/tracing/filter"
)

// Subsystem filters (events/GROUP/filter), after Linux 6.1's
// apply_subsystem_event_filter() and process_system_preds() in
// kernel/trace/trace_events_filter.c and subsystem_filter_read/write in
// trace_events.c.
//
// A filter written to a group's filter file is set on every event of the
// group. An event it cannot be applied to (a field it lacks, or any other
// parse error) still gets the string, but unfiltered and followed by the
// caret and "Couldn't find or set field in one of a subsystem's events",
// with an error_log entry of its own; the write succeeds all the same
// (process_system_preds only fails when the group has no events). "0"
// clears every event's filter. The file itself always reads the
// DEFAULT_SYS_FILTER_MESSAGE: Linux drops the subsystem's filter string
// once the events have theirs.

// defaultSysFilterMessage is DEFAULT_SYS_FILTER_MESSAGE and the newline
// print_subsystem_event_filter() puts after it.
const defaultSysFilterMessage = "### global filter ###\n" +
	"# Use this to set filters for multiple events.\n" +
	"# Only events with the given fields will be affected.\n" +
	"# If no events are modified, an error message will be displayed here\n"

// maxFilterWrite is PAGE_SIZE: subsystem_filter_write and
// event_filter_write refuse a write of that many bytes or more.
const maxFilterWrite = 4096

// subsysFilterOps are the file operations of events/GROUP/filter.
func (ta *TraceArray) subsysFilterOps(group string) debugfs.FileOps {
	return debugfs.FileOps{
		Show: func(_ context.Context, w *bytes.Buffer) error {
			w.WriteString(defaultSysFilterMessage)
			return nil
		},
		Write: func(_ context.Context, p []byte, _ int64) (int, error) {
			return ta.writeSubsysFilter(group, p)
		},
	}
}

// groupEvents are the group's events in the order of Linux's tr->events,
// which trace_create_new_event() adds each new event to the head of:
// newest first, which is the order the error_log entries come in.
func (t *Tracing) groupEvents(group string) []*event {
	var evs []*event
	for _, ev := range t.events {
		if ev.group == group {
			evs = append(evs, ev)
		}
	}
	slices.SortFunc(evs, func(a, b *event) int { return b.id - a.id })
	return evs
}

// writeSubsysFilter is subsystem_filter_write and
// apply_subsystem_event_filter.
func (ta *TraceArray) writeSubsysFilter(group string, p []byte) (int, error) {
	t := ta.t
	if len(p) >= maxFilterWrite {
		return 0, syscall.EINVAL
	}
	// A C string (memdup_user_nul), which a NUL ends; strstrip() trims
	// its end in place; leading blanks stay in the string the events
	// get (and count in caret positions).
	s := strings.TrimRightFunc(cString(p), unicode.IsSpace)
	t.mu.Lock()
	defer t.mu.Unlock()
	var evs []*eventFile
	for _, ev := range t.groupEvents(group) {
		if f := ta.file(ev); f != nil {
			evs = append(evs, f)
		}
	}
	if len(evs) == 0 || ta.removed.Load() {
		return 0, syscall.ENODEV // the group lost its last event while open
	}
	if strings.TrimSpace(s) == "0" {
		for _, ev := range evs {
			ev.filter.Store(nil)
			ev.filterText = ""
		}
		return len(p), nil
	}
	// Every event's filter is built before any is set, so that a hit
	// never sees a group half filtered by the old string and half by
	// the new one for longer than the stores below take.
	nodes := make([]*filter.Node, len(evs))
	texts := make([]string, len(evs))
	for i, ev := range evs {
		var n filter.Node
		var err error
		if filter.Check(s, filterFields(ev.ev)) == nil {
			n, err = filter.Parse(s, filterFields(ev.ev))
		}
		if n == nil || err != nil {
			// process_preds failed: parse_error(pe,
			// FILT_ERR_BAD_SUBSYS_FILTER, 0) then append_filter_err.
			pe := &filter.ParseError{Code: filter.ErrBadSubsysFilter}
			texts[i] = pe.Text(s)
			ta.errlog.add(errLogEntry{ts: t.now(), loc: "event filter parse error", msg: pe.Code.String(), cmd: s})
			continue
		}
		nodes[i], texts[i] = &n, s
	}
	for i, ev := range evs {
		ev.filter.Store(nodes[i])
		ev.filterText = texts[i]
	}
	return len(p), nil
}
