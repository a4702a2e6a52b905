package machine

// The self-hosted debug architecture (Arm ARM D2): software step, hardware
// breakpoints and watchpoints, the OS lock, and the gating by MDSCR_EL1
// and PSTATE.D. BRK needs none of this and lives in the interpreter.
//
// None of it costs anything while unused: the interpreter's loop runs the
// per-instruction checks below only while CPU.dbgActive is set, which
// debugChanged computes whenever a register it depends on is written.

// MDSCR_EL1 bits.
const (
	mdscrSS  = 1 << 0
	mdscrKDE = 1 << 13
	mdscrMDE = 1 << 15
)

// cpuDebug is a CPU's debug bookkeeping.
type cpuDebug struct {
	guestBP    bool // MDSCR_EL1.MDE and some DBGBCR enabled
	guestWatch bool // MDSCR_EL1.MDE and some DBGWCR enabled
	hostWatch  bool // host watchpoints are armed for this run

	// stepping is set while the instruction being executed is stepped
	// (software step active-not-pending): SVC and HVC then complete the
	// step before their exception is taken.
	stepping bool
	// The syndrome of the coming step exception: ISV says a stepped
	// instruction completed (so EX is valid), EX that it was a
	// load-exclusive.
	stepISV, stepEX bool

	// A host breakpoint at resumePC is ignored once, so that resuming
	// from a breakpoint executes the instruction there.
	resumePC   uint64
	resumeSkip bool
}

// debugChanged recomputes the debug flags after MDSCR_EL1, the OS lock,
// a breakpoint or watchpoint register, or the host's debug state changed.
func (c *CPU) debugChanged() {
	mdscr := c.sys[MDSCR_EL1]
	d := &c.dbg
	d.guestBP, d.guestWatch = false, false
	if mdscr&mdscrMDE != 0 {
		for i := SysReg(0); i < numBRPs; i++ {
			if c.sys[DBGBCR0_EL1+i]&1 != 0 {
				d.guestBP = true
			}
		}
		for i := SysReg(0); i < numWRPs; i++ {
			if c.sys[DBGWCR0_EL1+i]&1 != 0 {
				d.guestWatch = true
			}
		}
	}
	h := c.host
	d.hostWatch = h != nil && h.running && len(h.watch) > 0
	hostBP := h != nil && h.running && len(h.bps) > 0
	c.dbgActive = mdscr&mdscrSS != 0 || d.guestBP || d.guestWatch || d.hostWatch || hostBP
	c.mmuChanged()
}

// watchActive reports whether data accesses must be checked against
// watchpoints.
func (c *CPU) watchActive() bool { return c.dbg.guestWatch || c.dbg.hostWatch }

// debugEnabled reports whether debug exceptions other than BRK may be
// generated at the current EL: not while the OS lock is locked, and at
// EL1 (debug exceptions are taken to EL1, so "from the same EL") only
// when MDSCR_EL1.KDE is set and PSTATE.D is clear.
func (c *CPU) debugEnabled() bool {
	if c.sys[OSLSR_EL1]&oslsrOSLK != 0 {
		return false
	}
	if c.el == 0 {
		return true
	}
	return c.sys[MDSCR_EL1]&mdscrKDE != 0 && c.daif&8 == 0
}

// elMatches applies a breakpoint's or watchpoint's PMC/PAC field (bit 0:
// EL1, bit 1: EL0) and SSC (this machine is Non-secure, so SSC 0b10,
// Secure only, never matches).
func (c *CPU) elMatches(ctl uint64) bool {
	if ctl>>14&3 == 2 {
		return false
	}
	pmc := ctl >> 1 & 3
	if c.el == 0 {
		return pmc&2 != 0
	}
	return pmc&1 != 0
}

// breakpointHit reports whether an enabled hardware breakpoint matches an
// instruction fetch at pc. Only unlinked address matching (BT 0b0000) is
// implemented. As in QEMU, BAS 0b0000 disables a breakpoint and the
// breakpoint must match the instruction's own address.
func (c *CPU) breakpointHit(pc uint64) bool {
	for i := SysReg(0); i < numBRPs; i++ {
		ctl := c.sys[DBGBCR0_EL1+i]
		if ctl&1 == 0 || ctl>>20&15 != 0 || !c.elMatches(ctl) {
			continue
		}
		bas := ctl >> 5 & 15
		if bas == 0 {
			continue
		}
		addr := sext(c.sys[DBGBVR0_EL1+i]&(1<<49-1), 49) &^ 3
		if bas == 0xc {
			addr += 2
		}
		if addr == pc {
			return true
		}
	}
	return false
}

// watchRange returns the bytes a watchpoint covers, computed as QEMU does:
// MASK selects an aligned power-of-two region, else BAS selects bytes of
// the doubleword (or word, for a word-aligned DBGWVR) from its first set
// bit through the run of ones that follows.
func watchRange(wvr, wcr uint64) (start, n uint64, ok bool) {
	wvr = sext(wvr&(1<<49-1), 49) &^ 3
	if mask := wcr >> 24 & 31; mask != 0 {
		if mask <= 2 {
			return 0, 0, false
		}
		n = 1 << mask
		return wvr &^ (n - 1), n, true
	}
	bas := wcr >> 5 & 0xff
	if wvr&4 != 0 {
		bas &= 0xf
	}
	if bas == 0 {
		return 0, 0, false
	}
	first := uint64(0)
	for bas>>first&1 == 0 {
		first++
	}
	for bas>>(first+n)&1 != 0 {
		n++
	}
	return wvr + first, n, true
}

// watchpointHit checks a data access against the guest's watchpoints and
// takes the watchpoint exception (before the access happens) if one
// matches. FAR_EL1 gets the larger of the access address and the watched
// address, as QEMU reports it.
//
// An unaligned access is checked as the two naturally aligned accesses of
// its size that cover it, in address order, as QEMU performs it; the
// architecture allows a watchpoint on bytes of the aligned block that
// the access did not touch.
func (c *CPU) watchpointHit(va, size uint64, write bool) bool {
	if !c.debugEnabled() {
		return false
	}
	if va&(size-1) != 0 {
		lo := va &^ (size - 1)
		return c.watchpointHit1(lo, size, write) || c.watchpointHit1(lo+size, size, write)
	}
	return c.watchpointHit1(va, size, write)
}

func (c *CPU) watchpointHit1(va, size uint64, write bool) bool {
	for i := SysReg(0); i < numWRPs; i++ {
		ctl := c.sys[DBGWCR0_EL1+i]
		if ctl&1 == 0 || !c.elMatches(ctl) {
			continue
		}
		lsc := ctl >> 3 & 3
		if write && lsc&2 == 0 || !write && lsc&1 == 0 {
			continue
		}
		start, n, ok := watchRange(c.sys[DBGWVR0_EL1+i], ctl)
		if !ok || va+size <= start || start+n <= va {
			continue
		}
		iss := uint32(fscDebug)
		if write {
			iss |= issWnR
		}
		c.sys[FAR_EL1] = max(va, start)
		c.takeException(c.lowerOrSame(ecWatchpointLow), iss, c.pc-4)
		return true
	}
	return false
}

// runDebug is run's per-instruction path while debug features are
// active. Around each instruction it does what the architecture checks
// between instructions: host breakpoints, a pending software step, and
// hardware breakpoints, in that order; after it, the software-step state
// machine advances. Interrupts are polled before each instruction.
func (c *CPU) runDebug(budget uint64) uint64 {
	m := c.m
	var n uint64
	for n < budget && c.on && !c.wfi && !m.off.Load() && c.err == nil {
		if h := c.host; h != nil && h.stop {
			break
		}
		if !c.dbgActive {
			// The guest turned its debug features off: back to full speed.
			return n + c.runFast(budget-n)
		}
		c.pollIRQ()
		pc := c.pc
		skip := c.dbg.resumeSkip && pc == c.dbg.resumePC
		c.dbg.resumeSkip = false
		if h := c.host; h != nil && h.running && !skip && h.bps[pc] {
			h.record(StopEvent{CPU: c.index, Reason: StopBreakpoint, Addr: pc})
			break
		}
		enabled := c.debugEnabled()
		stepActive := enabled && c.sys[MDSCR_EL1]&mdscrSS != 0
		if stepActive && !c.ss {
			// Active-pending: the step exception comes before anything
			// else this instruction would do.
			iss := uint32(fscDebug)
			if c.dbg.stepISV {
				iss |= issDebugISV
				if c.dbg.stepEX {
					iss |= issDebugEX
				}
			}
			c.dbg.stepISV, c.dbg.stepEX = false, false
			c.takeException(c.lowerOrSame(ecSoftStepLow), iss, pc)
			c.retired++
			n++
			continue
		}
		if enabled && c.dbg.guestBP && c.breakpointHit(pc) {
			c.sys[FAR_EL1] = 0 // UNKNOWN for breakpoints; QEMU writes 0
			c.takeException(c.lowerOrSame(ecBreakpointLow), fscDebug, pc)
			c.retired++
			n++
			continue
		}
		var op opcode
		if stepActive {
			op = c.peekOp(pc)
		}
		exc := m.exceptions.Load()
		c.dbg.stepping = stepActive
		n += c.runFast(1)
		c.dbg.stepping = false
		switch {
		case !stepActive:
		case m.exceptions.Load() != exc || op == opERET:
			// An exception entry or return set PSTATE.SS itself; a step
			// exception that follows it has no valid syndrome.
			c.dbg.stepISV, c.dbg.stepEX = false, false
		default:
			// The stepped instruction completed: the state is
			// active-pending and the step exception is taken at once,
			// before any interrupt and whatever the instruction did to
			// MDSCR_EL1 or PSTATE.D (it needs a context synchronization
			// to take effect). This is QEMU's prioritization, an
			// implementation choice the architecture allows, and it keeps
			// the syndrome (ISV, EX) exact.
			c.ss = false
			iss := uint32(fscDebug | issDebugISV)
			if op == opLDXR || op == opLDXP {
				iss |= issDebugEX
			}
			c.dbg.stepISV, c.dbg.stepEX = false, false
			c.takeException(c.lowerOrSame(ecSoftStepLow), iss, c.pc)
		}
	}
	return n
}

// peekOp decodes the instruction at pc without touching the decode cache
// or the TLB, for the step syndrome's EX bit and the ERET rule.
func (c *CPU) peekOp(pc uint64) opcode {
	pa, err := c.TranslateVA(pc, AccessExec)
	if err != nil {
		return opNone
	}
	off, err := c.m.ramRange(pa, 4)
	if err != nil {
		return opNone
	}
	// ramLoad: in parallel mode another vCPU may be patching this word.
	w := uint32(c.m.ramLoad(off, 2))
	var in inst
	decode(&in, w)
	return in.op
}
