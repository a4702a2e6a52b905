package tracing_test

import (
	"testing"
	"time"
)

// BenchmarkFunctionGraph measures the guest's slowdown with the
// function_graph tracer on one function against no tracer, in the same
// run: the same guest work (forks of kworkload, each a kernel_clone and
// the system's other activity) is timed in alternating rounds with the
// tracer off and on, and the ratio of the two host times per fork is
// reported. The traced functions are a cold one (kernel_clone, once per
// fork) and a hot one (preempt_count_add, hundreds of calls per fork).
func BenchmarkFunctionGraph(b *testing.B) {
	for _, fn := range []string{"kernel_clone", "preempt_count_add"} {
		b.Run(fn, func(b *testing.B) {
			f := setup(b)
			sym, ok := f.k.Kallsyms().LookupName("workload_forks")
			if !ok {
				b.Fatal("no workload_forks in the image")
			}
			forks := func() uint64 {
				v, err := f.k.ReadU64(sym.Addr)
				if err != nil {
					b.Fatal(err)
				}
				return v
			}
			run := func(n uint64) time.Duration {
				start, t0 := forks(), time.Now()
				for forks() < start+n {
					f.step(b, 20_000)
				}
				return time.Since(t0)
			}
			f.mustWriteB(b, "tracing/set_ftrace_filter", fn)
			run(2) // past boot
			const perRound = 4
			var off, on time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				f.mustWriteB(b, "tracing/current_tracer", "nop")
				off += run(perRound)
				f.mustWriteB(b, "tracing/current_tracer", "function_graph")
				on += run(perRound)
			}
			b.StopTimer()
			forksEach := float64(b.N * perRound)
			b.ReportMetric(float64(off.Microseconds())/forksEach, "us/fork-off")
			b.ReportMetric(float64(on.Microseconds())/forksEach, "us/fork-on")
			b.ReportMetric(float64(on)/float64(off), "on/off")
		})
	}
}

func (f *fixture) mustWriteB(b *testing.B, p, d string) {
	b.Helper()
	if err := f.write(p, d, true); err != nil {
		b.Fatalf("%s <- %q: %v", p, d, err)
	}
}
