package machine

import (
	"testing"
	"time"
)

// BenchmarkLoopMMU runs benchLoop with the MMU on: the code, data and
// stack identity-mapped by 4 KiB pages through a 39-bit TTBR0 space, so
// that it compares directly with BenchmarkLoop (MMU off).
func BenchmarkLoopMMU(b *testing.B) {
	m, c, pt := newMMUMachine(b, benchLoop())
	_ = pt
	// benchLoop touches testData+8 and (via x5) a byte near testData.
	c.SetSP(testData + 0x8000)
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
	if c.SysReg(ESR_EL1) != 0 {
		b.Fatalf("guest faulted: ESR %#x FAR %#x", c.SysReg(ESR_EL1), c.SysReg(FAR_EL1))
	}
	b.ReportMetric(float64(b.N)*chunk/el.Seconds()/1e6, "MIPS")
}
