package machine

import (
	"context"
	"encoding/binary"
	"log/slog"
	"testing"
	"time"

	"github.com/kpemu/kpemu/internal/waitfor"
)

// TestRAMAtomics checks the parallel-mode RAM accessors against plain
// little-endian byte semantics, for every size and alignment in a word
// and across words.
func TestRAMAtomics(t *testing.T) {
	m, err := New(Config{RAMSize: testRAM, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	const v = 0x8877665544332211
	for lg := uint8(0); lg <= 3; lg++ {
		for off := uint64(0); off < 16; off++ {
			for i := range m.ram[:32] {
				m.ram[i] = 0xee
			}
			m.ramStore(off, lg, v)
			want := make([]byte, 32)
			for i := range want {
				want[i] = 0xee
			}
			var b [8]byte
			binary.LittleEndian.PutUint64(b[:], v)
			copy(want[off:off+1<<lg], b[:1<<lg])
			if string(m.ram[:32]) != string(want) {
				t.Fatalf("store lg %d off %d: % x", lg, off, m.ram[:32])
			}
			mask := uint64(1)<<(8<<lg) - 1
			if lg == 3 {
				mask = ^uint64(0)
			}
			if got := m.ramLoad(off, lg); got != v&mask {
				t.Fatalf("load lg %d off %d = %#x", lg, off, got)
			}
			if off&(1<<lg-1) == 0 {
				if m.ramCAS(off, lg, 1, 2) {
					t.Fatalf("cas lg %d off %d succeeded on a mismatch", lg, off)
				}
				if !m.ramCAS(off, lg, v&mask, 0x5a) || m.ramLoad(off, lg) != 0x5a {
					t.Fatalf("cas lg %d off %d failed", lg, off)
				}
			}
		}
	}
}

// parallelProg runs on CPU 0: it starts CPU 1 at its own page, counts to
// 100000, waits for CPU 1 to power off, then powers the machine off. CPU 1
// counts to 50000 and stores its count in its own data page. Nothing is
// shared in RAM, so the run is free of races even before guest memory
// accesses are atomic.
func TestParallelRun(t *testing.T) {
	m, err := New(Config{RAMSize: testRAM, NumCPUs: 2, Parallel: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	cpu0 := dprog(
		"mov x0, #3", "movk x0, #0xc400, lsl #16", "mov x1, #1", "mov x2, #0x40030000", "mov x3, #0x42", "hvc #0",
		"mov x19, x0",
		"mov x10, #0x86a0", "movk x10, #1, lsl #16", // 100000
		"subs x10, x10, #1", "b.ne #-4",
		"mov x0, #4", "movk x0, #0x8400, lsl #16", "mov x1, #1", "mov x2, #0", "hvc #0",
		"cbz x0, #-20",
		"mov x0, #0x8", "movk x0, #0x8400, lsl #16", "hvc #0",
	)
	cpu1 := dprog(
		"mov x20, x0",
		"mov x10, #50000", "mov x11, #0",
		"add x11, x11, #1", "subs x10, x10, #1", "b.ne #-8",
		"mov x9, #0x40030000", "add x9, x9, #1, lsl #12", "str x11, [x9]",
		"mov x0, #2", "movk x0, #0x8400, lsl #16", "hvc #0",
	)
	for i, w := range cpu0 {
		mustWrite32(t, m, testCode+uint64(4*i), w)
	}
	for i, w := range cpu1 {
		mustWrite32(t, m, 0x40030000+uint64(4*i), w)
	}
	m.Boot(testCode, 0)
	ctx, cancel := context.WithDeadline(context.Background(), waitfor.Deadline(t))
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	// Exclusive stops both vCPUs while they run.
	for i := 0; i < 20; i++ {
		m.Exclusive(func() { _ = m.CPU(1).PC() })
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !m.PoweredOff() {
		t.Fatal("not powered off")
	}
	if got := mustRead64(t, m, 0x40031000); got != 50000 {
		t.Fatalf("cpu1 counted %d", got)
	}
	if m.CPU(0).X(19) != psciSuccess || m.CPU(1).X(20) != 0x42 {
		t.Fatalf("CPU_ON %#x context %#x", m.CPU(0).X(19), m.CPU(1).X(20))
	}
}

// TestParallelTimerWakes: in parallel mode the counter follows the host
// clock and a CPU in WFI sleeps on the host until its timer fires.
func TestParallelTimerWakes(t *testing.T) {
	m, err := New(Config{RAMSize: testRAM, Parallel: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	code := dprog(
		"mov x0, #0x8000000", "mov w2, #1", "str w2, [x0]",
		"mov w2, #0x8000000", "str w2, [x0, #0x100]",
		"mov x1, #0x8010000", "mov w2, #1", "str w2, [x1]",
		"mov w2, #0xff", "str w2, [x1, #4]",
		"mov x9, #0xf424", "msr cntv_tval_el0, x9", "mov x9, #1", "msr cntv_ctl_el0, x9", // 1 ms
		"msr daifclr, #2",
		"wfi",
		"cbz x5, #-4",
		"mov x0, #0x8", "movk x0, #0x8400, lsl #16", "hvc #0",
	)
	handler := dprog("ldr w3, [x1, #0xc]", "add x5, x5, #1", "msr cntv_ctl_el0, xzr", "str w3, [x1, #0x10]", "eret")
	for i, w := range code {
		mustWrite32(t, m, testCode+uint64(4*i), w)
	}
	for i, w := range handler {
		mustWrite32(t, m, testVBAR+0x280+uint64(4*i), w)
	}
	m.Boot(testCode, 0)
	m.CPU(0).SetSysReg(VBAR_EL1, testVBAR)
	ctx, cancel := context.WithDeadline(context.Background(), waitfor.Deadline(t))
	defer cancel()
	start := time.Now()
	if err := m.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if !m.PoweredOff() || m.CPU(0).X(5) != 1 {
		t.Fatalf("off %v, interrupts %d", m.PoweredOff(), m.CPU(0).X(5))
	}
	if time.Since(start) < time.Millisecond {
		t.Fatalf("timer fired after %v, before its 1 ms", time.Since(start))
	}
}

// TestCallHostcallStopsWorld: a hostcall made by a running vCPU in
// parallel mode runs with the world lock held exclusively.
func TestCallHostcallStopsWorld(t *testing.T) {
	m, err := New(Config{RAMSize: testRAM, NumCPUs: 2, Parallel: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	m.par.world.RLock() // as vcpuLoop holds it around a slice
	m.CPU(0).inSlice = true
	var exclusive bool
	err = m.callHostcall(m.CPU(0), func(*CPU) error {
		exclusive = !m.par.world.TryRLock()
		return nil
	})
	m.par.world.RUnlock()
	if err != nil || !exclusive {
		t.Fatalf("err %v, world stopped %v", err, exclusive)
	}
}

// TestParallelCounterFollowsHost: in parallel mode the counter is the
// host clock's, also where the read would be translated (deterministic
// mode translates it as an instruction count).
func TestParallelCounterFollowsHost(t *testing.T) {
	m, c, _ := newTestMachineWith(t, prog("mrs x3, cntvct_el0", "subs x9, x9, #1", "b.ne #-8", "b #0"), Config{Parallel: true})
	c.SetX(9, 300)
	const wait = 20 * time.Millisecond
	time.Sleep(wait) // the counter starts with the machine
	if err := m.Step(1000); err != nil {
		t.Fatal(err)
	}
	if m.Stats().TranslatedBlocks == 0 {
		t.Fatal("nothing translated")
	}
	if got, min := c.X(3), uint64(wait/nsPerTick); got < min {
		t.Errorf("counter %d after %v, want at least %d", got, wait, min)
	}
}
