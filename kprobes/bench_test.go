package kprobes_test

import (
	"testing"
	"time"

	"github.com/kpemu/kpemu/kprobes"
)

// BenchmarkWorkload measures the interpreter on the guest kernel's
// workload: guest instructions per second (MIPS).
func BenchmarkWorkload(b *testing.B) {
	k, _ := boot(b)
	const chunk = 1_000_000
	start := k.Machine().Stats().Instructions
	b.ResetTimer()
	t0 := time.Now()
	for i := 0; i < b.N; i++ {
		if err := k.Machine().Step(chunk); err != nil {
			b.Fatal(err)
		}
	}
	el := time.Since(t0)
	n := k.Machine().Stats().Instructions - start
	b.ReportMetric(float64(n)/el.Seconds()/1e6, "MIPS")
}

// BenchmarkProbeHit measures the host cost of one kprobe hit: the same
// guest work (workload iterations) is run with and without a probe on
// vfs_read, in the same process, and the difference is divided by the hits.
func BenchmarkProbeHit(b *testing.B) {
	const iterations = 2000
	var plain, probed time.Duration
	var hits, plainInsns, probedInsns uint64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		k, _ := boot(b)
		b.StartTimer()
		t0 := time.Now()
		runIterations(b, k, iterations)
		plain += time.Since(t0)
		plainInsns += k.Machine().Stats().Instructions

		b.StopTimer()
		k2, kp := boot(b)
		p := &kprobes.Kprobe{Symbol: "vfs_read", PreHandler: func(*kprobes.Kprobe, *kprobes.Regs) bool { return false }, PostHandler: func(*kprobes.Kprobe, *kprobes.Regs) {}}
		if err := kp.Register(p); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		t0 = time.Now()
		runIterations(b, k2, iterations)
		probed += time.Since(t0)
		probedInsns += k2.Machine().Stats().Instructions
		hits += p.Hits()
	}
	if hits > 0 {
		b.ReportMetric(float64((probed-plain).Nanoseconds())/float64(hits), "ns/hit")
		b.ReportMetric(float64(probed)/float64(plain), "probed/plain")
		b.ReportMetric(float64(probedInsns-plainInsns)/float64(hits), "guest-insns/hit")
	}
}
