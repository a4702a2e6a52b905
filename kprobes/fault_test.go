package kprobes_test

import (
	"testing"

	"github.com/kpemu/kpemu/kprobes"
	"github.com/kpemu/kpemu/machine"
)

// A probe on the store of __arch_copy_to_user: /bin/sh reads a file into
// an anonymous page it never touched, so the store, stepped out of line,
// takes a translation fault on a user address. kprobe_fault_handler must
// put the PC back at the probe point and clear the running probe; the
// fault then demand-pages as any other, the BRK is hit again and the
// second step completes (Linux 6.1's arch/arm64/kernel/probes/kprobes.c).
func TestFaultWhileStepping(t *testing.T) {
	for _, mode := range []kprobes.StepMode{kprobes.StepBRK, kprobes.StepHW} {
		t.Run(map[kprobes.StepMode]string{kprobes.StepBRK: "brk", kprobes.StepHW: "hw"}[mode], func(t *testing.T) {
			faultWhileStepping(t, mode)
		})
	}
}

func faultWhileStepping(t *testing.T, mode kprobes.StepMode) {
	k, kp := boot(t)
	kp.SetStepMode(mode)
	const off = 0x10 // str x4, [x3], #8: the 8-byte store to the user buffer
	addr := symAddr(t, k, "__arch_copy_to_user") + off
	if got := insnAt(t, k, addr); got != 0xf8008464 {
		t.Fatalf("__arch_copy_to_user+%#x = %#08x, want str x4, [x3], #8", off, got)
	}
	var pre, post int
	p := &kprobes.Kprobe{
		Symbol:      "__arch_copy_to_user",
		Offset:      off,
		PreHandler:  func(*kprobes.Kprobe, *kprobes.Regs) bool { pre++; return false },
		PostHandler: func(*kprobes.Kprobe, *kprobes.Regs) { post++ },
	}
	if err := kp.Register(p); err != nil {
		t.Fatal(err)
	}
	var faults []kprobes.Observation
	rehit := 0                // hits of the probe right after a fault, on the faulting CPU
	pending := map[int]bool{} // CPUs whose next break must be the re-executed store
	kp.Observe(func(o kprobes.Observation) {
		switch o.Kind {
		case kprobes.ObsFault:
			faults = append(faults, o)
			// The store aborted: no write-back, and FAR is the user address it meant to write.
			if far := o.CPU.SysReg(machine.FAR_EL1); far != o.Regs.X[3] || far >= 0x40000000 {
				t.Errorf("FAR_EL1 = %#x, x3 = %#x: want the same user address", far, o.Regs.X[3])
			}
			pending[o.CPU.Index()] = true
		case kprobes.ObsBreak:
			if pending[o.CPU.Index()] {
				delete(pending, o.CPU.Index())
				if o.Addr == addr && o.Regs.PC == addr {
					rehit++
				}
			}
		}
	})
	for i := 0; len(faults) < 3; i++ {
		if i > 20000 {
			t.Fatalf("no fault while stepping after %d hits", pre)
		}
		if err := k.Machine().Step(20000); err != nil {
			t.Fatal(err)
		}
		if msg, ok := k.Panicked(); ok {
			t.Fatalf("guest panicked: %s", msg)
		}
	}
	t.Logf("%d hits, %d post handlers, %d faults, %d re-executed", pre, post, len(faults), rehit)
	runIterations(t, k, 5) // the workload and user space go on
	for _, f := range faults {
		if f.Regs.PC != addr || f.Addr != addr {
			t.Errorf("after the fault pc = %#x (probe %#x), want the probe point %#x", f.Regs.PC, f.Addr, addr)
		}
		if f.Target != p.Slot() {
			t.Errorf("faulting pc = %#x, want the slot %#x", f.Target, p.Slot())
		}
	}
	if rehit < len(faults)-len(pending) {
		t.Errorf("%d faults but only %d re-executed the probed store", len(faults), rehit)
	}
	// Every hit but a faulted one (and one still in flight) reached its post handler.
	if d := pre - post - len(faults); d < 0 || d > 1 {
		t.Errorf("%d hits, %d post handlers, %d faults", pre, post, len(faults))
	}
	if p.Missed() != 0 {
		t.Errorf("nmissed = %d", p.Missed())
	}
}
