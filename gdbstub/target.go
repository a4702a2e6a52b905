package gdbstub

import (
	"context"
	"fmt"
	"strings"
)

// Target is the machine the stub debugs. Serve calls its methods from one
// goroutine, and never while a Run call is in flight, so implementations
// need no locking against the stub (they may need it against other users of
// the machine).
//
// CPUs are numbered 0..NumCPUs()-1; the stub calls GDB thread i+1 CPU i.
type Target interface {
	// NumCPUs returns the number of CPUs; it must not change.
	NumCPUs() int
	// CPUInfo describes CPU cpu's state for the debugger's thread list.
	CPUInfo(cpu int) CPUInfo
	// ReadReg returns register r of CPU cpu.
	ReadReg(cpu int, r Reg) (uint64, error)
	// WriteReg sets register r of CPU cpu.
	WriteReg(cpu int, r Reg, v uint64) error
	// ReadVirt reads len(p) bytes at virtual address va through CPU cpu's
	// current translation.
	ReadVirt(cpu int, va uint64, p []byte) error
	// WriteVirt writes p at virtual address va through CPU cpu's current
	// translation.
	WriteVirt(cpu int, va uint64, p []byte) error
	// SetBreakpoint and ClearBreakpoint manage a breakpoint at va that the
	// guest cannot observe (no memory is patched).
	SetBreakpoint(va uint64) error
	ClearBreakpoint(va uint64) error
	// SetWatchpoint and ClearWatchpoint manage a data watchpoint on
	// [va, va+length).
	SetWatchpoint(va, length uint64, kind WatchKind) error
	ClearWatchpoint(va, length uint64, kind WatchKind) error
	// Run runs the guest until a breakpoint (checked before the instruction
	// executes; resuming from a breakpoint's address executes that
	// instruction), a watchpoint (after the access), ctx's cancellation
	// (StopInterrupted), power-off, or, when stepCPU >= 0, until CPU
	// stepCPU executed exactly one instruction (StopStep). Whether the
	// other CPUs run during a step is the target's choice; the machine
	// keeps them stopped.
	Run(ctx context.Context, stepCPU int) StopEvent
}

// CPUInfo is a CPU's state as the thread list shows it.
type CPUInfo struct {
	PoweredOn bool
	Waiting   bool // sleeping in WFI
	EL        int  // current exception level
}

// StopReason says why Target.Run returned.
type StopReason int

// Stop reasons.
const (
	StopBreakpoint  StopReason = iota // a breakpoint's address is the next PC of CPU
	StopWatchpoint                    // CPU accessed watched data at Addr
	StopStep                          // the stepped CPU executed one instruction
	StopInterrupted                   // the Run context was cancelled
	StopPoweredOff                    // the guest powered the machine off
	StopError                         // the machine failed; see Err
)

// StopEvent describes why and where Target.Run returned.
type StopEvent struct {
	CPU    int        // the CPU that stopped (for StopInterrupted, the one that last ran)
	Reason StopReason //
	Addr   uint64     // StopWatchpoint: the data address accessed
	Write  bool       // StopWatchpoint: the access was a write
	Err    error      // StopError: what failed
}

// WatchKind is the access a watchpoint triggers on.
type WatchKind int

// Watchpoint kinds, as GDB's Z2, Z3 and Z4.
const (
	WatchWrite WatchKind = iota
	WatchRead
	WatchAccess
)

func (k WatchKind) String() string {
	switch k {
	case WatchWrite:
		return "write"
	case WatchRead:
		return "read"
	case WatchAccess:
		return "access"
	}
	return fmt.Sprintf("WatchKind(%d)", int(k))
}

// Reg is a register number in the stub's target description, which is
// also its number in the g/G/p/P packets.
type Reg int

// The registers of org.gnu.gdb.aarch64.core, in the order GDB requires.
const (
	RegX0   Reg = 0  // x0..x30 are RegX0+n
	RegX30  Reg = 30 //
	RegSP   Reg = 31 // the stack pointer selected by PSTATE
	RegPC   Reg = 32
	RegCPSR Reg = 33 // PSTATE in SPSR format, 32 bits in GDB
)

// The system registers of the org.kpemu.aarch64.sysregs feature. The host
// reads and writes them without the guest's access checks.
const (
	RegELR_EL1 Reg = iota + 34
	RegSPSR_EL1
	RegESR_EL1
	RegFAR_EL1
	RegVBAR_EL1
	RegSCTLR_EL1
	RegTTBR0_EL1
	RegTTBR1_EL1
	RegTCR_EL1
	RegMAIR_EL1
	RegSP_EL0
	RegSP_EL1
	RegMDSCR_EL1
	RegCurrentEL
	RegDAIF
	RegTPIDR_EL1
	RegCONTEXTIDR_EL1
	RegCPACR_EL1
	RegPAR_EL1
	RegCNTVCT_EL0
	numRegs
)

// regInfo describes one register of the target description.
type regInfo struct {
	name string
	bits int
	typ  string
}

// info returns the description of r; r must be in [0, numRegs).
func (r Reg) info() regInfo {
	switch {
	case r >= RegX0 && r <= RegX30:
		return regInfo{fmt.Sprintf("x%d", r), 64, "int"}
	case r == RegSP:
		return regInfo{"sp", 64, "data_ptr"}
	case r == RegPC:
		return regInfo{"pc", 64, "code_ptr"}
	case r == RegCPSR:
		return regInfo{"cpsr", 32, "int"}
	}
	names := [...]string{
		"elr_el1", "spsr_el1", "esr_el1", "far_el1", "vbar_el1", "sctlr_el1",
		"ttbr0_el1", "ttbr1_el1", "tcr_el1", "mair_el1", "sp_el0", "sp_el1",
		"mdscr_el1", "currentel", "daif", "tpidr_el1", "contextidr_el1",
		"cpacr_el1", "par_el1", "cntvct_el0",
	}
	typ := "uint64"
	switch r {
	case RegELR_EL1, RegVBAR_EL1:
		typ = "code_ptr"
	case RegSP_EL0, RegSP_EL1, RegFAR_EL1:
		typ = "data_ptr"
	}
	return regInfo{names[r-RegELR_EL1], 64, typ}
}

// String returns the register's name in the target description.
func (r Reg) String() string {
	if r < 0 || r >= numRegs {
		return fmt.Sprintf("Reg(%d)", int(r))
	}
	return r.info().name
}

// size is the register's width in bytes.
func (r Reg) size() int { return r.info().bits / 8 }

// gSize is the length in bytes of the g packet's register block.
func gSize() int {
	n := 0
	for r := Reg(0); r < numRegs; r++ {
		n += r.size()
	}
	return n
}

// targetXML is the target description: GDB's AArch64 core feature (the
// fpu feature is left out: the machine has no FP/SIMD) and kpemu's system
// registers in group "system", so that `info registers` shows the core and
// `info registers system` the rest.
func targetXML() string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0"?>
<!DOCTYPE target SYSTEM "gdb-target.dtd">
<target version="1.0">
  <architecture>aarch64</architecture>
  <feature name="org.gnu.gdb.aarch64.core">
`)
	for r := Reg(0); r < numRegs; r++ {
		if r == RegELR_EL1 {
			b.WriteString("  </feature>\n  <feature name=\"org.kpemu.aarch64.sysregs\">\n")
		}
		i := r.info()
		group := ""
		if r >= RegELR_EL1 {
			group = ` group="system"`
		}
		fmt.Fprintf(&b, "    <reg name=%q bitsize=\"%d\" type=%q regnum=\"%d\"%s/>\n", i.name, i.bits, i.typ, int(r), group)
	}
	b.WriteString("  </feature>\n</target>\n")
	return b.String()
}
