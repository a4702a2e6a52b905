package machine

// Interrupt delivery: the contract between what raises interrupts (the
// GIC, and the generic timers and devices behind it) and the CPU.
//
// A device never touches a CPU's architectural state. The interrupt
// controller computes, for each CPU, the level of its IRQ and FIQ inputs
// and publishes it with setInterruptLines (safe from any goroutine). The
// execution loop polls the published level at instruction boundaries where
// it is cheap and exact enough (taken branches, page crossings, after any
// write to DAIF, after ERET, and whenever it leaves its fast path) and
// calls takeInterrupt, which takes the exception if PSTATE does not mask
// it. A CPU in WFI is runnable again as soon as either line is high,
// masked or not (the architecture's WFI wake-up rule).

// Interrupt input lines, bits of CPU.lines.
const (
	lineIRQ = 1 << 0
	lineFIQ = 1 << 1
)

// Offsets of the asynchronous vectors from the vector group's base.
const (
	vectorIRQ = 0x080
	vectorFIQ = 0x100
)

// setInterruptLines publishes the level of the CPU's IRQ and FIQ inputs.
func (c *CPU) setInterruptLines(irq, fiq bool) {
	var v uint32
	if irq {
		v |= lineIRQ
	}
	if fiq {
		v |= lineFIQ
	}
	c.lines.Store(v)
}

// interruptLines reports the published level of the CPU's inputs.
func (c *CPU) interruptLines() uint32 { return c.lines.Load() }

// takeInterrupt takes an IRQ or FIQ exception to EL1 if one is asserted
// and not masked by PSTATE.F/I (FIQ first), and reports whether it did.
// The preferred return address is the next instruction not yet executed,
// c.pc; ESR_EL1 is not written for interrupts.
func (c *CPU) takeInterrupt() bool {
	lines := c.lines.Load()
	if lines == 0 {
		return false
	}
	// PSTATE.DAIF as the 4-bit value D A I F: I is bit 1, F is bit 0.
	var vec uint64
	switch {
	case lines&lineFIQ != 0 && c.daif&0x1 == 0:
		vec = vectorFIQ
	case lines&lineIRQ != 0 && c.daif&0x2 == 0:
		vec = vectorIRQ
	default:
		return false
	}
	spsr := c.PSTATE()
	var off uint64
	switch {
	case c.el == 0:
		off = 0x400 // lower EL using AArch64
	case c.spsel == 1:
		off = 0x200 // current EL with SP_ELx
	}
	c.sys[ELR_EL1] = c.pc
	c.sys[SPSR_EL1] = spsr
	c.setMode(1, 1)
	c.daif = 0xf
	c.ss, c.il = false, false
	c.clearExclusive()
	c.pc = c.sys[VBAR_EL1] + off + vec
	c.m.exceptions.Add(1)
	return true
}
