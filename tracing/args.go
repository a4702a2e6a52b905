package tracing

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"

	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/tracing/internal/kstr"
)

// Fetch-argument parsing, after Linux 6.1's kernel/trace/trace_probe.c
// (traceprobe_parse_probe_arg and parse_probe_arg).

const (
	maxArgNameLen = 32   // MAX_ARG_NAME_LEN
	maxArgStrLen  = 63   // MAX_ARGSTR_LEN
	maxArrayLen   = 64   // MAX_ARRAY_LEN
	paramMaxStack = 2048 // PARAM_MAX_STACK: THREAD_SIZE / sizeof(long) on arm64
	fetchInsnMax  = 16   // FETCH_INSN_MAX
)

// fetchType is a fetch_type: how a value is sized and printed.
type fetchType struct {
	name   string
	size   int // bytes
	signed bool
	hex    bool
	str    bool // string / ustring / symstr
	user   bool // ustring
	symstr bool // symstr: the value's symbol, as %pS, stored as a string
	symbol bool
}

// findFetchType is find_fetch_type. An empty name (":" with nothing
// after it) is no type; an argument without ":" has the default, x64
// (DEFAULT_FETCH_TYPE on 64-bit), which the caller asks for.
func findFetchType(t string) (fetchType, bool) {
	if t == "" {
		return fetchType{}, false
	}
	if t[0] == 'b' { // bitfield: its container type
		i := strings.IndexByte(t, '/')
		if i < 0 {
			return fetchType{}, false
		}
		bs, err := strconv.ParseUint(t[i+1:], 0, 64)
		if err != nil {
			return fetchType{}, false
		}
		switch bs {
		case 8, 16, 32, 64:
			return findFetchType(fmt.Sprintf("u%d", bs))
		}
		return fetchType{}, false
	}
	switch t {
	// Linux's string types are is_signed (probe_fetch_types), which
	// format files show as "signed:1".
	case "string":
		return fetchType{name: t, size: 4, signed: true, str: true}, true
	case "ustring":
		return fetchType{name: t, size: 4, signed: true, str: true, user: true}, true
	case "symstr":
		return fetchType{name: t, size: 4, signed: true, str: true, symstr: true}, true
	case "symbol":
		return fetchType{name: t, size: 8, hex: true, symbol: true}, true
	}
	for _, w := range []int{8, 16, 32, 64} {
		switch t {
		case fmt.Sprintf("u%d", w):
			return fetchType{name: t, size: w / 8}, true
		case fmt.Sprintf("s%d", w):
			return fetchType{name: t, size: w / 8, signed: true}, true
		case fmt.Sprintf("x%d", w):
			return fetchType{name: t, size: w / 8, hex: true}, true
		}
	}
	return fetchType{}, false
}

// fetchOp is one step of a fetch program.
type fetchOp int

const (
	opNop fetchOp = iota
	opReg
	opStackP
	opStack
	opRetval
	opComm
	opArg
	opImm
	opData
	opDeref
	opUDeref
	opFileOffs // uprobes' @+OFFSET: the probed file's load address plus imm
	opTPArg    // an event probe's $FIELD: the attached event's field (FETCH_OP_TP_ARG)
	opTPComm   // an event probe's $comm: the address of current->comm
)

type fetchInsn struct {
	op     fetchOp
	param  uint64 // register index, stack slot, arg index
	imm    uint64
	offset int64
	data   string
	field  *epField // opTPArg: the attached event's field, once resolved
}

// probeArg is a probe_arg: one named, typed fetch argument.
type probeArg struct {
	name   string
	comm   string // the argument's original text after NAME=
	typ    fetchType
	count  int // array length, 0 for a scalar
	code   []fetchInsn
	bitW   int // bitfield width, 0 for none
	bitOff int
}

type argContext struct {
	isReturn    bool
	atFuncEntry bool
	user        bool // a uprobe's argument: Linux parses without TPARG_FL_KERNEL
	tpoint      bool // an event probe's argument (TPARG_FL_TPOINT): $NAME is a field
}

// reservedFieldNames cannot be argument names (traceprobe_conflict_field_name).
var reservedFieldNames = [...]string{"common_type", "common_flags", "common_preempt_count", "common_pid", "common_tgid", "__probe_ip", "__probe_ret_ip", "__probe_func"}

// parseProbeArg is traceprobe_parse_probe_arg for argument i.
func parseProbeArg(arg string, i int, prev []*probeArg, ctx argContext, syms *kernel.Kallsyms, pl *probeLog) (*probeArg, error) {
	pa := &probeArg{}
	body := arg
	if eq := strings.IndexByte(arg, '='); eq >= 0 {
		if eq > maxArgNameLen {
			return nil, parseError(pl, 0, errArgNameTooLong)
		}
		if eq == 0 {
			return nil, parseError(pl, 0, errNoArgName)
		}
		pa.name = arg[:eq]
		body = arg[eq+1:]
	} else {
		pa.name = fmt.Sprintf("arg%d", i+1)
	}
	if !isGoodName(pa.name) {
		return nil, parseError(pl, 0, errBadArgName)
	}
	for _, r := range reservedFieldNames {
		if r == pa.name {
			return nil, parseError(pl, 0, errUsedArgName)
		}
	}
	for _, p := range prev {
		if p.name == pa.name {
			return nil, parseError(pl, 0, errUsedArgName)
		}
	}
	if err := parseArgBody(pa, body, len(arg)-len(body), ctx, syms, pl); err != nil {
		return nil, err
	}
	return pa, nil
}

// parseArgBody is traceprobe_parse_probe_arg_body.
func parseArgBody(pa *probeArg, arg string, offset int, ctx argContext, syms *kernel.Kallsyms, pl *probeLog) error {
	if len(arg) > maxArgStrLen {
		return parseError(pl, offset, errArgTooLong)
	}
	if arg == "" {
		return parseError(pl, offset, errNoArgBody)
	}
	pa.comm = arg
	expr, t, hasType := arg, "", false
	tpos := 0
	if c := strings.IndexByte(arg, ':'); c >= 0 {
		expr, t, hasType, tpos = arg[:c], arg[c+1:], true, c+1
		if b := strings.IndexByte(t, '['); b >= 0 {
			inner := t[b+1:]
			closeAt := strings.IndexByte(inner, ']')
			if closeAt < 0 {
				return parseError(pl, offset+tpos+b+1+len(inner), errArrayNoClose)
			}
			if closeAt != len(inner)-1 {
				return parseError(pl, offset+tpos+b+1+closeAt+1, errBadArraySuffix)
			}
			n, err := strconv.ParseUint(inner[:closeAt], 0, 32)
			if err != nil || n == 0 {
				return parseError(pl, offset+tpos+b+1, errBadArrayNum)
			}
			if n > maxArrayLen {
				return parseError(pl, offset+tpos+b+1, errArrayTooBig)
			}
			pa.count = int(n)
			t = t[:b]
		}
	}
	// An event probe's $comm is a field name like any other, so it
	// takes any type (Linux skips this test with TPARG_FL_TPOINT).
	isComm := !ctx.tpoint && (expr == "$comm" || expr == "$COMM" || strings.HasPrefix(expr, `\"`))
	var ok bool
	switch {
	case isComm:
		// $comm and an immediate string are strings, never arrays:
		// Linux refuses any other type (even an unknown or empty one)
		// or an array with a bare -EINVAL, before it looks the type up,
		// so error_log gets nothing.
		if pa.count != 0 || (hasType && t != "string") {
			return fmt.Errorf("%w: %s can only be a string", syscall.EINVAL, expr)
		}
		pa.typ, ok = findFetchType("string")
	case hasType:
		pa.typ, ok = findFetchType(t)
	default:
		pa.typ, ok = findFetchType("x64")
	}
	if !ok {
		return parseError(pl, offset+tpos, errBadType)
	}
	code, err := parseFetch(expr, ctx, syms, pl, offset)
	if err != nil {
		return err
	}
	pa.code = code
	top := code[len(code)-1].op
	switch {
	case pa.typ.symstr:
		// A symbol string is of a value the kernel holds: a register,
		// $stackN, $retval, $argN or a word of kernel memory.
		if top != opReg && top != opStack && top != opRetval && top != opArg && top != opDeref && top != opTPArg {
			return parseError(pl, offset+tpos, errBadSymstring)
		}
	case pa.typ.str:
		if top != opDeref && top != opUDeref && top != opImm && top != opComm && top != opData && top != opTPArg {
			return parseError(pl, offset+tpos, errBadString)
		}
	}
	if hasType && strings.HasPrefix(t, "b") {
		if err := parseBitfield(pa, t); err != nil {
			return parseError(pl, offset+tpos, errBadBitfield)
		}
	}
	// Loop(Array) operation: only a store from kernel memory (ST_MEM) or
	// a string store (not a symstr's ST_SYMSTR) makes an array; a register, $argN, $stackN,
	// $retval, an immediate or a user-memory dereference (ST_UMEM) does
	// not, and Linux says so with BAD_STRING under the type.
	if pa.count != 0 && (pa.typ.symstr || !pa.typ.str && top != opDeref) {
		return parseError(pl, offset+tpos, errBadString)
	}
	return nil
}

func parseBitfield(pa *probeArg, t string) error {
	at := strings.IndexByte(t, '@')
	slash := strings.IndexByte(t, '/')
	if at < 0 || slash < at {
		return syscall.EINVAL
	}
	bw, err1 := strconv.ParseUint(t[1:at], 0, 8)
	bo, err2 := strconv.ParseUint(t[at+1:slash], 0, 8)
	if err1 != nil || err2 != nil || bw == 0 || int(bw+bo) > pa.typ.size*8 {
		return syscall.EINVAL
	}
	pa.bitW, pa.bitOff = int(bw), int(bo)
	return nil
}

// regNames is arm64's regoffset_table: x0..x30, lr, sp, pc, pstate.
func regIndex(name string) (uint64, bool) {
	switch name {
	case "lr":
		return 30, true
	case "sp":
		return 31, true
	case "pc":
		return 32, true
	case "pstate":
		return 33, true
	}
	if len(name) >= 2 && name[0] == 'x' && (len(name) == 2 || name[1] != '0') {
		n, err := strconv.ParseUint(name[1:], 10, 8)
		if err == nil && n <= 30 {
			return n, true
		}
	}
	return 0, false
}

// parseFetch is parse_probe_arg: a fetch program whose last step yields
// the value.
//
// The program has room for fetchInsnMax-1 steps, as Linux's code array
// (the last slot holds FETCH_OP_END); running out is TOO_MANY_OPS at the
// level that needed one more step.
func parseFetch(arg string, ctx argContext, syms *kernel.Kallsyms, pl *probeLog, offs int) ([]fetchInsn, error) {
	if arg == "" {
		return nil, parseError(pl, offs, errBadFetchArg)
	}
	switch arg[0] {
	case '$':
		return parseVar(arg[1:], ctx, pl, offs)
	case '%':
		if ctx.tpoint {
			// Event probes have no registers: Linux logs BAD_VAR but
			// goes on with no fetch, which is then BAD_FETCH_ARG.
			pl.logErr(offs, errBadVar)
			return nil, parseError(pl, offs, errBadFetchArg)
		}
		r, ok := regIndex(arg[1:])
		if !ok {
			return nil, parseError(pl, offs, errBadRegName)
		}
		return []fetchInsn{{op: opReg, param: r}}, nil
	case '@':
		if len(arg) > 1 && isDigit(arg[1]) {
			a, err := strconv.ParseUint(arg[1:], 0, 64)
			if err != nil {
				return nil, parseError(pl, offs, errBadMemAddr)
			}
			return []fetchInsn{{op: opImm, imm: a}, {op: opDeref}}, nil
		}
		if len(arg) > 1 && arg[1] == '+' {
			if !ctx.user {
				return nil, parseError(pl, offs, errFileOnKprobe)
			}
			v, err := kstr.Strtoll(arg[2:], 0)
			if err != nil {
				pl.logErr(offs, errBadFileOffs)
				return nil, fmt.Errorf("%w: %s", err, errBadFileOffs)
			}
			return []fetchInsn{{op: opFileOffs, imm: uint64(v)}, {op: opDeref}}, nil
		}
		if ctx.user { // uprobes have no kernel symbols to resolve
			return nil, parseError(pl, offs, errSymOnUprobe)
		}
		// FETCH_NOP_SYMBOL keeps "SYM[+-OFF]" as written; its immediate
		// is SYM's address plus OFF, which traceprobe_update_arg
		// (updateArgs) finds when the probe is registered, and again
		// when a module comes: an unknown symbol is refused there, not
		// here. It takes a step like the immediate and the dereference.
		return []fetchInsn{{op: opNop, data: arg[1:]}, {op: opImm}, {op: opDeref}}, nil
	case '+', '-':
		deref := opDeref
		rest := arg
		if len(rest) > 1 && rest[1] == 'u' {
			deref = opUDeref
			rest = string(rest[0]) + rest[2:]
		}
		if rest[0] == '+' {
			rest = rest[1:]
		}
		open := strings.IndexByte(rest, '(')
		if open < 0 {
			return nil, parseError(pl, offs, errDerefNeedBrace)
		}
		off, err := strconv.ParseInt(rest[:open], 0, 64)
		if err != nil {
			return nil, parseError(pl, offs, errBadDerefOffs)
		}
		skip := open + 1
		if rest[0] != '-' {
			skip++
		}
		if deref == opUDeref {
			skip++
		}
		offs += skip
		inner := rest[open+1:]
		closeAt := strings.LastIndexByte(inner, ')')
		if closeAt < 0 {
			return nil, parseError(pl, offs+len(inner), errDerefOpenBrace)
		}
		code, err := parseFetch(inner[:closeAt], ctx, syms, pl, offs)
		if err != nil {
			return nil, err
		}
		if last := code[len(code)-1].op; last == opComm || last == opData {
			return nil, parseError(pl, offs, errCommCantDeref)
		}
		if len(code)+1 > fetchInsnMax-1 {
			return nil, parseError(pl, offs, errTooManyOps)
		}
		return append(code, fetchInsn{op: deref, offset: off}), nil
	case '\\':
		if len(arg) > 1 && arg[1] == '"' {
			s := arg[2:]
			if s == "" || s[len(s)-1] != '"' {
				return nil, parseError(pl, offs+2+len(s), errImmstrNoClose)
			}
			return []fetchInsn{{op: opData, data: s[:len(s)-1]}}, nil
		}
		v, err := strToImmediate(arg[1:])
		if err != nil {
			return nil, parseError(pl, offs+1, errBadImm)
		}
		return []fetchInsn{{op: opImm, imm: v}}, nil
	}
	return nil, parseError(pl, offs, errBadFetchArg)
}

func strToImmediate(s string) (uint64, error) {
	switch {
	case s == "":
		return 0, syscall.EINVAL
	case isDigit(s[0]):
		return strconv.ParseUint(s, 0, 64)
	case s[0] == '-':
		v, err := strconv.ParseInt(s, 0, 64)
		return uint64(v), err
	case s[0] == '+':
		v, err := strconv.ParseInt(s[1:], 0, 64)
		return uint64(v), err
	}
	return 0, syscall.EINVAL
}

// parseVar is parse_probe_vars for $retval, $stack, $stackN, $comm, $argN.
func parseVar(v string, ctx argContext, pl *probeLog, offs int) ([]fetchInsn, error) {
	switch {
	case ctx.tpoint:
		// Any name: the event probe resolves it against the attached
		// event's fields after the parse (eprobe.go).
		return []fetchInsn{{op: opTPArg, data: v}}, nil
	case v == "retval":
		if !ctx.isReturn {
			return nil, parseError(pl, offs, errRetvalOnProbe)
		}
		return []fetchInsn{{op: opRetval}}, nil
	case strings.HasPrefix(v, "stack"):
		n := v[len("stack"):]
		if n == "" {
			return []fetchInsn{{op: opStackP}}, nil
		}
		if !isDigit(n[0]) {
			return nil, parseError(pl, offs, errBadVar)
		}
		p, err := strconv.ParseUint(n, 10, 64)
		if err != nil {
			return nil, parseError(pl, offs, errBadVar)
		}
		if !ctx.user && p > paramMaxStack { // a user stack has no such bound
			return nil, parseError(pl, offs, errBadStackNum)
		}
		return []fetchInsn{{op: opStack, param: p}}, nil
	case v == "comm" || v == "COMM":
		return []fetchInsn{{op: opComm}}, nil
	case strings.HasPrefix(v, "arg") && !ctx.isReturn && ctx.atFuncEntry:
		p, err := strconv.ParseUint(v[3:], 10, 64)
		if err != nil {
			return nil, parseError(pl, offs, errBadVar)
		}
		if p == 0 || p > paramMaxStack {
			return nil, parseError(pl, offs, errBadArgNum)
		}
		return []fetchInsn{{op: opArg, param: p - 1}}, nil
	}
	return nil, parseError(pl, offs, errBadVar)
}
