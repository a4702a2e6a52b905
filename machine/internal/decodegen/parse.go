package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Table is a parsed pattern table: the instructions (opcodes) in the
// order they first appear, each with its patterns in table order.
type Table struct {
	Ops      []*Op
	Patterns []*Pattern // all patterns, in table order: the first that matches decodes
}

// Op is one opcode of the decoded form: what executes it, what
// translates it, and the facts the decoder computes for it.
type Op struct {
	Name     string
	Exec     string // the CPU method that executes it
	Slice    bool   // Exec takes the slice's count and reports whether the slice ends
	SP       bool   // rn is a base address: decode records whether it is SP (alignment check)
	FP       bool   // an FP/SIMD instruction: the interpreter checks FP/SIMD is enabled first
	JIT      string // the emitter method that translates it; "" if not translatable
	JITIf    string // a func(*inst, uint8) bool that must also hold for translation
	Hot      bool   // Exec's body is spliced into the interpreter loop (Table.Dispatch)
	Ends     bool   // ends a translated block (may branch, or unmasks interrupts)
	EndsIf   string // a func(*inst) bool: ends a block when it holds
	Patterns []*Pattern
}

// Field is a named bit field of a pattern.
type Field struct {
	Name   string
	Pos    uint // lowest bit
	Len    uint
	Signed bool // sign-extended to 64 bits
}

// Assign sets one slot of the decoded instruction.
type Assign struct {
	Slot, Expr string
}

// Pattern is one line of the table.
type Pattern struct {
	Op          *Op
	Line        int
	Mask, Value uint32
	Fields      []Field
	Assigns     []Assign
	Conds       []string // Go boolean expressions over the fields, all of which must hold
	Call        string   // a func(*inst, uint32) bool finishing the decode; false: not this pattern
}

// slotTypes are the slots of machine's inst that a pattern may set.
var slotTypes = map[string]string{
	"sf": "bool", "neg": "bool",
	"rd": "uint8", "rn": "uint8", "rm": "uint8", "ra": "uint8",
	"sh": "uint8", "amt": "uint8", "cc": "uint8",
	"imm": "uint64", "im2": "uint64",
}

// slotOrder is the order of inst's fields, for stable output.
var slotOrder = []string{"sf", "rd", "rn", "rm", "ra", "sh", "amt", "cc", "neg", "imm", "im2"}

var (
	nameRE  = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	bitsRE  = regexp.MustCompile(`^[01.]+$`)
	fieldRE = regexp.MustCompile(`^([a-z][a-z0-9]*):(s?)([0-9]+)$`)
	identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// Parse reads a table. name is used in error messages.
func Parse(name, src string) (*Table, error) {
	t := &Table{}
	ops := map[string]*Op{}
	lines := strings.Split(src, "\n")
	for i := 0; i < len(lines); i++ {
		lineNo := i + 1
		line := lines[i]
		for strings.HasSuffix(strings.TrimSpace(line), `\`) && i+1 < len(lines) {
			line = strings.TrimSuffix(strings.TrimSpace(line), `\`) + " " + lines[i+1]
			i++
		}
		if j := strings.IndexByte(line, '#'); j >= 0 {
			line = line[:j]
		}
		toks := strings.Fields(line)
		if len(toks) == 0 {
			continue
		}
		p, err := parsePattern(toks, lineNo, ops, t)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, lineNo, err)
		}
		t.Patterns = append(t.Patterns, p)
	}
	for _, op := range t.Ops {
		if op.Exec == "" {
			op.Exec = "exec" + op.Name
		}
		if op.JITIf != "" && op.JIT == "" {
			return nil, fmt.Errorf("%s: %s has jitif but no jit", name, op.Name)
		}
		if (op.Ends || op.EndsIf != "") && op.JIT == "" {
			return nil, fmt.Errorf("%s: %s ends blocks but is not translated", name, op.Name)
		}
		if op.Ends && op.EndsIf != "" {
			return nil, fmt.Errorf("%s: %s has both ends and endsif", name, op.Name)
		}
	}
	return t, nil
}

func parsePattern(toks []string, lineNo int, ops map[string]*Op, t *Table) (*Pattern, error) {
	name := toks[0]
	if !nameRE.MatchString(name) {
		return nil, fmt.Errorf("pattern name %q: want an upper-case identifier", name)
	}
	if name == "None" || name == "Undef" {
		return nil, fmt.Errorf("%s is reserved", name)
	}
	op := ops[name]
	if op == nil {
		op = &Op{Name: name}
		ops[name] = op
		t.Ops = append(t.Ops, op)
	}
	p := &Pattern{Op: op, Line: lineNo}
	op.Patterns = append(op.Patterns, p)
	// The bit pattern, most significant bit first, until 32 bits.
	pos := 32
	k := 1
	for ; k < len(toks) && pos > 0; k++ {
		tok := toks[k]
		switch {
		case bitsRE.MatchString(tok):
			if len(tok) > pos {
				return nil, fmt.Errorf("pattern is longer than 32 bits at %q", tok)
			}
			for _, ch := range tok {
				pos--
				if ch != '.' {
					p.Mask |= 1 << pos
				}
				if ch == '1' {
					p.Value |= 1 << pos
				}
			}
		case fieldRE.MatchString(tok):
			m := fieldRE.FindStringSubmatch(tok)
			n, _ := strconv.Atoi(m[3])
			if n == 0 || n > pos {
				return nil, fmt.Errorf("field %q does not fit", tok)
			}
			for _, f := range p.Fields {
				if f.Name == m[1] {
					return nil, fmt.Errorf("field %s twice", m[1])
				}
			}
			pos -= n
			p.Fields = append(p.Fields, Field{Name: m[1], Pos: uint(pos), Len: uint(n), Signed: m[2] == "s"})
		default:
			return nil, fmt.Errorf("%q in the bit pattern: want bits (0, 1, .) or name:len", tok)
		}
	}
	if pos != 0 {
		return nil, fmt.Errorf("pattern has %d bits, want 32", 32-pos)
	}
	for ; k < len(toks); k++ {
		if err := p.attr(toks[k]); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// attr applies one attribute token of a pattern line.
func (p *Pattern) attr(tok string) error {
	op := p.Op
	key, val, hasVal := strings.Cut(tok, "=")
	setOp := func(dst *string) error {
		if !identRE.MatchString(val) {
			return fmt.Errorf("%s=%q: want an identifier", key, val)
		}
		if *dst != "" && *dst != val {
			return fmt.Errorf("%s: %s=%s, but an earlier line says %s", op.Name, key, val, *dst)
		}
		*dst = val
		return nil
	}
	switch {
	case !hasVal && key == "sp":
		op.SP = true
	case !hasVal && key == "hot":
		op.Hot = true
	case !hasVal && key == "ends":
		op.Ends = true
	case !hasVal && key == "fp":
		op.FP = true
	case !hasVal && key == "slice":
		op.Slice = true
	case !hasVal:
		return fmt.Errorf("unknown flag %q", tok)
	case val == "":
		return fmt.Errorf("%s= needs a value", key)
	case key == "if":
		p.Conds = append(p.Conds, val)
	case key == "call":
		if p.Call != "" {
			return fmt.Errorf("call twice")
		}
		if !identRE.MatchString(val) {
			return fmt.Errorf("call=%q: want an identifier", val)
		}
		p.Call = val
	case key == "exec":
		return setOp(&op.Exec)
	case key == "jit":
		return setOp(&op.JIT)
	case key == "jitif":
		return setOp(&op.JITIf)
	case key == "endsif":
		return setOp(&op.EndsIf)
	default:
		if _, ok := slotTypes[key]; !ok {
			return fmt.Errorf("unknown attribute or slot %q", key)
		}
		for _, a := range p.Assigns {
			if a.Slot == key {
				return fmt.Errorf("slot %s set twice", key)
			}
		}
		p.Assigns = append(p.Assigns, Assign{Slot: key, Expr: val})
	}
	return nil
}
