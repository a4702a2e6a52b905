package kprobes_test

import (
	"testing"

	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/kprobes"
)

// stepUntilReady steps the guest until it reports HC_KERNEL_READY.
func stepUntilReady(t testing.TB, k *kernel.Kernel) {
	t.Helper()
	for i := 0; ; i++ {
		select {
		case <-k.Ready():
			return
		default:
		}
		if msg, ok := k.Panicked(); ok {
			t.Fatalf("guest panicked while booting: %s", msg)
		}
		if i > 10000 {
			t.Fatal("the guest did not become ready")
		}
		if err := k.Machine().Step(20000); err != nil {
			t.Fatal(err)
		}
	}
}

// A probe registered before the guest can take a BRK (its break hooks are
// registered late in start_kernel) is held unarmed until the guest is
// ready, then armed as its state says: the functions below run in
// kmem_cache_init and before, where a BRK used to kill the guest ("aarch64
// BRK: Fatal exception").
func TestProbesRegisteredBeforeReady(t *testing.T) {
	const sym = "kmem_cache_alloc"
	tests := []struct {
		name    string
		setup   func(*kprobes.Kprobes, *kprobes.Kprobe) error
		armed   bool // the BRK is in the text once the guest is ready
		hitsRun bool // and the probe hits in the workload
	}{
		{"kprobe", func(kp *kprobes.Kprobes, p *kprobes.Kprobe) error { return kp.Register(p) }, true, true},
		{"registered disabled", func(kp *kprobes.Kprobes, p *kprobes.Kprobe) error {
			p.Disabled = true
			return kp.Register(p)
		}, false, false},
		{"globally disarmed", func(kp *kprobes.Kprobes, p *kprobes.Kprobe) error {
			if err := kp.DisarmAll(); err != nil {
				return err
			}
			return kp.Register(p)
		}, false, false},
		{"disarmed then armed again", func(kp *kprobes.Kprobes, p *kprobes.Kprobe) error {
			if err := kp.DisarmAll(); err != nil {
				return err
			}
			if err := kp.Register(p); err != nil {
				return err
			}
			return kp.ArmAll()
		}, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k, kp := boot(t)
			addr := symAddr(t, k, sym)
			orig := insnAt(t, k, addr)
			p := &kprobes.Kprobe{Symbol: sym}
			if err := tc.setup(kp, p); err != nil {
				t.Fatal(err)
			}
			if got := insnAt(t, k, addr); got != orig {
				t.Fatalf("before the guest is ready %s holds %#08x, want the original %#08x", sym, got, orig)
			}
			stepUntilReady(t, k)
			if got := insnAt(t, k, addr); (got != orig) != tc.armed {
				t.Fatalf("once ready %s holds %#08x (original %#08x), want armed %v", sym, got, orig, tc.armed)
			}
			runIterations(t, k, 5)
			if (p.Hits() > 0) != tc.hitsRun {
				t.Errorf("%d hits after boot, want hits %v", p.Hits(), tc.hitsRun)
			}
		})
	}
}

// A kretprobe registered before boot is armed at ready and its return
// handler runs.
func TestKretprobeRegisteredBeforeReady(t *testing.T) {
	k, kp := boot(t)
	var returns int
	rp := &kprobes.Kretprobe{Kp: kprobes.Kprobe{Symbol: "kmalloc"}, Handler: func(*kprobes.KretprobeInstance, *kprobes.Regs) { returns++ }}
	if err := kp.RegisterKretprobe(rp); err != nil {
		t.Fatal(err)
	}
	stepUntilReady(t, k)
	runIterations(t, k, 5)
	if returns == 0 {
		t.Error("the return handler never ran")
	}
}
