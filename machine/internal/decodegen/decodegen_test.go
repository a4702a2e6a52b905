package main

import (
	"strings"
	"testing"
)

func TestParsePattern(t *testing.T) {
	tests := []struct {
		name        string
		src         string
		mask, value uint32
		fields      []Field
		assigns     int
		conds       int
	}{
		{
			name:  "fixed bits and fields",
			src:   "ADDi sf:1 0 0 100010 sh:1 imm:12 rn:5 rd:5 sf=sf rd=rSP(rd)",
			mask:  0x7f800000,
			value: 0x11000000,
			fields: []Field{{"sf", 31, 1, false}, {"sh", 22, 1, false}, {"imm", 10, 12, false},
				{"rn", 5, 5, false}, {"rd", 0, 5, false}},
			assigns: 2,
		},
		{
			name:    "signed field and don't-cares",
			src:     "B 0 00101 imm:s26 imm=imm<<2",
			mask:    0xfc000000,
			value:   0x14000000,
			fields:  []Field{{"imm", 0, 26, true}},
			assigns: 1,
		},
		{
			name:   "condition and continuation",
			src:    "X 1111 .... .... .... .... .... .... v:4 \\\n  if=v!=0 if=v<9",
			mask:   0xf0000000,
			value:  0xf0000000,
			fields: []Field{{"v", 0, 4, false}},
			conds:  2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab, err := Parse("t", tt.src)
			if err != nil {
				t.Fatal(err)
			}
			p := tab.Patterns[0]
			if p.Mask != tt.mask || p.Value != tt.value {
				t.Errorf("mask/value = %#08x/%#08x, want %#08x/%#08x", p.Mask, p.Value, tt.mask, tt.value)
			}
			if len(p.Fields) != len(tt.fields) {
				t.Fatalf("fields = %v, want %v", p.Fields, tt.fields)
			}
			for i := range p.Fields {
				if p.Fields[i] != tt.fields[i] {
					t.Errorf("field %d = %v, want %v", i, p.Fields[i], tt.fields[i])
				}
			}
			if len(p.Assigns) != tt.assigns || len(p.Conds) != tt.conds {
				t.Errorf("assigns, conds = %d, %d, want %d, %d", len(p.Assigns), len(p.Conds), tt.assigns, tt.conds)
			}
		})
	}
}

func TestParseOpAttributes(t *testing.T) {
	tab, err := Parse("t", `
# two lines, one instruction
LDRo 0000 .... .... .... .... .... .... rn:4  rn=rn sp jit=emitMem jitif=ok
LDRo 0001 .... .... .... .... .... .... rn:4  rn=rn
HVC  0010 .... .... .... .... .... .... ....  slice exec=execHyp
`)
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Ops) != 2 || len(tab.Patterns) != 3 {
		t.Fatalf("ops, patterns = %d, %d, want 2, 3", len(tab.Ops), len(tab.Patterns))
	}
	ld, hvc := tab.Ops[0], tab.Ops[1]
	if !ld.SP || ld.JIT != "emitMem" || ld.JITIf != "ok" || ld.Exec != "execLDRo" || ld.Slice {
		t.Errorf("LDRo = %+v", ld)
	}
	if !hvc.Slice || hvc.Exec != "execHyp" || hvc.JIT != "" {
		t.Errorf("HVC = %+v", hvc)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"short", "A 0101", "want 32"},
		{"long", "A " + strings.Repeat("0", 33), "longer than 32"},
		{"field overflow", "A " + strings.Repeat("0", 30) + " x:3", "does not fit"},
		{"bad token", "A 01x " + strings.Repeat("0", 29), "in the bit pattern"},
		{"unknown slot", "A " + strings.Repeat("0", 32) + " foo=1", "no such slot"},
		{"raw slot", "A " + strings.Repeat("0", 32) + " sh=1", "means nothing by itself"},
		{"not an operand", "&s x:uint8=sh\nA " + strings.Repeat("0", 32) + " &s y=1", "not an operand of &s"},
		{"undeclared set", "A " + strings.Repeat("0", 32) + " &s", "not declared"},
		{"two sets", "&s x:uint8=sh\n&t y:uint8=sh\nA " + strings.Repeat("0", 32) + " &s\nA " + strings.Repeat("1", 32) + " &t", "earlier line says &s"},
		{"operand as a field", "&s rd:uint8=ra", "field of inst"},
		{"operand in a plain slot", "&s x:uint8=rd", "not a slot"},
		{"bool in a byte", "&s x:bool=sh", "is bool but slot sh is uint8"},
		{"slot twice in a set", "&s x:uint8=sh y:uint8=sh", "twice"},
		{"operand and slot", "&s x:uint8=sh\nA " + strings.Repeat("0", 32) + " &s x=1 sh=2", "means nothing by itself"},
		{"unknown flag", "A " + strings.Repeat("0", 32) + " fast", "unknown flag"},
		{"lower-case name", "a " + strings.Repeat("0", 32), "upper-case"},
		{"reserved name", "Undef " + strings.Repeat("0", 32), "reserved"},
		{"conflicting jit", "A " + strings.Repeat("0", 32) + " jit=x\nA " + strings.Repeat("1", 32) + " jit=y", "earlier line"},
		{"jitif without jit", "A " + strings.Repeat("0", 32) + " jitif=x", "no jit"},
		{"slot twice", "A " + strings.Repeat("0", 32) + " rd=1 rd=2", "twice"},
		{"ends untranslated", "A " + strings.Repeat("0", 32) + " ends", "not translated"},
		{"ends and endsif", "A " + strings.Repeat("0", 32) + " jit=x ends endsif=y", "both"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("t", tt.src)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestGenerate(t *testing.T) {
	tab, err := Parse("t", `
MOVi  sf:1 00 100101 hw:2 imm:16 rd:5   if=sf==1||hw<2 sf=sf rd=rd imm=uint64(imm)<<(16*hw) jit=emitMOVi
# A store's operands.
&ldst  size:uint8=amt signed:bool=neg
STRo  size:2 111 0 01 00 imm:12 rn:5 rt:5   &ldst rn=rn rd=rt size=size signed=0 sp jit=emitMem jitif=jitOK
WFI   1101010100 0 00 ... 0010 0000 011 11111   slice
B     0 00101 imm:s26   imm=imm<<2 jit=emitB ends
MSR   1101010100 0 1 . ... .... .... ... .....   jit=emitMSR endsif=unmasks
`)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := tab.Decoder()
	if err != nil {
		t.Fatal(err)
	}
	jit, err := tab.JIT()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"opMOVi\n",
		"if w&0x7f800000 == 0x12800000 { // MOVi, line 2",
		"hw := w >> 21 & 0x3",
		"if sf == 1 || hw < 2 {",
		"*in = inst{op: opMOVi, sf: (sf) != 0, rd: uint8(rd), imm: uint64(uint64(imm) << (16 * hw))}",
		"if in.rn == regSP {\n\t\t\t\tin.pre |= preSP",
		"case 12:", // STRo: bits 28:25 = 1100
		"return c.execWFI(in, pc, n)",
		"c.execSTRo((*ldstArgs)(in), pc)",
		"// A store's operands.\n//\n// ldstArgs is inst viewed as the operands of &ldst (a64.decode).\ntype ldstArgs inst",
		"func (a *ldstArgs) size() uint8  { return a.amt }",
		"func (a *ldstArgs) signed() bool { return a.neg }",
		"rd: uint8(rt), rn: uint8(rn), amt: uint8(size), neg: (0) != 0",
		"case opB:\n\t\treturn true",
		"case opMSR:\n\t\treturn unmasks(in)",
	} {
		if !strings.Contains(string(dec), want) {
			t.Errorf("decoder lacks %q:\n%s", want, dec)
		}
	}
	if strings.Contains(string(dec), "imm := w >> 10") {
		t.Errorf("STRo's unused field imm is extracted:\n%s", dec)
	}
	for _, want := range []string{
		"case opMOVi, opB, opMSR:\n\t\treturn true",
		"case opSTRo:\n\t\treturn jitOK((*ldstArgs)(in), el)",
		"case opSTRo:\n\t\te.emitMem(c, (*ldstArgs)(in), k, pc)",
	} {
		if !strings.Contains(string(jit), want) {
			t.Errorf("translator dispatch lacks %q:\n%s", want, jit)
		}
	}
	if strings.Contains(string(jit), "opWFI") {
		t.Errorf("WFI has no jit but is in the translator dispatch:\n%s", jit)
	}
}

func TestDecodeTree(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
		notWant   []string
	}{
		{
			name: "shared fixed bits become a switch",
			src: `
A 0000 1111 0000 .... .... .... .... ....
B 0000 1111 0001 .... .... .... .... ....
C 0000 1111 0010 .... .... .... .... ....
`,
			want: []string{"switch w & 0xe1f00000 {", "case 0x01000000:", "case 0x01100000:", "case 0x01200000:"},
		},
		{
			name:    "two patterns stay a sequence",
			src:     "A 0000 1111 " + strings.Repeat(".", 24) + "\nB 0000 1110 " + strings.Repeat(".", 24),
			notWant: []string{"switch w & 0xf0000000"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab, err := Parse("t", tt.src)
			if err != nil {
				t.Fatal(err)
			}
			dec, err := tab.Decoder()
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(dec), w) {
					t.Errorf("decoder lacks %q:\n%s", w, dec)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(string(dec), w) {
					t.Errorf("decoder has %q:\n%s", w, dec)
				}
			}
		})
	}
}
