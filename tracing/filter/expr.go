// Package filter is the event filter expressions of Linux's
// kernel/trace/trace_events_filter.c, as events/GROUP/EVENT/filter, a
// subsystem's filter and a trigger's "if" take them: predicates "field op
// value" over an event's fields, combined with &&, ||, ! and
// parentheses. Numeric fields take == != < <= > >= and & (bitwise test);
// string fields take == != and ~ (glob). Check gives Linux's verdict on
// a filter (error code, caret position, errno); Parse builds what Eval
// runs on each record. What fields an event has is the caller's.
package filter

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"unicode"

	"github.com/kpemu/kpemu/tracing/internal/kstr"
)

// Value is what a predicate reads from a record: a number, or a
// string when IsStr.
type Value struct {
	Num   uint64
	Str   string
	IsStr bool
}

// Node is a parsed filter expression.
type Node interface {
	// Eval reports whether the record whose fields are fields passes.
	Eval(fields map[string]Value) bool
}

type andNode struct{ l, r Node }
type orNode struct{ l, r Node }
type notNode struct{ x Node }
type predNode struct {
	field string
	op    string
	num   uint64
	// signed: the field is, and so is the comparison, whatever the
	// constant (select_comparison_fn's by the field's is_signed)
	signed bool
	str    string
	isStr  bool
}

func (n andNode) Eval(f map[string]Value) bool { return n.l.Eval(f) && n.r.Eval(f) }
func (n orNode) Eval(f map[string]Value) bool  { return n.l.Eval(f) || n.r.Eval(f) }
func (n notNode) Eval(f map[string]Value) bool { return !n.x.Eval(f) }

func (p predNode) Eval(f map[string]Value) bool {
	v, ok := f[p.field]
	if !ok {
		return false
	}
	if p.isStr {
		switch p.op {
		case "==":
			return v.Str == p.str
		case "!=":
			return v.Str != p.str
		case "~":
			return kstr.GlobMatch(p.str, v.Str)
		}
		return false
	}
	a, b := v.Num, p.num
	switch p.op {
	case "==":
		return a == b
	case "!=":
		return a != b
	case "&":
		return a&b != 0
	}
	if p.signed {
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

// Parse builds the filter s over fields, once Check has passed it;
// EINVAL for any error.
func Parse(s string, fields map[string]Field) (Node, error) {
	p := &parser{toks: tokenize(s), fields: fields}
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

// tokenize splits a filter into tokens; nil on an unterminated
// string.
func tokenize(s string) []string {
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

type parser struct {
	toks   []string
	pos    int
	fields map[string]Field
}

func (p *parser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return ""
}

func (p *parser) next() string {
	t := p.peek()
	p.pos++
	return t
}

func (p *parser) or() (Node, error) {
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

func (p *parser) and() (Node, error) {
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

func (p *parser) unary() (Node, error) {
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

func (p *parser) pred() (Node, error) {
	name := p.next()
	field, ok := p.fields[name]
	isStr := field.Str
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
		return predNode{field: name, op: op, num: v, signed: field.Signed}, nil
	}
	v, err := strconv.ParseInt(val, 0, 64)
	if err != nil {
		return nil, fmt.Errorf("%w: bad number %q", syscall.EINVAL, val)
	}
	return predNode{field: name, op: op, num: uint64(v), signed: true}, nil
}
