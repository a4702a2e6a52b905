package kprobes

import (
	"fmt"

	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/machine"
)

// The hit path, after arch/arm64/kernel/probes/kprobes.c (Linux 6.1). Each
// function here runs on the vCPU that took the exception, inside the
// guest's break hook, with x0 pointing at the guest's pt_regs frame.

// hcBreakpoint is kprobe_breakpoint_handler: BRK #0x004 hit.
func (kp *Kprobes) hcBreakpoint(cpu *machine.CPU) error {
	regsAddr := cpu.X(0)
	regs, err := kp.readRegs(regsAddr)
	if err != nil {
		kp.log.Error("kprobes: bad pt_regs pointer from guest", "err", err)
		cpu.SetX(0, kernel.DbgHookError)
		return nil
	}
	defer kp.putRegs(regs)
	regs.CPU = cpu.Index()
	kcb := &kp.kcb[cpu.Index()]
	pt := kp.pointAt(regs.PC)
	kp.observe(ObsBreak, cpu, regsAddr, regs, pt, 0)
	if pt == nil {
		// A jprobe handler's jprobe_return: no probe here, the kprobe BRK,
		// and a probe current (Linux 4.14's kprobe_handler).
		if cur, inst := kcb.cur, kcb.instance; cur != nil && inst != nil && inst.breakHandler != nil {
			if w, err := kp.k.ReadInsn(regs.PC); err == nil && w == brkOpcodeKprobes && inst.breakHandler(inst, regs) {
				kcb.instance = nil
				kp.observe(ObsLongjmp, cpu, regsAddr, regs, cur, 0)
				if !kp.setupSinglestep(cur, regs, kcb, false) {
					cpu.SetX(0, kernel.DbgHookError)
					return nil
				}
				if err := kp.writeRegs(regsAddr, regs); err != nil {
					cpu.SetX(0, kernel.DbgHookError)
					return nil
				}
				cpu.SetX(0, kernel.DbgHookHandled)
				return nil
			}
		}
		// The breakpoint was removed right after we hit it: return to
		// the original instruction, which is back in place.
		cpu.SetX(0, kernel.DbgHookHandled)
		return nil
	}
	if kcb.cur != nil {
		switch kp.reenter(pt, regs, kcb) {
		case reenterUnrecoverable:
			// The guest's break hook BUG()s on this answer.
			cpu.SetX(0, kernel.KprobeUnrecoverable)
			return nil
		case reenterError:
			cpu.SetX(0, kernel.DbgHookError)
			return nil
		}
	} else {
		kcb.cur = pt
		kcb.status = statusHitActive
		skip := kp.preHandlers(pt, regs)
		kp.observe(ObsPreHandlers, cpu, regsAddr, regs, pt, 0)
		if !skip {
			if !kp.setupSinglestep(pt, regs, kcb, false) {
				cpu.SetX(0, kernel.DbgHookError)
				return nil
			}
		} else if kcb.instance == nil || kcb.instance.breakHandler == nil {
			// A pre handler moved the PC: no step, no post handler.
			kcb.cur = nil
			kcb.status = statusNone
		}
		// Otherwise a jprobe entered its guest handler: the probe stays
		// current until the handler's jprobe_return.
	}
	if err := kp.writeRegs(regsAddr, regs); err != nil {
		kp.log.Error("kprobes: writing pt_regs", "err", err)
		cpu.SetX(0, kernel.DbgHookError)
		return nil
	}
	cpu.SetX(0, kernel.DbgHookHandled)
	return nil
}

// preHandlers is aggr_pre_handler: each enabled probe's pre handler,
// newest first, stopping at the first that changed the PC, which becomes
// the CPU's kprobe_instance.
func (kp *Kprobes) preHandlers(pt *probePoint, regs *Regs) bool {
	kcb := &kp.kcb[regs.CPU]
	kcb.instance = nil
	l := pt.list()
	for i := len(l) - 1; i >= 0; i-- {
		p := l[i]
		if p.disabled() {
			continue
		}
		p.nhit.Add(1)
		if p.PreHandler != nil && p.PreHandler(p, regs) {
			kcb.instance = p
			return true
		}
	}
	return false
}

func (kp *Kprobes) postHandlers(pt *probePoint, regs *Regs) {
	l := pt.list()
	for i := len(l) - 1; i >= 0; i-- {
		p := l[i]
		if !p.disabled() && p.PostHandler != nil {
			p.PostHandler(p, regs)
		}
	}
}

// Results of reenter.
const (
	reenterStepped = iota
	reenterUnrecoverable
	reenterError
)

// reenter is reenter_kprobe: a probe hit while another one's handlers run
// on this CPU is stepped without its handlers and counted as missed; a hit
// while an instruction is being stepped cannot be recovered from.
func (kp *Kprobes) reenter(pt *probePoint, regs *Regs, kcb *kprobeCtlblk) int {
	switch kcb.status {
	case statusHitActive, statusHitSSDone:
		for _, p := range pt.list() {
			p.nmissed.Add(1)
		}
		if !kp.setupSinglestep(pt, regs, kcb, true) {
			return reenterError
		}
		return reenterStepped
	case statusHitSS, statusReenter:
		// dump_kprobe, as Linux 5.x prints it.
		l := pt.list()
		newest := l[len(l)-1]
		kp.log.Error("kprobes: Unrecoverable kprobe detected.", "dump", fmt.Sprintf("Name: %s Offset: %x Address: %s",
			newest.Symbol, newest.Offset, kp.k.Kallsyms().Format(pt.addr)), "current", kp.k.Kallsyms().Format(kcb.cur.addr))
		return reenterUnrecoverable
	default:
		kp.log.Error("kprobes: unexpected kprobe state", "status", kcb.status)
		return reenterError
	}
}

// setupSinglestep points the frame at the slot with DAIF masked, as Linux
// 6.1 does (kprobes_save_local_irqflag), so nothing interrupts the step;
// or, for an instruction that uses the PC, simulates it on the frame and
// finishes the hit at once (arch_simulate_insn). It returns false when a
// simulated literal load faults.
func (kp *Kprobes) setupSinglestep(pt *probePoint, regs *Regs, kcb *kprobeCtlblk, reenter bool) bool {
	if reenter {
		kcb.prev.cur, kcb.prev.status = kcb.cur, kcb.status
		kcb.cur = pt
		kcb.status = statusReenter
	} else {
		kcb.status = statusHitSS
	}
	if pt.slot != 0 {
		if StepMode(kp.stepMode.Load()) == StepHW {
			kp.setupHWStep(pt, regs, kcb)
		} else {
			kcb.savedIrqflag = regs.Pstate & pstateDAIF
			regs.Pstate |= pstateDAIF
			regs.PC = pt.slot
		}
		kp.observe(ObsStep, kp.cpu(regs), 0, regs, pt, 0)
		return true
	}
	if !pt.simulate(kp, pt.opcode, pt.addr, regs) {
		kp.log.Error("kprobes: simulated instruction faulted", "addr", kp.k.Kallsyms().Format(pt.addr), "insn", fmt.Sprintf("%#08x", pt.opcode))
		return false
	}
	kp.observe(ObsSimulate, kp.cpu(regs), 0, regs, pt, 0)
	kp.postKprobeHandler(pt, regs, kcb)
	return true
}

// hcSSBreakpoint is kprobe_breakpoint_ss_handler: the BRK #0x006 after
// the stepped instruction.
func (kp *Kprobes) hcSSBreakpoint(cpu *machine.CPU) error {
	regsAddr := cpu.X(0)
	regs, err := kp.readRegs(regsAddr)
	if err != nil {
		cpu.SetX(0, kernel.DbgHookError)
		return nil
	}
	defer kp.putRegs(regs)
	regs.CPU = cpu.Index()
	kcb := &kp.kcb[cpu.Index()]
	cur := kcb.cur
	if cur == nil || kcb.status&(statusHitSS|statusReenter) == 0 || regs.PC != cur.slot+4 {
		cpu.SetX(0, kernel.DbgHookError)
		return nil
	}
	kp.observe(ObsSSBreak, cpu, regsAddr, regs, cur, 0)
	regs.Pstate = regs.Pstate&^pstateDAIF | kcb.savedIrqflag
	kp.postKprobeHandler(cur, regs, kcb)
	if err := kp.writeRegs(regsAddr, regs); err != nil {
		cpu.SetX(0, kernel.DbgHookError)
		return nil
	}
	cpu.SetX(0, kernel.DbgHookHandled)
	return nil
}

// postKprobeHandler returns to the instruction after the probe (a
// simulated instruction has set the PC itself) and runs the post handlers,
// unless this was a re-entered step.
func (kp *Kprobes) postKprobeHandler(pt *probePoint, regs *Regs, kcb *kprobeCtlblk) {
	if pt.slot != 0 {
		regs.PC = pt.addr + 4 // xol_restore
	}
	if kcb.status == statusReenter {
		kcb.cur, kcb.status = kcb.prev.cur, kcb.prev.status
		return
	}
	kcb.status = statusHitSSDone
	kp.postHandlers(pt, regs)
	kcb.cur = nil
	kcb.status = statusNone
	kp.observe(ObsPost, kp.cpu(regs), 0, regs, pt, 0)
}

// cpu is the vCPU a hit runs on, for observers.
func (kp *Kprobes) cpu(regs *Regs) *machine.CPU { return kp.k.Machine().CPU(regs.CPU) }

// hcFault is kprobe_fault_handler: a fault taken while stepping a probed
// instruction out of line is reported at the probed address, and the
// normal fault handling goes on (returns 0).
func (kp *Kprobes) hcFault(cpu *machine.CPU) error {
	regsAddr := cpu.X(0)
	kcb := &kp.kcb[cpu.Index()]
	cpu.SetX(0, 0)
	cur := kcb.cur
	if cur == nil || kcb.status&(statusHitSS|statusReenter) == 0 {
		return nil
	}
	regs, err := kp.readRegs(regsAddr)
	if err != nil {
		return nil
	}
	faultPC := regs.PC
	regs.PC = cur.addr
	if kcb.ssPending {
		// --step=hw: or the ERET back to the probe point would take a
		// step exception before the BRK.
		disableHWStep(cpu, regs, kcb)
	}
	if kcb.status == statusReenter {
		kcb.cur, kcb.status = kcb.prev.cur, kcb.prev.status
	} else {
		regs.Pstate = regs.Pstate&^pstateDAIF | kcb.savedIrqflag
		kcb.cur, kcb.status = nil, statusNone
	}
	if err := kp.writeRegs(regsAddr, regs); err != nil {
		kp.log.Error("kprobes: writing pt_regs", "err", err)
	}
	kp.observe(ObsFault, cpu, regsAddr, regs, cur, faultPC)
	return nil
}
