package kernel_test

import (
	"context"
	"testing"
	"time"

	"github.com/kpemu/kpemu/internal/benchutil"
	"github.com/kpemu/kpemu/kernel"
)

// stepUntilReady runs the guest until it reports HC_KERNEL_READY, the point
// at which kpemu run mounts its tree.
func stepUntilReady(tb testing.TB, k *kernel.Kernel) {
	tb.Helper()
	for {
		select {
		case <-k.Ready():
			return
		default:
		}
		if err := k.Machine().Step(100_000); err != nil {
			tb.Fatal(err)
		}
		if msg, ok := k.Panicked(); ok {
			tb.Fatalf("guest panicked: %s", msg)
		}
	}
}

// modes are the machine's two ways of running the guest: block
// translation, and the interpreter alone as the baseline it is measured
// against.
var modes = []struct {
	name      string
	interpret bool
}{{"translated", false}, {"interpreted", true}}

// BenchmarkBoot measures a boot of the default configuration (2 vCPUs,
// deterministic) from loading the image to the guest's ready hostcall.
func BenchmarkBoot(b *testing.B) {
	for _, mode := range modes {
		b.Run(mode.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				k, err := kernel.Boot(kernel.Config{NumCPUs: 2, Logger: quiet(), Interpret: mode.interpret})
				if err != nil {
					b.Fatal(err)
				}
				stepUntilReady(b, k)
			}
		})
	}
}

// BenchmarkUserWorkload runs the full system (2 vCPUs: the kernel's
// workload, init, sh forking and exec'ing cat, cron, sshd) and reports
// guest MIPS and the system calls user space makes per host second and per
// guest second (the generic timer's clock).
func BenchmarkUserWorkload(b *testing.B) {
	for _, mode := range modes {
		b.Run(mode.name, func(b *testing.B) { benchUserWorkload(b, mode.interpret) })
	}
}

func benchUserWorkload(b *testing.B, interpret bool) {
	k, err := kernel.Boot(kernel.Config{NumCPUs: 2, Logger: quiet(), Interpret: interpret})
	if err != nil {
		b.Fatal(err)
	}
	stepUntilReady(b, k)
	// past the boot burst of exec'ing every program once
	if err := k.Machine().Step(20_000_000); err != nil {
		b.Fatal(err)
	}
	count := func() (n uint64) {
		for _, c := range syscallCounts(b, k) {
			n += c
		}
		return n
	}
	insns, calls, guest := k.Machine().Stats().Instructions, count(), k.Uptime()
	b.ResetTimer()
	t0 := time.Now()
	for i := 0; i < b.N; i++ {
		if err := k.Machine().Step(1_000_000); err != nil {
			b.Fatal(err)
		}
	}
	host := time.Since(t0)
	b.StopTimer()
	insns = k.Machine().Stats().Instructions - insns
	calls = count() - calls
	guest = k.Uptime() - guest
	b.ReportMetric(float64(insns)/host.Seconds()/1e6, "MIPS")
	b.ReportMetric(float64(calls)/host.Seconds(), "syscalls/s")
	if guest > 0 {
		b.ReportMetric(float64(calls)/guest.Seconds(), "syscalls/guest-s")
	}
}

// BenchmarkParallel runs the full system on 2 vCPUs as kpemu run does
// (Kernel.Run), deterministic (one goroutine interleaving the vCPUs) and
// parallel (a thread per vCPU), for the same host time each, and reports
// guest MIPS: what --parallel gives on a 2-core host. It also reports
// the host cores the process kept busy: in parallel mode a vCPU with
// nothing to run sleeps on the host, so MIPS there are the guest's
// demand, up to what the cores give.
func BenchmarkParallel(b *testing.B) {
	for _, par := range []bool{false, true} {
		name := "deterministic"
		if par {
			name = "parallel"
		}
		b.Run(name, func(b *testing.B) {
			k, err := kernel.Boot(kernel.Config{NumCPUs: 2, Logger: quiet(), Parallel: par})
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- k.Run(ctx) }()
			defer func() {
				cancel()
				<-done
			}()
			select {
			case <-k.Ready():
			case err := <-done:
				b.Fatalf("guest stopped: %v", err)
			}
			b.ResetTimer()
			insns, t0, cpu0 := k.Machine().Stats().Instructions, time.Now(), benchutil.ProcessCPU(b)
			// b.N seconds of the guest running, sampled
			time.Sleep(time.Duration(b.N) * 3 * time.Second)
			host, cpu := time.Since(t0), benchutil.ProcessCPU(b)-cpu0
			b.StopTimer()
			insns = k.Machine().Stats().Instructions - insns
			b.ReportMetric(float64(insns)/host.Seconds()/1e6, "MIPS")
			b.ReportMetric(cpu.Seconds()/host.Seconds(), "host-cores")
		})
	}
}
