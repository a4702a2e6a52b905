package tracing_test

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kpemu/kpemu/internal/benchutil"
	"github.com/kpemu/kpemu/kprobes"
)

// BenchmarkHotEvents measures the guest's slowdown with kprobe events
// enabled on its hottest functions, as a user would enable them
// (kprobe_events, events/kprobes/*/enable), recording into the ring
// buffer that no one reads: a kernel with the events and one without
// boot alike and run in turn, on this goroutine's thread, until the
// guest workload's iteration counter has gone as far, and slowdown is
// the events' run's CPU time (RUSAGE_THREAD) over the other's. ns/hit
// is the extra CPU time per hit.
func BenchmarkHotEvents(b *testing.B) {
	for _, n := range []int{1, 100} {
		b.Run(fmt.Sprintf("functions-%d", n), func(b *testing.B) {
			runtime.LockOSThread() // a sub-benchmark runs on a goroutine of its own
			defer runtime.UnlockOSThread()
			b.StopTimer()
			const warm, work = 100, 3600 // workload iterations (some 130 million instructions)
			hot := hottestFunctions(b, n)
			b.Logf("hottest: %s", strings.Join(hot[:min(len(hot), 5)], " "))
			plain := setupReady(b)
			events := setupReady(b)
			var defs strings.Builder
			for i, fn := range hot {
				fmt.Fprintf(&defs, "p:hot%d %s\n", i, fn)
			}
			if err := events.write("tracing/kprobe_events", defs.String(), true); err != nil {
				b.Fatal(err)
			}
			if err := events.write("tracing/events/kprobes/enable", "1\n", true); err != nil {
				b.Fatal(err)
			}
			hits := func() (n uint64) {
				for _, line := range strings.Split(events.read(b, "tracing/kprobe_profile"), "\n") {
					var name string
					var h, miss uint64
					if _, err := fmt.Sscan(line, &name, &h, &miss); err == nil {
						n += h
					}
				}
				return n
			}
			benchutil.RunIterations(b, plain.k, warm)
			benchutil.RunIterations(b, events.k, warm)
			var cpuPlain, cpuEvents time.Duration
			var nhits uint64
			b.StartTimer() // a stopped timer would have b.N raised without end
			for i := 0; i < b.N; i++ {
				c0 := benchutil.ThreadCPU(b)
				benchutil.RunIterations(b, plain.k, work)
				c1 := benchutil.ThreadCPU(b)
				h0 := hits()
				benchutil.RunIterations(b, events.k, work)
				cpuEvents += benchutil.ThreadCPU(b) - c1
				cpuPlain += c1 - c0
				nhits += hits() - h0
			}
			if nhits == 0 {
				b.Fatal("no hits")
			}
			b.ReportMetric(float64(cpuEvents)/float64(cpuPlain), "slowdown")
			b.ReportMetric(float64((cpuEvents-cpuPlain).Nanoseconds())/float64(nhits), "ns/hit")
			b.ReportMetric(float64(nhits)/float64(b.N), "hits/run")
		})
	}
}

// setupReady is setup, stepped until the guest takes probes.
func setupReady(b *testing.B) *fixture {
	f := setup(b)
	for i := 0; ; i++ {
		select {
		case <-f.k.Ready():
			return f
		default:
		}
		if i > 10000 {
			b.Fatal("the guest never got ready")
		}
		f.step(b, 100_000)
	}
}

// hottestFunctions is the n functions that take a kprobe event and that
// the guest's workload calls most, counted by a kprobe on each in a
// kernel of their own.
func hottestFunctions(b *testing.B, n int) []string {
	f := setupReady(b)
	type count struct {
		name string
		n    atomic.Uint64
	}
	var counts []*count
	for _, s := range f.k.Kallsyms().Symbols() {
		if !f.k.IsText(s.Addr) || s.Type != 'T' && s.Type != 't' {
			continue
		}
		c := &count{name: s.Name}
		p := &kprobes.Kprobe{Symbol: s.Name, PreHandler: func(*kprobes.Kprobe, *kprobes.Regs) bool { c.n.Add(1); return false }}
		if f.kp.Register(p) == nil {
			counts = append(counts, c)
		}
	}
	f.step(b, 30_000_000)
	slices.SortStableFunc(counts, func(x, y *count) int { return int(int64(y.n.Load()) - int64(x.n.Load())) })
	var names []string
	for _, c := range counts {
		if len(names) == n {
			return names
		}
		// only what a kprobe event takes (not notrace, say)
		if f.write("tracing/kprobe_events", "p:try "+c.name+"\n", true) == nil {
			names = append(names, c.name)
		}
	}
	b.Fatalf("%d functions take a kprobe event, want %d", len(names), n)
	return nil
}
