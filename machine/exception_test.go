package machine

import (
	"errors"
	"testing"
)

// spsrEL1h is SPSR for EL1h with DAIF masked and flags clear.
const spsrEL1h = 0x3c5

func TestBRKAndERET(t *testing.T) {
	m, c, _ := newTestMachine(t, prog("nop", "brk #0x1234", "mov x0, #1"))
	// Handler at VBAR+0x200: skip the BRK and return.
	handler := prog("mrs x1, elr_el1", "add x1, x1, #4", "msr elr_el1, x1", "mrs x2, esr_el1", "eret")
	for i, w := range handler {
		mustWrite32(t, m, testVBAR+0x200+uint64(4*i), w)
	}
	setFlags(c, "NzCv")
	if err := m.Step(2); err != nil {
		t.Fatal(err)
	}
	if c.PC() != testVBAR+0x200 {
		t.Fatalf("pc = %#x, want vector %#x", c.PC(), testVBAR+0x200)
	}
	if got, want := c.SysReg(ESR_EL1), uint64(0x3c<<26|1<<25|0x1234); got != want {
		t.Errorf("ESR = %#x, want %#x", got, want)
	}
	if got := c.SysReg(ELR_EL1); got != testCode+4 {
		t.Errorf("ELR = %#x, want %#x", got, testCode+4)
	}
	if got, want := c.SysReg(SPSR_EL1), uint64(spsrEL1h|spsrN|spsrC); got != want {
		t.Errorf("SPSR = %#x, want %#x", got, want)
	}
	if err := m.Step(5 + 1); err != nil {
		t.Fatal(err)
	}
	if c.PC() != testCode+12 || c.X(0) != 1 || flags(c) != "NzCv" {
		t.Fatalf("after eret: pc=%#x x0=%d flags=%s", c.PC(), c.X(0), flags(c))
	}
	if st := m.Stats(); st.Exceptions != 1 {
		t.Errorf("Stats.Exceptions = %d", st.Exceptions)
	}
}

// TestEL0 drops to EL0 with ERET, takes an SVC to VBAR+0x400, and checks
// the banked stack pointers.
func TestEL0SVC(t *testing.T) {
	m, c, _ := newTestMachine(t, prog(
		"msr elr_el1, x1", // x1 = EL0 entry
		"msr spsr_el1, xzr",
		"msr sp_el0, x2",
		"eret",
	))
	el0 := uint64(testCode + 0x100)
	for i, w := range prog("mov x0, sp", "svc #7", "nop") {
		mustWrite32(t, m, el0+uint64(4*i), w)
	}
	c.SetX(1, el0)
	c.SetX(2, 0x1230)
	sp1 := c.SP()
	if err := m.Step(4 + 2); err != nil {
		t.Fatal(err)
	}
	if c.X(0) != 0x1230 {
		t.Errorf("EL0 sp = %#x", c.X(0))
	}
	if c.PC() != testVBAR+0x400 {
		t.Fatalf("pc = %#x, want %#x", c.PC(), testVBAR+0x400)
	}
	if got, want := c.SysReg(ESR_EL1), uint64(0x15<<26|1<<25|7); got != want {
		t.Errorf("ESR = %#x, want %#x", got, want)
	}
	if got := c.SysReg(ELR_EL1); got != el0+8 {
		t.Errorf("ELR = %#x, want %#x", got, el0+8)
	}
	if got := c.SysReg(SPSR_EL1); got != 0 {
		t.Errorf("SPSR = %#x, want 0", got)
	}
	if c.SP() != sp1 || c.SysReg(SP_EL0) != 0x1230 || c.EL() != 1 {
		t.Errorf("sp = %#x (want %#x), sp_el0 = %#x, el = %d", c.SP(), sp1, c.SysReg(SP_EL0), c.EL())
	}
}

func TestEL0Privilege(t *testing.T) {
	for _, insn := range []string{"mrs x0, sctlr_el1", "msr vbar_el1, x0", "eret", "hvc #0", "tlbi vmalle1", "dc isw, x0", "ic iallu"} {
		t.Run(insn, func(t *testing.T) {
			m, c, _ := newTestMachine(t, nil)
			mustWrite32(t, m, testCode, I(insn))
			c.SetPSTATE(0) // EL0t
			if err := m.Step(1); err != nil {
				t.Fatal(err)
			}
			if c.PC() != testVBAR+0x400 || c.SysReg(ESR_EL1)>>26 != 0 {
				t.Fatalf("pc = %#x, ESR = %#x; want undefined at lower-EL vector", c.PC(), c.SysReg(ESR_EL1))
			}
		})
	}
	// What EL0 may do.
	m, c, _ := newTestMachine(t, prog("mrs x0, tpidr_el0", "msr tpidr_el0, x1", "mrs x2, cntvct_el0", "mrs x3, ctr_el0", "dc zva, x4", "mrs x5, nzcv"))
	c.SetX(1, 99)
	c.SetX(4, testData)
	c.SetSysReg(SCTLR_EL1, c.SysReg(SCTLR_EL1)|sctlrUCT|sctlrDZE)
	c.SetPSTATE(0)
	if err := m.Step(6); err != nil {
		t.Fatal(err)
	}
	if c.PC() != testCode+24 || c.SysReg(TPIDR_EL0) != 99 || c.X(3) != ctrValue {
		t.Fatalf("pc = %#x, tpidr = %d, ctr = %#x", c.PC(), c.SysReg(TPIDR_EL0), c.X(3))
	}
}

func TestUndefined(t *testing.T) {
	for _, tc := range []struct {
		name string
		word uint32
	}{
		{"udf", 0x00000000},
		{"fadd-h", 0x1ee22820},           // fadd h0, h1, h2: no FEAT_FP16 arithmetic
		{"aese", 0x4e284820},             // aese v0.16b, v1.16b: no cryptographic extension
		{"atomic-unalloc", 0xf8209020},   // the LD<op> space with o3=1, opc=001
		{"casp-odd", 0x48217c40},         // casp x1, x2, x0, x1, [x2]: odd register pair
		{"smc", 0xd4000003},              // smc #0: no EL3
		{"hlt", 0xd4400000},              // hlt #0
		{"hvc-unregistered", 0xd4000022}, // hvc #1
		{"sysreg-unknown", 0xd53bffe0},   // mrs x0, s3_3_c15_c15_7
		{"orr-w-n1", 0x32400000},         // logical immediate with sf=0, N=1
		{"retaa", 0xd65f0bff},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, c, _ := newTestMachine(t, []uint32{tc.word})
			if err := m.Step(1); err != nil {
				t.Fatal(err)
			}
			if c.PC() != testVBAR+0x200 {
				t.Fatalf("pc = %#x, want %#x", c.PC(), testVBAR+0x200)
			}
			if got, want := c.SysReg(ESR_EL1), uint64(1<<25); got != want {
				t.Errorf("ESR = %#x, want %#x", got, want)
			}
			if c.SysReg(ELR_EL1) != testCode {
				t.Errorf("ELR = %#x", c.SysReg(ELR_EL1))
			}
			if m.Stats().Undefined != 1 {
				t.Errorf("Stats.Undefined = %d", m.Stats().Undefined)
			}
			if !Decode(tc.word).Undefined && tc.name != "hvc-unregistered" {
				t.Errorf("Decode(%#x) not undefined", tc.word)
			}
		})
	}
}

func TestAborts(t *testing.T) {
	cases := []struct {
		name     string
		code     []string
		x1       uint64
		ec       uint64
		iss      uint64
		elr, far uint64
		fetch    bool // the fault is on the next fetch: one more step
	}{
		{name: "load", code: []string{"ldr x0, [x1]"}, x1: 0x1000, ec: 0x25, iss: 0x10, elr: testCode, far: 0x1000},
		{name: "store", code: []string{"nop", "str w0, [x1, #8]"}, x1: 0x1000, ec: 0x25, iss: 0x50, elr: testCode + 4, far: 0x1008},
		{name: "past-ram", code: []string{"ldp x2, x3, [x1]"}, x1: RAMBase + testRAM - 8, ec: 0x25, iss: 0x10, elr: testCode, far: RAMBase + testRAM},
		{name: "fetch", code: []string{"br x1"}, x1: 0x2000, ec: 0x21, iss: 0x10, elr: 0x2000, far: 0x2000, fetch: true},
		{name: "fetch-device", code: []string{"br x1"}, x1: UARTBase, ec: 0x21, iss: 0x10, elr: UARTBase, far: UARTBase, fetch: true},
		{name: "pc-align", code: []string{"br x1"}, x1: testCode + 2, ec: 0x22, iss: 0, elr: testCode + 2, far: testCode + 2, fetch: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, c, _ := newTestMachine(t, prog(tc.code...))
			c.SetX(1, tc.x1)
			steps := uint64(len(tc.code))
			if tc.fetch {
				steps++
			}
			if err := m.Step(steps); err != nil {
				t.Fatal(err)
			}
			if c.PC() != testVBAR+0x200 {
				t.Fatalf("pc = %#x, want vector", c.PC())
			}
			if got, want := c.SysReg(ESR_EL1), tc.ec<<26|1<<25|tc.iss; got != want {
				t.Errorf("ESR = %#x, want %#x", got, want)
			}
			if got := c.SysReg(ELR_EL1); got != tc.elr {
				t.Errorf("ELR = %#x, want %#x", got, tc.elr)
			}
			if got := c.SysReg(FAR_EL1); got != tc.far {
				t.Errorf("FAR = %#x, want %#x", got, tc.far)
			}
		})
	}
}

func TestExceptionFromSP0(t *testing.T) {
	m, c, _ := newTestMachine(t, prog("msr spsel, #0", "brk #1"))
	if err := m.Step(2); err != nil {
		t.Fatal(err)
	}
	if c.PC() != testVBAR || c.SysReg(SPSR_EL1)&0xf != 4 {
		t.Fatalf("pc = %#x, SPSR = %#x; want current-EL SP0 vector and EL1t", c.PC(), c.SysReg(SPSR_EL1))
	}
}

func TestIllegalReturn(t *testing.T) {
	m, c, _ := newTestMachine(t, prog("msr spsr_el1, x1", "msr elr_el1, x2", "eret"))
	c.SetX(1, 0x9) // EL2h: not implemented
	c.SetX(2, testCode+0x40)
	if err := m.Step(4); err != nil {
		t.Fatal(err)
	}
	if got := c.SysReg(ESR_EL1) >> 26; got != 0x0e || c.SysReg(ELR_EL1) != testCode+0x40 {
		t.Fatalf("EC = %#x, ELR = %#x; want illegal state at %#x", got, c.SysReg(ELR_EL1), testCode+0x40)
	}
	if c.SysReg(SPSR_EL1)&spsrIL == 0 {
		t.Errorf("SPSR.IL clear")
	}
}

func TestHostcalls(t *testing.T) {
	m, c, _ := newTestMachine(t, prog("mov x0, #5", "hvc #0x4b01", "add x0, x0, #1", "hvc #0x4b02", "nop", "hvc #0x4b03"))
	var seenPC uint64
	m.SetHostcall(0x4b01, func(cpu *CPU) error {
		seenPC = cpu.PC()
		cpu.SetX(0, cpu.X(0)*10)
		return nil
	})
	m.SetHostcall(0x4b02, func(cpu *CPU) error {
		cpu.SetPC(cpu.PC() + 4) // skip the nop
		return nil
	})
	boom := errors.New("boom")
	m.SetHostcall(0x4b03, func(*CPU) error { return boom })
	err := m.Step(100)
	if !errors.Is(err, boom) {
		t.Fatalf("Step = %v, want boom", err)
	}
	if seenPC != testCode+8 || c.X(0) != 51 || c.PC() != testCode+24 {
		t.Fatalf("seen pc %#x, x0 = %d, pc = %#x", seenPC, c.X(0), c.PC())
	}
	if st := m.Stats(); st.Hostcalls != 3 || st.Instructions != 5 {
		t.Errorf("stats %+v", st)
	}
}

func TestPSCI(t *testing.T) {
	m, c, _ := newTestMachine(t, prog(
		"mov x0, #0x84000000", "hvc #0", "mov x10, x0",
		"mov x0, #0xa", "movk x0, #0x8400, lsl #16", "mov x1, #0x8", "movk x1, #0x8400, lsl #16", "hvc #0", "mov x11, x0",
		"mov x0, #0x3", "movk x0, #0xc400, lsl #16", "hvc #0", "mov x12, x0", // CPU_ON of MPIDR 0x84000008: no such CPU
		"mov x0, #0x8", "movk x0, #0x8400, lsl #16", "hvc #0",
		"mov x13, #1"))
	if err := m.Step(1000); err != nil {
		t.Fatal(err)
	}
	if !m.PoweredOff() {
		t.Fatal("not powered off")
	}
	if c.X(10) != 0x10000 || c.X(11) != 0 || c.X(12) != psciInvalidParameters || c.X(13) != 0 {
		t.Fatalf("version %#x features %#x cpu_on %#x x13 %d", c.X(10), c.X(11), c.X(12), c.X(13))
	}
}

// A hostcall handler reads the counter as the guest reads it at the HVC,
// not as of the start of the CPU's slice: trace timestamps taken in a
// handler are then as fine as the guest's own clock.
func TestHostcallSeesCounterAtHVC(t *testing.T) {
	code := []string{"mrs x8, cntvct_el0"}
	for i := 0; i < 100; i++ {
		code = append(code, "nop")
	}
	code = append(code, "hvc #0x4b01", "mrs x2, cntvct_el0", "hvc #0x4b02")
	m, c, _ := newTestMachine(t, prog(code...))
	var seen uint64
	m.SetHostcall(0x4b01, func(cpu *CPU) error {
		seen = cpu.SysReg(CNTVCT_EL0)
		return nil
	})
	boom := errors.New("boom")
	m.SetHostcall(0x4b02, func(*CPU) error { return boom })
	if err := m.Step(1000); !errors.Is(err, boom) {
		t.Fatalf("Step = %v, want boom", err)
	}
	// The counter counts retired instructions: the MRS into x8 and the
	// 100 NOPs and the HVC retire before the handler and the next MRS.
	before, after := c.X(8), c.X(2)
	if seen != before+102 || after != seen {
		t.Errorf("counter: guest %d before, host %d in the hostcall, guest %d after; want %d, %d", before, seen, after, before+102, before+102)
	}
}
