package machine

import "testing"

// lseCase runs one atomic instruction with x9 = testData and NZCV all set,
// then checks registers, memory and that NZCV did not change.
type lseCase struct {
	name    string
	code    string
	in      map[int]uint64
	mem     map[uint64]uint64 // offset from testData → 64-bit value before
	want    map[int]uint64
	wantMem map[uint64]uint64
}

const (
	lseOld = 0x8070605040302010
	lseArg = 0x0f0f0f0f0f0f0f0f
)

func TestLSE(t *testing.T) {
	cases := []lseCase{
		// LD<op>, X: Rt gets the old value, memory the result.
		{name: "ldadd", code: "ldadd x1, x2, [x9]", in: map[int]uint64{1: 5}, mem: map[uint64]uint64{0: 10}, want: map[int]uint64{1: 5, 2: 10}, wantMem: map[uint64]uint64{0: 15}},
		{name: "ldadda", code: "ldadda x1, x2, [x9]", in: map[int]uint64{1: 5}, mem: map[uint64]uint64{0: 10}, want: map[int]uint64{2: 10}, wantMem: map[uint64]uint64{0: 15}},
		{name: "ldaddl", code: "ldaddl x1, x2, [x9]", in: map[int]uint64{1: 5}, mem: map[uint64]uint64{0: 10}, want: map[int]uint64{2: 10}, wantMem: map[uint64]uint64{0: 15}},
		{name: "ldaddal", code: "ldaddal x1, x2, [x9]", in: map[int]uint64{1: ^uint64(0)}, mem: map[uint64]uint64{0: 10}, want: map[int]uint64{2: 10}, wantMem: map[uint64]uint64{0: 9}},
		{name: "ldclr", code: "ldclr x1, x2, [x9]", in: map[int]uint64{1: lseArg}, mem: map[uint64]uint64{0: lseOld}, want: map[int]uint64{2: lseOld}, wantMem: map[uint64]uint64{0: lseOld &^ lseArg}},
		{name: "ldeor", code: "ldeoral x1, x2, [x9]", in: map[int]uint64{1: lseArg}, mem: map[uint64]uint64{0: lseOld}, want: map[int]uint64{2: lseOld}, wantMem: map[uint64]uint64{0: lseOld ^ lseArg}},
		{name: "ldset", code: "ldsetl x1, x2, [x9]", in: map[int]uint64{1: lseArg}, mem: map[uint64]uint64{0: lseOld}, want: map[int]uint64{2: lseOld}, wantMem: map[uint64]uint64{0: lseOld | lseArg}},
		{name: "ldsmax", code: "ldsmax x1, x2, [x9]", in: map[int]uint64{1: 3}, mem: map[uint64]uint64{0: lseOld}, want: map[int]uint64{2: lseOld}, wantMem: map[uint64]uint64{0: 3}},
		{name: "ldsmin", code: "ldsmina x1, x2, [x9]", in: map[int]uint64{1: 3}, mem: map[uint64]uint64{0: lseOld}, want: map[int]uint64{2: lseOld}, wantMem: map[uint64]uint64{0: lseOld}},
		{name: "ldumax", code: "ldumax x1, x2, [x9]", in: map[int]uint64{1: 3}, mem: map[uint64]uint64{0: lseOld}, want: map[int]uint64{2: lseOld}, wantMem: map[uint64]uint64{0: lseOld}},
		{name: "ldumin", code: "lduminal x1, x2, [x9]", in: map[int]uint64{1: 3}, mem: map[uint64]uint64{0: lseOld}, want: map[int]uint64{2: lseOld}, wantMem: map[uint64]uint64{0: 3}},
		// W, H and B forms: only the low bytes change; Rt is zero-extended.
		{name: "ldadd-w", code: "ldadd w1, w2, [x9]", in: map[int]uint64{1: 0xffffffff00000001, 2: ^uint64(0)}, mem: map[uint64]uint64{0: 0x11111111ffffffff}, want: map[int]uint64{2: 0xffffffff}, wantMem: map[uint64]uint64{0: 0x1111111100000000}},
		{name: "ldaddh", code: "ldaddh w1, w2, [x9]", in: map[int]uint64{1: 1}, mem: map[uint64]uint64{0: 0x222222222222ffff}, want: map[int]uint64{2: 0xffff}, wantMem: map[uint64]uint64{0: 0x2222222222220000}},
		{name: "ldaddb", code: "ldaddalb w1, w2, [x9]", in: map[int]uint64{1: 1}, mem: map[uint64]uint64{0: 0x33333333333333ff}, want: map[int]uint64{2: 0xff}, wantMem: map[uint64]uint64{0: 0x3333333333333300}},
		{name: "ldsmax-w", code: "ldsmax w1, w2, [x9]", in: map[int]uint64{1: 0xfffffffe}, mem: map[uint64]uint64{0: 0x80000000}, want: map[int]uint64{2: 0x80000000}, wantMem: map[uint64]uint64{0: 0xfffffffe}},
		{name: "ldsminh", code: "ldsminh w1, w2, [x9]", in: map[int]uint64{1: 0x7fff}, mem: map[uint64]uint64{0: 0x8000}, want: map[int]uint64{2: 0x8000}, wantMem: map[uint64]uint64{0: 0x8000}},
		{name: "ldsmaxb", code: "ldsmaxb w1, w2, [x9]", in: map[int]uint64{1: 0x7f}, mem: map[uint64]uint64{0: 0x80}, want: map[int]uint64{2: 0x80}, wantMem: map[uint64]uint64{0: 0x7f}},
		{name: "ldumaxb", code: "ldumaxb w1, w2, [x9]", in: map[int]uint64{1: 0x7f}, mem: map[uint64]uint64{0: 0x80}, want: map[int]uint64{2: 0x80}, wantMem: map[uint64]uint64{0: 0x80}},
		{name: "lduminh", code: "lduminh w1, w2, [x9]", in: map[int]uint64{1: 0x17f}, mem: map[uint64]uint64{0: 0x9980}, want: map[int]uint64{2: 0x9980}, wantMem: map[uint64]uint64{0: 0x17f}},
		{name: "ldclrb", code: "ldclrb w1, w2, [x9]", in: map[int]uint64{1: 0xf0f}, mem: map[uint64]uint64{0: 0xffff}, want: map[int]uint64{2: 0xff}, wantMem: map[uint64]uint64{0: 0xfff0}},
		{name: "ldeorh", code: "ldeorh w1, w2, [x9]", in: map[int]uint64{1: 0x10001}, mem: map[uint64]uint64{0: 0x30003}, want: map[int]uint64{2: 3}, wantMem: map[uint64]uint64{0: 0x30002}},
		{name: "ldset-w", code: "ldseta w1, w2, [x9]", in: map[int]uint64{1: 0x100000001}, mem: map[uint64]uint64{0: 2}, want: map[int]uint64{2: 2}, wantMem: map[uint64]uint64{0: 3}},
		// SWP.
		{name: "swp", code: "swp x1, x2, [x9]", in: map[int]uint64{1: lseArg}, mem: map[uint64]uint64{0: lseOld}, want: map[int]uint64{1: lseArg, 2: lseOld}, wantMem: map[uint64]uint64{0: lseArg}},
		{name: "swpal-w", code: "swpal w1, w2, [x9]", in: map[int]uint64{1: lseArg}, mem: map[uint64]uint64{0: lseOld}, want: map[int]uint64{2: lseOld & 0xffffffff}, wantMem: map[uint64]uint64{0: lseOld&^0xffffffff | lseArg&0xffffffff}},
		{name: "swpb", code: "swpb w1, w2, [x9]", in: map[int]uint64{1: 0xaa}, mem: map[uint64]uint64{0: 0x1234}, want: map[int]uint64{2: 0x34}, wantMem: map[uint64]uint64{0: 0x12aa}},
		{name: "swph-same-reg", code: "swpah w1, w1, [x9]", in: map[int]uint64{1: 0xbeef}, mem: map[uint64]uint64{0: 0x1234}, want: map[int]uint64{1: 0x1234}, wantMem: map[uint64]uint64{0: 0xbeef}},
		// ST<op>: LD<op> with Rt = XZR.
		{name: "stadd", code: "stadd x1, [x9]", in: map[int]uint64{1: 7}, mem: map[uint64]uint64{0: 1}, want: map[int]uint64{1: 7}, wantMem: map[uint64]uint64{0: 8}},
		{name: "staddl-w", code: "staddl w1, [x9]", in: map[int]uint64{1: 7}, mem: map[uint64]uint64{0: 1}, wantMem: map[uint64]uint64{0: 8}},
		{name: "stclrb", code: "stclrb w1, [x9]", in: map[int]uint64{1: 1}, mem: map[uint64]uint64{0: 0x303}, wantMem: map[uint64]uint64{0: 0x302}},
		{name: "steorh", code: "steorlh w1, [x9]", in: map[int]uint64{1: 0xffff}, mem: map[uint64]uint64{0: 0x10000}, wantMem: map[uint64]uint64{0: 0x1ffff}},
		{name: "stset", code: "stset x1, [x9]", in: map[int]uint64{1: 0x100}, mem: map[uint64]uint64{0: 1}, wantMem: map[uint64]uint64{0: 0x101}},
		{name: "stsmax", code: "stsmax x1, [x9]", in: map[int]uint64{1: 9}, mem: map[uint64]uint64{0: 1}, wantMem: map[uint64]uint64{0: 9}},
		{name: "stsmin", code: "stsminl x1, [x9]", in: map[int]uint64{1: ^uint64(0)}, mem: map[uint64]uint64{0: 1}, wantMem: map[uint64]uint64{0: ^uint64(0)}},
		{name: "stumax", code: "stumax w1, [x9]", in: map[int]uint64{1: 9}, mem: map[uint64]uint64{0: 1}, wantMem: map[uint64]uint64{0: 9}},
		{name: "stumin", code: "stuminl x1, [x9]", in: map[int]uint64{1: 0}, mem: map[uint64]uint64{0: 5}, wantMem: map[uint64]uint64{0: 0}},
		// CAS: Rs gets the old value; memory gets Rt only on a match.
		{name: "cas-match", code: "cas x1, x2, [x9]", in: map[int]uint64{1: 10, 2: 20}, mem: map[uint64]uint64{0: 10}, want: map[int]uint64{1: 10, 2: 20}, wantMem: map[uint64]uint64{0: 20}},
		{name: "cas-mismatch", code: "casa x1, x2, [x9]", in: map[int]uint64{1: 11, 2: 20}, mem: map[uint64]uint64{0: 10}, want: map[int]uint64{1: 10}, wantMem: map[uint64]uint64{0: 10}},
		{name: "casl", code: "casl x1, x2, [x9]", in: map[int]uint64{1: 10, 2: 20}, mem: map[uint64]uint64{0: 10}, wantMem: map[uint64]uint64{0: 20}},
		{name: "casal-w", code: "casal w1, w2, [x9]", in: map[int]uint64{1: 0xffffffff0000000a, 2: 0xffffffff00000014}, mem: map[uint64]uint64{0: 0x990000000a}, want: map[int]uint64{1: 0xa}, wantMem: map[uint64]uint64{0: 0x9900000014}},
		{name: "cash", code: "cash w1, w2, [x9]", in: map[int]uint64{1: 0x1ffff, 2: 0x1234}, mem: map[uint64]uint64{0: 0x5ffff}, want: map[int]uint64{1: 0xffff}, wantMem: map[uint64]uint64{0: 0x51234}},
		{name: "casab-mismatch", code: "casab w1, w2, [x9]", in: map[int]uint64{1: 1, 2: 2}, mem: map[uint64]uint64{0: 0x3}, want: map[int]uint64{1: 3}, wantMem: map[uint64]uint64{0: 3}},
		{name: "caslb", code: "caslb w1, w2, [x9]", in: map[int]uint64{1: 3, 2: 0x1ff}, mem: map[uint64]uint64{0: 0x103}, want: map[int]uint64{1: 3}, wantMem: map[uint64]uint64{0: 0x1ff}},
		{name: "casalh", code: "casalh w1, w2, [x9]", in: map[int]uint64{1: 3, 2: 4}, mem: map[uint64]uint64{0: 3}, want: map[int]uint64{1: 3}, wantMem: map[uint64]uint64{0: 4}},
		{name: "cas-xzr", code: "cas xzr, x2, [x9]", in: map[int]uint64{2: 7}, mem: map[uint64]uint64{0: 0}, want: map[int]uint64{2: 7}, wantMem: map[uint64]uint64{0: 7}},
		// CASP: pairs <Rs, Rs+1> and <Rt, Rt+1>.
		{name: "casp-match", code: "casp x0, x1, x2, x3, [x9]", in: map[int]uint64{0: 1, 1: 2, 2: 3, 3: 4}, mem: map[uint64]uint64{0: 1, 8: 2}, want: map[int]uint64{0: 1, 1: 2}, wantMem: map[uint64]uint64{0: 3, 8: 4}},
		{name: "caspal-mismatch", code: "caspal x0, x1, x2, x3, [x9]", in: map[int]uint64{0: 1, 1: 5, 2: 3, 3: 4}, mem: map[uint64]uint64{0: 1, 8: 2}, want: map[int]uint64{0: 1, 1: 2}, wantMem: map[uint64]uint64{0: 1, 8: 2}},
		{name: "caspa-w", code: "caspa w4, w5, w6, w7, [x9]", in: map[int]uint64{4: 0x11, 5: 0x22, 6: 0x33, 7: 0x44}, mem: map[uint64]uint64{0: 0x2200000011}, want: map[int]uint64{4: 0x11, 5: 0x22}, wantMem: map[uint64]uint64{0: 0x4400000033}},
		{name: "caspl-w-mismatch", code: "caspl w4, w5, w6, w7, [x9]", in: map[int]uint64{4: 0x11, 5: 0x23, 6: 0x33, 7: 0x44}, mem: map[uint64]uint64{0: 0x2200000011}, want: map[int]uint64{4: 0x11, 5: 0x22}, wantMem: map[uint64]uint64{0: 0x2200000011}},
		// LDAPR: an aligned load, zero-extended.
		{name: "ldapr", code: "ldapr x1, [x9]", mem: map[uint64]uint64{0: lseOld}, want: map[int]uint64{1: lseOld}},
		{name: "ldapr-w", code: "ldapr w1, [x9]", mem: map[uint64]uint64{0: lseOld}, want: map[int]uint64{1: lseOld & 0xffffffff}},
		{name: "ldaprh", code: "ldaprh w1, [x9]", mem: map[uint64]uint64{0: lseOld}, want: map[int]uint64{1: 0x2010}},
		{name: "ldaprb", code: "ldaprb w1, [x9]", mem: map[uint64]uint64{0: lseOld}, want: map[int]uint64{1: 0x10}},
	}
	for _, parallel := range []bool{false, true} {
		for _, tc := range cases {
			name := tc.name
			if parallel {
				name += "/parallel"
			}
			t.Run(name, func(t *testing.T) {
				m, c, _ := newTestMachineCfg(t, prog(tc.code), parallel)
				c.SetX(9, testData)
				for r, v := range tc.in {
					c.SetX(r, v)
				}
				for off, v := range tc.mem {
					mustWrite64(t, m, testData+off, v)
				}
				setFlags(c, "NZCV")
				if err := m.Step(1); err != nil {
					t.Fatal(err)
				}
				if c.PC() != testCode+4 {
					t.Fatalf("pc = %#x (ESR %#x)", c.PC(), c.SysReg(ESR_EL1))
				}
				if flags(c) != "NZCV" {
					t.Errorf("nzcv = %s, want unchanged", flags(c))
				}
				for r, want := range tc.want {
					if got := c.X(r); got != want {
						t.Errorf("x%d = %#x, want %#x", r, got, want)
					}
				}
				for off, want := range tc.wantMem {
					if got := mustRead64(t, m, testData+off); got != want {
						t.Errorf("mem[data+%#x] = %#x, want %#x", off, got, want)
					}
				}
			})
		}
	}
}

// TestLSEFaults: atomics need alignment and write permission; a fault
// leaves registers and memory alone.
func TestLSEFaults(t *testing.T) {
	for _, tc := range []struct {
		name string
		code string
		addr uint64
		ec   uint32
		fsc  uint32
	}{
		{"ldadd-unaligned", "ldadd x1, x2, [x9]", testData + 4, ecDataAbort, fscAlignment},
		{"cas-unaligned", "cas w1, w2, [x9]", testData + 2, ecDataAbort, fscAlignment},
		{"casp-unaligned", "casp x0, x1, x2, x3, [x9]", testData + 8, ecDataAbort, fscAlignment},
		{"swp-outside-ram", "swp x1, x2, [x9]", 0x10000000, ecDataAbort, fscExternal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, c, _ := newTestMachine(t, prog(tc.code))
			c.SetX(9, tc.addr)
			c.SetX(2, 0x55)
			if err := m.Step(1); err != nil {
				t.Fatal(err)
			}
			esr := c.SysReg(ESR_EL1)
			if uint32(esr>>26) != tc.ec || uint32(esr&0x3f) != tc.fsc || esr&issWnR == 0 {
				t.Fatalf("ESR = %#x", esr)
			}
			if c.X(2) != 0x55 {
				t.Fatalf("x2 = %#x", c.X(2))
			}
		})
	}
}

// lseOperands are the operands of an instruction of TestLSEDecode's
// argument set, read through its view.
func lseOperands(in *inst) [5]uint8 {
	switch in.op {
	case opLDOP:
		a := (*atomicArgs)(in)
		return [5]uint8{a.size(), a.atomicOp()}
	case opCAS:
		a := (*casArgs)(in)
		return [5]uint8{a.size(), a.rs()}
	case opCASP:
		a := (*caspArgs)(in)
		return [5]uint8{a.size(), a.rs(), a.rs2(), a.rs2Dst(), a.rt2()}
	case opLDAR:
		a := (*ldstArgs)(in)
		return [5]uint8{a.size(), a.ext()}
	}
	return [5]uint8{}
}

// TestLSEDecode: the acquire/release forms decode to the same operation
// as the plain one, and the ID registers advertise LSE and LRCPC.
func TestLSEDecode(t *testing.T) {
	for _, tc := range []struct {
		forms []string
		op    opcode
	}{
		{[]string{"ldadd x1, x2, [x9]", "ldadda x1, x2, [x9]", "ldaddl x1, x2, [x9]", "ldaddal x1, x2, [x9]", "stadd x1, [x9]"}, opLDOP},
		{[]string{"swp x1, x2, [x9]", "swpa x1, x2, [x9]", "swpl x1, x2, [x9]", "swpal x1, x2, [x9]"}, opLDOP},
		{[]string{"cas x1, x2, [x9]", "casa x1, x2, [x9]", "casl x1, x2, [x9]", "casal x1, x2, [x9]"}, opCAS},
		{[]string{"casp x0, x1, x2, x3, [x9]", "caspa x0, x1, x2, x3, [x9]", "caspl x0, x1, x2, x3, [x9]", "caspal x0, x1, x2, x3, [x9]"}, opCASP},
		{[]string{"ldapr x1, [x9]"}, opLDAR},
		{[]string{"ldaprh w1, [x9]"}, opLDAR},
		{[]string{"ldaprb w1, [x9]"}, opLDAR},
	} {
		var first inst
		for i, f := range tc.forms {
			var in inst
			decode(&in, I(f))
			if in.op != tc.op {
				t.Errorf("%s: op %d, want %d", f, in.op, tc.op)
			}
			if i == 0 {
				first = in
				continue
			}
			if lseOperands(&in) != lseOperands(&first) || in.rn != first.rn || in.rm != first.rm {
				t.Errorf("%s decodes differently from %s: %+v vs %+v", f, tc.forms[0], in, first)
			}
		}
	}
	m, c, _ := newTestMachine(t, prog("mrs x0, id_aa64isar0_el1", "mrs x1, id_aa64isar1_el1"))
	if err := m.Step(2); err != nil {
		t.Fatal(err)
	}
	if c.X(0)>>20&0xf != 2 || c.X(1)>>20&0xf != 1 {
		t.Fatalf("ISAR0 %#x ISAR1 %#x", c.X(0), c.X(1))
	}
}

// TestSelfSGITakenAtOnce: an SGI a CPU sends itself with IRQs unmasked is
// taken before the next instruction, as on QEMU.
func TestSelfSGITakenAtOnce(t *testing.T) {
	for _, parallel := range []bool{false, true} {
		m, c, _ := newTestMachineCfg(t, prog(
			"mov x16, #0x8000000", "mov w17, #1", "str w17, [x16]",
			"mov x15, #0x8010000", "str w17, [x15]", "mov w17, #0xff", "str w17, [x15, #4]",
			"msr daifclr, #2",
			"mov w17, #0x2000000", "str w17, [x16, #0xf00]",
			"mov x7, #1",
		), parallel)
		// The 11th instruction is the handler's (a WFI), not the MOV.
		if err := m.Step(11); err != nil {
			t.Fatal(err)
		}
		if c.X(7) != 0 || c.PC() != testVBAR+0x284 {
			t.Fatalf("parallel %v: x7 = %d, pc = %#x: the SGI was not taken at once", parallel, c.X(7), c.PC())
		}
	}
}
