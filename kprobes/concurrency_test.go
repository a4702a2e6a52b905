package kprobes_test

import (
	"context"
	"math/bits"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kpemu/kpemu/internal/waitfor"
	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/kprobes"
)

// Probes hit on every vCPU at once (parallel mode: one host thread per
// vCPU) while another goroutine registers, unregisters, enables,
// disables and globally toggles them, and registers disabled ones (which
// do not stop the machine). Nothing may be lost or left behind:
// every hit's handler runs exactly once per counted hit, no instruction
// stays half patched, and the guest keeps running.
func TestConcurrentHitsAndChanges(t *testing.T) {
	k, err := kernel.Boot(kernel.Config{Logger: quiet(), NumCPUs: 4, Parallel: true})
	if err != nil {
		t.Fatal(err)
	}
	kp, err := kprobes.New(k, quiet())
	if err != nil {
		t.Fatal(err)
	}
	// Functions every CPU runs: the scheduler, sleeping, the workload.
	targets := []string{"__schedule", "schedule_timeout", "vfs_read", "vfs_write", "kernel_clone", "tcp_v4_rcv"}
	orig := map[uint64]uint32{}
	for _, s := range targets {
		a := symAddr(t, k, s)
		orig[a] = insnAt(t, k, a)
	}
	type counted struct {
		p     *kprobes.Kprobe
		calls atomic.Uint64
	}
	var fixed []*counted
	var cpusSeen atomic.Uint32 // a bit per vCPU a hit came from
	for _, s := range targets {
		c := &counted{}
		c.p = &kprobes.Kprobe{Symbol: s, PreHandler: func(_ *kprobes.Kprobe, r *kprobes.Regs) bool {
			c.calls.Add(1)
			cpusSeen.Or(1 << r.CPU)
			return false
		}}
		if err := kp.Register(c.p); err != nil {
			t.Fatal(err)
		}
		fixed = append(fixed, c)
	}
	rp := &kprobes.Kretprobe{Kp: kprobes.Kprobe{Symbol: "schedule_timeout"}, MaxActive: 2}
	if err := kp.RegisterKretprobe(rp); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	runErr := make(chan error, 1)
	go func() { runErr <- k.Run(ctx) }()

	// The churn: while hits are in flight on every CPU. It goes on for
	// minChurn rounds and until the hits came from several vCPUs and
	// functions, and each round waits for a hit, so that changes and hits
	// interleave however slowly the host runs the guest (under -race, or
	// beside other jobs, the secondary CPUs may take seconds to come up,
	// and a fixed 1.5s of churn saw hits from one vCPU only).
	const minChurn = 300
	totalCalls := func() uint64 {
		var n uint64
		for _, c := range fixed {
			n += c.calls.Load()
		}
		return n
	}
	spread := func() bool {
		hit := 0
		for _, c := range fixed {
			if c.calls.Load() > 0 {
				hit++
			}
		}
		// Every vCPU hit a probe: each ran (Retired, read after the
		// run, says so too) and hits came from several at once.
		return hit >= 3 && cpusSeen.Load() == 1<<k.Machine().NumCPUs()-1
	}
	end := waitfor.Deadline(t)
	rounds := 0
	for ; rounds < minChurn || !spread(); rounds++ {
		if time.Now().After(end) {
			t.Fatalf("after %d rounds, hits from vCPUs %#x only", rounds, cpusSeen.Load())
		}
		i := rounds
		s := targets[i%len(targets)]
		p := &kprobes.Kprobe{Symbol: s, Offset: 4 * uint64(i%3)}
		if err := kp.Register(p); err == nil {
			if err := kp.Disable(p); err != nil {
				t.Error(err)
			}
			if err := kp.Enable(p); err != nil {
				t.Error(err)
			}
			kp.Unregister(p)
		}
		// Disabled probes come and go without stopping the machine: on
		// a point that hits run through, and on a new one, enabled
		// before it goes.
		on := &kprobes.Kprobe{Symbol: s, Disabled: true}
		fresh := &kprobes.Kprobe{Symbol: s, Offset: 4 * uint64(3+i%3), Disabled: true}
		if err := kp.Register(on); err != nil {
			t.Error(err)
		}
		if err := kp.Register(fresh); err == nil {
			if i%2 == 0 {
				if err := kp.Enable(fresh); err != nil {
					t.Error(err)
				}
			}
			kp.Unregister(fresh)
		}
		kp.Unregister(on)
		if i%5 == 0 {
			if err := kp.DisarmAll(); err != nil {
				t.Error(err)
			}
			if err := kp.ArmAll(); err != nil {
				t.Error(err)
			}
		}
		if i%7 == 0 {
			c := fixed[i%len(fixed)]
			if err := kp.Disable(c.p); err != nil {
				t.Error(err)
			}
			if err := kp.Enable(c.p); err != nil {
				t.Error(err)
			}
		}
		before := totalCalls()
		waitfor.Until(t, "a probe hit after a change", func() bool { return totalCalls() > before })
	}
	cancel()
	if err := <-runErr; err != nil {
		t.Fatal(err)
	}
	if msg, ok := k.Panicked(); ok {
		t.Fatalf("guest panicked: %s", msg)
	}

	cpusHit := 0
	for _, c := range fixed {
		if c.p.Hits() != c.calls.Load() {
			t.Errorf("%s: %d hits counted, %d handler calls", c.p.Symbol, c.p.Hits(), c.calls.Load())
		}
		if c.p.Hits() > 0 {
			cpusHit++
		}
	}
	if cpusHit < 3 {
		t.Errorf("only %d of the probed functions were hit", cpusHit)
	}
	for c := 0; c < k.Machine().NumCPUs(); c++ {
		if k.Machine().CPU(c).Retired() == 0 {
			t.Errorf("CPU %d never ran", c)
		}
	}
	if n := bits.OnesCount32(cpusSeen.Load()); n < 2 {
		t.Errorf("hits came from %d vCPU(s) (mask %#x), want several", n, cpusSeen.Load())
	}

	// Everything off: the text is exactly what it was.
	for _, c := range fixed {
		kp.Unregister(c.p)
	}
	kp.UnregisterKretprobe(rp)
	for a, w := range orig {
		if got := insnAt(t, k, a); got != w {
			t.Errorf("%s: %#08x left in text, want %#08x", k.Kallsyms().Format(a), got, w)
		}
	}
	if l := kp.List(); len(l) != 0 {
		t.Errorf("probes left: %v", l)
	}
	t.Logf("%d rounds, vCPUs %#x; hits: %d %d %d %d %d %d, kretprobe missed %d", rounds, cpusSeen.Load(), fixed[0].p.Hits(), fixed[1].p.Hits(), fixed[2].p.Hits(), fixed[3].p.Hits(), fixed[4].p.Hits(), fixed[5].p.Hits(), rp.Missed())
}
