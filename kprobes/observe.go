package kprobes

import "github.com/kpemu/kpemu/machine"

// Observing the mechanism: kpemu explain (and tests) watch each step of a
// hit as it happens. An observer runs on the vCPU, inside the hostcall,
// with the world stopped; it must be quick and must not call back into
// Kprobes.

// ObsKind is one step of the mechanism.
type ObsKind int

// The steps, in the order a hit goes through them.
const (
	ObsBreak       ObsKind = iota // BRK #0x004 trapped; Regs as the exception saved them
	ObsPreHandlers                // the pre handlers ran; Regs as they left them
	ObsStep                       // PC pointed at the out-of-line slot, DAIF masked
	ObsSimulate                   // the instruction was simulated on the saved registers
	ObsSSBreak                    // BRK #0x006 after the stepped instruction trapped
	ObsPost                       // post handlers ran; Regs are what ERET restores
	ObsKretEntry                  // a kretprobe took an instance and hooked x30
	ObsKretReturn                 // the function returned through the trampoline
	ObsSetjmp                     // a jprobe entered its guest handler
	ObsLongjmp                    // jprobe_return: the probed function's registers are back
	ObsFault                      // the stepped instruction faulted; Regs.PC is back at the probe point
)

// Observation is one step, with the vCPU (whose ESR_EL1, ELR_EL1, SPSR_EL1
// and frame pointer still describe the exception) and the pt_regs frame.
type Observation struct {
	Kind     ObsKind
	CPU      *machine.CPU
	RegsAddr uint64 // the guest's struct pt_regs
	Regs     Regs   // a copy
	Addr     uint64 // the probe point
	Slot     uint64 // the out-of-line slot, 0 when simulated
	Target   uint64 // ObsKretEntry: the return address hooked; ObsKretReturn: the real one; ObsSetjmp: the handler; ObsFault: the faulting PC
}

// Observe installs fn (nil removes it); call it while no hit is in flight,
// e.g. before the machine runs.
func (kp *Kprobes) Observe(fn func(Observation)) { kp.observer = fn }

func (kp *Kprobes) observe(kind ObsKind, cpu *machine.CPU, regsAddr uint64, regs *Regs, pt *probePoint, target uint64) {
	if kp.observer == nil {
		return
	}
	o := Observation{Kind: kind, CPU: cpu, RegsAddr: regsAddr, Regs: *regs, Target: target}
	if pt != nil {
		o.Addr, o.Slot = pt.addr, pt.slot
	}
	kp.observer(o)
}
