package gdbstub

import (
	"context"
	"fmt"

	"github.com/kpemu/kpemu/machine"
)

// MachineTarget is the Target of a *machine.Machine, through the
// machine's host debugging API (host breakpoints and watchpoints that the
// guest cannot see, DebugRun).
//
// Every method but Run works inside Machine.Exclusive: the guest is halted
// while the stub uses them, but other host code (kprobes arming a probe
// from a debugfs write) may touch the machine at the same time, and
// Exclusive is what serialises host users (the host debugging API requires
// it of callers that do not drive the machine).
type MachineTarget struct {
	m *machine.Machine
}

var _ Target = (*MachineTarget)(nil)

// NewMachineTarget returns the Target for m. Serve must be the only driver
// of m (nothing else may call Run, Step or DebugRun).
func NewMachineTarget(m *machine.Machine) *MachineTarget { return &MachineTarget{m: m} }

// NumCPUs returns the machine's CPU count.
func (t *MachineTarget) NumCPUs() int { return t.m.NumCPUs() }

func (t *MachineTarget) cpu(i int) (*machine.CPU, error) {
	if i < 0 || i >= t.m.NumCPUs() {
		return nil, fmt.Errorf("gdbstub: no CPU %d", i)
	}
	return t.m.CPU(i), nil
}

// CPUInfo reports CPU cpu's power, WFI and exception level.
func (t *MachineTarget) CPUInfo(cpu int) CPUInfo {
	c, err := t.cpu(cpu)
	if err != nil {
		return CPUInfo{}
	}
	var ci CPUInfo
	t.m.Exclusive(func() {
		ci = CPUInfo{PoweredOn: c.PoweredOn(), Waiting: c.Waiting(), EL: c.EL()}
	})
	return ci
}

// sysReg maps the stub's system registers to the machine's.
func sysReg(r Reg) (machine.SysReg, bool) {
	switch r {
	case RegELR_EL1:
		return machine.ELR_EL1, true
	case RegSPSR_EL1:
		return machine.SPSR_EL1, true
	case RegESR_EL1:
		return machine.ESR_EL1, true
	case RegFAR_EL1:
		return machine.FAR_EL1, true
	case RegVBAR_EL1:
		return machine.VBAR_EL1, true
	case RegSCTLR_EL1:
		return machine.SCTLR_EL1, true
	case RegTTBR0_EL1:
		return machine.TTBR0_EL1, true
	case RegTTBR1_EL1:
		return machine.TTBR1_EL1, true
	case RegTCR_EL1:
		return machine.TCR_EL1, true
	case RegMAIR_EL1:
		return machine.MAIR_EL1, true
	case RegSP_EL0:
		return machine.SP_EL0, true
	case RegSP_EL1:
		return machine.SP_EL1, true
	case RegMDSCR_EL1:
		return machine.MDSCR_EL1, true
	case RegCurrentEL:
		return machine.CurrentEL, true
	case RegDAIF:
		return machine.DAIF, true
	case RegTPIDR_EL1:
		return machine.TPIDR_EL1, true
	case RegCONTEXTIDR_EL1:
		return machine.CONTEXTIDR_EL1, true
	case RegCPACR_EL1:
		return machine.CPACR_EL1, true
	case RegPAR_EL1:
		return machine.PAR_EL1, true
	case RegCNTVCT_EL0:
		return machine.CNTVCT_EL0, true
	}
	return 0, false
}

// ReadReg reads register r of CPU cpu.
func (t *MachineTarget) ReadReg(cpu int, r Reg) (uint64, error) {
	c, err := t.cpu(cpu)
	if err != nil {
		return 0, err
	}
	sr, isSys := sysReg(r)
	if !isSys && (r < RegX0 || r > RegCPSR) {
		return 0, fmt.Errorf("gdbstub: no register %d", int(r))
	}
	var v uint64
	t.m.Exclusive(func() {
		switch {
		case isSys:
			v = c.SysReg(sr)
		case r <= RegX30:
			v = c.X(int(r - RegX0))
		case r == RegSP:
			v = c.SP()
		case r == RegPC:
			v = c.PC()
		case r == RegCPSR:
			v = uint64(uint32(c.PSTATE()))
		}
	})
	return v, nil
}

// WriteReg writes register r of CPU cpu. Writes to read-only system
// registers are ignored, as the machine's host accessor does.
func (t *MachineTarget) WriteReg(cpu int, r Reg, v uint64) error {
	c, err := t.cpu(cpu)
	if err != nil {
		return err
	}
	sr, isSys := sysReg(r)
	if !isSys && (r < RegX0 || r > RegCPSR) {
		return fmt.Errorf("gdbstub: no register %d", int(r))
	}
	t.m.Exclusive(func() {
		switch {
		case isSys:
			c.SetSysReg(sr, v)
		case r <= RegX30:
			c.SetX(int(r-RegX0), v)
		case r == RegSP:
			c.SetSP(v)
		case r == RegPC:
			c.SetPC(v)
		case r == RegCPSR:
			c.SetPSTATE(uint64(uint32(v)))
		}
	})
	return nil
}

// ReadVirt reads guest memory through CPU cpu's translation.
func (t *MachineTarget) ReadVirt(cpu int, va uint64, p []byte) error {
	c, err := t.cpu(cpu)
	if err != nil {
		return err
	}
	t.m.Exclusive(func() { err = c.ReadVirt(va, p) })
	if err != nil {
		return fmt.Errorf("gdbstub: reading %#x: %w", va, err)
	}
	return nil
}

// WriteVirt writes guest memory through CPU cpu's translation.
func (t *MachineTarget) WriteVirt(cpu int, va uint64, p []byte) error {
	c, err := t.cpu(cpu)
	if err != nil {
		return err
	}
	t.m.Exclusive(func() { err = c.WriteVirt(va, p) })
	if err != nil {
		return fmt.Errorf("gdbstub: writing %#x: %w", va, err)
	}
	return nil
}

// SetBreakpoint sets a host breakpoint at va.
func (t *MachineTarget) SetBreakpoint(va uint64) error {
	var err error
	t.m.Exclusive(func() { err = t.m.SetHostBreakpoint(va) })
	if err != nil {
		return fmt.Errorf("gdbstub: breakpoint at %#x: %w", va, err)
	}
	return nil
}

// ClearBreakpoint removes the host breakpoint at va.
func (t *MachineTarget) ClearBreakpoint(va uint64) error {
	var err error
	t.m.Exclusive(func() { err = t.m.ClearHostBreakpoint(va) })
	if err != nil {
		return fmt.Errorf("gdbstub: clearing breakpoint at %#x: %w", va, err)
	}
	return nil
}

func watchKind(k WatchKind) (machine.WatchKind, error) {
	switch k {
	case WatchWrite:
		return machine.WatchWrite, nil
	case WatchRead:
		return machine.WatchRead, nil
	case WatchAccess:
		return machine.WatchAccess, nil
	}
	return 0, fmt.Errorf("gdbstub: bad watchpoint kind %v", k)
}

// SetWatchpoint sets a host watchpoint on [va, va+length).
func (t *MachineTarget) SetWatchpoint(va, length uint64, kind WatchKind) error {
	mk, err := watchKind(kind)
	if err != nil {
		return err
	}
	t.m.Exclusive(func() { err = t.m.SetHostWatchpoint(va, length, mk) })
	if err != nil {
		return fmt.Errorf("gdbstub: %v watchpoint at %#x+%d: %w", kind, va, length, err)
	}
	return nil
}

// ClearWatchpoint removes a host watchpoint.
func (t *MachineTarget) ClearWatchpoint(va, length uint64, kind WatchKind) error {
	mk, err := watchKind(kind)
	if err != nil {
		return err
	}
	t.m.Exclusive(func() { err = t.m.ClearHostWatchpoint(va, length, mk) })
	if err != nil {
		return fmt.Errorf("gdbstub: clearing %v watchpoint at %#x+%d: %w", kind, va, length, err)
	}
	return nil
}

// Run runs the machine with DebugRun. A step executes one instruction on
// stepCPU while the other CPUs stay stopped.
func (t *MachineTarget) Run(ctx context.Context, stepCPU int) StopEvent {
	ev := t.m.DebugRun(ctx, stepCPU)
	out := StopEvent{CPU: ev.CPU, Addr: ev.Addr, Write: ev.Write, Err: ev.Err}
	switch ev.Reason {
	case machine.StopBreakpoint:
		out.Reason = StopBreakpoint
	case machine.StopWatchpoint:
		out.Reason = StopWatchpoint
	case machine.StopStep:
		out.Reason = StopStep
	case machine.StopInterrupted:
		out.Reason = StopInterrupted
	case machine.StopPoweredOff:
		out.Reason = StopPoweredOff
	case machine.StopError:
		out.Reason = StopError
	default:
		out.Reason = StopError
		out.Err = fmt.Errorf("gdbstub: unknown stop reason %d", int(ev.Reason))
		if ev.Err != nil {
			out.Err = fmt.Errorf("gdbstub: unknown stop reason %d: %w", int(ev.Reason), ev.Err)
		}
	}
	return out
}
