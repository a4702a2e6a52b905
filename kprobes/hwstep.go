package kprobes

import (
	"fmt"

	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/machine"
)

// Stepping modes. Linux 5.10 and later step the out-of-line slot by
// following it with BRK #0x006; before that, arm64 used the architecture's
// software step (MDSCR_EL1.SS with SPSR.SS): the CPU executes the one
// instruction in the slot and takes a software step exception (EC 0x33).
// kpemu does either, so both mechanisms can be watched.

// StepMode selects how an instruction is stepped out of line.
type StepMode int

const (
	// StepBRK follows the instruction with BRK #0x006 (Linux >= 5.10).
	StepBRK StepMode = iota
	// StepHW uses the software step exception (Linux <= 5.9).
	StepHW
)

// ParseStepMode reads "brk" or "hw", as kpemu run --step takes them.
func ParseStepMode(s string) (StepMode, error) {
	switch s {
	case "brk", "":
		return StepBRK, nil
	case "hw":
		return StepHW, nil
	}
	return 0, fmt.Errorf("step mode %q: want brk or hw", s)
}

// SetStepMode chooses the stepping mechanism for the hits that follow.
func (kp *Kprobes) SetStepMode(m StepMode) {
	kp.mu.Lock()
	defer kp.mu.Unlock()
	kp.stepMode.Store(int32(m))
}

// Debug bits, as arch/arm64/include/asm/debug-monitors.h.
const (
	mdscrSS  = 1 << 0  // DBG_MDSCR_SS
	mdscrKDE = 1 << 13 // DBG_MDSCR_KDE
	spsrSS   = 1 << 21 // DBG_SPSR_SS
	pstateD  = 1 << 9  // PSR_D_BIT
	pstateI  = 1 << 7  // PSR_I_BIT
)

// setupHWStep is Linux 5.9's setup_singlestep for a slot: remember where
// the step must land, mask IRQs, unmask debug exceptions and turn on
// software step (kernel_enable_single_step), then ERET into the slot.
func (kp *Kprobes) setupHWStep(pt *probePoint, regs *Regs, kcb *kprobeCtlblk) {
	kcb.ssPending, kcb.ssMatch = true, pt.slot+4
	kcb.savedIrqflag = regs.Pstate & pstateDAIF
	regs.Pstate = regs.Pstate&^pstateD | pstateI | spsrSS
	c := kp.cpu(regs)
	c.SetSysReg(machine.MDSCR_EL1, c.SysReg(machine.MDSCR_EL1)|mdscrSS|mdscrKDE)
	regs.PC = pt.slot
}

// disableHWStep is kernel_disable_single_step for a step that is over
// (completed, or abandoned by a fault): the CPU stops stepping and regs
// resume without SPSR.SS.
func disableHWStep(cpu *machine.CPU, regs *Regs, kcb *kprobeCtlblk) {
	kcb.ssPending = false
	cpu.SetSysReg(machine.MDSCR_EL1, cpu.SysReg(machine.MDSCR_EL1)&^(mdscrSS|mdscrKDE))
	regs.Pstate &^= spsrSS
}

// hcSoftStep is kprobe_single_step_handler, behind the guest's step hook:
// the software step exception after the slot's instruction.
func (kp *Kprobes) hcSoftStep(cpu *machine.CPU) error {
	regsAddr := cpu.X(0)
	regs, err := kp.readRegs(regsAddr)
	if err != nil {
		cpu.SetX(0, kernel.DbgHookError)
		return nil
	}
	regs.CPU = cpu.Index()
	kcb := &kp.kcb[cpu.Index()]
	cur := kcb.cur
	if cur == nil || !kcb.ssPending || kcb.ssMatch != regs.PC {
		cpu.SetX(0, kernel.DbgHookError)
		return nil
	}
	kp.observe(ObsSSBreak, cpu, regsAddr, regs, cur, 0)
	disableHWStep(cpu, regs, kcb)
	regs.Pstate = regs.Pstate&^pstateDAIF | kcb.savedIrqflag // the interrupt state back
	kp.postKprobeHandler(cur, regs, kcb)
	if err := kp.writeRegs(regsAddr, regs); err != nil {
		cpu.SetX(0, kernel.DbgHookError)
		return nil
	}
	cpu.SetX(0, kernel.DbgHookHandled)
	return nil
}
