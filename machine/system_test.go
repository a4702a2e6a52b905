package machine

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kpemu/kpemu/internal/waitfor"
)

func TestSystemRegisters(t *testing.T) {
	runRegCases(t, []regCase{
		{name: "midr", code: []string{"mrs x0, midr_el1"}, want: regs{0: 0x411fd070}},
		{name: "mpidr", code: []string{"mrs x0, mpidr_el1"}, want: regs{0: 0x8000_0000}},
		{name: "currentel", code: []string{"mrs x0, currentel"}, want: regs{0: 4}},
		{name: "daif", code: []string{"mrs x0, daif", "msr daifclr, #0xf", "mrs x1, daif", "msr daifset, #2", "mrs x2, daif"}, want: regs{0: 0x3c0, 1: 0, 2: 0x80}},
		{name: "daif-msr", code: []string{"msr daif, x1", "mrs x0, daif"}, in: regs{1: 0x140}, want: regs{0: 0x140}},
		{name: "nzcv", code: []string{"msr nzcv, x1", "mrs x0, nzcv", "cset x2, vs"}, in: regs{1: 0x9000_0000}, want: regs{0: 0x9000_0000, 2: 1}, nzcv: "NzcV"},
		{name: "vbar-res0", code: []string{"msr vbar_el1, x1", "mrs x0, vbar_el1"}, in: regs{1: 0x4000_0fff}, want: regs{0: 0x4000_0800}},
		{name: "tpidr", code: []string{"msr tpidr_el1, x1", "mrs x0, tpidr_el1", "msr tpidrro_el0, x1", "mrs x2, tpidrro_el0"}, in: regs{1: 77}, want: regs{0: 77, 2: 77}},
		{name: "spsel", code: []string{"msr sp_el0, x1", "msr spsel, #0", "mov x0, sp", "msr spsel, #1", "mov x2, sp", "mrs x3, spsel"}, in: regs{1: 0x500, 31: 0x900}, want: regs{0: 0x500, 2: 0x900, 3: 1}},
		{name: "spsel-reg", code: []string{"msr spsel, xzr", "mrs x0, spsel", "mov x1, sp"}, in: regs{31: 0x900}, want: regs{0: 0, 1: 0}},
		{name: "dczid", code: []string{"mrs x0, dczid_el0"}, want: regs{0: 4}},
		{name: "ctr", code: []string{"mrs x0, ctr_el0"}, want: regs{0: ctrValue}},
		{name: "cntfrq", code: []string{"mrs x0, cntfrq_el0"}, want: regs{0: 62500000}},
		{name: "cntvct", code: []string{"nop", "nop", "mrs x0, cntvct_el0", "mrs x1, cntpct_el0"}, want: regs{0: 2, 1: 3}},
		{name: "cntv-tval", code: []string{"mov x1, #100", "msr cntv_tval_el0, x1", "mrs x0, cntv_cval_el0", "mrs x2, cntv_tval_el0"}, want: regs{0: 101, 2: 98}},
		{name: "cntv-ctl", code: []string{"msr cntv_cval_el0, xzr", "mov x1, #1", "msr cntv_ctl_el0, x1", "mrs x0, cntv_ctl_el0"}, want: regs{0: 5}},
		{name: "oslar", code: []string{"mrs x0, oslsr_el1", "msr oslar_el1, xzr", "mrs x1, oslsr_el1"}, want: regs{0: 0xa, 1: 0x8}},
		{name: "mdscr", code: []string{"msr mdscr_el1, x1", "mrs x0, mdscr_el1"}, in: regs{1: 0x8001}, want: regs{0: 0x8001}},
		{name: "mmu-regs", code: []string{"msr ttbr0_el1, x1", "msr tcr_el1, x1", "msr mair_el1, x1", "mrs x0, mair_el1", "msr sctlr_el1, x1", "mrs x2, sctlr_el1"}, in: regs{1: 0x1234}, want: regs{0: 0x1234, 2: 0x1234}},
		{name: "id-regs", code: []string{"mrs x0, id_aa64pfr0_el1", "mrs x1, id_aa64isar0_el1", "mrs x2, id_aa64mmfr2_el1", "mrs x3, id_pfr0_el1"}, want: regs{0: idAA64PFR0, 1: idAA64ISAR0, 2: 0, 3: 0}},
		{name: "hints", code: []string{"nop", "yield", "wfe", "sev", "sevl", "isb", "dsb sy", "dmb ish", "dsb ishst", "hint #34", "paciasp", "autiasp", "csdb"}},
		{name: "cache-maint", code: []string{"ic iallu", "ic ialluis", "ic ivau, x9", "dc civac, x9", "dc cvac, x9", "dc cvau, x9", "dc ivac, x9", "dc cisw, x1", "tlbi vmalle1is", "tlbi vae1, x1"}, in: regs{9: testData}},
		{name: "at", code: []string{"at s1e1r, x1", "mrs x0, par_el1"}, in: regs{1: 0x4000_1234}, want: regs{0: 0x4000_1a00}}, // MMU off: PA, NS, bit 11 (RES1), Device-nGnRnE
	})
}

func TestDCZVA(t *testing.T) {
	m, c, _ := newTestMachine(t, prog("dc zva, x1"))
	for off := uint64(0); off < 128; off += 8 {
		mustWrite64(t, m, testData+off, all64)
	}
	c.SetX(1, testData+64+13)
	if err := m.Step(1); err != nil {
		t.Fatal(err)
	}
	for off := uint64(0); off < 128; off += 8 {
		want := all64
		if off >= 64 {
			want = 0
		}
		if got := mustRead64(t, m, testData+off); got != want {
			t.Errorf("data+%d = %#x, want %#x", off, got, want)
		}
	}
}

func TestUART(t *testing.T) {
	m, c, console := newTestMachine(t, prog(
		"mov x1, #0x9000000",
		"mov w0, #0x48", "strb w0, [x1]",
		"mov w0, #0x69", "str w0, [x1]",
		"ldr w2, [x1, #0x18]",
		"ldr w3, [x1, #0xfe0]", "ldr w4, [x1, #0xffc]",
		"mov w0, #0x301", "str w0, [x1, #0x30]", "ldr w5, [x1, #0x30]",
	))
	if err := m.Step(11); err != nil {
		t.Fatal(err)
	}
	if console.String() != "Hi" {
		t.Errorf("console = %q", console.String())
	}
	if c.X(2) != 0x90 || c.X(3) != 0x11 || c.X(4) != 0xb1 || c.X(5) != 0x301 {
		t.Errorf("FR %#x PeriphID0 %#x PCellID3 %#x CR %#x", c.X(2), c.X(3), c.X(4), c.X(5))
	}
}

func TestHostMemory(t *testing.T) {
	m, err := New(Config{RAMSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	for _, addr := range []uint64{0, RAMBase - 4, RAMBase + 1<<20 - 3, UARTBase} {
		if _, err := m.Read32(addr); !errors.Is(err, ErrBadAddress) {
			t.Errorf("Read32(%#x) = %v", addr, err)
		}
		if err := m.Write32(addr, 1); !errors.Is(err, ErrBadAddress) {
			t.Errorf("Write32(%#x) = %v", addr, err)
		}
	}
	if err := m.Write64(RAMBase+1<<20-8, 0x1122334455667788); err != nil {
		t.Fatal(err)
	}
	if v, err := m.Read32(RAMBase + 1<<20 - 4); err != nil || v != 0x11223344 {
		t.Errorf("Read32 = %#x, %v", v, err)
	}
	buf := make([]byte, 3)
	if err := m.ReadMem(RAMBase+1<<20-3, buf); err != nil || !bytes.Equal(buf, []byte{0x33, 0x22, 0x11}) {
		t.Errorf("ReadMem = %x, %v", buf, err)
	}
}

// TestDecodeCacheInvalidation patches code that already ran, from the host
// and from the guest, and checks the new instruction runs.
func TestDecodeCacheInvalidation(t *testing.T) {
	m, c, _ := newTestMachine(t, prog("mov x0, #1", "b #-4"))
	if err := m.Step(4); err != nil {
		t.Fatal(err)
	}
	if c.X(0) != 1 || m.Stats().DecodedPages != 1 {
		t.Fatalf("x0 = %d, decoded pages %d", c.X(0), m.Stats().DecodedPages)
	}
	// Host patch, as kprobes arming does inside Exclusive.
	mustWrite32(t, m, testCode, I("mov x0, #2"))
	if err := m.Step(2); err != nil {
		t.Fatal(err)
	}
	if c.X(0) != 2 {
		t.Fatalf("after host patch x0 = %d, want 2", c.X(0))
	}
	st := m.Stats()
	if st.Invalidations != 1 {
		t.Errorf("Invalidations = %d", st.Invalidations)
	}

	// Guest patch of the next instruction in the same page.
	m2, c2, _ := newTestMachine(t, prog("ldr w1, #16", "str w1, [x2]", "mov x0, #1", "b #-4", "mov x0, #3"))
	c2.SetX(2, testCode+8)
	if err := m2.Step(2); err != nil { // run both so the whole page is decoded first
		t.Fatal(err)
	}
	if err := m2.Step(1); err != nil {
		t.Fatal(err)
	}
	if c2.X(0) != 3 {
		t.Fatalf("after guest patch x0 = %d, want 3", c2.X(0))
	}
	// Patch an instruction decoded before, in the loop.
	m3, c3, _ := newTestMachine(t, prog("mov x0, #1", "str w1, [x2]", "b #-8"))
	c3.SetX(1, uint64(I("mov x0, #4")))
	c3.SetX(2, testCode)
	if err := m3.Step(4); err != nil {
		t.Fatal(err)
	}
	if c3.X(0) != 4 {
		t.Fatalf("after self-modifying loop x0 = %d, want 4", c3.X(0))
	}
}

// A page whose code ran once and which then takes many stores beside it
// while no CPU runs it (a page of dead text reused for data) leaves the
// decode cache, so that its stores stop leaving translated code.
func TestDecodeCacheDropsDeadCode(t *testing.T) {
	m, c, _ := newTestMachine(t, prog("blr x3", "mov x9, #300", "str x1, [x2]", "subs x9, x9, #1", "b.ne #-8", "b #0"))
	mustWrite32(t, m, testData+0x800, I("ret"))
	c.SetX(3, testData+0x800)
	c.SetX(2, testData+0x10) // the function's page, beside its code
	if err := m.Step(3000); err != nil {
		t.Fatal(err)
	}
	if st := m.Stats(); c.X(9) != 0 || st.DecodedPages != 1 {
		t.Fatalf("x9 = %d, decoded pages %d; want 0 and 1 (the program's)", c.X(9), st.DecodedPages)
	}
}

// But a page whose code runs between the stores stays: entering it (a
// fetch) restarts the count.
func TestDecodeCacheKeepsLiveCode(t *testing.T) {
	m, c, _ := newTestMachineWith(t, prog("mov x9, #300", "blr x3", "str x1, [x2]", "subs x9, x9, #1", "b.ne #-12", "b #0"),
		Config{Interpret: true})
	mustWrite32(t, m, testData+0x800, I("ret"))
	c.SetX(3, testData+0x800)
	c.SetX(2, testData+0x10)
	if err := m.Step(3000); err != nil {
		t.Fatal(err)
	}
	if st := m.Stats(); c.X(9) != 0 || st.DecodedPages != 2 || st.Invalidations != 0 {
		t.Fatalf("x9 = %d, decoded pages %d, invalidations %d; want 0, 2, 0", c.X(9), st.DecodedPages, st.Invalidations)
	}
}

// Stores to data that shares a page with running code (a small program's
// .data, a stack) leave the code's decoded instructions alone; a page
// whose decoded instructions are all overwritten leaves the cache.
func TestDecodeCacheDataOnCodePage(t *testing.T) {
	m, c, _ := newTestMachine(t, prog("add x1, x1, #1", "str x1, [x2]", "stp x1, x1, [x2, #16]", "b #-12"))
	c.SetX(2, testCode+0x800) // the same page, past the code
	if err := m.Step(4000); err != nil {
		t.Fatal(err)
	}
	st := m.Stats()
	if c.X(1) != 1000 || st.DecodedPages != 1 || st.Invalidations != 0 {
		t.Fatalf("x1 = %d, decoded pages %d, invalidations %d; want 1000, 1, 0", c.X(1), st.DecodedPages, st.Invalidations)
	}
	// Overwrite the four decoded instructions from the host (with code
	// that parks the CPU): the page goes, and decodes afresh when run.
	wfi := I("wfi")
	for i := uint64(0); i < 4; i++ {
		mustWrite32(t, m, testCode+4*i, wfi)
	}
	if st := m.Stats(); st.DecodedPages != 0 || st.Invalidations != 4 {
		t.Fatalf("after overwriting the code: decoded pages %d, invalidations %d; want 0, 4", st.DecodedPages, st.Invalidations)
	}
	c.SetPC(testCode)
	if err := m.Step(1); err != nil {
		t.Fatal(err)
	}
	if !c.Waiting() || m.Stats().DecodedPages != 1 {
		t.Fatalf("waiting %v, decoded pages %d", c.Waiting(), m.Stats().DecodedPages)
	}
}

func TestRunPowerOff(t *testing.T) {
	m, _, console := newTestMachine(t, prog(
		"mov x1, #0x9000000", "mov w0, #0x21", "strb w0, [x1]",
		"mov x0, #0x8", "movk x0, #0x8400, lsl #16", "hvc #0", "b #0"))
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !m.PoweredOff() || console.String() != "!" {
		t.Fatalf("powered off %v, console %q", m.PoweredOff(), console.String())
	}
}

func TestRunHostcallError(t *testing.T) {
	m, _, _ := newTestMachine(t, prog("hvc #0x4b02", "b #0"))
	boom := errors.New("boom")
	m.SetHostcall(0x4b02, func(*CPU) error { return boom })
	if err := m.Run(context.Background()); !errors.Is(err, boom) {
		t.Fatalf("Run = %v", err)
	}
}

// TestExclusiveWhileRunning calls Exclusive from another goroutine while
// the guest spins, patches the loop, and checks it takes effect.
func TestExclusiveWhileRunning(t *testing.T) {
	m, c, _ := newTestMachine(t, prog("add x0, x0, #1", "b #-4", "mov x0, #0x8", "movk x0, #0x8400, lsl #16", "hvc #0"))
	ctx, cancel := context.WithDeadline(context.Background(), waitfor.Deadline(t))
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	for i := 0; i < 3; i++ {
		var x0 uint64
		m.Exclusive(func() { x0 = c.X(0) })
		_ = x0
	}
	// Turn "b #-4" into a nop so the loop falls through to SYSTEM_OFF.
	m.Exclusive(func() {
		if err := m.Write32(testCode+4, I("nop")); err != nil {
			t.Error(err)
		}
	})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !m.PoweredOff() {
		t.Fatal("not powered off")
	}
}

// TestWFIDoesNotSpin checks that Run sleeps when the only CPU waits in
// WFI, still serves Exclusive, and returns when cancelled.
func TestWFIDoesNotSpin(t *testing.T) {
	m, c, _ := newTestMachine(t, prog("nop", "wfi", "b #0"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	waitfor.Until(t, "the CPU to enter WFI", func() bool {
		var waiting bool
		m.Exclusive(func() { waiting = c.Waiting() })
		return waiting
	})
	n := m.Stats().Instructions
	time.Sleep(50 * time.Millisecond)
	ran := false
	m.Exclusive(func() { ran = true })
	if !ran || m.Stats().Instructions != n || n != 2 {
		t.Fatalf("exclusive ran %v, instructions %d then %d", ran, n, m.Stats().Instructions)
	}
	cancel()
	if err := waitfor.Recv(t, "Run to return after cancel", done); err != nil {
		t.Fatal(err)
	}
	// Step returns at once when nothing can run.
	if err := m.Step(10); err != nil {
		t.Fatal(err)
	}
}

// TestDeterministicInterleaving: two CPUs running the same counter loop
// give the same result however execution is chunked.
func TestDeterministicInterleaving(t *testing.T) {
	run := func(chunks []uint64) (uint64, uint64) {
		m, err := New(Config{RAMSize: testRAM, NumCPUs: 2, Quantum: 7})
		if err != nil {
			t.Fatal(err)
		}
		code := prog("ldr x1, [x9]", "add x1, x1, #1", "str x1, [x9]", "add x2, x2, #1", "b #-16")
		for i, w := range code {
			mustWrite32(t, m, testCode+uint64(4*i), w)
		}
		m.Boot(testCode, 0)
		// Power CPU 1 on by hand: PSCI CPU_ON does not exist yet.
		c1 := m.CPU(1)
		c1.on, c1.pc = true, testCode
		m.CPU(0).SetX(9, testData)
		c1.SetX(9, testData)
		for _, n := range chunks {
			if err := m.Step(n); err != nil {
				t.Fatal(err)
			}
		}
		v := mustRead64(t, m, testData)
		return v, m.CPU(0).X(2)<<32 | c1.X(2)
	}
	a1, b1 := run([]uint64{1000})
	a2, b2 := run([]uint64{1, 2, 3, 500, 494})
	if a1 != a2 || b1 != b2 {
		t.Fatalf("chunked run differs: %d/%#x vs %d/%#x", a1, b1, a2, b2)
	}
}
