package tracing

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/kpemu/kpemu/kprobes"
	"github.com/kpemu/kpemu/tracing/filter"
	"github.com/kpemu/kpemu/tracing/internal/kstr"
)

// Hist triggers (events/<group>/<event>/hist), after Linux 6.1's
// kernel/trace/trace_events_hist.c and tracing_map.c: a "hist:keys=..."
// trigger aggregates each hit's fields into a map keyed by the key
// fields' bytes, summing its values; the event's hist file prints the
// map sorted. Variables (x=expr) and expressions over fields, numeric
// literals and variable references are parsed as Linux parses them,
// constant expressions folded; the references and actions are in
// histvar.go.

// histFlag is a HIST_FIELD_FL_* bit.
type histFlag uint32

const (
	hfHitcount histFlag = 1 << iota
	hfKey
	hfString
	hfHex
	hfSym
	hfSymOffset
	hfExecname
	hfSyscall
	hfStacktrace
	hfLog2
	hfTimestamp
	hfTimestampUsecs
	hfVar
	hfExpr
	hfVarRef
	hfCPU
	hfAlias
	hfBucket
	hfConst
	hfPercent
	hfGraph
)

// Linux's tracing_map and hist limits.
const (
	histBitsDefault    = 11 // TRACING_MAP_BITS_DEFAULT
	histBitsMin        = 7  // TRACING_MAP_BITS_MIN
	histBitsMax        = 17 // TRACING_MAP_BITS_MAX
	histValsMax        = 3  // TRACING_MAP_VALS_MAX
	histVarsMax        = 16 // TRACING_MAP_VARS_MAX
	histKeysMax        = 3  // TRACING_MAP_KEYS_MAX
	histSortKeysMax    = 2  // TRACING_MAP_SORT_KEYS_MAX
	histKeySizeMax     = 8 * 64
	histStackDepth     = 16  // HIST_STACKTRACE_DEPTH
	histMaxFilterStr   = 256 // MAX_FILTER_STR_VAL
	histSubexprsMax    = 3
	histPrefix         = "hist:"
	histErrLocFmt      = "hist:%s:%s"
	histStackIndent    = 8
	histBarWidth       = 20
	histPercentDivisor = 10000
)

// histErr is one of trace_events_hist.c's err_text messages.
type histErr string

const (
	histErrMalformedAssignment histErr = "Malformed assignment"
	histErrTooManyVars         histErr = "Too many variables defined"
	histErrDuplicateVar        histErr = "Variable already defined"
	histErrNamedMismatch       histErr = "Named hist trigger doesn't match existing named trigger (includes variables)"
	histErrTriggerEexist       histErr = "Hist trigger already exists"
	histErrTriggerEnoentClear  histErr = "Can't clear or continue a nonexistent hist trigger"
	histErrBadFieldModifier    histErr = "Invalid field modifier"
	histErrTooManySubexpr      histErr = "Too many subexpressions (3 max)"
	histErrTimestampMismatch   histErr = "Timestamp units in expression don't match"
	histErrVarNotFound         histErr = "Couldn't find variable"
	histErrFieldNotFound       histErr = "Couldn't find field"
	histErrEmptyAssignment     histErr = "Empty assignment"
	histErrInvalidSortModifier histErr = "Invalid sort modifier"
	histErrEmptySortField      histErr = "Empty sort field"
	histErrTooManySortFields   histErr = "Too many sort fields (Max = 2)"
	histErrInvalidSortField    histErr = "Sort field must be a key or a val"
	histErrInvalidStrOperand   histErr = "String type can not be an operand in expression"
	histErrExpectNumber        histErr = "Expecting numeric literal"
	histErrUnaryMinusSubexpr   histErr = "Unary minus not supported in sub-expressions"
	histErrDivisionByZero      histErr = "Division by zero"
	histErrInvalidRefKey       histErr = "Using variable references in keys not supported"
)

// histField is a struct hist_field: a key, a value, a variable, or an
// operand of an expression.
type histField struct {
	flags    histFlag
	field    string // the event field's name; "" for none
	signed   bool
	fsize    int // the event field's size
	varName  string
	constant uint64
	op       byte // '+', '-', '*', '/', 'u' (unary minus); 0 for none
	operands [2]*histField
	buckets  uint64
	exprName string // expr_str of an expression
	size     int    // a key's bytes in the compound key
	offset   int    // a key's offset in the compound key

	// A variable reference's (histvar.go): the variable, its
	// histogram, and its index in the referencing hist's values.
	ref    *histField
	refHD  *histData
	refIdx int
	// readOnce: an expression's operand consumes the variable it
	// reads (the reference's read_once), a bare reference does not.
	readOnce bool
}

// name is hist_field_name.
func (f *histField) name(level int) string {
	if level > 1 {
		return ""
	}
	switch {
	case f.field != "":
		return f.field
	case f.flags&(hfLog2|hfAlias|hfBucket) != 0 && len(f.operands) > 0 && f.operands[0] != nil:
		return f.operands[0].name(level + 1)
	case f.flags&hfCPU != 0:
		return "common_cpu"
	case f.flags&(hfExpr|hfVarRef) != 0:
		return f.exprName
	case f.flags&hfTimestamp != 0:
		return "common_timestamp"
	}
	return ""
}

// flagsName is get_hist_field_flags.
func (f *histField) flagsName() string {
	for _, m := range []struct {
		fl histFlag
		s  string
	}{{hfHex, "hex"}, {hfSym, "sym"}, {hfSymOffset, "sym-offset"}, {hfExecname, "execname"},
		{hfSyscall, "syscall"}, {hfLog2, "log2"}, {hfBucket, "buckets"}, {hfTimestampUsecs, "usecs"},
		{hfPercent, "percent"}, {hfGraph, "graph"}} {
		if f.flags&m.fl != 0 {
			return m.s
		}
	}
	return ""
}

// print is hist_field_print.
func (f *histField) print(w *bytes.Buffer) {
	if f.varName != "" {
		fmt.Fprintf(w, "%s=", f.varName)
	}
	name := f.name(0)
	switch {
	case f.flags&hfCPU != 0:
		w.WriteString("common_cpu")
	case f.flags&hfConst != 0:
		fmt.Fprintf(w, "%d", f.constant)
	case name != "":
		if f.flags&(hfVarRef|hfAlias) != 0 {
			w.WriteByte('$')
		}
		w.WriteString(name)
	case f.flags&hfTimestamp != 0:
		w.WriteString("common_timestamp")
	}
	if f.flags&(hfVarRef|hfExpr) == 0 {
		if s := f.flagsName(); s != "" {
			fmt.Fprintf(w, ".%s", s)
		}
	}
	if f.buckets != 0 {
		fmt.Fprintf(w, "=%d", f.buckets)
	}
}

// exprFieldStr is expr_field_str.
func (f *histField) exprFieldStr(w *strings.Builder) {
	if f.flags&hfVarRef != 0 {
		w.WriteByte('$')
	} else if f.flags&hfConst != 0 {
		fmt.Fprintf(w, "%d", f.constant)
	}
	w.WriteString(f.name(0))
	if f.flags != 0 && f.flags&hfVarRef == 0 {
		if s := f.flagsName(); s != "" {
			w.WriteString("." + s)
		}
	}
}

// exprStr is expr_str at level 0.
func (f *histField) exprStr() string {
	var w strings.Builder
	if f.operands[0] == nil {
		f.exprFieldStr(&w)
		return w.String()
	}
	if f.op == 'u' {
		w.WriteString("-(")
		sub := f.operands[0]
		var s strings.Builder
		if sub.operands[0] == nil {
			sub.exprFieldStr(&s)
		} else { // expr_str at level 1 of an operator: its operands' names
			sub.operands[0].exprFieldStr(&s)
			s.WriteByte(sub.op)
			sub.operands[1].exprFieldStr(&s)
		}
		w.WriteString(s.String() + ")")
		return w.String()
	}
	f.operands[0].exprFieldStr(&w)
	w.WriteByte(f.op)
	f.operands[1].exprFieldStr(&w)
	return w.String()
}

// histHit is what a hit gives the fields: the record's fields as
// filters see them, the time and cpu, and the stack.
type histHit struct {
	fields map[string]filter.Value
	ts     uint64 // the trace clock, ns
	inNS   bool   // the clock counts nanoseconds (trace_clock_in_ns)
	cpu    int
	// refVals are the hit's variable references' values, refStrs the
	// text of those to string variables (histvar.go).
	refVals []uint64
	refStrs []string
	// t and regs unwind the stack for a stacktrace key; regs is nil
	// for a hit with no guest stack (a trace_marker write).
	t    *Tracing
	regs *kprobes.Regs
}

// value is hist_fn_call for a number.
func (f *histField) value(h *histHit) uint64 {
	switch {
	case f.flags&hfConst != 0:
		return f.constant
	case f.flags&hfVarRef != 0:
		return h.refVals[f.refIdx]
	case f.flags&hfHitcount != 0:
		return 1
	case f.flags&hfLog2 != 0:
		v := f.operands[0].value(h)
		if v <= 1 {
			return 0
		}
		return uint64(bits.Len64(v - 1)) // ilog2(roundup_pow_of_two(v))
	case f.flags&hfBucket != 0:
		return f.operands[0].value(h) / f.buckets * f.buckets
	case f.op != 0:
		a := f.operands[0].value(h)
		if f.op == 'u' {
			return uint64(-int64(a))
		}
		b := f.operands[1].value(h)
		switch f.op {
		case '+':
			return a + b
		case '-':
			return a - b
		case '*':
			return a * b
		case '/':
			if b == 0 { // div_by_not_power_of_two's guard
				return ^uint64(0)
			}
			return a / b
		}
		return 0
	case f.flags&hfTimestamp != 0:
		if f.flags&hfTimestampUsecs != 0 && h.inNS {
			return h.ts / 1000
		}
		return h.ts
	case f.flags&hfCPU != 0:
		return uint64(h.cpu)
	}
	return h.fields[f.field].Num
}

// str is hist_fn_call for a string: the field's text, or the string
// variable's a reference reads.
func (f *histField) str(h *histHit) string {
	if f.flags&hfVarRef != 0 {
		return h.refStrs[f.refIdx]
	}
	return h.fields[f.field].Str
}

// histSortKey is a struct tracing_map_sort_key: the field (nil for
// hitcount) and the direction.
type histSortKey struct {
	field      *histField
	val        int // the value's index (0 hitcount) when field is a value
	descending bool
}

// histData is a struct hist_trigger_data with its attrs: what a hist
// trigger's text defines. Named triggers share one.
type histData struct {
	name     string // "name=NAME" as written, or ""
	vals     []*histField
	vars     []*histField
	keys     []*histField
	sort     []histSortKey
	mapBits  uint
	keySize  int
	pause    bool
	cont     bool
	clear    bool
	timestmp bool // enable_timestamps
	m        *histMap

	varRefs []*histField  // hist_data->var_refs
	actions []*histAction // the onmatch actions (histvar.go)
	refBy   int           // how many other hists reference its variables; guarded by Tracing.mu

	// ta is the array whose event has the hist (hist_data->event_file->tr),
	// and fieldVarHists the hists on other events that createActions
	// made for its field variables, removed with it (histvar.go).
	ta            *TraceArray
	fieldVarHists []fieldVarHist
}

// histElt is a tracing_map_elt: one key's sums and variables, and the
// comm of the task that inserted it (for .execname).
type histElt struct {
	key    string
	sums   []uint64
	vars   []uint64
	varSet []bool // tracing_map_var_set: set since last read once
	// strs are the string variables' copies (elt_data->field_var_str),
	// by variable; nil until one is set.
	strs []string
	comm string
	// tracked and saved are each onmax/onchange action's value and
	// save() fields, by action (histvar.go); nil until one runs.
	tracked []uint64
	saved   [][]filter.Value
}

// histMap is a struct tracing_map: at most 1<<bits entries; a hit
// whose key is not there when it is full is dropped.
type histMap struct {
	mu    sync.Mutex
	elts  map[string]*histElt
	order []*histElt // insertion order, the sort's tie-break
	hits  uint64
	drops uint64
	max   int
}

func newHistMap(bits uint) *histMap {
	return &histMap{elts: map[string]*histElt{}, max: 1 << bits}
}

// clear is hist_clear (tracing_map_clear).
func (m *histMap) clear() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.elts = map[string]*histElt{}
	m.order = nil
	m.hits, m.drops = 0, 0
}

// histParser is one parse of a hist trigger: the trigger's text as
// last_cmd keeps it, for the carets of error_log.
type histParser struct {
	t       *Tracing
	ta      *TraceArray
	ev      *event
	file    *eventFile
	fields  map[string]filter.Field
	sizes   map[string]int
	lastCmd string
	loc     string
	remove  bool
	hd      *histData
}

// histErrf is hist_err: an error_log entry whose caret points at the
// first occurrence of at in the command (err_pos), and EINVAL.
func (p *histParser) err(e histErr, at string, errno syscall.Errno) error {
	pos := 0
	if at != "" {
		if i := strings.Index(p.lastCmd, at); i >= 0 {
			pos = i
		}
	}
	p.ta.errlog.add(errLogEntry{ts: p.t.now(), loc: p.loc, msg: string(e), cmd: p.lastCmd, pos: pos})
	return fmt.Errorf("%w: hist: %s", errno, e)
}

// histEventFields are the fields a hist may use, filterFields but for
// a char * field (FILTER_PTR_STRING), which a hist takes as the number
// it is, the pointer: Linux 6.1's create_hist_field does not follow
// pointers to strings, "dangerous to dereference".
func histEventFields(ev *event) map[string]filter.Field {
	m := filterFields(ev)
	if ev.static != nil {
		for _, f := range ev.static.fields {
			if f.ptrStr {
				m[f.name] = filter.Field{Signed: f.signed}
			}
		}
	}
	return m
}

// fieldSizes are the event's fields' sizes, for the strings' key sizes.
func histFieldSizes(ev *event) map[string]int {
	m := map[string]int{"common_pid": 4, "common_type": 2, "common_flags": 1, "common_preempt_count": 1}
	for _, a := range ev.args {
		if a.count == 0 {
			sz := a.typ.size
			if a.typ.str {
				sz = 0 // a dynamic string
			}
			m[a.name] = sz
		}
	}
	if ev.static != nil {
		for _, f := range ev.static.fields {
			m[f.name] = f.size
		}
	}
	if ev.marker {
		m["ip"] = 8
		m["buf"] = -1 // char buf[]: a field of size 0, which hist cannot use
	}
	if ev.synth != nil {
		for _, f := range ev.synth.fields {
			m[f.name] = f.size
			if f.str {
				m[f.name] = f.size
				if f.dynamic {
					m[f.name] = 0
				}
			}
		}
	}
	return m
}

// parseAttrs is parse_hist_trigger_attrs and parse_assignment.
func (p *histParser) parseAttrs(s string) (keys, vals, sortStr string, hasVals, hasSort bool, assigns, actions []string, err error) {
	hd := p.hd
	hasKeys := false
	for rest, more := s, true; more; {
		var str string
		str, rest, more = strsep(rest, ":")
		if i := strings.IndexByte(str, '='); i >= 0 {
			if i == len(str)-1 {
				return "", "", "", false, false, nil, nil, p.err(histErrEmptyAssignment, str, syscall.EINVAL)
			}
			switch {
			case strings.HasPrefix(str, "key="), strings.HasPrefix(str, "keys="):
				keys, hasKeys = str[i+1:], true
			case strings.HasPrefix(str, "val="), strings.HasPrefix(str, "vals="), strings.HasPrefix(str, "values="):
				vals, hasVals = str[i+1:], true
			case strings.HasPrefix(str, "sort="):
				sortStr, hasSort = str[i+1:], true
			case strings.HasPrefix(str, "name="):
				hd.name = str
			case strings.HasPrefix(str, "clock="):
				// kpemu's one guest clock serves every trace_clock;
				// the hist keeps the array's.
			case strings.HasPrefix(str, "size="):
				v, perr := kstr.Strtoull(str[i+1:], 0)
				if perr != nil {
					return "", "", "", false, false, nil, nil, fmt.Errorf("hist size %q: %w", str, perr)
				}
				b := uint(0)
				if v > 1 {
					b = uint(bits.Len64(v - 1)) // ilog2(roundup_pow_of_two(size))
				}
				if b < histBitsMin || b > histBitsMax {
					return "", "", "", false, false, nil, nil, fmt.Errorf("%w: hist size %d", syscall.EINVAL, v)
				}
				hd.mapBits = b
			default:
				if len(assigns) == histVarsMax {
					return "", "", "", false, false, nil, nil, p.err(histErrTooManyVars, str, syscall.EINVAL)
				}
				assigns = append(assigns, str)
			}
			continue
		}
		switch str {
		case "pause":
			hd.pause = true
		case "cont", "continue":
			hd.cont = true
		case "clear":
			hd.clear = true
		default:
			if strings.HasPrefix(str, "onmatch(") || strings.HasPrefix(str, "onmax(") || strings.HasPrefix(str, "onchange(") {
				if len(actions) == histActionsMax {
					return "", "", "", false, false, nil, nil, fmt.Errorf("%w: hist: too many actions", syscall.EINVAL)
				}
				actions = append(actions, str)
				continue
			}
			return "", "", "", false, false, nil, nil, fmt.Errorf("%w: hist: unknown attribute %q", syscall.EINVAL, str)
		}
	}
	if !hasKeys {
		return "", "", "", false, false, nil, nil, fmt.Errorf("%w: hist trigger without keys", syscall.EINVAL)
	}
	return keys, vals, sortStr, hasVals, hasSort, assigns, actions, nil
}

// containsOperator is contains_operator: the root operator of the
// expression and its index, the rightmost of the lowest precedence.
func containsOperator(s string) (op byte, at int) {
	minus := strings.LastIndexByte(s, '-')
	if minus == 0 {
		return 'u', 0
	}
	plus := strings.LastIndexByte(s, '+')
	if plus >= 0 || minus >= 0 {
		if plus > minus {
			return '+', plus
		}
		return '-', minus
	}
	div := strings.LastIndexByte(s, '/')
	mult := strings.LastIndexByte(s, '*')
	if mult > div {
		return '*', mult
	}
	if div >= 0 {
		return '/', div
	}
	return 0, -1
}

// parseExpr is parse_expr.
func (p *histParser) parseExpr(s string, flags histFlag, varName string, n *int) (*histField, error) {
	if *n > histSubexprsMax {
		return nil, p.err(histErrTooManySubexpr, s, syscall.EINVAL)
	}
	op, at := containsOperator(s)
	switch op {
	case 0:
		return p.parseAtom(s, flags, varName)
	case 'u':
		return p.parseUnary(s, flags, varName, n)
	}
	*n++
	s1, s2 := s[:at], s[at+1:]
	if s1 == "" || s2 == "" {
		return nil, fmt.Errorf("%w: hist: operator without an operand in %q", syscall.EINVAL, s)
	}
	o1, err := p.parseExpr(s1, 0, "", n)
	if err != nil {
		return nil, err
	}
	if o1.flags&hfString != 0 {
		return nil, p.err(histErrInvalidStrOperand, s1, syscall.EINVAL)
	}
	o2, err := p.parseExpr(s2, 0, "", n)
	if err != nil {
		return nil, err
	}
	if o2.flags&hfString != 0 {
		return nil, p.err(histErrInvalidStrOperand, s2, syscall.EINVAL)
	}
	if o1.flags&hfTimestampUsecs != o2.flags&hfTimestampUsecs {
		return nil, p.err(histErrTimestampMismatch, "", syscall.EINVAL)
	}
	consts := o1.flags&o2.flags&hfConst != 0
	if consts {
		flags |= hfConst
	} else {
		flags |= hfExpr
	}
	flags |= o1.flags & (hfTimestamp | hfTimestampUsecs)
	o1.readOnce, o2.readOnce = true, true
	e := &histField{flags: flags, varName: varName, op: op, operands: [2]*histField{o1, o2}}
	if op == '/' && o2.flags&hfConst != 0 && o2.constant == 0 {
		return nil, p.err(histErrDivisionByZero, s2, syscall.EDOM)
	}
	if consts {
		e.constant = (&histField{op: op, operands: e.operands}).value(nil)
		e.op, e.operands = 0, [2]*histField{}
		e.exprName = e.exprStr()
		return e, nil
	}
	e.fsize, e.signed = o1.fsize, o1.signed
	e.exprName = e.exprStr()
	return e, nil
}

// parseUnary is parse_unary: -(expr), the parentheses required.
func (p *histParser) parseUnary(s string, flags histFlag, varName string, n *int) (*histField, error) {
	*n++
	if *n > histSubexprsMax {
		return nil, p.err(histErrTooManySubexpr, s, syscall.EINVAL)
	}
	s = s[1:]
	if !strings.Contains(s, "(") {
		return nil, fmt.Errorf("%w: hist: unary minus without parentheses", syscall.EINVAL)
	}
	s = s[1:]
	close := strings.LastIndexByte(s, ')')
	if close < 0 {
		return nil, fmt.Errorf("%w: hist: no closing parenthesis", syscall.EINVAL)
	}
	if close != len(s)-1 {
		return nil, p.err(histErrUnaryMinusSubexpr, s, syscall.EINVAL)
	}
	s = s[:close]
	o, err := p.parseExpr(s, 0, "", n)
	if err != nil {
		return nil, err
	}
	if o.flags&hfString != 0 {
		return nil, p.err(histErrInvalidStrOperand, s, syscall.EINVAL)
	}
	e := &histField{flags: flags | hfExpr | o.flags&(hfTimestamp|hfTimestampUsecs), varName: varName, op: 'u',
		operands: [2]*histField{o}, fsize: o.fsize, signed: o.signed}
	e.exprName = e.exprStr()
	return e, nil
}

// parseAtom is parse_atom and parse_field: a numeric literal, a field
// with an optional .modifier, or a variable reference.
func (p *histParser) parseAtom(s string, flags histFlag, varName string) (*histField, error) {
	if s != "" && isDigit(s[0]) {
		v, err := kstr.Strtoull(s, 0)
		if err != nil {
			return nil, p.err(histErrExpectNumber, s, syscall.EINVAL)
		}
		return &histField{flags: flags | hfConst, constant: v, varName: varName, fsize: 8}, nil
	}
	// parse_var_ref; a reference not found is logged, and then looked
	// up as a field, as Linux does.
	if r, ok, err := p.parseVarRef(s, varName); err != nil {
		return nil, err
	} else if ok {
		return r, nil
	}
	name, modifier, hasMod := strsep(s, ".")
	var buckets uint64
	if hasMod {
		switch {
		case modifier == "hex":
			flags |= hfHex
		case modifier == "sym":
			flags |= hfSym
		case modifier == "symXoffset":
			flags |= hfSymOffset
		case modifier == "execname" && name == "common_pid":
			flags |= hfExecname
		case modifier == "syscall":
			flags |= hfSyscall
		case modifier == "log2":
			flags |= hfLog2
		case modifier == "usecs":
			flags |= hfTimestampUsecs
		case strings.HasPrefix(modifier, "bucket"):
			// The caret goes where the C pointer stopped: past
			// "bucket[s]", past the '=' if there is one.
			m := strings.TrimPrefix(strings.TrimPrefix(modifier, "bucket"), "s")
			if !strings.HasPrefix(m, "=") {
				return nil, p.err(histErrBadFieldModifier, m, syscall.EINVAL)
			}
			m = m[1:]
			v, err := kstr.Strtoull(m, 0)
			if err != nil || v == 0 {
				return nil, p.err(histErrBadFieldModifier, m, syscall.EINVAL)
			}
			buckets = v
			flags |= hfBucket
		case strings.HasPrefix(modifier, "percent") && flags&(hfVar|hfKey) == 0:
			flags |= hfPercent
		case strings.HasPrefix(modifier, "graph") && flags&(hfVar|hfKey) == 0:
			flags |= hfGraph
		default:
			return nil, p.err(histErrBadFieldModifier, modifier, syscall.EINVAL)
		}
	}
	f := &histField{varName: varName, buckets: buckets}
	switch name {
	case "common_timestamp":
		flags |= hfTimestamp
		p.hd.timestmp = true
		f.fsize = 8
	case "common_cpu":
		flags |= hfCPU
		f.fsize = 4
	case "cpu", "CPU": // the generic FILTER_CPU fields: named so, read as common_cpu
		flags |= hfCPU
		f.field, f.fsize = name, 4
	default:
		ff, ok := p.fields[name]
		size, own := p.sizes[name]
		// The generic comm and COMM fields have no size (an event's
		// own comm field has).
		if !ok || size < 0 || ((name == "comm" || name == "COMM") && !own) {
			return nil, p.err(histErrFieldNotFound, name, syscall.EINVAL)
		}
		f.field, f.signed, f.fsize = name, ff.Signed, size
		if ff.Str {
			flags |= hfString
			if size == 0 {
				f.fsize = histMaxFilterStr
			}
		}
	}
	if flags&(hfLog2|hfBucket) != 0 {
		inner := *f
		inner.flags = flags &^ (hfLog2 | hfBucket)
		inner.varName, inner.buckets = "", 0
		f.operands[0] = &inner
		f.field = ""
	}
	f.flags = flags
	return f, nil
}

// createValField is __create_val_field: a value or a variable.
func (p *histParser) createValField(s string, flags histFlag, varName string) (*histField, error) {
	n := 0
	f, err := p.parseExpr(s, flags, varName, &n)
	if err != nil {
		return nil, err
	}
	// Debian's 6.1 takes .percent and .graph on values (the checks
	// that refuse them came later).
	bad := hfBucket | hfLog2
	if f.flags&hfVar != 0 {
		bad |= hfGraph | hfPercent
	} else {
		bad |= hfSym | hfSymOffset | hfSyscall | hfStacktrace
	}
	if f.flags&bad != 0 {
		return nil, p.err(histErrBadFieldModifier, s, syscall.EINVAL)
	}
	return f, nil
}

// createFields is create_hist_fields and create_sort_keys.
func (p *histParser) createFields(keys, vals, sortStr string, hasVals, hasSort bool, assigns []string) error {
	hd := p.hd
	// parse_var_defs
	type varDef struct{ name, expr string }
	var defs []varDef
	for _, a := range assigns {
		for rest, more := a, true; more && len(defs) <= histVarsMax; {
			var fs string
			fs, rest, more = strsep(rest, ",")
			name, expr, ok := strsep(fs, "=")
			if !ok {
				return p.err(histErrMalformedAssignment, name, syscall.EINVAL)
			}
			if len(defs) == histVarsMax {
				return p.err(histErrTooManyVars, name, syscall.EINVAL)
			}
			defs = append(defs, varDef{name, expr})
		}
	}
	// create_val_fields
	hd.vals = []*histField{{flags: hfHitcount, fsize: 8}}
	if hasVals {
		rest, more := vals, true
		for i := 0; more && i < histValsMax && len(hd.vals) < histValsMax; i++ {
			var fs string
			fs, rest, more = strsep(rest, ",")
			if fs == "hitcount" {
				continue
			}
			f, err := p.createValField(fs, 0, "")
			if err != nil {
				return err
			}
			hd.vals = append(hd.vals, f)
		}
		if more && rest != "hitcount" {
			return fmt.Errorf("%w: hist: too many values", syscall.EINVAL)
		}
	}
	// create_var_fields
	for _, d := range defs {
		// find_var: the hist's own variables, and those of the other
		// hists on the event.
		dup, _ := varIn(p.file, d.name)
		for _, v := range hd.vars {
			if v.varName == d.name {
				dup = v
			}
		}
		if dup != nil && !p.remove {
			return p.err(histErrDuplicateVar, d.name, syscall.EINVAL)
		}
		f, err := p.createValField(d.expr, hfVar, d.name)
		if err != nil {
			return err
		}
		hd.vars = append(hd.vars, f)
	}
	// create_key_fields
	rest, more := keys, true
	for i := 0; more && i < histKeysMax; i++ {
		var fs string
		fs, rest, more = strsep(rest, ",")
		var f *histField
		size := 0
		if fs == "stacktrace" {
			f = &histField{flags: hfKey | hfStacktrace}
			size = 8 * histStackDepth
		} else {
			n := 0
			var err error
			if f, err = p.parseExpr(fs, hfKey, "", &n); err != nil {
				return err
			}
			if f.flags&hfString != 0 {
				size = f.fsize
			} else {
				size = 8
			}
		}
		size = (size + 7) &^ 7
		f.size, f.offset = size, hd.keySize
		hd.keySize += size
		if hd.keySize > histKeySizeMax {
			return fmt.Errorf("%w: hist: the keys are too large", syscall.EINVAL)
		}
		hd.keys = append(hd.keys, f)
	}
	if more {
		return fmt.Errorf("%w: hist: too many keys", syscall.EINVAL)
	}
	// create_sort_keys
	hd.sort = []histSortKey{{}}
	if !hasSort {
		return nil
	}
	hd.sort = hd.sort[:0]
	rest, more = sortStr, true
	for i := 0; i < histSortKeysMax && more; i++ {
		var fs string
		fs, rest, more = strsep(rest, ",")
		if fs == "" {
			return p.err(histErrEmptySortField, "sort=", syscall.EINVAL)
		}
		if i == histSortKeysMax-1 && more {
			return p.err(histErrTooManySortFields, "sort=", syscall.EINVAL)
		}
		name, mod, hasMod := strsep(fs, ".")
		if name == "" {
			return p.err(histErrEmptySortField, "sort=", syscall.EINVAL)
		}
		desc := false
		if hasMod {
			switch mod {
			case "descending":
				desc = true
			case "ascending":
			default:
				return p.err(histErrInvalidSortModifier, mod, syscall.EINVAL)
			}
		}
		if name == "hitcount" {
			hd.sort = append(hd.sort, histSortKey{descending: desc})
			continue
		}
		found := false
		for j, v := range hd.vals[1:] {
			if v.name(0) == name {
				hd.sort = append(hd.sort, histSortKey{field: v, val: j + 1, descending: desc})
				found = true
				break
			}
		}
		for _, k := range hd.keys {
			if !found && k.name(0) == name {
				hd.sort = append(hd.sort, histSortKey{field: k, val: -1, descending: desc})
				found = true
			}
		}
		if !found {
			return p.err(histErrInvalidSortField, name, syscall.EINVAL)
		}
	}
	if len(hd.sort) == 0 { // Linux leaves n_sort_keys at the loop's count
		hd.sort = []histSortKey{{}}
	}
	return nil
}

// printSpec is event_hist_trigger_print up to the filter and the state.
func (hd *histData) printSpec(w *bytes.Buffer) {
	w.WriteString(histPrefix)
	if hd.name != "" {
		w.WriteString(hd.name + ":")
	}
	w.WriteString("keys=")
	for i, k := range hd.keys {
		if i > 0 {
			w.WriteByte(',')
		}
		if k.flags&hfStacktrace != 0 {
			w.WriteString("stacktrace")
		} else {
			k.print(w)
		}
	}
	w.WriteString(":vals=hitcount")
	for _, v := range hd.vals[1:] {
		w.WriteByte(',')
		v.print(w)
	}
	if len(hd.vars) > 0 {
		w.WriteByte(':')
		for i, v := range hd.vars {
			if i > 0 {
				w.WriteByte(',')
			}
			v.print(w)
		}
	}
	w.WriteString(":sort=")
	for i, s := range hd.sort {
		if i > 0 {
			w.WriteByte(',')
		}
		if s.field == nil {
			w.WriteString("hitcount")
		} else {
			s.field.print(w)
		}
		if s.descending {
			w.WriteString(".descending")
		}
	}
	fmt.Fprintf(w, ":size=%d", 1<<hd.mapBits)
	if hd.timestmp {
		w.WriteString(":clock=global")
	}
	for _, a := range hd.actions {
		a.spec(w)
	}
}

// matchKey is what hist_trigger_match compares of two triggers' fields
// and sort keys (not the size, the name, the filter or the state).
func (hd *histData) matchKey() string {
	var w strings.Builder
	for _, set := range [][]*histField{hd.vals, hd.vars, hd.keys} {
		for _, f := range set {
			fmt.Fprintf(&w, "%x/%s/%d/%d/%t/%s/%s;", f.flags, f.field, f.offset, f.size, f.signed, f.varName, f.exprName)
		}
		w.WriteByte('|')
	}
	for _, s := range hd.sort {
		idx := 0
		if s.field != nil {
			idx = s.val
			if s.val < 0 {
				for i, k := range hd.keys {
					if k == s.field {
						idx = len(hd.vals) + i
					}
				}
			}
		}
		fmt.Fprintf(&w, "%d.%t,", idx, s.descending)
	}
	var b bytes.Buffer
	for _, a := range hd.actions {
		a.spec(&b)
	}
	return w.String() + b.String()
}

// histTrigger is a hist trigger's own: its data, perhaps a named
// trigger's shared one.
type histTrigger struct {
	hd *histData
}

// parseHistTrigger is event_hist_trigger_parse; t.mu is held.
func (t *Tracing) parseHistTrigger(ev *eventFile, remove bool, next string, hasNext bool) error {
	p := &histParser{t: t, ta: ev.ta, ev: ev.ev, file: ev, fields: histEventFields(ev.ev), sizes: histFieldSizes(ev.ev),
		lastCmd: histPrefix + next, loc: fmt.Sprintf(histErrLocFmt, ev.ev.group, ev.ev.name), remove: remove,
		hd: &histData{mapBits: histBitsDefault, ta: ev.ta}}
	if !hasNext {
		return fmt.Errorf("%w: hist needs keys", syscall.EINVAL)
	}
	// Separate the trigger from " if filter", the "if" a word of its own.
	param, filterStr, hasFilter := next, "", false
	for i := 0; ; {
		j := strings.Index(next[i:], "if")
		if j < 0 {
			break
		}
		j += i
		if j == 0 {
			return fmt.Errorf("%w: hist trigger starts with if", syscall.EINVAL)
		}
		if next[j-1] != ' ' && next[j-1] != '\t' {
			i = j + 1
			continue
		}
		if j >= len(next)-len("if")-1 {
			return fmt.Errorf("%w: hist trigger ends with if", syscall.EINVAL)
		}
		if next[j+2] != ' ' && next[j+2] != '\t' {
			i = j + 1
			continue
		}
		param = strings.TrimFunc(next[:j-1], isSpaceRune)
		filterStr, hasFilter = strings.TrimFunc(next[j:], isSpaceRune), true
		break
	}
	// .sym-offset becomes .symXoffset, so that its '-' is no operator.
	param = strings.ReplaceAll(param, ".sym-offset", ".symXoffset")
	keys, vals, sortStr, hasVals, hasSort, assigns, actions, err := p.parseAttrs(param)
	if err != nil {
		return err
	}
	if err := p.parseActions(actions); err != nil {
		return err
	}
	if err := p.createFields(keys, vals, sortStr, hasVals, hasSort, assigns); err != nil {
		return err
	}
	hd := p.hd
	tr := &trigger{cmd: triggerCmd{name: "hist", typ: ettHist}, hist: &histTrigger{hd: hd}}
	tr.count.Store(-1)
	if hasFilter {
		if err := setTriggerFilter(tr, ev.ev, filterStr); err != nil {
			return err
		}
	}
	named := t.namedHists[hd.name]
	if remove {
		if o := t.findHist(ev, tr, named); o != nil && o.hist.hd.refBy > 0 {
			return fmt.Errorf("%w: hist: its variables are referenced", syscall.EBUSY) // hist_trigger_check_refs
		}
		t.unregisterHist(ev, tr, named)
		return nil
	}
	// existing_hist_update_only
	if hd.pause || hd.cont || hd.clear {
		if hd.name == "" || (named != nil && histMatch(tr, named, named, true)) {
			if o := t.findHist(ev, tr, named); o != nil {
				switch {
				case hd.pause:
					o.paused.Store(true)
				case hd.cont:
					o.paused.Store(false)
				default:
					o.hist.hd.m.clear()
				}
				return nil
			}
		}
	}
	// The actions of a new hist (not of one more trigger of a named
	// one) take their variables and the snapshot now; a registration
	// that fails lets the snapshot go (destroy_hist_data).
	if named == nil {
		if err := p.createActions(); err != nil {
			t.releaseSnapshot(hd)
			return err
		}
	}
	if err := t.registerNewHist(p, ev, tr, named); err != nil {
		t.releaseSnapshot(hd)
		return err
	}
	return nil
}

// registerNewHist is hist_register_trigger and hist_trigger_enable for
// a trigger that is neither a removal nor an update of an existing one.
func (t *Tracing) registerNewHist(p *histParser, ev *eventFile, tr, named *trigger) error {
	hd := p.hd
	if hd.name != "" && named != nil && !histMatch(tr, named, named, true) {
		return p.err(histErrNamedMismatch, hd.name, syscall.EINVAL)
	}
	if hd.name == "" || named != nil {
		if t.findHist(ev, tr, named) != nil {
			return p.err(histErrTriggerEexist, "", syscall.EEXIST)
		}
	}
	if hd.cont || hd.clear {
		return p.err(histErrTriggerEnoentClear, "", syscall.ENOENT)
	}
	tr.paused.Store(hd.pause)
	if named != nil {
		tr.hist.hd = named.hist.hd
		tr.named = named
	} else {
		hd.m = newHistMap(hd.mapBits)
		if hd.name != "" {
			t.namedHists[hd.name] = tr
		}
	}
	tr.namedRefs = 1
	if named != nil {
		named.namedRefs++
	}
	if err := t.registerHistTrigger(ev, tr); err != nil {
		t.dropNamed(tr)
		return err
	}
	if named == nil {
		hd.refOthers(1)
	}
	return nil
}

// histMatch is hist_trigger_match.
func histMatch(data, test, named *trigger, ignoreFilter bool) bool {
	if named != nil && named != test && named != test.named {
		return false
	}
	if named == nil && test.hist.hd.name != "" { // is_named_trigger
		return false
	}
	if !ignoreFilter && ((data.filter == nil) != (test.filter == nil) || data.filterText != test.filterText) {
		return false
	}
	return data.hist.hd.matchKey() == test.hist.hd.matchKey()
}

// findHist finds the hist trigger of ev that data matches.
func (t *Tracing) findHist(ev *eventFile, data, named *trigger) *trigger {
	set := ev.triggers.Load()
	if set == nil {
		return nil
	}
	for _, o := range set.list {
		if o.cmd.typ == ettHist && histMatch(data, o, named, false) {
			return o
		}
	}
	return nil
}

// registerHistTrigger is hist_trigger_enable: a hist trigger goes to the
// tail of the event's list (list_add_tail_rcu), and there may be many.
func (t *Tracing) registerHistTrigger(ev *eventFile, tr *trigger) error {
	old := ev.triggers.Load()
	var list []*trigger
	if old != nil {
		list = old.list
	}
	ev.triggers.Store(newTriggerSet(append(append([]*trigger(nil), list...), tr)))
	if err := t.enableDisable(ev, true, true); err != nil {
		ev.triggers.Store(old)
		return err
	}
	return nil
}

// dropNamed releases tr's hold on its named data (event_hist_trigger_free
// and the named ops' free).
func (t *Tracing) dropNamed(tr *trigger) {
	owner := tr
	if tr.named != nil {
		owner = tr.named
	}
	owner.namedRefs--
	if owner.namedRefs > 0 {
		return
	}
	owner.hist.hd.refOthers(-1)
	if owner.hist.hd.name != "" && t.namedHists[owner.hist.hd.name] == owner {
		delete(t.namedHists, owner.hist.hd.name)
	}
	t.releaseSnapshot(owner.hist.hd)
	t.unregisterFieldVarHists(owner.hist.hd)
}

// unregisterHist is hist_unregister_trigger: removes the hist trigger of
// ev that tr matches, if any.
func (t *Tracing) unregisterHist(ev *eventFile, tr, named *trigger) {
	old := ev.triggers.Load()
	if old == nil {
		return
	}
	for i, o := range old.list {
		if o.cmd.typ != ettHist || !histMatch(tr, o, named, false) {
			continue
		}
		list := append(append([]*trigger(nil), old.list[:i]...), old.list[i+1:]...)
		ev.triggers.Store(newTriggerSet(list))
		if err := t.enableDisable(ev, false, true); err != nil {
			t.log.Warn("hist: leaving soft mode", "event", ev.ev.key(), "err", err)
		}
		t.dropNamed(o)
		return
	}
}

// unregAllHist is hist_unreg_all and hist_enable_unreg_all: opening the
// trigger file with O_TRUNC removes every hist, enable_hist and
// disable_hist trigger. t.mu is held.
func (t *Tracing) unregAllHist(ev *eventFile) {
	old := ev.triggers.Load()
	if old == nil {
		return
	}
	for _, o := range old.list {
		if o.hist != nil && o.hist.hd.refBy > 0 {
			return // hist_file_check_refs: nothing goes
		}
	}
	var keep []*trigger
	for _, o := range old.list {
		if o.cmd.typ != ettHist && o.cmd.typ != ettHistEnable {
			keep = append(keep, o)
		}
	}
	ev.triggers.Store(newTriggerSet(keep))
	for _, o := range old.list {
		switch o.cmd.typ {
		case ettHist:
			t.dropNamed(o)
		case ettHistEnable:
			if err := t.enableDisable(o.target, false, true); err != nil {
				t.log.Warn("hist: leaving soft mode", "event", o.target.ev.key(), "err", err)
			}
		default:
			continue
		}
		if err := t.enableDisable(ev, false, true); err != nil {
			t.log.Warn("hist: leaving soft mode", "event", ev.ev.key(), "err", err)
		}
	}
}

// histTrigger runs a hist trigger on one hit (event_hist_trigger): the
// compound key from the key fields, then the entry's sums and variables.
func (hd *histData) hit(h *histHit, comm string) {
	var kb [histKeySizeMax]byte
	key := kb[:hd.keySize]
	for _, k := range hd.keys {
		switch {
		case k.flags&hfStacktrace != 0:
			var st []uint64
			if h.regs != nil {
				st = h.t.unwind(h.regs.CPU, h.regs.PC, h.regs.X[29])
			}
			for i := 0; i < len(st) && i < histStackDepth; i++ {
				binary.LittleEndian.PutUint64(key[k.offset+8*i:], st[i])
			}
		case k.flags&hfString != 0:
			s := h.fields[k.field].Str
			if len(s) > k.size-1 {
				s = s[:k.size-1]
			}
			copy(key[k.offset:], s)
		default:
			binary.LittleEndian.PutUint64(key[k.offset:], k.value(h))
		}
	}
	if n := len(hd.varRefs); n > 0 {
		h.refVals, h.refStrs = make([]uint64, n), make([]string, n)
		// The other histograms' variables for this key, or no hit.
		if !hd.resolveRefs(string(key), h, false, nil) {
			return
		}
	}
	m := hd.m
	m.mu.Lock()
	m.hits++
	e := m.elts[string(key)]
	if e == nil {
		if len(m.elts) >= m.max {
			m.drops++
			m.mu.Unlock()
			return
		}
		e = &histElt{key: string(key), sums: make([]uint64, len(hd.vals)), vars: make([]uint64, len(hd.vars)), varSet: make([]bool, len(hd.vars)), comm: comm}
		m.elts[e.key] = e
		m.order = append(m.order, e)
	}
	for i, v := range hd.vals {
		e.sums[i] += v.value(h)
	}
	for i, v := range hd.vars {
		if v.flags&hfString != 0 {
			// The variable keeps a copy of the text, at most its
			// field's size or STR_VAR_LEN_MAX less the NUL.
			if e.strs == nil {
				e.strs = make([]string, len(hd.vars))
			}
			s := v.str(h)
			if n := min(v.fsize, strVarLenMax) - 1; len(s) > n {
				s = s[:max(n, 0)]
			}
			e.strs[i] = s
		} else {
			e.vars[i] = v.value(h)
		}
		e.varSet[i] = true
	}
	var fire []*histAction
	var snaps []histSnapHit
	if len(hd.actions) > 0 && hd.resolveRefs(e.key, h, true, e) {
		fire, snaps = hd.track(h, e)
	}
	m.mu.Unlock()
	if len(fire) > 0 {
		hd.runActions(h, comm, fire)
	}
	for i := range snaps {
		hd.snapshot(h, &snaps[i])
	}
}

// refOthers counts hd's references to other histograms' variables in
// theirs (d 1 when hd is registered, -1 when it goes); t.mu is held.
func (hd *histData) refOthers(d int) {
	seen := map[*histData]bool{}
	for _, r := range hd.varRefs {
		if r.refHD != hd && !seen[r.refHD] {
			seen[r.refHD] = true
			r.refHD.refBy += d
		}
	}
}

// keyNum is a key field's number in an entry's key.
func (e *histElt) keyNum(k *histField) uint64 {
	return binary.LittleEndian.Uint64([]byte(e.key[k.offset : k.offset+8]))
}

// printKey is hist_trigger_print_key.
func (t *Tracing) printHistKey(w *bytes.Buffer, hd *histData, e *histElt) {
	w.WriteString("{ ")
	multiline := false
	syms := t.kp.Kernel().Kallsyms()
	for i, k := range hd.keys {
		if i > 0 {
			w.WriteString(", ")
		}
		name := k.name(0)
		switch {
		case k.flags&hfHex != 0:
			fmt.Fprintf(w, "%s: %x", name, e.keyNum(k))
		case k.flags&hfSym != 0:
			v := e.keyNum(k)
			s := fmt.Sprintf("0x%x", v)
			if sym, _, ok := syms.LookupAddr(v); ok {
				s = sym.Name
			}
			fmt.Fprintf(w, "%s: [%x] %-45s", name, v, s)
		case k.flags&hfSymOffset != 0:
			v := e.keyNum(k)
			fmt.Fprintf(w, "%s: [%x] %-55s", name, v, syms.Format(v))
		case k.flags&hfExecname != 0:
			fmt.Fprintf(w, "%s: %-16s[%10d]", name, e.comm, e.keyNum(k))
		case k.flags&hfSyscall != 0:
			fmt.Fprintf(w, "%s: %-30s[%3d]", name, "unknown_syscall", e.keyNum(k))
		case k.flags&hfStacktrace != 0:
			w.WriteString("stacktrace:\n")
			for j := 0; j < histStackDepth; j++ {
				a := binary.LittleEndian.Uint64([]byte(e.key[k.offset+8*j:]))
				if a == 0 {
					break
				}
				fmt.Fprintf(w, "%*c%s\n", 1+histStackIndent, ' ', syms.Format(a))
			}
			multiline = true
		case k.flags&hfLog2 != 0:
			fmt.Fprintf(w, "%s: ~ 2^%-2d", name, e.keyNum(k))
		case k.flags&hfBucket != 0:
			v := e.keyNum(k)
			fmt.Fprintf(w, "%s: ~ %d-%d", name, v, v+k.buckets-1)
		case k.flags&hfString != 0:
			s := e.key[k.offset : k.offset+k.size]
			if j := strings.IndexByte(s, 0); j >= 0 {
				s = s[:j]
			}
			fmt.Fprintf(w, "%s: %-50s", name, s)
		default:
			fmt.Fprintf(w, "%s: %10d", name, e.keyNum(k))
		}
	}
	if !multiline {
		w.WriteByte(' ')
	}
	w.WriteByte('}')
}

// percentage is __get_percentage: 100 times val's percent of total.
func percentage(val, total uint64) uint64 {
	if total == 0 {
		if val != 0 {
			return 1<<32 - 1
		}
		return 0
	}
	if val < ^uint64(0)/histPercentDivisor {
		return val * histPercentDivisor / total
	}
	total /= histPercentDivisor
	if total == 0 {
		if val != 0 {
			return 1<<32 - 1
		}
		return 0
	}
	return val / total
}

// printVal is hist_trigger_print_val.
func printHistVal(w *bytes.Buffer, name string, f *histField, val, total, max uint64) {
	switch {
	case f != nil && f.flags&hfPercent != 0:
		if pc := percentage(val, total); pc == 1<<32-1 {
			fmt.Fprintf(w, " %s (%%):[ERROR]", name)
		} else {
			fmt.Fprintf(w, " %s (%%): %3d.%02d", name, pc/100, pc%100)
		}
	case f != nil && f.flags&hfGraph != 0:
		pc := percentage(val, max)
		if pc == 1<<32-1 {
			fmt.Fprintf(w, " %s: %20s", name, "[ERROR]")
			return
		}
		n := int(pc * histBarWidth / histPercentDivisor)
		fmt.Fprintf(w, " %s: %s%s", name, strings.Repeat("#", min(n, histBarWidth)), strings.Repeat(" ", histBarWidth-min(n, histBarWidth)))
	case f != nil && f.flags&hfHex != 0:
		fmt.Fprintf(w, " %s: %10x", name, val)
	default:
		fmt.Fprintf(w, " %s: %10d", name, val)
	}
}

// sortedEntries is tracing_map_sort_entries.
func (hd *histData) sortedEntries() ([]*histElt, uint64, uint64) {
	m := hd.m
	m.mu.Lock()
	es := make([]*histElt, len(m.order))
	for i, e := range m.order {
		es[i] = &histElt{key: e.key, sums: append([]uint64(nil), e.sums...), comm: e.comm, tracked: append([]uint64(nil), e.tracked...)}
		for _, sv := range e.saved {
			es[i].saved = append(es[i].saved, append([]filter.Value(nil), sv...))
		}
	}
	hits, drops := m.hits, m.drops
	m.mu.Unlock()
	cmp := func(a, b *histElt, s histSortKey) int {
		if s.field == nil || s.val >= 0 {
			x, y := a.sums[s.val], b.sums[s.val]
			return compareU(x, y)
		}
		k := s.field
		if k.flags&hfString != 0 {
			return strings.Compare(trimNul(a.key[k.offset:k.offset+k.size]), trimNul(b.key[k.offset:k.offset+k.size]))
		}
		if k.flags&hfStacktrace != 0 {
			return 0
		}
		x, y := a.keyNum(k), b.keyNum(k)
		if k.signed {
			return compareS(int64(x), int64(y))
		}
		return compareU(x, y)
	}
	sort.SliceStable(es, func(i, j int) bool {
		for _, s := range hd.sort {
			c := cmp(es[i], es[j], s)
			if s.descending {
				c = -c
			}
			if c != 0 {
				return c < 0
			}
		}
		return false
	})
	return es, hits, drops
}

func trimNul(s string) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return s[:i]
	}
	return s
}

func compareU(x, y uint64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func compareS(x, y int64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// printHistTrigger is event_hist_trigger_print (and the named ops',
// which print the named trigger).
func (tr *trigger) printHist(w *bytes.Buffer) {
	src := tr
	if tr.named != nil {
		src = tr.named
	}
	src.hist.hd.printSpec(w)
	if src.filter != nil {
		fmt.Fprintf(w, " if %s", src.filterText)
	}
	if src.paused.Load() {
		w.WriteString(" [paused]\n")
	} else {
		w.WriteString(" [active]\n")
	}
}

// showHist is the hist file's read (hist_show): each hist trigger's
// histogram, in the trigger list's order.
func (t *Tracing) showHist(ev *eventFile, w *bytes.Buffer) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.eventGone(ev) {
		return syscall.ENODEV
	}
	set := ev.triggers.Load()
	if set == nil {
		return nil
	}
	n := 0
	for _, tr := range set.list {
		if tr.cmd.typ != ettHist {
			continue
		}
		if n > 0 {
			w.WriteString("\n\n")
		}
		n++
		w.WriteString("# event histogram\n#\n# trigger info: ")
		tr.printHist(w)
		w.WriteString("#\n\n")
		hd := tr.hist.hd
		es, hits, drops := hd.sortedEntries()
		totals := make([]uint64, len(hd.vals))
		maxes := make([]uint64, len(hd.vals))
		for _, e := range es {
			for j, v := range e.sums {
				totals[j] += v
				maxes[j] = max(maxes[j], v)
			}
		}
		for _, e := range es {
			t.printHistKey(w, hd, e)
			printHistVal(w, "hitcount", nil, e.sums[0], totals[0], maxes[0])
			for j, v := range hd.vals[1:] {
				w.WriteByte(' ')
				printHistVal(w, v.name(0), v, e.sums[j+1], totals[j+1], maxes[j+1])
			}
			hd.printTracked(w, e)
			w.WriteByte('\n')
		}
		t.printHistSnapshot(w, hd)
		fmt.Fprintf(w, "\nTotals:\n    Hits: %d\n    Entries: %d\n    Dropped: %d\n", hits, len(es), drops)
	}
	return nil
}

func isSpaceRune(r rune) bool { return r < 0x80 && isSpace(byte(r)) }

// dropHists takes every hist trigger off f whatever references them, as
// an instance's removal does (clear_event_triggers); t.mu is held.
func (t *Tracing) dropHists(f *eventFile) {
	old := f.triggers.Load()
	if old == nil {
		return
	}
	var keep []*trigger
	for _, o := range old.list {
		if o.hist == nil {
			keep = append(keep, o)
			continue
		}
		t.dropNamed(o)
		if err := t.enableDisable(f, false, true); err != nil {
			t.log.Warn("hist: leaving soft mode", "event", f.ev.key(), "err", err)
		}
	}
	f.triggers.Store(newTriggerSet(keep))
}
