package machine

import (
	"log/slog"
	"testing"
)

// dprog encodes lines of assembly from the package's table
// (asm_table_test.go).
func dprog(lines ...string) []uint32 {
	out := make([]uint32, len(lines))
	for i, l := range lines {
		out[i] = I(l)
	}
	return out
}

func TestTimerState(t *testing.T) {
	cases := []struct {
		name           string
		ctl, cval, now uint64
		out            bool
		deadline       uint64
	}{
		{"disabled", 0, 10, 20, false, noDeadline},
		{"armed", timerEnable, 100, 20, false, 100},
		{"fired", timerEnable, 100, 100, true, noDeadline},
		{"fired masked", timerEnable | timerIMask, 100, 150, false, noDeadline},
		{"masked pending", timerEnable | timerIMask, 100, 50, false, noDeadline},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, d := timerState(tc.ctl, tc.cval, tc.now)
			if out != tc.out || d != tc.deadline {
				t.Fatalf("timerState = %v, %d; want %v, %d", out, d, tc.out, tc.deadline)
			}
		})
	}
}

// timerProg arms the virtual timer 500 ticks ahead, unmasks IRQs and then
// either sleeps in WFI or spins counting in x10. The IRQ handler at
// VBAR+0x280 acknowledges, counts in x5, disables the timer, reads the
// counter into x8 and ends the interrupt.
func timerProg(t *testing.T, wfi bool, chunks []uint64) (x5, x8, x10, insns uint64) {
	t.Helper()
	tail := "wfi"
	if !wfi {
		tail = "add x10, x10, #1"
	}
	code := dprog(
		"mov x0, #0x8000000", "mov w2, #1", "str w2, [x0]", // GICD_CTLR
		"mov w2, #0x8000000", "str w2, [x0, #0x100]", // ISENABLER0: PPI 27
		"mov x1, #0x8010000", "mov w2, #1", "str w2, [x1]", // GICC_CTLR
		"mov w2, #0xff", "str w2, [x1, #4]", // GICC_PMR
		"mov x9, #500", "msr cntv_tval_el0, x9", "mov x9, #1", "msr cntv_ctl_el0, x9",
		"msr daifclr, #2",
		tail, "b #-4",
	)
	handler := dprog(
		"ldr w3, [x1, #0xc]", "add x5, x5, #1", "msr cntv_ctl_el0, xzr", "mrs x8, cntvct_el0",
		"str w3, [x1, #0x10]", "eret",
	)
	m, c, _ := newTestMachine(t, code)
	// A small quantum: a timer armed mid-slice is first seen at the next
	// slice start (writes to timer registers do not end a slice).
	m.quantum = 100
	for i, w := range handler {
		mustWrite32(t, m, testVBAR+0x280+uint64(4*i), w)
	}
	for _, n := range chunks {
		if err := m.Step(n); err != nil {
			t.Fatal(err)
		}
	}
	return c.X(5), c.X(8), c.X(10), c.Retired()
}

func TestTimerInterrupt(t *testing.T) {
	t.Run("wfi fast-forwards", func(t *testing.T) {
		x5, x8, _, insns := timerProg(t, true, []uint64{2000})
		if x5 != 1 {
			t.Fatalf("interrupts = %d, want 1", x5)
		}
		// Armed at counter 11 for 500 ticks; the CPU slept meanwhile.
		if x8 < 511 || insns > 100 {
			t.Fatalf("counter in handler %d, instructions %d", x8, insns)
		}
	})
	t.Run("deterministic deadline", func(t *testing.T) {
		a5, a8, a10, _ := timerProg(t, false, []uint64{3000})
		b5, b8, b10, _ := timerProg(t, false, []uint64{1, 7, 100, 405, 2487})
		if a5 != 1 || a5 != b5 || a8 != b8 || a10 != b10 {
			t.Fatalf("runs differ: %d/%d/%d vs %d/%d/%d", a5, a8, a10, b5, b8, b10)
		}
		if a8 < 511 || a8 > 530 {
			t.Fatalf("counter in handler %d, want just past the deadline 511", a8)
		}
	})
}

// TestTimerRegisters checks ISTATUS and TVAL against the counter, the
// view the guest has of the timer that drives the GIC.
func TestTimerRegisters(t *testing.T) {
	m, err := New(Config{RAMSize: testRAM, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	m.Boot(testCode, 0)
	c := m.CPU(0)
	c.SetSysReg(CNTP_CVAL_EL0, 50)
	c.SetSysReg(CNTP_CTL_EL0, 1)
	m.counterSkew.Store(60) // the counter is now 60
	m.evalTimers()
	if v := c.SysReg(CNTP_CTL_EL0); v != 5 {
		t.Errorf("CNTP_CTL = %#x, want ENABLE|ISTATUS", v)
	}
	if v := int32(c.SysReg(CNTP_TVAL_EL0)); v != -10 {
		t.Errorf("CNTP_TVAL = %d, want -10", v)
	}
	if m.timerOut[0] != timerOutPhys {
		t.Errorf("timer output %#x, want physical timer asserted", m.timerOut[0])
	}
	c.SetSysReg(CNTP_CTL_EL0, 3) // masked
	m.evalTimers()
	if m.timerOut[0] != 0 {
		t.Errorf("masked timer output %#x", m.timerOut[0])
	}
}
