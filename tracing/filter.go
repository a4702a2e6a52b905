package tracing

import (
	"bytes"
	"context"
	"strings"
	"syscall"
	"unicode"

	"github.com/kpemu/kpemu/tracing/filter"
)

// An event's filter file (events/GROUP/EVENT/filter), after Linux's
// kernel/trace/trace_events_filter.c: the expression (package filter)
// over the event's fields, the common fields (common_type, common_flags,
// common_preempt_count, common_pid) and the generic CPU/cpu and COMM/comm.

func (t *Tracing) showFilter(ev *eventFile) func(context.Context, *bytes.Buffer) error {
	return func(_ context.Context, w *bytes.Buffer) error {
		t.mu.Lock()
		defer t.mu.Unlock()
		if ev.filterText == "" {
			w.WriteString("none\n")
		} else {
			w.WriteString(ev.filterText + "\n")
		}
		return nil
	}
}

// writeFilter sets or ("0") clears the event's filter. A filter Linux
// rejects does what apply_event_filter() does: the writer gets Linux's
// errno, the event is left unfiltered, the filter file shows the string
// with a caret and the parse error, and error_log gets an entry.
func (t *Tracing) writeFilter(ev *eventFile) func(context.Context, []byte, int64) (int, error) {
	return func(_ context.Context, p []byte, _ int64) (int, error) {
		if len(p) >= maxFilterWrite { // event_filter_write: a page or more
			return 0, syscall.EINVAL
		}
		// memdup_user_nul makes the write a C string, which a NUL ends
		// (the oracle took "common_pid == 1\0 x" as "common_pid == 1");
		// strstrip() trims its end in place; the leading blanks stay in
		// the filter string (and count in caret positions).
		s := strings.TrimRightFunc(cString(p), unicode.IsSpace)
		t.mu.Lock()
		defer t.mu.Unlock()
		// Only "0" clears; an empty filter is an error, as in Linux.
		if strings.TrimSpace(s) == "0" {
			ev.filter.Store(nil)
			ev.filterText = ""
			return len(p), nil
		}
		if pe := filter.Check(s, filterFields(ev.ev)); pe != nil {
			ev.filter.Store(nil)
			ev.filterText = pe.Text(s) // print_event_filter adds one more newline
			e := errLogEntry{ts: t.now(), loc: "event filter parse error", msg: filter.ErrErrno.String(), cmd: s}
			if pe.Code > filter.ErrNone {
				e.msg, e.pos = pe.Code.String(), pe.Pos
			}
			ev.ta.errlog.add(e)
			return 0, pe.Errno
		}
		n, err := filter.Parse(s, filterFields(ev.ev))
		if err != nil {
			return 0, err
		}
		ev.filter.Store(&n)
		ev.filterText = s
		return len(p), nil
	}
}

// cString is p up to its first NUL, as the kernel reads a buffer that
// memdup_user_nul copied in.
func cString(p []byte) string {
	if i := bytes.IndexByte(p, 0); i >= 0 {
		p = p[:i]
	}
	return string(p)
}

// filterFields are the names a filter may use on ev, with what
// parse_pred needs to know of each.
func filterFields(ev *event) map[string]filter.Field {
	// trace_define_generic_fields() and trace_define_common_fields()
	m := map[string]filter.Field{"common_pid": {Signed: true}, "comm": {Str: true}, "COMM": {Str: true},
		"cpu": {Signed: true}, "CPU": {Signed: true}, "common_type": {}, "common_flags": {}, "common_preempt_count": {}}
	for _, a := range ev.args {
		if a.count == 0 {
			m[a.name] = filter.Field{Str: a.typ.str, Signed: a.typ.signed}
		}
	}
	if ev.static != nil {
		for _, f := range ev.static.fields {
			m[f.name] = filter.Field{Str: f.str || f.ptrStr, Signed: f.signed}
		}
	}
	if ev.synth != nil {
		for _, f := range ev.synth.fields {
			m[f.name] = filter.Field{Str: f.str, Signed: f.signed}
		}
	}
	if ev.marker {
		m["ip"] = filter.Field{}
		m["buf"] = filter.Field{Str: true}
	}
	return m
}
