// Package benchutil is what the benchmarks share: the thread or process
// CPU time they compare and the guest workload's progress they run to.
package benchutil

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kpemu/kpemu/kernel"
)

// ThreadCPU is the calling thread's CPU time, user and system
// (CLOCK_THREAD_CPUTIME_ID): lock the goroutine to its thread to compare
// two readings. Not getrusage's RUSAGE_THREAD: for a running thread it
// lags by what it ran since the scheduler last accounted it, up to a
// tick (4 ms at 250 Hz), as much as a benchmark's slice differs by.
func ThreadCPU(tb testing.TB) time.Duration {
	tb.Helper()
	return cpuClock(tb, unix.CLOCK_THREAD_CPUTIME_ID)
}

// ProcessCPU is the CPU time of the whole process, user and system, over
// all its threads.
func ProcessCPU(tb testing.TB) time.Duration {
	tb.Helper()
	return cpuClock(tb, unix.CLOCK_PROCESS_CPUTIME_ID)
}

func cpuClock(tb testing.TB, clock int32) time.Duration {
	tb.Helper()
	var ts unix.Timespec
	if err := unix.ClockGettime(clock, &ts); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ts.Nano())
}

// RunIterations steps k until its workload's loop (workload_iterations)
// has run n more iterations, failing if the guest panics or the loop
// stops.
func RunIterations(tb testing.TB, k *kernel.Kernel, n uint64) {
	tb.Helper()
	iterations := func() uint64 {
		v, err := k.ReadSymbolU64("workload_iterations")
		if err != nil {
			tb.Fatal(err)
		}
		return v
	}
	start := iterations()
	// some 200,000 instructions an iteration: a bound far past any n
	// the tests and benchmarks ask for
	for i := uint64(0); iterations() < start+n; i++ {
		if i > 100_000+n*100 {
			tb.Fatalf("workload stuck at %d iterations", iterations())
		}
		if err := k.Machine().Step(20_000); err != nil {
			tb.Fatal(err)
		}
		if msg, ok := k.Panicked(); ok {
			tb.Fatalf("guest panicked: %s", msg)
		}
	}
}
