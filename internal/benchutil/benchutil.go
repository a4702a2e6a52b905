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
// (RUSAGE_THREAD): lock the goroutine to its thread to compare two
// readings.
func ThreadCPU(tb testing.TB) time.Duration {
	tb.Helper()
	return cpuTime(tb, unix.RUSAGE_THREAD)
}

// ProcessCPU is the CPU time of the whole process, user and system, over
// all its threads.
func ProcessCPU(tb testing.TB) time.Duration {
	tb.Helper()
	return cpuTime(tb, unix.RUSAGE_SELF)
}

func cpuTime(tb testing.TB, who int) time.Duration {
	tb.Helper()
	var ru unix.Rusage
	if err := unix.Getrusage(who, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
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
