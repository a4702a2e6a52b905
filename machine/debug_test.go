package machine

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/kpemu/kpemu/internal/waitfor"
)

// debugMachine returns a test machine with the OS lock unlocked and
// MDSCR_EL1 set.
func debugMachine(t *testing.T, code []string, mdscr uint64) (*Machine, *CPU) {
	t.Helper()
	m, c, _ := newTestMachine(t, prog(code...))
	c.SetSysReg(SCTLR_EL1, testSCTLR)
	c.SetSysReg(OSLAR_EL1, 0)
	c.SetSysReg(MDSCR_EL1, mdscr)
	return m, c
}

func TestSoftwareStep(t *testing.T) {
	const el0 = testCode + 0x100
	cases := []struct {
		name   string
		mdscr  uint64
		pstate uint64 // the CPU starts at testCode with this PSTATE
		spsr   uint64 // for the ERET cases: the code is "eret" to el0 with this SPSR
		el0    []string
		steps  uint64
		lock   bool
		pc     uint64 // where the CPU is after steps
		esr    uint64 // if pc is a vector
		elr    uint64
	}{
		{name: "el1-one-insn", mdscr: mdscrSS | mdscrKDE, pstate: 0x5 | spsrSS, steps: 1, // the step exception completes the step
			pc: testVBAR + 0x200, esr: 0x33<<26 | 1<<25 | issDebugISV | 0x22, elr: testCode + 4},
		{name: "el1-pending-at-once", mdscr: mdscrSS | mdscrKDE, pstate: 0x5, steps: 1,
			pc: testVBAR + 0x200, esr: 0x33<<26 | 1<<25 | 0x22, elr: testCode},
		{name: "el1-kde-clear", mdscr: mdscrSS, pstate: 0x5 | spsrSS, steps: 2, pc: testCode + 8},
		{name: "el1-d-masked", mdscr: mdscrSS | mdscrKDE, pstate: 0x3c5 | spsrSS, steps: 2, pc: testCode + 8},
		{name: "os-locked", mdscr: mdscrSS | mdscrKDE, pstate: 0x5 | spsrSS, steps: 2, lock: true, pc: testCode + 8},
		{name: "eret-to-el0-steps-one", mdscr: mdscrSS, pstate: 0x3c5, spsr: spsrSS, el0: []string{"mov x0, #1", "mov x0, #2"}, steps: 2,
			pc: testVBAR + 0x400, esr: 0x32<<26 | 1<<25 | issDebugISV | 0x22, elr: el0 + 4},
		{name: "eret-to-el0-pending", mdscr: mdscrSS, pstate: 0x3c5, spsr: 0, el0: []string{"mov x0, #1"}, steps: 2,
			pc: testVBAR + 0x400, esr: 0x32<<26 | 1<<25 | 0x22, elr: el0},
		{name: "el0-ldxr-ex", mdscr: mdscrSS, pstate: 0x3c5, spsr: spsrSS, el0: []string{"ldxr x0, [x9]", "nop"}, steps: 2,
			pc: testVBAR + 0x400, esr: 0x32<<26 | 1<<25 | issDebugISV | issDebugEX | 0x22, elr: el0 + 4},
		{name: "el0-svc-completes-step", mdscr: mdscrSS, pstate: 0x3c5, spsr: spsrSS, el0: []string{"svc #3"}, steps: 2,
			pc: testVBAR + 0x400, esr: 0x15<<26 | 1<<25 | 3, elr: el0 + 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code := []string{"mov x1, #1", "mov x1, #2", "mov x1, #3"}
			if tc.el0 != nil {
				code = []string{"eret"}
			}
			m, c := debugMachine(t, code, tc.mdscr)
			for i, w := range prog(tc.el0...) {
				mustWrite32(t, m, el0+uint64(4*i), w)
			}
			if tc.lock {
				c.SetSysReg(OSLAR_EL1, 1)
			}
			c.SetSysReg(ELR_EL1, el0)
			c.SetSysReg(SPSR_EL1, tc.spsr)
			c.SetX(9, testData)
			c.SetPSTATE(tc.pstate)
			if err := m.Step(tc.steps); err != nil {
				t.Fatal(err)
			}
			if c.PC() != tc.pc {
				t.Fatalf("pc = %#x, want %#x (ESR %#x ELR %#x)", c.PC(), tc.pc, c.SysReg(ESR_EL1), c.SysReg(ELR_EL1))
			}
			if tc.esr == 0 {
				return
			}
			if got := c.SysReg(ESR_EL1); got != tc.esr {
				t.Errorf("ESR = %#x, want %#x", got, tc.esr)
			}
			if got := c.SysReg(ELR_EL1); got != tc.elr {
				t.Errorf("ELR = %#x, want %#x", got, tc.elr)
			}
			if tc.name == "el0-svc-completes-step" && c.SysReg(SPSR_EL1)&spsrSS != 0 {
				t.Errorf("SPSR.SS set after a stepped SVC")
			}
		})
	}
}

// TestStepCount steps a loop at EL0 from an EL1 handler that re-arms the
// step each time, counting step exceptions, as a debugger would.
func TestStepCount(t *testing.T) {
	const el0 = testCode + 0x100
	m, c := debugMachine(t, []string{"eret"}, mdscrSS)
	// EL0: five iterations of a two-instruction loop, then SVC.
	for i, w := range prog("mov x0, #5", "subs x0, x0, #1", "b.ne #-4", "svc #0") {
		mustWrite32(t, m, el0+uint64(4*i), w)
	}
	// Lower-EL sync handler: count steps in x20 while EC is 0x32, set
	// SPSR.SS again and return; on anything else, park.
	for i, w := range prog("mrs x21, esr_el1", "lsr x21, x21, #26", "cmp x21, #0x32", "b.ne #24",
		"add x20, x20, #1", "mrs x22, spsr_el1", "orr x22, x22, #0x200000", "msr spsr_el1, x22", "eret", "wfi") {
		mustWrite32(t, m, testVBAR+0x400+uint64(4*i), w)
	}
	c.SetSysReg(ELR_EL1, el0)
	c.SetSysReg(SPSR_EL1, spsrSS)
	if err := m.Step(1000); err != nil {
		t.Fatal(err)
	}
	// mov, then 5 × (subs, b.ne): 11 steps before the SVC, which ends with
	// its own exception.
	if c.X(20) != 11 || c.SysReg(ESR_EL1)>>26 != 0x15 {
		t.Fatalf("steps = %d, ESR = %#x", c.X(20), c.SysReg(ESR_EL1))
	}
}

func TestHardwareBreakpoints(t *testing.T) {
	const bcrAll = 1 | 3<<1 | 0xf<<5 // enabled, EL0 and EL1, BAS 0b1111
	cases := []struct {
		name   string
		mdscr  uint64
		bcr    uint64
		pstate uint64
		hit    bool
		ec     uint64
	}{
		{"el1", mdscrMDE | mdscrKDE, bcrAll, 0x5, true, 0x31},
		{"el0", mdscrMDE, bcrAll, 0x0, true, 0x30},
		{"mde-clear", mdscrKDE, bcrAll, 0x5, false, 0},
		{"kde-clear", mdscrMDE, bcrAll, 0x5, false, 0},
		{"d-masked", mdscrMDE | mdscrKDE, bcrAll, 0x3c5, false, 0},
		{"el0-only-at-el1", mdscrMDE | mdscrKDE, 1 | 2<<1 | 0xf<<5, 0x5, false, 0},
		{"bas-zero", mdscrMDE | mdscrKDE, 1 | 3<<1, 0x5, false, 0},
		{"disabled", mdscrMDE | mdscrKDE, bcrAll &^ 1, 0x5, false, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, c := debugMachine(t, []string{"mov x0, #1", "mov x0, #2", "mov x0, #3", "mov x0, #4"}, tc.mdscr)
			c.SetSysReg(DBGBVR0_EL1+3, testCode+8)
			c.SetSysReg(DBGBCR0_EL1+3, tc.bcr)
			c.SetPSTATE(tc.pstate)
			if err := m.Step(3); err != nil {
				t.Fatal(err)
			}
			if !tc.hit {
				if c.PC() != testCode+12 {
					t.Fatalf("pc = %#x, ESR = %#x", c.PC(), c.SysReg(ESR_EL1))
				}
				return
			}
			vec := uint64(0x200)
			if tc.pstate == 0 {
				vec = 0x400
			}
			if c.PC() != testVBAR+vec || c.X(0) != 2 || c.SysReg(ELR_EL1) != testCode+8 {
				t.Fatalf("pc = %#x, x0 = %d, ELR = %#x", c.PC(), c.X(0), c.SysReg(ELR_EL1))
			}
			if got, want := c.SysReg(ESR_EL1), tc.ec<<26|1<<25|0x22; got != want {
				t.Fatalf("ESR = %#x, want %#x", got, want)
			}
		})
	}
}

func TestWatchpoints(t *testing.T) {
	cases := []struct {
		name  string
		insn  string
		wvr   uint64
		wcr   uint64
		hit   bool
		write bool
		far   uint64
	}{
		{"load", "ldr w0, [x1, #4]", testData, 1 | 3<<1 | 1<<3 | 0xff<<5, true, false, testData + 4},
		{"store", "str w2, [x1, #4]", testData, 1 | 3<<1 | 2<<3 | 0xff<<5, true, true, testData + 4},
		{"store-not-load", "ldr w0, [x1, #4]", testData, 1 | 3<<1 | 2<<3 | 0xff<<5, false, false, 0},
		{"bas-other-bytes", "ldr w0, [x1, #4]", testData, 1 | 3<<1 | 3<<3 | 0x0f<<5, false, false, 0},
		{"bas-one-byte", "ldr x0, [x1]", testData, 1 | 3<<1 | 3<<3 | 0x20<<5, true, false, testData + 5},
		{"mask", "ldr x0, [x1, #0x18]", testData, 1 | 3<<1 | 3<<3 | 5<<24, true, false, testData + 0x18},
		{"pair", "stp x2, x2, [x1, #8]", testData + 16, 1 | 3<<1 | 3<<3 | 0xff<<5, true, true, testData + 16},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, c := debugMachine(t, []string{"nop", tc.insn, "nop"}, mdscrMDE|mdscrKDE)
			c.SetSysReg(DBGWVR0_EL1+2, tc.wvr)
			c.SetSysReg(DBGWCR0_EL1+2, tc.wcr)
			c.SetPSTATE(0x5)
			c.SetX(1, testData)
			c.SetX(2, 0x99)
			mustWrite64(t, m, testData, 0x0706050403020100)
			if err := m.Step(2); err != nil {
				t.Fatal(err)
			}
			if !tc.hit {
				if c.PC() != testCode+8 {
					t.Fatalf("pc = %#x, ESR = %#x", c.PC(), c.SysReg(ESR_EL1))
				}
				return
			}
			if c.PC() != testVBAR+0x200 || c.SysReg(ELR_EL1) != testCode+4 {
				t.Fatalf("pc = %#x, ELR = %#x", c.PC(), c.SysReg(ELR_EL1))
			}
			want := uint64(0x35<<26 | 1<<25 | 0x22)
			if tc.write {
				want |= issWnR
			}
			if got := c.SysReg(ESR_EL1); got != want {
				t.Errorf("ESR = %#x, want %#x", got, want)
			}
			if got := c.SysReg(FAR_EL1); got != tc.far {
				t.Errorf("FAR = %#x, want %#x", got, tc.far)
			}
			if v := mustRead64(t, m, tc.far&^7); tc.write && v != 0x0706050403020100 && v != 0 {
				t.Errorf("the watched store happened: %#x", v)
			}
		})
	}
}

func TestDebugIDRegister(t *testing.T) {
	_, c, _ := newTestMachine(t, nil)
	v := c.SysReg(ID_AA64DFR0_EL1)
	if v&0xf != 6 || v>>12&0xf != 5 || v>>20&0xf != 3 {
		t.Fatalf("ID_AA64DFR0_EL1 = %#x", v)
	}
}

func TestHostBreakpoints(t *testing.T) {
	m, c, _ := newTestMachine(t, prog("mov x0, #0", "add x0, x0, #1", "b #-4"))
	if err := m.SetHostBreakpoint(testCode + 4); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := uint64(0); i < 3; i++ {
		ev := m.DebugRun(ctx, -1)
		if ev.Reason != StopBreakpoint || ev.Addr != testCode+4 || c.PC() != testCode+4 || c.X(0) != i {
			t.Fatalf("run %d: %+v pc = %#x x0 = %d", i, ev, c.PC(), c.X(0))
		}
	}
	// Single steps from the breakpoint execute the instruction there.
	for _, want := range []uint64{testCode + 8, testCode + 4} {
		if ev := m.DebugRun(ctx, 0); ev.Reason != StopStep || c.PC() != want {
			t.Fatalf("step: %+v pc = %#x, want %#x", ev, c.PC(), want)
		}
	}
	if c.X(0) != 3 || c.SysReg(ESR_EL1) != 0 || m.Stats().Exceptions != 0 {
		t.Fatalf("x0 = %d, guest saw ESR %#x, exceptions %d", c.X(0), c.SysReg(ESR_EL1), m.Stats().Exceptions)
	}
	if err := m.ClearHostBreakpoint(testCode + 4); err != nil {
		t.Fatal(err)
	}
	ctx2, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if ev := m.DebugRun(ctx2, -1); ev.Reason != StopInterrupted {
		t.Fatalf("after clear: %+v", ev)
	}
	if m.SetHostBreakpoint(testCode+2) == nil {
		t.Fatal("unaligned breakpoint accepted")
	}
	// Plain Step ignores host breakpoints and is not stopped by them.
	if err := m.SetHostBreakpoint(testCode + 4); err != nil {
		t.Fatal(err)
	}
	before := c.X(0)
	if err := m.Step(20); err != nil {
		t.Fatal(err)
	}
	if c.X(0) <= before {
		t.Fatal("Step stopped at a host breakpoint")
	}
}

func TestHostWatchpoints(t *testing.T) {
	cases := []struct {
		kind  WatchKind
		stop  bool
		write bool
		addr  uint64
	}{
		{WatchWrite, true, true, testData + 8},
		{WatchRead, true, false, testData + 8},
		{WatchAccess, true, false, testData + 8},
	}
	for _, tc := range cases {
		t.Run(map[WatchKind]string{WatchWrite: "write", WatchRead: "read", WatchAccess: "access"}[tc.kind], func(t *testing.T) {
			// A read of the range comes first, then a write.
			m, c, _ := newTestMachine(t, prog("ldr x3, [x1, #8]", "str x2, [x1, #8]", "mov x4, #1", "b #0"))
			c.SetX(1, testData)
			c.SetX(2, 0x55)
			if err := m.SetHostWatchpoint(testData+12, 4, tc.kind); err != nil {
				t.Fatal(err)
			}
			ev := m.DebugRun(context.Background(), -1)
			wantPC := uint64(testCode + 4)
			if tc.kind == WatchWrite {
				wantPC = testCode + 8
			}
			if ev.Reason != StopWatchpoint || ev.Write != tc.write || ev.Addr != testData+12 || c.PC() != wantPC {
				t.Fatalf("%+v pc = %#x", ev, c.PC())
			}
			if tc.kind == WatchWrite && mustRead64(t, m, testData+8) != 0x55 {
				t.Fatal("the store did not complete before the stop")
			}
			if err := m.ClearHostWatchpoint(testData+12, 4, tc.kind); err != nil {
				t.Fatal(err)
			}
			if err := m.ClearHostWatchpoint(testData+12, 4, tc.kind); !errors.Is(err, ErrBadDebugRequest) {
				t.Fatalf("second clear: %v", err)
			}
		})
	}
}

func TestDebugRunPowerOff(t *testing.T) {
	m, _, _ := newTestMachine(t, prog("mov x0, #0x8", "movk x0, #0x8400, lsl #16", "hvc #0"))
	if err := m.SetHostWatchpoint(0x1000, 8, WatchAccess); err != nil {
		t.Fatal(err)
	}
	if ev := m.DebugRun(context.Background(), -1); ev.Reason != StopPoweredOff {
		t.Fatalf("%+v", ev)
	}
	if ev := m.DebugRun(context.Background(), 1); ev.Reason != StopError {
		t.Fatalf("step of a missing CPU: %+v", ev)
	}
}

// TestDebugRunDeterministic checks that stopping at breakpoints does not
// change the interleaving of two CPUs: the same trace as a plain run.
func TestDebugRunDeterministic(t *testing.T) {
	build := func() *Machine {
		m, err := New(Config{RAMSize: testRAM, NumCPUs: 2, Quantum: 7, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		// Both CPUs append their index to a shared log at testData.
		code := prog("mrs x1, mpidr_el1", "and x1, x1, #0xff", "ldr x2, [x3]", "add x4, x3, x2, lsl #3", "str x1, [x4, #8]",
			"add x2, x2, #1", "str x2, [x3]", "cmp x2, #60", "b.lo #-28", "wfi")
		for i, w := range code {
			mustWrite32(t, m, testCode+uint64(4*i), w)
		}
		m.Boot(testCode, 0)
		for i := 0; i < 2; i++ {
			c := m.CPU(i)
			c.on = true
			c.SetPC(testCode)
			c.SetX(3, testData)
		}
		return m
	}
	a := build()
	if err := a.Step(2000); err != nil {
		t.Fatal(err)
	}
	b := build()
	if err := b.SetHostBreakpoint(testCode + 16); err != nil {
		t.Fatal(err)
	}
	stops := 0
	// The run ends with both CPUs in WFI, where DebugRun idles until its
	// context ends: end it once both wait (Run serves Exclusive meanwhile),
	// not after a time in which a loaded host may not have got there.
	ctx, cancel := context.WithDeadline(context.Background(), waitfor.Deadline(t))
	defer cancel()
	go func() {
		defer cancel()
		for ctx.Err() == nil {
			idle := false
			b.Exclusive(func() { idle = b.CPU(0).Waiting() && b.CPU(1).Waiting() })
			if idle {
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	for stops < 1000 {
		ev := b.DebugRun(ctx, -1)
		if ev.Reason != StopBreakpoint {
			break
		}
		stops++
	}
	if stops < 60 {
		t.Fatalf("stops = %d, want at least 60", stops)
	}
	for off := uint64(0); off < 62*8; off += 8 {
		if x, y := mustRead64(t, a, testData+off), mustRead64(t, b, testData+off); x != y {
			t.Fatalf("log differs at %d: %d vs %d", off/8, x, y)
		}
	}
}
