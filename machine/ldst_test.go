package machine

import "testing"

// memCase runs code with x9 = testData, after seeding memory, then checks
// registers and memory.
type memCase struct {
	name    string
	code    []string
	in      regs
	mem     map[uint64]uint64 // offset from testData → 64-bit value before
	want    regs
	wantMem map[uint64]uint64 // offset from testData → 64-bit value after
}

func runMemCases(t *testing.T, cases []memCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, c, _ := newTestMachine(t, prog(tc.code...))
			c.SetX(9, testData)
			for r, v := range tc.in {
				if r == 31 {
					c.SetSP(v)
				} else {
					c.SetX(r, v)
				}
			}
			for off, v := range tc.mem {
				mustWrite64(t, m, testData+off, v)
			}
			if err := m.Step(uint64(len(tc.code))); err != nil {
				t.Fatal(err)
			}
			if got, want := c.PC(), testCode+4*uint64(len(tc.code)); got != want {
				t.Fatalf("pc = %#x, want %#x (ESR %#x)", got, want, c.SysReg(ESR_EL1))
			}
			for r, want := range tc.want {
				got := c.X(r)
				if r == 31 {
					got = c.SP()
				}
				if got != want {
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

const pattern = 0x8182_8384_8586_8788

func TestLoadStoreSingle(t *testing.T) {
	d := uint64(testData)
	runMemCases(t, []memCase{
		{name: "ldr-x", code: []string{"ldr x0, [x9, #8]"}, mem: map[uint64]uint64{8: pattern}, want: regs{0: pattern}},
		{name: "ldr-w", code: []string{"ldr w0, [x9, #4]"}, in: regs{0: all64}, mem: map[uint64]uint64{0: pattern}, want: regs{0: 0x8182_8384}},
		{name: "ldrh", code: []string{"ldrh w0, [x9, #2]"}, mem: map[uint64]uint64{0: pattern}, want: regs{0: 0x8586}},
		{name: "ldrb", code: []string{"ldrb w0, [x9, #7]"}, mem: map[uint64]uint64{0: pattern}, want: regs{0: 0x81}},
		{name: "ldrsb-x", code: []string{"ldrsb x0, [x9]"}, mem: map[uint64]uint64{0: pattern}, want: regs{0: 0xffff_ffff_ffff_ff88}},
		{name: "ldrsb-w", code: []string{"ldrsb w0, [x9]"}, mem: map[uint64]uint64{0: pattern}, want: regs{0: 0xffff_ff88}},
		{name: "ldrsh-x", code: []string{"ldrsh x0, [x9]"}, mem: map[uint64]uint64{0: pattern}, want: regs{0: 0xffff_ffff_ffff_8788}},
		{name: "ldrsh-w", code: []string{"ldrsh w0, [x9]"}, mem: map[uint64]uint64{0: pattern}, want: regs{0: 0xffff_8788}},
		{name: "ldrsw", code: []string{"ldrsw x0, [x9, #4]"}, mem: map[uint64]uint64{0: pattern}, want: regs{0: 0xffff_ffff_8182_8384}},
		{name: "ldrsw-pos", code: []string{"ldrsw x0, [x9]"}, mem: map[uint64]uint64{0: 0x7fff_ffff}, want: regs{0: 0x7fff_ffff}},
		{name: "str-x", code: []string{"str x1, [x9, #16]"}, in: regs{1: pattern}, wantMem: map[uint64]uint64{16: pattern}},
		{name: "str-w", code: []string{"str w1, [x9]"}, in: regs{1: pattern}, mem: map[uint64]uint64{0: all64}, wantMem: map[uint64]uint64{0: 0xffff_ffff_8586_8788}},
		{name: "strh", code: []string{"strh w1, [x9, #2]"}, in: regs{1: 0x1234}, wantMem: map[uint64]uint64{0: 0x1234_0000}},
		{name: "strb", code: []string{"strb w1, [x9, #1]"}, in: regs{1: 0x1234}, wantMem: map[uint64]uint64{0: 0x3400}},
		{name: "str-xzr", code: []string{"str xzr, [x9]"}, mem: map[uint64]uint64{0: all64}, wantMem: map[uint64]uint64{0: 0}},
		{name: "ldur-neg", code: []string{"ldur x0, [x9, #-8]"}, in: regs{9: d + 16}, mem: map[uint64]uint64{8: pattern}, want: regs{0: pattern}},
		{name: "ldur-unaligned", code: []string{"ldur w0, [x9, #1]"}, mem: map[uint64]uint64{0: pattern}, want: regs{0: 0x8485_8687}},
		{name: "stur", code: []string{"stur w1, [x9, #3]"}, in: regs{1: 0xaabb_ccdd}, wantMem: map[uint64]uint64{0: 0xaabb_ccdd_00_0000}},
		{name: "ldr-pre", code: []string{"ldr x0, [x9, #8]!"}, mem: map[uint64]uint64{8: 5}, want: regs{0: 5, 9: d + 8}},
		{name: "ldr-post", code: []string{"ldr x0, [x9], #-8"}, mem: map[uint64]uint64{0: 5}, want: regs{0: 5, 9: d - 8}},
		{name: "str-pre-sp", code: []string{"str x1, [sp, #-16]!"}, in: regs{1: 7, 31: d + 32}, want: regs{31: d + 16}, wantMem: map[uint64]uint64{16: 7}},
		{name: "str-post", code: []string{"strb w1, [x9], #1"}, in: regs{1: 0xee}, want: regs{9: d + 1}, wantMem: map[uint64]uint64{0: 0xee}},
		{name: "ldrsw-post", code: []string{"ldrsw x0, [x9], #4"}, mem: map[uint64]uint64{0: 0xffff_fffe}, want: regs{0: all64 - 1, 9: d + 4}},
		{name: "ldr-reg-lsl", code: []string{"ldr x0, [x9, x1, lsl #3]"}, in: regs{1: 2}, mem: map[uint64]uint64{16: 9}, want: regs{0: 9}},
		{name: "ldr-reg", code: []string{"ldr x0, [x9, x1]"}, in: regs{1: 4}, mem: map[uint64]uint64{0: pattern}, want: regs{0: 0x8182_8384}},
		{name: "ldr-uxtw", code: []string{"ldr w0, [x9, w1, uxtw #2]"}, in: regs{1: 0xffff_ffff_0000_0001}, mem: map[uint64]uint64{0: pattern}, want: regs{0: 0x8182_8384}},
		{name: "ldrb-sxtw", code: []string{"ldrb w0, [x9, w1, sxtw]"}, in: regs{9: d + 8, 1: 0xffff_fff8}, mem: map[uint64]uint64{0: pattern}, want: regs{0: 0x88}},
		{name: "ldrh-sxtx", code: []string{"ldrh w0, [x9, x1, sxtx #1]"}, in: regs{9: d + 8, 1: all64 - 3}, mem: map[uint64]uint64{0: pattern}, want: regs{0: 0x8788}},
		{name: "str-reg", code: []string{"str w0, [x9, w1, uxtw]"}, in: regs{0: 0x11223344, 1: 4}, wantMem: map[uint64]uint64{0: 0x1122_3344_0000_0000}},
		{name: "ldtr", code: []string{"ldtr x0, [x9, #8]"}, mem: map[uint64]uint64{8: 3}, want: regs{0: 3}},
		{name: "sttrb", code: []string{"sttrb w1, [x9, #2]"}, in: regs{1: 0x5a}, wantMem: map[uint64]uint64{0: 0x5a_0000}},
		{name: "ldar", code: []string{"ldar x0, [x9]"}, mem: map[uint64]uint64{0: pattern}, want: regs{0: pattern}},
		{name: "ldarb", code: []string{"ldarb w0, [x9]"}, mem: map[uint64]uint64{0: pattern}, want: regs{0: 0x88}},
		{name: "stlr-w", code: []string{"stlr w1, [x9]"}, in: regs{1: all64}, wantMem: map[uint64]uint64{0: 0xffff_ffff}},
		{name: "stlrh", code: []string{"stlrh w1, [x9]"}, in: regs{1: all64}, wantMem: map[uint64]uint64{0: 0xffff}},
		{name: "prfm", code: []string{"prfm pldl1keep, [x9]", "prfm pstl2strm, [x9, x1]", "prfum pldl1keep, [x9, #-1]"}},
		{name: "ldr-lit", code: []string{"ldr x0, #8", "nop", "nop", "nop"}, want: regs{0: uint64(I("nop"))<<32 | uint64(I("nop"))}},
		{name: "ldr-lit-w", code: []string{"ldr w0, #4", "nop"}, in: regs{0: all64}, want: regs{0: uint64(I("nop"))}},
		{name: "ldrsw-lit", code: []string{"ldrsw x0, #4", "movn x5, #0"}, want: regs{0: uint64(int64(int32(I("movn x5, #0"))))}},
		{name: "prfm-lit", code: []string{"prfm pldl1keep, #0"}},
	})
}

func TestLoadStorePair(t *testing.T) {
	d := uint64(testData)
	runMemCases(t, []memCase{
		{name: "ldp", code: []string{"ldp x0, x1, [x9, #16]"}, mem: map[uint64]uint64{16: 1, 24: 2}, want: regs{0: 1, 1: 2, 9: d}},
		{name: "ldp-w", code: []string{"ldp w0, w1, [x9]"}, mem: map[uint64]uint64{0: pattern}, want: regs{0: 0x8586_8788, 1: 0x8182_8384}},
		{name: "ldpsw", code: []string{"ldpsw x0, x1, [x9]"}, mem: map[uint64]uint64{0: pattern}, want: regs{0: 0xffff_ffff_8586_8788, 1: 0xffff_ffff_8182_8384}},
		{name: "ldp-pre", code: []string{"ldp x0, x1, [x9, #-16]!"}, in: regs{9: d + 16}, mem: map[uint64]uint64{0: 1, 8: 2}, want: regs{0: 1, 1: 2, 9: d}},
		{name: "ldp-post", code: []string{"ldp x0, x1, [x9], #32"}, mem: map[uint64]uint64{0: 1, 8: 2}, want: regs{0: 1, 1: 2, 9: d + 32}},
		{name: "stp-frame", code: []string{"stp x29, x30, [sp, #-32]!", "mov x29, sp"}, in: regs{29: 0xf0, 30: 0xf1, 31: d + 64}, want: regs{31: d + 32, 29: d + 32}, wantMem: map[uint64]uint64{32: 0xf0, 40: 0xf1}},
		{name: "ldp-frame", code: []string{"ldp x29, x30, [sp], #32"}, in: regs{31: d}, mem: map[uint64]uint64{0: 0xf0, 8: 0xf1}, want: regs{29: 0xf0, 30: 0xf1, 31: d + 32}},
		{name: "stp-w", code: []string{"stp w1, w2, [x9, #4]"}, in: regs{1: 0x11, 2: 0x22}, wantMem: map[uint64]uint64{0: 0x11_0000_0000, 8: 0x22}},
		{name: "stp-post", code: []string{"stp x1, x2, [x9], #-16"}, in: regs{1: 1, 2: 2}, want: regs{9: d - 16}, wantMem: map[uint64]uint64{0: 1, 8: 2}},
		{name: "stp-base-in-source", code: []string{"stp x9, x1, [x9, #16]"}, in: regs{1: 1}, want: regs{9: d}, wantMem: map[uint64]uint64{16: d, 24: 1}},
		{name: "ldnp-stnp", code: []string{"stnp x1, x2, [x9, #8]", "ldnp x3, x4, [x9, #8]"}, in: regs{1: 5, 2: 6}, want: regs{3: 5, 4: 6}},
		{name: "stp-xzr", code: []string{"stp xzr, xzr, [x9]"}, mem: map[uint64]uint64{0: 1, 8: 1}, wantMem: map[uint64]uint64{0: 0, 8: 0}},
	})
}

func TestExclusives(t *testing.T) {
	runMemCases(t, []memCase{
		{name: "ldxr-stxr", code: []string{"ldxr x0, [x9]", "add x0, x0, #1", "stxr w1, x0, [x9]"}, in: regs{1: 7}, mem: map[uint64]uint64{0: 41}, want: regs{0: 42, 1: 0}, wantMem: map[uint64]uint64{0: 42}},
		{name: "stxr-no-reservation", code: []string{"stxr w1, x0, [x9]"}, in: regs{0: 5}, want: regs{1: 1}, wantMem: map[uint64]uint64{0: 0}},
		{name: "clrex", code: []string{"ldxr x0, [x9]", "clrex", "stxr w1, x0, [x9]"}, want: regs{1: 1}},
		{name: "other-address", code: []string{"ldxr x0, [x9]", "add x2, x9, #8", "stxr w1, x0, [x2]"}, want: regs{1: 1}},
		{name: "second-stxr-fails", code: []string{"ldaxr w0, [x9]", "stlxr w1, w0, [x9]", "stxr w2, w0, [x9]"}, want: regs{1: 0, 2: 1}},
		{name: "own-store-keeps", code: []string{"ldxrb w0, [x9]", "strb w0, [x9, #1]", "stxrb w1, w0, [x9]"}, want: regs{1: 0}},
		{name: "ldxp-stxp", code: []string{"ldxp x0, x1, [x9]", "stxp w2, x1, x0, [x9]"}, mem: map[uint64]uint64{0: 1, 8: 2}, want: regs{0: 1, 1: 2, 2: 0}, wantMem: map[uint64]uint64{0: 2, 8: 1}},
		{name: "ldaxp-w", code: []string{"ldaxp w0, w1, [x9]", "stlxp w2, w1, w0, [x9]"}, mem: map[uint64]uint64{0: pattern}, want: regs{0: 0x8586_8788, 1: 0x8182_8384, 2: 0}, wantMem: map[uint64]uint64{0: 0x8586_8788_8182_8384}},
	})
}

// TestExclusiveBrokenByHost checks that a host store into the reservation
// granule (as another observer) makes the store-exclusive fail.
func TestExclusiveBrokenByHost(t *testing.T) {
	m, c, _ := newTestMachine(t, prog("ldxr x0, [x9]", "stxr w1, x0, [x9]"))
	c.SetX(9, testData)
	if err := m.Step(1); err != nil {
		t.Fatal(err)
	}
	mustWrite32(t, m, testData+60, 1) // same 64-byte granule
	if err := m.Step(1); err != nil {
		t.Fatal(err)
	}
	if c.X(1) != 1 {
		t.Fatalf("stxr status = %d, want 1", c.X(1))
	}
}

// TestExclusiveBrokenByOtherCPU: a store by CPU 1 clears CPU 0's monitor.
func TestExclusiveBrokenByOtherCPU(t *testing.T) {
	m, c, _ := newTestMachine(t, prog("ldxr x0, [x9]", "stxr w1, x0, [x9]"))
	c.SetX(9, testData)
	if err := m.Step(1); err != nil {
		t.Fatal(err)
	}
	// A second CPU's store, through the path every guest store takes.
	other := &CPU{m: m, index: 1}
	other.reset()
	if !other.store(testData+8, 3, 1) {
		t.Fatal("store faulted")
	}
	if err := m.Step(1); err != nil {
		t.Fatal(err)
	}
	if c.X(1) != 1 {
		t.Fatalf("stxr status = %d, want 1", c.X(1))
	}
}
