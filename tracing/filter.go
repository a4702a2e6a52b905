package tracing

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"unicode"
)

// Event filters (events/GROUP/EVENT/filter), after Linux's
// kernel/trace/trace_events_filter.c: predicates "field op value" over the
// event's fields, the common fields (common_type, common_flags,
// common_preempt_count, common_pid) and the generic CPU/cpu and COMM/comm,
// combined with &&, ||, ! and
// parentheses. Numeric fields take == != < <= > >= and & (bitwise test);
// string fields take == != and ~ (glob).

// filterValue is what a predicate reads from a record.
type filterValue struct {
	num   uint64
	str   string
	isStr bool
}

// filterNode is a parsed filter expression.
type filterNode interface {
	eval(fields map[string]filterValue) bool
}

type andNode struct{ l, r filterNode }
type orNode struct{ l, r filterNode }
type notNode struct{ x filterNode }
type predNode struct {
	field string
	op    string
	num   uint64
	neg   bool // the field is signed and the constant negative
	str   string
	isStr bool
}

func (n andNode) eval(f map[string]filterValue) bool { return n.l.eval(f) && n.r.eval(f) }
func (n orNode) eval(f map[string]filterValue) bool  { return n.l.eval(f) || n.r.eval(f) }
func (n notNode) eval(f map[string]filterValue) bool { return !n.x.eval(f) }

func (p predNode) eval(f map[string]filterValue) bool {
	v, ok := f[p.field]
	if !ok {
		return false
	}
	if p.isStr {
		switch p.op {
		case "==":
			return v.str == p.str
		case "!=":
			return v.str != p.str
		case "~":
			return globMatch(p.str, v.str)
		}
		return false
	}
	a, b := v.num, p.num
	switch p.op {
	case "==":
		return a == b
	case "!=":
		return a != b
	case "&":
		return a&b != 0
	}
	if p.neg {
		x, y := int64(a), int64(b)
		switch p.op {
		case "<":
			return x < y
		case "<=":
			return x <= y
		case ">":
			return x > y
		case ">=":
			return x >= y
		}
	}
	switch p.op {
	case "<":
		return a < b
	case "<=":
		return a <= b
	case ">":
		return a > b
	case ">=":
		return a >= b
	}
	return false
}

// parseFilter parses a filter for ev; EINVAL for any error.
func parseFilter(s string, ev *event) (filterNode, error) {
	p := &filterParser{toks: tokenizeFilter(s), fields: filterFields(ev)}
	if p.toks == nil {
		return nil, syscall.EINVAL
	}
	n, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.pos != len(p.toks) {
		return nil, fmt.Errorf("%w: unexpected %q", syscall.EINVAL, p.toks[p.pos])
	}
	return n, nil
}

// tokenizeFilter splits a filter into tokens; nil on an unterminated
// string.
func tokenizeFilter(s string) []string {
	toks := []string{}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case unicode.IsSpace(rune(c)):
			i++
		case c == '(' || c == ')':
			toks = append(toks, string(c))
			i++
		case c == '"' || c == '\'':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				return nil
			}
			toks = append(toks, s[i:i+j+2])
			i += j + 2
		case strings.ContainsRune("=!<>&|~", rune(c)):
			j := i + 1
			if j < len(s) && (s[j] == '=' || (c == '&' && s[j] == '&') || (c == '|' && s[j] == '|')) {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		default:
			j := i
			for j < len(s) && !unicode.IsSpace(rune(s[j])) && !strings.ContainsRune("()=!<>&|~\"'", rune(s[j])) {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		}
	}
	return toks
}

type filterParser struct {
	toks   []string
	pos    int
	fields map[string]filterField
}

func (p *filterParser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return ""
}

func (p *filterParser) next() string {
	t := p.peek()
	p.pos++
	return t
}

func (p *filterParser) or() (filterNode, error) {
	l, err := p.and()
	if err != nil {
		return nil, err
	}
	for p.peek() == "||" {
		p.next()
		r, err := p.and()
		if err != nil {
			return nil, err
		}
		l = orNode{l, r}
	}
	return l, nil
}

func (p *filterParser) and() (filterNode, error) {
	l, err := p.unary()
	if err != nil {
		return nil, err
	}
	for p.peek() == "&&" {
		p.next()
		r, err := p.unary()
		if err != nil {
			return nil, err
		}
		l = andNode{l, r}
	}
	return l, nil
}

func (p *filterParser) unary() (filterNode, error) {
	switch p.peek() {
	case "!":
		p.next()
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		return notNode{x}, nil
	case "(":
		p.next()
		x, err := p.or()
		if err != nil {
			return nil, err
		}
		if p.next() != ")" {
			return nil, fmt.Errorf("%w: missing )", syscall.EINVAL)
		}
		return x, nil
	}
	return p.pred()
}

func (p *filterParser) pred() (filterNode, error) {
	name := p.next()
	field, ok := p.fields[name]
	isStr := field.str
	if !ok {
		return nil, fmt.Errorf("%w: no field %q", syscall.EINVAL, name)
	}
	op := p.next()
	val := p.next()
	if val == "" || val == "(" || val == ")" {
		return nil, fmt.Errorf("%w: missing value", syscall.EINVAL)
	}
	switch name {
	case "COMM":
		name = "comm"
	case "CPU":
		name = "cpu"
	}
	if isStr {
		switch op {
		case "==", "!=", "~":
		default:
			return nil, fmt.Errorf("%w: operator %q on a string", syscall.EINVAL, op)
		}
		return predNode{field: name, op: op, str: strings.Trim(val, `"'`), isStr: true}, nil
	}
	switch op {
	case "==", "!=", "<", "<=", ">", ">=", "&":
	default:
		return nil, fmt.Errorf("%w: operator %q on a number", syscall.EINVAL, op)
	}
	if v, err := strconv.ParseUint(val, 0, 64); err == nil {
		return predNode{field: name, op: op, num: v}, nil
	}
	v, err := strconv.ParseInt(val, 0, 64)
	if err != nil {
		return nil, fmt.Errorf("%w: bad number %q", syscall.EINVAL, val)
	}
	return predNode{field: name, op: op, num: uint64(v), neg: true}, nil
}

func (t *Tracing) showFilter(ev *event) func(context.Context, *bytes.Buffer) error {
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
func (t *Tracing) writeFilter(ev *event) func(context.Context, []byte, int64) (int, error) {
	return func(_ context.Context, p []byte, _ int64) (int, error) {
		if len(p) >= maxFilterWrite { // event_filter_write: a page or more
			return 0, syscall.EINVAL
		}
		// strstrip() trims the buffer's end in place; the leading blanks
		// stay in the filter string (and count in caret positions).
		s := strings.TrimRightFunc(string(p), unicode.IsSpace)
		t.mu.Lock()
		defer t.mu.Unlock()
		// Only "0" clears; an empty filter is an error, as in Linux.
		if strings.TrimSpace(s) == "0" {
			ev.filter.Store(nil)
			ev.filterText = ""
			return len(p), nil
		}
		if pe := checkFilter(s, filterFields(ev)); pe != nil {
			ev.filter.Store(nil)
			ev.filterText = pe.text(s) // print_event_filter adds one more newline
			e := errLogEntry{ts: t.now(), loc: "event filter parse error", msg: filtErrText[filtErrErrno], cmd: s}
			if pe.code > filtErrNone {
				e.msg, e.pos = filtErrText[pe.code], pe.pos
			}
			t.errlog.add(e)
			return 0, pe.errno
		}
		n, err := parseFilter(s, ev)
		if err != nil {
			return 0, err
		}
		ev.filter.Store(&n)
		ev.filterText = s
		return len(p), nil
	}
}

// filterFields are the names a filter may use on ev, with what
// parse_pred needs to know of each.
func filterFields(ev *event) map[string]filterField {
	// trace_define_generic_fields() and trace_define_common_fields()
	m := map[string]filterField{"common_pid": {signed: true}, "comm": {str: true}, "COMM": {str: true},
		"cpu": {signed: true}, "CPU": {signed: true}, "common_type": {}, "common_flags": {}, "common_preempt_count": {}}
	for _, a := range ev.args {
		if a.count == 0 {
			m[a.name] = filterField{str: a.typ.str, signed: a.typ.signed}
		}
	}
	if ev.static != nil {
		for _, f := range ev.static.fields {
			m[f.name] = filterField{str: f.str, signed: f.signed}
		}
	}
	return m
}
