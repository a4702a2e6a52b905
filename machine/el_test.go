package machine

import "testing"

// TestEL0Traps checks the EL0 accesses that SCTLR_EL1 enables and that
// otherwise trap with EC 0x18 (or 0x01 for WFI), with QEMU's syndromes.
func TestEL0Traps(t *testing.T) {
	cases := []struct {
		insn   string
		enable uint64 // SCTLR_EL1 bit that allows it
		esr    uint64 // when trapped
	}{
		{"mrs x3, ctr_el0", sctlrUCT, 0x18<<26 | 1<<25 | 3<<20 | 1<<17 | 3<<14 | 0<<10 | 3<<5 | 0<<1 | 1},
		{"dc zva, x4", sctlrDZE, 0x18<<26 | 1<<25 | 1<<20 | 1<<17 | 3<<14 | 7<<10 | 4<<5 | 4<<1},
		{"mrs x5, daif", sctlrUMA, 0x18<<26 | 1<<25 | 3<<20 | 1<<17 | 3<<14 | 4<<10 | 5<<5 | 2<<1 | 1},
		{"msr daifset, #2", sctlrUMA, 0x18<<26 | 1<<25 | 0<<20 | 6<<17 | 3<<14 | 4<<10 | 31<<5 | 2<<1},
		{"dc cvau, x4", sctlrUCI, 0x18<<26 | 1<<25 | 1<<20 | 1<<17 | 3<<14 | 7<<10 | 4<<5 | 11<<1},
		{"wfi", sctlrNTW, 0x01<<26 | 1<<25 | 1<<24 | 0xe<<20},
	}
	for _, tc := range cases {
		for _, enabled := range []bool{false, true} {
			name := tc.insn
			if enabled {
				name += "/enabled"
			}
			t.Run(name, func(t *testing.T) {
				m, c, _ := newTestMachine(t, prog(tc.insn))
				sctlr := uint64(testSCTLR)
				if enabled {
					sctlr |= tc.enable
				}
				c.SetSysReg(SCTLR_EL1, sctlr)
				c.SetX(4, testData)
				c.SetPSTATE(0)
				if err := m.Step(1); err != nil {
					t.Fatal(err)
				}
				if enabled {
					if c.PC() != testCode+4 && !(tc.insn == "wfi" && c.Waiting()) {
						t.Fatalf("pc = %#x, ESR = %#x", c.PC(), c.SysReg(ESR_EL1))
					}
					return
				}
				if c.PC() != testVBAR+0x400 || c.SysReg(ELR_EL1) != testCode {
					t.Fatalf("pc = %#x, ELR = %#x", c.PC(), c.SysReg(ELR_EL1))
				}
				if got := c.SysReg(ESR_EL1); got != tc.esr {
					t.Fatalf("ESR = %#x, want %#x", got, tc.esr)
				}
			})
		}
	}
}

func TestDCZIDProhibited(t *testing.T) {
	m, c, _ := newTestMachine(t, prog("mrs x0, dczid_el0"))
	c.SetSysReg(SCTLR_EL1, testSCTLR)
	c.SetPSTATE(0)
	if err := m.Step(1); err != nil {
		t.Fatal(err)
	}
	if c.X(0) != dczidValue|1<<4 {
		t.Fatalf("DCZID_EL0 at EL0 without DZE = %#x, want DZP set", c.X(0))
	}
}

// TestAlignmentFaults covers SCTLR_EL1.A, the always-aligned exclusives
// and acquire/release accesses, and the SP alignment check.
func TestAlignmentFaults(t *testing.T) {
	cases := []struct {
		name  string
		insn  string
		sctlr uint64
		x1    uint64
		sp    uint64
		esr   uint64 // 0: no fault
		far   uint64
	}{
		{"unaligned-ok", "ldr x0, [x1]", testSCTLR, testData + 1, 0, 0, 0},
		{"a-bit-load", "ldr x0, [x1]", testSCTLR | sctlrA, testData + 1, 0, 0x25<<26 | 1<<25 | 0x21, testData + 1},
		{"a-bit-store", "str w0, [x1]", testSCTLR | sctlrA, testData + 2, 0, 0x25<<26 | 1<<25 | issWnR | 0x21, testData + 2},
		{"a-bit-aligned", "ldr x0, [x1]", testSCTLR | sctlrA, testData + 8, 0, 0, 0},
		{"ldxr", "ldxr x0, [x1]", testSCTLR, testData + 4, 0, 0x25<<26 | 1<<25 | 0x21, testData + 4},
		{"ldxp", "ldxp x0, x2, [x1]", testSCTLR, testData + 8, 0, 0x25<<26 | 1<<25 | 0x21, testData + 8},
		{"ldar", "ldar w0, [x1]", testSCTLR, testData + 2, 0, 0x25<<26 | 1<<25 | 0x21, testData + 2},
		{"stlr", "stlr x0, [x1]", testSCTLR, testData + 4, 0, 0x25<<26 | 1<<25 | issWnR | 0x21, testData + 4},
		{"sp-aligned", "ldr x0, [sp, #8]", testSCTLR | sctlrSA, 0, testData + 0x100, 0, 0},
		{"sp-misaligned", "ldr x0, [sp]", testSCTLR | sctlrSA, 0, testData + 0x108, 0x26<<26 | 1<<25, 0},
		{"sp-misaligned-unchecked", "ldr x0, [sp]", testSCTLR, 0, testData + 0x108, 0, 0},
		{"sp-not-base", "add x0, sp, #1", testSCTLR | sctlrSA, 0, testData + 0x108, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, c, _ := newTestMachine(t, prog(tc.insn))
			c.SetSysReg(SCTLR_EL1, tc.sctlr)
			c.SetX(1, tc.x1)
			if tc.sp != 0 {
				c.SetSP(tc.sp)
			}
			if err := m.Step(1); err != nil {
				t.Fatal(err)
			}
			if tc.esr == 0 {
				if c.PC() != testCode+4 {
					t.Fatalf("pc = %#x, ESR = %#x", c.PC(), c.SysReg(ESR_EL1))
				}
				return
			}
			if c.PC() != testVBAR+0x200 || c.SysReg(ELR_EL1) != testCode {
				t.Fatalf("pc = %#x, ELR = %#x", c.PC(), c.SysReg(ELR_EL1))
			}
			if got := c.SysReg(ESR_EL1); got != tc.esr {
				t.Errorf("ESR = %#x, want %#x", got, tc.esr)
			}
			if tc.far != 0 && c.SysReg(FAR_EL1) != tc.far {
				t.Errorf("FAR = %#x, want %#x", c.SysReg(FAR_EL1), tc.far)
			}
		})
	}
}

// TestVectorGroups checks that each vector group is used: current EL with
// SP0, with SPx, and lower EL.
func TestVectorGroups(t *testing.T) {
	cases := []struct {
		name   string
		pstate uint64
		vector uint64
	}{
		{"el1t", 0x3c4, 0x000},
		{"el1h", 0x3c5, 0x200},
		{"el0t", 0x000, 0x400},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, c, _ := newTestMachine(t, prog("svc #1"))
			c.SetPSTATE(tc.pstate)
			if err := m.Step(1); err != nil {
				t.Fatal(err)
			}
			if c.PC() != testVBAR+tc.vector || c.SysReg(SPSR_EL1) != tc.pstate {
				t.Fatalf("pc = %#x SPSR = %#x", c.PC(), c.SysReg(SPSR_EL1))
			}
		})
	}
}

// TestInterruptPolling checks that a raised IRQ line is taken at the poll
// points: a taken branch, DAIFClr, ERET, and that WFI with a line high
// does not sleep.
func TestInterruptPolling(t *testing.T) {
	cases := []struct {
		name  string
		code  []string
		steps uint64
		elr   uint64 // where the interrupt must be taken
	}{
		// The hostcall raises the line mid-run, as a device would.
		{"daifclr", []string{"hvc #0x4b01", "nop", "msr daifclr, #2", "nop"}, 3, testCode + 12},
		{"branch", []string{"hvc #0x4b01", "nop", "b #8", "nop", "nop"}, 3, testCode + 16},
		{"wfi", []string{"hvc #0x4b01", "wfi", "nop"}, 2, testCode + 8},
		{"eret", []string{"hvc #0x4b01", "msr elr_el1, x2", "msr spsr_el1, x3", "eret"}, 4, testCode + 0x40},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, c, _ := newTestMachine(t, prog(tc.code...))
			if tc.name == "branch" || tc.name == "wfi" {
				c.SetPSTATE(0x345) // EL1h, IRQ unmasked
			}
			c.SetX(2, testCode+0x40)
			c.SetX(3, 0x345)
			m.SetHostcall(0x4b01, func(cpu *CPU) error {
				cpu.setInterruptLines(true, false)
				return nil
			})
			if err := m.Step(tc.steps); err != nil {
				t.Fatal(err)
			}
			if c.Waiting() {
				t.Fatal("WFI slept with an interrupt pending")
			}
			if c.PC() != testVBAR+0x280 || c.SysReg(ELR_EL1) != tc.elr {
				t.Fatalf("pc = %#x, ELR = %#x, want IRQ vector and %#x", c.PC(), c.SysReg(ELR_EL1), tc.elr)
			}
		})
	}
	// Masked: WFI completes without sleeping and without an interrupt.
	m, c, _ := newTestMachine(t, prog("wfi", "mov x0, #1"))
	c.setInterruptLines(true, false)
	if err := m.Step(2); err != nil {
		t.Fatal(err)
	}
	if c.X(0) != 1 || c.Waiting() {
		t.Fatalf("masked WFI: x0 = %d waiting = %v", c.X(0), c.Waiting())
	}
}
