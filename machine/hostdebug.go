package machine

// The host debugging API, for a GDB remote stub (package gdbstub) or any
// other host-side debugger.
//
// Host breakpoints and watchpoints are invisible to the guest: no memory
// is patched, no guest register changes, no guest exception is taken. They
// take effect only inside DebugRun; Run and Step ignore them. They are
// independent of the guest's own debug architecture (DBGBCR/DBGWCR,
// MDSCR_EL1, BRK), which keeps working underneath.
//
// Addresses are virtual: a breakpoint matches the PC of the next
// instruction of any CPU, a watchpoint the virtual address of a data
// access by any CPU, whatever the translation regime.
//
// Concurrency: like Step and Run, every method here must be called by the
// goroutine that drives the machine (or inside Exclusive), never while
// another goroutine runs it. DebugRun is itself a driver: it may not run
// concurrently with Run, Step or another DebugRun, but Exclusive may be
// used from other goroutines while it runs.

import (
	"context"
	"errors"
	"fmt"
)

// StopReason says why DebugRun returned.
type StopReason int

// Stop reasons.
const (
	StopBreakpoint  StopReason = iota // a CPU reached a host breakpoint; it has not executed the instruction there
	StopWatchpoint                    // a CPU accessed a host-watched range; the access has completed
	StopStep                          // the single step asked for is done
	StopInterrupted                   // the context was cancelled
	StopPoweredOff                    // the guest powered the machine off
	StopError                         // a hostcall failed or the request was invalid; see Err
)

func (r StopReason) String() string {
	switch r {
	case StopBreakpoint:
		return "breakpoint"
	case StopWatchpoint:
		return "watchpoint"
	case StopStep:
		return "step"
	case StopInterrupted:
		return "interrupted"
	case StopPoweredOff:
		return "powered off"
	case StopError:
		return "error"
	}
	return fmt.Sprintf("StopReason(%d)", int(r))
}

// StopEvent describes why and where DebugRun stopped.
type StopEvent struct {
	CPU    int        // the CPU that stopped (for StopInterrupted and StopPoweredOff: the last one that ran, or 0)
	Reason StopReason // why
	Addr   uint64     // StopBreakpoint: the PC; StopWatchpoint: the data address hit (the larger of the access address and the watched range's start, as QEMU reports it)
	Write  bool       // StopWatchpoint: the access was a store
	Err    error      // StopError: the cause
}

// WatchKind selects which accesses a host watchpoint reports.
type WatchKind int

// Watchpoint kinds, as GDB's Z2 (write), Z3 (read) and Z4 (access).
const (
	WatchWrite WatchKind = iota
	WatchRead
	WatchAccess
)

// ErrBadDebugRequest is wrapped by errors for invalid arguments to the
// host debugging API.
var ErrBadDebugRequest = errors.New("machine: bad debug request")

type hostWatch struct {
	va, n uint64
	kind  WatchKind
}

// hostDebug is the machine's host-debugger state. It hangs off every CPU
// (CPU.host) because the Machine struct belongs to the scheduler.
type hostDebug struct {
	bps   map[uint64]bool
	watch []hostWatch

	running bool               // inside DebugRun: host breakpoints and watchpoints are live
	stop    bool               // an event ended the run; runSome stops at once
	event   StopEvent          // the first event of the run
	cancel  context.CancelFunc // ends DebugRun's inner Run
}

// record keeps the first stop event of a run and stops the machine.
func (h *hostDebug) record(ev StopEvent) {
	if h.stop {
		return
	}
	h.stop = true
	h.event = ev
	if h.cancel != nil {
		h.cancel()
	}
}

// hostDbg returns the machine's host-debugger state, creating it.
func (m *Machine) hostDbg() *hostDebug {
	if h := m.cpus[0].host; h != nil {
		return h
	}
	h := &hostDebug{bps: make(map[uint64]bool)}
	for _, c := range m.cpus {
		c.host = h
	}
	return h
}

// debugStop reports whether a host debug event asks the scheduler to stop
// at once (checked by runSome).
func (m *Machine) debugStop() bool {
	h := m.cpus[0].host
	return h != nil && h.stop
}

func (m *Machine) hostDebugChanged() {
	for _, c := range m.cpus {
		c.debugChanged()
	}
}

// SetHostBreakpoint sets a host breakpoint at virtual address va (4-byte
// aligned). Setting one twice is not an error.
func (m *Machine) SetHostBreakpoint(va uint64) error {
	if va&3 != 0 {
		return fmt.Errorf("machine: breakpoint at %#x: unaligned: %w", va, ErrBadDebugRequest)
	}
	m.hostDbg().bps[va] = true
	m.hostDebugChanged()
	return nil
}

// ClearHostBreakpoint removes the host breakpoint at va; removing one that
// is not set is not an error.
func (m *Machine) ClearHostBreakpoint(va uint64) error {
	delete(m.hostDbg().bps, va)
	m.hostDebugChanged()
	return nil
}

// SetHostWatchpoint watches the length bytes at virtual address va for
// accesses of the given kind. Identical watchpoints may be set repeatedly;
// each needs its own Clear.
func (m *Machine) SetHostWatchpoint(va, length uint64, kind WatchKind) error {
	if length == 0 || va+length < va {
		return fmt.Errorf("machine: watchpoint %#x+%#x: bad length: %w", va, length, ErrBadDebugRequest)
	}
	if kind < WatchWrite || kind > WatchAccess {
		return fmt.Errorf("machine: watchpoint kind %d: %w", kind, ErrBadDebugRequest)
	}
	h := m.hostDbg()
	h.watch = append(h.watch, hostWatch{va, length, kind})
	m.hostDebugChanged()
	return nil
}

// ClearHostWatchpoint removes one watchpoint set with the same arguments.
// It returns an error wrapping ErrBadDebugRequest if there is none.
func (m *Machine) ClearHostWatchpoint(va, length uint64, kind WatchKind) error {
	h := m.hostDbg()
	for i, w := range h.watch {
		if w == (hostWatch{va, length, kind}) {
			h.watch = append(h.watch[:i], h.watch[i+1:]...)
			m.hostDebugChanged()
			return nil
		}
	}
	return fmt.Errorf("machine: no watchpoint %#x+%#x kind %d: %w", va, length, kind, ErrBadDebugRequest)
}

// hostWatchCheck is called after a completed data access by c.
func (m *Machine) hostWatchCheck(c *CPU, va, size uint64, write bool) {
	h := c.host
	if h == nil || !h.running {
		return
	}
	for _, w := range h.watch {
		if va+size <= w.va || w.va+w.n <= va {
			continue
		}
		if w.kind == WatchWrite && !write || w.kind == WatchRead && write {
			continue
		}
		h.record(StopEvent{CPU: c.index, Reason: StopWatchpoint, Addr: max(va, w.va), Write: write})
		return
	}
}

// DebugRun runs the machine as Run does (same interleaving of CPUs, same
// handling of WFI and Exclusive) until one of:
//
//   - a CPU is about to execute an instruction at a host breakpoint
//     (StopBreakpoint; the instruction has not executed). A CPU whose PC
//     is at a breakpoint when DebugRun starts executes that instruction
//     first, so resuming from a breakpoint makes progress;
//   - a data access hits a host watchpoint (StopWatchpoint, after the
//     access; the instruction has completed);
//   - ctx is cancelled (StopInterrupted);
//   - the guest powers off (StopPoweredOff);
//   - a hostcall fails (StopError, Err wraps its error).
//
// With stepCPU >= 0 it instead executes exactly one instruction on that
// CPU (an instruction that takes an exception counts, and the CPU then
// stands at the vector) while the other CPUs stay stopped, and returns
// StopStep (or StopWatchpoint if the instruction hit a host watchpoint,
// StopPoweredOff, or StopError if the CPU is off or waits in WFI with no
// interrupt pending). Stepping the CPU the scheduler would run next keeps
// the interleaving of a later Run the same as if Run had executed that
// instruction.
//
// The guest's own debug exceptions (BRK, hardware breakpoints, software
// step) are taken by the guest as usual and do not stop DebugRun.
func (m *Machine) DebugRun(ctx context.Context, stepCPU int) StopEvent {
	if stepCPU >= len(m.cpus) {
		return StopEvent{CPU: stepCPU, Reason: StopError, Err: fmt.Errorf("machine: step cpu %d of %d: %w", stepCPU, len(m.cpus), ErrBadDebugRequest)}
	}
	if stepCPU >= 0 {
		return m.debugStep(stepCPU)
	}
	dctx, cancel := context.WithCancel(ctx)
	defer cancel()
	h := m.hostDbg()
	m.mu.Lock()
	h.running, h.stop, h.event, h.cancel = true, false, StopEvent{}, cancel
	for _, c := range m.cpus {
		c.dbg.resumePC, c.dbg.resumeSkip = c.pc, true
	}
	m.hostDebugChanged()
	m.mu.Unlock()

	err := m.Run(dctx)

	m.mu.Lock()
	ev, stopped := h.event, h.stop
	h.running, h.stop, h.event, h.cancel = false, false, StopEvent{}, nil
	for _, c := range m.cpus {
		c.dbg.resumeSkip = false
	}
	m.hostDebugChanged()
	last := m.sched
	m.mu.Unlock()

	switch {
	case err != nil:
		return StopEvent{CPU: last, Reason: StopError, Err: fmt.Errorf("machine: debug run: %w", err)}
	case stopped:
		return ev
	case m.off.Load():
		return StopEvent{CPU: last, Reason: StopPoweredOff}
	}
	return StopEvent{CPU: last, Reason: StopInterrupted}
}

// debugStep executes one instruction on CPU i; see DebugRun.
func (m *Machine) debugStep(i int) StopEvent {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.cpus[i]
	if m.off.Load() {
		return StopEvent{CPU: i, Reason: StopPoweredOff}
	}
	if !c.on {
		return StopEvent{CPU: i, Reason: StopError, Err: fmt.Errorf("machine: step cpu %d: powered off: %w", i, ErrBadDebugRequest)}
	}
	if c.wfi {
		if c.lines.Load() == 0 {
			return StopEvent{CPU: i, Reason: StopError, Err: fmt.Errorf("machine: step cpu %d: waiting for an interrupt: %w", i, ErrBadDebugRequest)}
		}
		c.wfi = false
	}
	h := m.hostDbg()
	h.running, h.stop, h.event, h.cancel = true, false, StopEvent{}, nil
	c.dbg.resumePC, c.dbg.resumeSkip = c.pc, true
	m.hostDebugChanged()
	n := c.run(1)
	ev, stopped := h.event, h.stop
	h.running, h.stop, h.event = false, false, StopEvent{}
	c.dbg.resumeSkip = false
	m.hostDebugChanged()

	m.instructions.Add(n)
	if m.sched == i {
		m.sliceUsed += n
		if m.sliceUsed >= m.quantum || c.wfi || c.yielded {
			m.nextCPU()
		}
	}
	c.yielded = false
	if c.err != nil {
		err := c.err
		c.err = nil
		return StopEvent{CPU: i, Reason: StopError, Err: err}
	}
	switch {
	case stopped:
		return ev
	case m.off.Load():
		return StopEvent{CPU: i, Reason: StopPoweredOff}
	}
	return StopEvent{CPU: i, Reason: StopStep}
}

// ReadVirt reads guest memory at virtual address va through the CPU's
// current translation (its MMU state, TTBRs and ASID; with the MMU off, va
// is physical). Any mapping will do, whatever its permissions and the
// CPU's EL, so a debugger stopped at EL0 can read the kernel. It reads RAM
// only (device registers have side
// effects a debugger must not trigger) and never touches the TLBs. A page
// that does not translate fails with an error wrapping ErrTranslation; one
// outside RAM with an error wrapping ErrBadAddress.
func (c *CPU) ReadVirt(va uint64, p []byte) error {
	return c.virtCopy(va, p, false)
}

// WriteVirt writes guest memory at virtual address va through the CPU's
// current translation, like ReadVirt, ignoring permissions (a debugger may
// patch read-only text). The decode cache of every page
// written is dropped, so patched instructions take effect.
func (c *CPU) WriteVirt(va uint64, p []byte) error {
	return c.virtCopy(va, p, true)
}

func (c *CPU) virtCopy(va uint64, p []byte, write bool) error {
	for len(p) > 0 {
		n := PageSize - int(va&(PageSize-1))
		if n > len(p) {
			n = len(p)
		}
		pa, err := c.translateHost(va)
		if err != nil {
			return fmt.Errorf("machine: cpu %d: virtual %#x: %w", c.index, va, err)
		}
		if write {
			err = c.m.WriteMem(pa, p[:n])
		} else {
			err = c.m.ReadMem(pa, p[:n])
		}
		if err != nil {
			return fmt.Errorf("machine: cpu %d: virtual %#x: %w", c.index, va, err)
		}
		va += uint64(n)
		p = p[n:]
	}
	return nil
}

// translateHost translates va for the host: any valid mapping, no
// permission check, no TLB use.
func (c *CPU) translateHost(va uint64) (uint64, error) {
	if c.sys[SCTLR_EL1]&sctlrM == 0 {
		return va, nil
	}
	res, fsc, ok := c.walk(va, true)
	if !ok {
		return 0, &TranslationError{VA: va, FSC: fsc}
	}
	return res.pa | c.stripTag(va)&res.mask, nil
}
