package machine

import (
	"log/slog"
	"testing"
	"time"
)

// benchLoop is a hand-built loop mixing the common instruction kinds of
// compiled C: ALU, loads and stores, compare and branch, a call and return.
func benchLoop() []uint32 {
	return prog(
		"mov x9, #0x40020000",
		"mov x1, #0",
		"mov x4, #0x40020000",
		// loop:
		"add x0, x0, x1",
		"eor x2, x0, x1, lsl #3",
		"ldr x3, [x9, #8]",
		"str x2, [x9, #8]",
		"add x3, x3, #1",
		"and w5, w3, #0xff",
		"ldp x6, x7, [sp]",
		"stp x6, x7, [sp]",
		"bl #16",
		"add x1, x1, #1",
		"cmp x1, x4",
		"b.ne #-44",
		// leaf function:
		"ldrb w8, [x9, x5]",
		"csel x8, x8, x3, eq",
		"ret",
	)
}

func BenchmarkLoop(b *testing.B) {
	m, _, _ := newTestMachine(b, benchLoop())
	const chunk = 1 << 20
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if err := m.Step(chunk); err != nil {
			b.Fatal(err)
		}
	}
	el := time.Since(start)
	b.ReportMetric(float64(b.N)*chunk/el.Seconds()/1e6, "MIPS")
}

// BenchmarkQEMUTestProg runs the differential test program (compiled C)
// from boot to power-off, repeatedly, on one machine. Each run reloads the
// image, so it includes decoding the program afresh.
func BenchmarkQEMUTestProg(b *testing.B) {
	m, err := New(Config{RAMSize: 16 << 20, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	entry := loadELF(b, m, testProg)
	image := make([]byte, 1<<20)
	if err := m.ReadMem(RAMBase+0x80000, image); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if err := m.WriteMem(RAMBase+0x80000, image); err != nil {
			b.Fatal(err)
		}
		m.Boot(entry, 0)
		for !m.PoweredOff() {
			if err := m.Step(1 << 20); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(m.Stats().Instructions)/time.Since(start).Seconds()/1e6, "MIPS")
}
