package kprobes_test

import (
	"testing"

	"github.com/kpemu/kpemu/kprobes"
	"github.com/kpemu/kpemu/machine"
)

// With --step=hw the slot is stepped by the software step exception, as
// Linux did before 5.10: the same hits, the same results.
func TestHardwareStepMode(t *testing.T) {
	const iterations = 40
	ref, _ := boot(t)
	runToIteration(t, ref, iterations)

	k, kp := boot(t)
	kp.SetStepMode(kprobes.StepHW)
	var sawSS bool
	kp.Observe(func(o kprobes.Observation) {
		if o.Kind == kprobes.ObsSSBreak && o.CPU.SysReg(machine.ESR_EL1)>>26 == 0x33 {
			sawSS = true
		}
	})
	var post, probed int
	for _, fn := range []string{"vfs_read", "vfs_write", "tcp_v4_rcv", "kernel_clone"} {
		s, _ := k.Kallsyms().LookupName(fn)
		for off := uint64(0); off < s.Size; off += 4 {
			p := &kprobes.Kprobe{Symbol: fn, Offset: off, PostHandler: func(*kprobes.Kprobe, *kprobes.Regs) { post++ }}
			if kp.Register(p) == nil {
				probed++
			}
		}
	}
	runToIteration(t, k, iterations)
	if msg, ok := k.Panicked(); ok {
		t.Fatal(msg)
	}
	if probed < 50 || !sawSS || post == 0 {
		t.Fatalf("%d probes, software steps seen %v, post handlers %d", probed, sawSS, post)
	}
	sameResults(t, k, ref, "stepping with MDSCR_EL1.SS")
}
