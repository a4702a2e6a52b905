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
	Sets     []*ArgSet  // the argument sets, in table order
}

// ArgSet is a named set of typed operands (a line "&name op:Type=slot
// ..."), as decodetree's argument sets: the instructions that use it
// are executed and translated with a view of inst (type nameArgs) whose
// methods read each operand, by its name and as its type, from the slot
// of inst that stores it.
type ArgSet struct {
	Name     string
	Doc      string // the comment lines just above the set's line
	Operands []Operand
}

// Operand is one typed operand of an argument set.
type Operand struct {
	Name, Type, Slot string
}

// TypeName is the Go type of the set's view of inst.
func (s *ArgSet) TypeName() string { return s.Name + "Args" }

func (s *ArgSet) operand(name string) *Operand {
	for i := range s.Operands {
		if s.Operands[i].Name == name {
			return &s.Operands[i]
		}
	}
	return nil
}

// Op is one opcode of the decoded form: what executes it, what
// translates it, and the facts the decoder computes for it.
type Op struct {
	Name     string
	Exec     string  // the CPU method that executes it
	Slice    bool    // Exec takes the slice's count and reports whether the slice ends
	SP       bool    // rn is a base address: decode records whether it is SP (alignment check)
	FP       bool    // an FP/SIMD instruction: the interpreter checks FP/SIMD is enabled first
	JIT      string  // the emitter method that translates it; "" if not translatable
	JITIf    string  // a func(*inst, uint8) bool that must also hold for translation
	Hot      bool    // Exec's body is spliced into the interpreter loop (Table.Dispatch)
	Ends     bool    // ends a translated block (may branch, or unmasks interrupts)
	EndsIf   string  // a func(*inst) bool: ends a block when it holds
	Set      *ArgSet // the operands' names and types; nil: only the plain slots
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

// plainSlots are the slots that mean one thing for every instruction and
// that a pattern sets by their own names; every other slot means what an
// argument set names it.
var plainSlots = map[string]bool{"sf": true, "rd": true, "rn": true, "rm": true, "imm": true}

// instFields are inst's fields: no operand may be named as one, as an
// operand is a method of a view of inst.
var instFields = map[string]bool{"op": true, "pre": true, "sf": true, "rd": true, "rn": true, "rm": true,
	"ra": true, "sh": true, "amt": true, "cc": true, "neg": true, "imm": true, "im2": true}

// slotOrder is the order of inst's fields, for stable output.
var slotOrder = []string{"sf", "rd", "rn", "rm", "ra", "sh", "amt", "cc", "neg", "imm", "im2"}

var (
	nameRE  = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	bitsRE  = regexp.MustCompile(`^[01.]+$`)
	fieldRE = regexp.MustCompile(`^([a-z][a-z0-9]*):(s?)([0-9]+)$`)
	identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	setRE   = regexp.MustCompile(`^&([a-z][A-Za-z0-9]*)$`)
	operRE  = regexp.MustCompile(`^([a-z][A-Za-z0-9]*):([A-Za-z][A-Za-z0-9]*)=([a-z0-9]+)$`)
)

// Parse reads a table. name is used in error messages.
func Parse(name, src string) (*Table, error) {
	t := &Table{}
	ops := map[string]*Op{}
	sets := map[string]*ArgSet{}
	var doc []string // the comment lines just read
	lines := strings.Split(src, "\n")
	for i := 0; i < len(lines); i++ {
		lineNo := i + 1
		line := lines[i]
		if c, ok := strings.CutPrefix(strings.TrimSpace(line), "#"); ok {
			doc = append(doc, strings.TrimSpace(c))
			continue
		}
		for strings.HasSuffix(strings.TrimSpace(line), `\`) && i+1 < len(lines) {
			line = strings.TrimSuffix(strings.TrimSpace(line), `\`) + " " + lines[i+1]
			i++
		}
		if j := strings.IndexByte(line, '#'); j >= 0 {
			line = line[:j]
		}
		toks := strings.Fields(line)
		comment := doc
		doc = nil
		if len(toks) == 0 {
			continue
		}
		if strings.HasPrefix(toks[0], "&") {
			set, err := parseSet(toks, comment, sets)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", name, lineNo, err)
			}
			t.Sets = append(t.Sets, set)
			continue
		}
		p, err := parsePattern(toks, lineNo, ops, sets, t)
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
		for _, p := range op.Patterns {
			if err := p.resolve(); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", name, p.Line, err)
			}
		}
	}
	return t, nil
}

// parseSet reads an argument set's line: &name op:Type=slot ...
func parseSet(toks, doc []string, sets map[string]*ArgSet) (*ArgSet, error) {
	m := setRE.FindStringSubmatch(toks[0])
	if m == nil {
		return nil, fmt.Errorf("argument set %q: want &name, lower-case", toks[0])
	}
	if sets[m[1]] != nil {
		return nil, fmt.Errorf("argument set &%s twice", m[1])
	}
	s := &ArgSet{Name: m[1], Doc: strings.Join(doc, "\n")}
	slots := map[string]bool{}
	for _, tok := range toks[1:] {
		o := operRE.FindStringSubmatch(tok)
		if o == nil {
			return nil, fmt.Errorf("&%s: operand %q: want name:Type=slot", s.Name, tok)
		}
		if _, ok := slotTypes[o[3]]; !ok || plainSlots[o[3]] {
			return nil, fmt.Errorf("&%s: %s is stored in %q, which is not a slot an argument set names (ra sh amt cc neg im2)", s.Name, o[1], o[3])
		}
		if instFields[o[1]] {
			return nil, fmt.Errorf("&%s: operand %s is named as a field of inst", s.Name, o[1])
		}
		if s.operand(o[1]) != nil || slots[o[3]] {
			return nil, fmt.Errorf("&%s: operand %s or slot %s twice", s.Name, o[1], o[3])
		}
		if (slotTypes[o[3]] == "bool") != (o[2] == "bool") {
			return nil, fmt.Errorf("&%s: %s is %s but slot %s is %s", s.Name, o[1], o[2], o[3], slotTypes[o[3]])
		}
		slots[o[3]] = true
		s.Operands = append(s.Operands, Operand{Name: o[1], Type: o[2], Slot: o[3]})
	}
	if len(s.Operands) == 0 {
		return nil, fmt.Errorf("&%s has no operands", s.Name)
	}
	sets[s.Name] = s
	return s, nil
}

// resolve maps the line's assignments by operand name to inst's slots,
// now that every line of its op has been read (any may name the set).
func (p *Pattern) resolve() error {
	set := p.Op.Set
	seen := map[string]bool{}
	for i, a := range p.Assigns {
		slot := a.Slot
		switch {
		case set != nil && set.operand(a.Slot) != nil:
			slot = set.operand(a.Slot).Slot
		case plainSlots[a.Slot]:
		case slotTypes[a.Slot] != "":
			return fmt.Errorf("%s: %s=: slot %s means nothing by itself; set it as an operand of an argument set (&...)", p.Op.Name, a.Slot, a.Slot)
		case set == nil:
			return fmt.Errorf("%s: %s=: no such slot, and %s names no argument set", p.Op.Name, a.Slot, p.Op.Name)
		default:
			return fmt.Errorf("%s: %s=: not an operand of &%s", p.Op.Name, a.Slot, set.Name)
		}
		if seen[slot] {
			return fmt.Errorf("%s: slot %s set twice", p.Op.Name, slot)
		}
		seen[slot] = true
		p.Assigns[i].Slot = slot
	}
	return nil
}
func parsePattern(toks []string, lineNo int, ops map[string]*Op, sets map[string]*ArgSet, t *Table) (*Pattern, error) {
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
		if m := setRE.FindStringSubmatch(toks[k]); m != nil {
			set := sets[m[1]]
			switch {
			case set == nil:
				return nil, fmt.Errorf("argument set &%s is not declared (above)", m[1])
			case op.Set != nil && op.Set != set:
				return nil, fmt.Errorf("%s: &%s, but an earlier line says &%s", op.Name, m[1], op.Set.Name)
			}
			op.Set = set
			continue
		}
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
		if !identRE.MatchString(key) {
			return fmt.Errorf("unknown attribute %q", tok)
		}
		// A slot or an operand of the op's set: resolve tells which.
		p.Assigns = append(p.Assigns, Assign{Slot: key, Expr: val})
	}
	return nil
}
