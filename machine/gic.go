package machine

import (
	"math/bits"
	"sync"
)

// The GICv2 as on QEMU's virt board (Arm IHI 0048B): a distributor and a
// CPU interface per CPU, without the Security Extensions, so both groups
// are visible and group 0 is signalled as FIQ only when GICC_CTLR.FIQEn.
const (
	GICDBase = 0x08000000 // distributor, 64 KiB
	GICCBase = 0x08010000 // CPU interface, 64 KiB

	gicRegionSize = 0x10000
	gicNumIRQs    = 288 // 16 SGIs + 16 PPIs + 256 SPIs, as QEMU virt
	gicInternal   = 32  // SGIs and PPIs: banked per CPU
	gicNumSGIs    = 16
	gicSpurious   = 1023
	gicGroup1Ack  = 1022 // IAR with a group 1 interrupt highest and AckCtl clear
	gicIdlePrio   = 0x100
	gicMaxCPUs    = 8
)

// Distributor register offsets.
const (
	gicdCTLR       = 0x000
	gicdTYPER      = 0x004
	gicdIIDR       = 0x008
	gicdIGROUPR    = 0x080
	gicdISENABLER  = 0x100
	gicdICENABLER  = 0x180
	gicdISPENDR    = 0x200
	gicdICPENDR    = 0x280
	gicdISACTIVER  = 0x300
	gicdICACTIVER  = 0x380
	gicdIPRIORITYR = 0x400
	gicdITARGETSR  = 0x800
	gicdICFGR      = 0xc00
	gicdSGIR       = 0xf00
	gicdCPENDSGIR  = 0xf10
	gicdSPENDSGIR  = 0xf20
	gicdIDs        = 0xfd0 // PIDR4..7, PIDR0..3, CIDR0..3
)

// CPU interface register offsets.
const (
	giccCTLR   = 0x00
	giccPMR    = 0x04
	giccBPR    = 0x08
	giccIAR    = 0x0c
	giccEOIR   = 0x10
	giccRPR    = 0x14
	giccHPPIR  = 0x18
	giccABPR   = 0x1c
	giccAIAR   = 0x20
	giccAEOIR  = 0x24
	giccAHPPIR = 0x28
	giccAPR0   = 0xd0
	giccNSAPR0 = 0xe0
	giccIIDR   = 0xfc
	giccDIR    = 0x1000
)

// GICC_CTLR bits (no Security Extensions).
const (
	giccEnableGrp0 = 1 << 0
	giccEnableGrp1 = 1 << 1
	giccAckCtl     = 1 << 2
	giccFIQEn      = 1 << 3
	giccEOImode    = 1 << 9
	giccCTLRMask   = 0x21f // EnableGrp0/1, AckCtl, FIQEn, CBPR, EOImodeS
)

// gicIDs are the distributor's identification bytes from 0xfd0, those of
// QEMU's GICv2 model, one byte per word.
var gicIDs = [12]uint8{0x04, 0x00, 0x00, 0x00, 0x90, 0xb4, 0x2b, 0x00, 0x0d, 0xf0, 0x05, 0xb1}

const (
	gicdIIDRValue = 0x0200043b // product 2, Arm implementer code
	giccIIDRValue = 0x0002043b // architecture version 2, Arm implementer code
)

// irqState is the distributor's state for one interrupt; SGIs and PPIs have
// one per CPU.
type irqState struct {
	enabled bool
	latched bool // pending from an edge or a write to ISPENDR
	level   bool // the input line (level-sensitive sources)
	active  bool
	group1  bool
	edge    bool  // ICFGR: edge-triggered
	model   bool  // ICFGR bit 0, stored only
	prio    uint8 // IPRIORITYR
	targets uint8 // ITARGETSR, SPIs only
}

// pending applies the GICv2 rule: a level-sensitive interrupt is pending
// while its input is asserted, or after a software set.
func (s *irqState) pending() bool { return s.latched || (!s.edge && s.level) }

// gicCPU is one CPU interface with the banked distributor state.
type gicCPU struct {
	local  [gicInternal]irqState
	sgiSrc [gicNumSGIs]uint8 // pending SGIs: a bit per source CPU

	ctlr, pmr, bpr, abpr uint32
	// prios holds the priorities of the interrupts acknowledged and not
	// yet dropped, innermost last: the running priority is the last one.
	prios []uint16
	lines uint32 // last published lineIRQ/lineFIQ, to skip no-op updates
	// localMaybe is spiMaybe for the SGIs and PPIs: best scanned all 32
	// at every call, 3% of the kernel workload's host instructions.
	localMaybe uint32
}

// gic is the interrupt controller. Its lock is a leaf: nothing is called
// with it held except CPU.setInterruptLines and Machine.wake, which take no
// lock of the GIC.
type gic struct {
	m   *Machine
	mu  sync.Mutex
	ncp int

	ctlr uint32
	spi  [gicNumIRQs - gicInternal]irqState
	// spiMaybe has a bit for each SPI that may be pending: set wherever
	// one may become pending, cleared by best when it finds one is not.
	// So best, at every access to the CPU interface, looks at the few
	// SPIs in use instead of all 256: it was 4% of the kernel's run.
	spiMaybe [(gicNumIRQs - gicInternal) / 64]uint64
	cpu      []gicCPU
}

func newGIC(m *Machine, ncpu int) *gic {
	g := &gic{m: m, ncp: ncpu, cpu: make([]gicCPU, ncpu)}
	g.reset()
	return g
}

// reset puts the GIC in its reset state and drops every output line.
func (g *gic) reset() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ctlr = 0
	for i := range g.spi {
		g.spi[i] = irqState{}
	}
	g.spiMaybe = [len(g.spiMaybe)]uint64{}
	for i := range g.cpu {
		c := &g.cpu[i]
		levels := [gicInternal]bool{}
		for j := range c.local {
			levels[j] = c.local[j].level // input wires keep their level
		}
		// Every input keeps its level, so any local interrupt may be pending.
		*c = gicCPU{bpr: 0, abpr: 1, prios: c.prios[:0], localMaybe: ^uint32(0)}
		for j := range c.local {
			c.local[j].level = levels[j]
		}
		for j := 0; j < gicNumSGIs; j++ {
			// SGIs are permanently enabled and edge-triggered, as QEMU's GICv2.
			c.local[j].enabled = true
			c.local[j].edge = true
		}
	}
	g.update()
}

// state returns the state of irq as seen by CPU cpu.
func (g *gic) state(cpu, irq int) *irqState {
	if irq < gicInternal {
		return &g.cpu[cpu].local[irq]
	}
	return &g.spi[irq-gicInternal]
}

// maybePending notes that irq, as seen by CPU cpu, may have become
// pending, so that best looks at it again.
func (g *gic) maybePending(cpu, irq int) {
	if i := irq - gicInternal; i >= 0 {
		g.spiMaybe[i/64] |= 1 << (i % 64)
	} else {
		g.cpu[cpu].localMaybe |= 1 << irq
	}
}

func (g *gic) pending(cpu, irq int) bool {
	if irq < gicNumSGIs {
		return g.cpu[cpu].sgiSrc[irq] != 0
	}
	return g.state(cpu, irq).pending()
}

// spiTargets returns the CPU mask an SPI is delivered to. A uniprocessor
// GICv2 has RAZ/WI ITARGETSR and sends every SPI to CPU 0.
func (g *gic) spiTargets(s *irqState) uint8 {
	if g.ncp == 1 {
		return 1
	}
	return s.targets
}

// best returns the highest-priority interrupt that is pending, enabled,
// not active, forwarded by the distributor and targeted at cpu (lowest ID on
// ties), or -1.
func (g *gic) best(cpu int) (irq int, prio uint8) {
	irq, prio = -1, 0xff
	consider := func(id int, s *irqState, pend bool) {
		if !pend || !s.enabled || s.active {
			return
		}
		if s.group1 && g.ctlr&2 == 0 || !s.group1 && g.ctlr&1 == 0 {
			return
		}
		if irq < 0 || s.prio < prio {
			irq, prio = id, s.prio
		}
	}
	c := &g.cpu[cpu]
	for left := c.localMaybe; left != 0; left &= left - 1 {
		id := bits.TrailingZeros32(left)
		if !g.pending(cpu, id) {
			c.localMaybe &^= 1 << id
			continue
		}
		consider(id, &c.local[id], true)
	}
	bit := uint8(1) << cpu
	for w := range g.spiMaybe {
		for left := g.spiMaybe[w]; left != 0; left &= left - 1 {
			i := w*64 + bits.TrailingZeros64(left)
			s := &g.spi[i]
			if !s.pending() {
				g.spiMaybe[w] &^= 1 << (i % 64)
				continue
			}
			if g.spiTargets(s)&bit != 0 {
				consider(gicInternal+i, s, true)
			}
		}
	}
	return irq, prio
}

// running returns the CPU interface's running priority (0x100 when idle).
func (c *gicCPU) running() uint16 {
	if len(c.prios) == 0 {
		return gicIdlePrio
	}
	return c.prios[len(c.prios)-1]
}

// groupPrio masks a priority to its group priority field for preemption,
// per the binary point of the interrupt's group.
func (c *gicCPU) groupPrio(p uint8, group1 bool) uint16 {
	bpr := c.bpr
	if group1 && c.ctlr&(1<<4) == 0 { // CBPR clear: group 1 uses ABPR
		bpr = c.abpr - 1
		if c.abpr == 0 {
			bpr = 0
		}
	}
	return uint16(p) &^ (2<<bpr - 1)
}

// signalled reports which line (0, lineIRQ or lineFIQ) the highest-priority
// pending interrupt of cpu asserts.
func (g *gic) signalled(cpu int) (irq int, line uint32) {
	irq, prio := g.best(cpu)
	if irq < 0 {
		return -1, 0
	}
	c := &g.cpu[cpu]
	s := g.state(cpu, irq)
	if s.group1 && c.ctlr&giccEnableGrp1 == 0 || !s.group1 && c.ctlr&giccEnableGrp0 == 0 {
		return -1, 0
	}
	if uint32(prio) >= c.pmr || c.groupPrio(prio, s.group1) >= c.running() {
		return -1, 0
	}
	if !s.group1 && c.ctlr&giccFIQEn != 0 {
		return irq, lineFIQ
	}
	return irq, lineIRQ
}

// update recomputes and publishes every CPU's interrupt lines. g.mu held.
func (g *gic) update() {
	for i := range g.cpu {
		_, line := g.signalled(i)
		if line == g.cpu[i].lines {
			continue
		}
		g.cpu[i].lines = line
		if i < len(g.m.cpus) {
			c := g.m.cpus[i]
			c.setInterruptLines(line&lineIRQ != 0, line&lineFIQ != 0)
			if line != 0 {
				g.m.wake(i)
			}
		}
	}
}

// quiesce runs fn with no interrupt line being published, for resetting a
// CPU (which rewrites its line word non-atomically). Lock order: the
// caller may hold the power lock; fn must not call into the GIC.
func (g *gic) quiesce(fn func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	fn()
}

// resync publishes CPU cpu's lines again, after a CPU reset cleared them.
func (g *gic) resync(cpu int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	line := g.cpu[cpu].lines
	g.m.cpus[cpu].setInterruptLines(line&lineIRQ != 0, line&lineFIQ != 0)
}

// setPPI drives the input of private peripheral interrupt irq (16..31) of
// CPU cpu, e.g. from the generic timer.
func (g *gic) setPPI(cpu, irq int, level bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.maybePending(cpu, irq)
	g.setInput(g.state(cpu, irq), level)
}

// setSPI drives the input of shared peripheral interrupt irq (32..).
func (g *gic) setSPI(irq int, level bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.maybePending(0, irq)
	g.setInput(g.state(0, irq), level)
}

func (g *gic) setInput(s *irqState, level bool) {
	if s.level == level {
		return
	}
	s.level = level
	if level && s.edge {
		s.latched = true
	}
	g.update()
}

// distRead handles a read of the distributor by CPU cpu.
func (g *gic) distRead(cpu int, off uint64, size int) uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	if size == 8 {
		return g.distRead32(cpu, off) | g.distRead32(cpu, off+4)<<32
	}
	if off&3 == 0 && size == 4 {
		return g.distRead32(cpu, off)
	}
	var v uint64
	for i := 0; i < size; i++ {
		v |= uint64(g.distReadByte(cpu, off+uint64(i))) << (8 * i)
	}
	return v
}

func (g *gic) distRead32(cpu int, off uint64) uint64 {
	switch off {
	case gicdCTLR:
		return uint64(g.ctlr)
	case gicdTYPER:
		return uint64(gicNumIRQs/32-1) | uint64(g.ncp-1)<<5
	case gicdIIDR:
		return gicdIIDRValue
	}
	var v uint64
	for i := 0; i < 4; i++ {
		v |= uint64(g.distReadByte(cpu, off+uint64(i))) << (8 * i)
	}
	return v
}

// bits8 gathers one bit per interrupt for the 8 interrupts from first.
func (g *gic) bits8(first int, f func(int) bool) uint8 {
	var b uint8
	for i := 0; i < 8; i++ {
		if first+i < gicNumIRQs && f(first+i) {
			b |= 1 << i
		}
	}
	return b
}

func (g *gic) distReadByte(cpu int, off uint64) uint8 {
	bitReg := func(base uint64) int { return int(off-base) * 8 }
	switch {
	case off < 0x10:
		return uint8(g.distRead32(cpu, off&^3) >> (8 * (off & 3)))
	case off >= gicdIGROUPR && off < gicdIGROUPR+0x80:
		return g.bits8(bitReg(gicdIGROUPR), func(i int) bool { return g.state(cpu, i).group1 })
	case off >= gicdISENABLER && off < gicdICENABLER+0x80:
		return g.bits8(bitReg(gicdISENABLER+(off-gicdISENABLER)&0x80), func(i int) bool { return g.state(cpu, i).enabled })
	case off >= gicdISPENDR && off < gicdICPENDR+0x80:
		return g.bits8(bitReg(gicdISPENDR+(off-gicdISPENDR)&0x80), func(i int) bool { return g.pending(cpu, i) })
	case off >= gicdISACTIVER && off < gicdICACTIVER+0x80:
		return g.bits8(bitReg(gicdISACTIVER+(off-gicdISACTIVER)&0x80), func(i int) bool { return g.state(cpu, i).active })
	case off >= gicdIPRIORITYR && off < gicdIPRIORITYR+gicNumIRQs:
		return g.state(cpu, int(off-gicdIPRIORITYR)).prio
	case off >= gicdITARGETSR && off < gicdITARGETSR+gicNumIRQs:
		irq := int(off - gicdITARGETSR)
		switch {
		case g.ncp == 1:
			return 0 // RAZ/WI on a uniprocessor GIC
		case irq < gicInternal:
			return 1 << cpu
		}
		return g.state(cpu, irq).targets
	case off >= gicdICFGR && off < gicdICFGR+gicNumIRQs/4:
		var b uint8
		first := int(off-gicdICFGR) * 4
		for i := 0; i < 4; i++ {
			s := g.state(cpu, first+i)
			if s.model {
				b |= 1 << (2 * i)
			}
			if s.edge {
				b |= 2 << (2 * i)
			}
		}
		return b
	case off >= gicdCPENDSGIR && off < gicdSPENDSGIR+0x10:
		return g.cpu[cpu].sgiSrc[(off-gicdCPENDSGIR)&0xf]
	case off >= gicdIDs && off < gicdIDs+0x30:
		if off&3 != 0 {
			return 0
		}
		return gicIDs[(off-gicdIDs)/4]
	}
	return 0
}

// distWrite handles a write to the distributor by CPU cpu.
func (g *gic) distWrite(cpu int, off uint64, size int, v uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case off == gicdSGIR && size >= 4:
		g.sendSGI(cpu, uint32(v))
	case off == gicdCTLR:
		g.ctlr = uint32(v) & 3
	default:
		for i := 0; i < size; i++ {
			g.distWriteByte(cpu, off+uint64(i), uint8(v>>(8*i)))
		}
	}
	g.update()
}

// eachBit calls f for every set bit of b, with the interrupt number.
func eachBit(b uint8, first int, f func(int)) {
	for i := 0; i < 8; i++ {
		if b&(1<<i) != 0 && first+i < gicNumIRQs {
			f(first + i)
		}
	}
}

func (g *gic) distWriteByte(cpu int, off uint64, b uint8) {
	first := func(base uint64) int { return int(off-base) * 8 }
	switch {
	case off >= gicdIGROUPR && off < gicdIGROUPR+0x80:
		for i := 0; i < 8; i++ {
			if irq := first(gicdIGROUPR) + i; irq < gicNumIRQs {
				g.state(cpu, irq).group1 = b&(1<<i) != 0
			}
		}
	case off >= gicdISENABLER && off < gicdICENABLER:
		eachBit(b, first(gicdISENABLER), func(i int) { g.state(cpu, i).enabled = true })
	case off >= gicdICENABLER && off < gicdICENABLER+0x80:
		eachBit(b, first(gicdICENABLER), func(i int) {
			if i >= gicNumSGIs { // SGIs stay enabled
				g.state(cpu, i).enabled = false
			}
		})
	case off >= gicdISPENDR && off < gicdICPENDR:
		// SGI pending state is set through SPENDSGIR only.
		eachBit(b, first(gicdISPENDR), func(i int) {
			if i >= gicNumSGIs {
				g.state(cpu, i).latched = true
				g.maybePending(cpu, i)
			}
		})
	case off >= gicdICPENDR && off < gicdICPENDR+0x80:
		eachBit(b, first(gicdICPENDR), func(i int) {
			if i >= gicNumSGIs {
				g.state(cpu, i).latched = false
			}
		})
	case off >= gicdISACTIVER && off < gicdICACTIVER:
		eachBit(b, first(gicdISACTIVER), func(i int) { g.state(cpu, i).active = true })
	case off >= gicdICACTIVER && off < gicdICACTIVER+0x80:
		eachBit(b, first(gicdICACTIVER), func(i int) { g.state(cpu, i).active = false })
	case off >= gicdIPRIORITYR && off < gicdIPRIORITYR+gicNumIRQs:
		g.state(cpu, int(off-gicdIPRIORITYR)).prio = b
	case off >= gicdITARGETSR+gicInternal && off < gicdITARGETSR+gicNumIRQs:
		if g.ncp > 1 {
			g.state(cpu, int(off-gicdITARGETSR)).targets = b & uint8(1<<g.ncp-1)
		}
	case off >= gicdICFGR && off < gicdICFGR+gicNumIRQs/4:
		firstIRQ := int(off-gicdICFGR) * 4
		for i := 0; i < 4; i++ {
			irq := firstIRQ + i
			if irq < gicNumSGIs {
				continue // SGIs are always edge-triggered
			}
			s := g.state(cpu, irq)
			s.model = b&(1<<(2*i)) != 0
			s.edge = b&(2<<(2*i)) != 0
			g.maybePending(cpu, irq) // level-sensitive now, with its input high
		}
	case off >= gicdCPENDSGIR && off < gicdCPENDSGIR+0x10:
		g.cpu[cpu].sgiSrc[off-gicdCPENDSGIR] &^= b
	case off >= gicdSPENDSGIR && off < gicdSPENDSGIR+0x10:
		g.cpu[cpu].sgiSrc[off-gicdSPENDSGIR] |= b & uint8(1<<g.ncp-1)
		g.maybePending(cpu, int(off-gicdSPENDSGIR))
	}
}

// sendSGI performs a write of v to GICD_SGIR by CPU src.
func (g *gic) sendSGI(src int, v uint32) {
	id := v & 0xf
	var targets uint8
	switch v >> 24 & 3 {
	case 0:
		targets = uint8(v >> 16)
	case 1:
		targets = uint8(1<<g.ncp-1) &^ (1 << src)
	case 2:
		targets = 1 << src
	default:
		return // reserved filter value: ignored
	}
	for t := 0; t < g.ncp; t++ {
		if targets&(1<<t) != 0 {
			g.cpu[t].sgiSrc[id] |= 1 << src
			g.maybePending(t, int(id))
		}
	}
}

// cpuRead handles a read of CPU cpu's interface.
func (g *gic) cpuRead(cpu int, off uint64, size int) uint64 {
	if size != 4 || off&3 != 0 {
		return 0 // the CPU interface is word-accessed only
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	c := &g.cpu[cpu]
	switch off {
	case giccCTLR:
		return uint64(c.ctlr)
	case giccPMR:
		return uint64(c.pmr)
	case giccBPR:
		return uint64(c.bpr)
	case giccABPR:
		return uint64(c.abpr)
	case giccIAR:
		v := g.acknowledge(cpu, false)
		g.update()
		return uint64(v)
	case giccAIAR:
		v := g.acknowledge(cpu, true)
		g.update()
		return uint64(v)
	case giccRPR:
		return uint64(min(c.running(), 0xff)) // idle reads 0xff
	case giccHPPIR, giccAHPPIR:
		// Like QEMU, an interrupt the priority mask hides is not reported.
		irq, prio := g.best(cpu)
		if irq < 0 || uint32(prio) >= c.pmr {
			return gicSpurious
		}
		group1 := g.state(cpu, irq).group1
		if off == giccHPPIR && group1 && c.ctlr&giccAckCtl == 0 {
			return gicGroup1Ack
		}
		if off == giccAHPPIR && !group1 {
			return gicSpurious
		}
		return uint64(irq) | uint64(g.sgiSource(cpu, irq))<<10
	case giccIIDR:
		return giccIIDRValue
	}
	return 0 // APRs and anything else read as zero
}

// sgiSource returns the lowest pending source CPU of SGI irq, or 0.
func (g *gic) sgiSource(cpu, irq int) int {
	if irq >= gicNumSGIs {
		return 0
	}
	src := g.cpu[cpu].sgiSrc[irq]
	for i := 0; i < 8; i++ {
		if src&(1<<i) != 0 {
			return i
		}
	}
	return 0
}

// acknowledge implements a read of GICC_IAR (alias: GICC_AIAR, group 1
// only): the highest-priority signalled interrupt becomes active and the
// running priority rises to its priority.
func (g *gic) acknowledge(cpu int, alias bool) uint32 {
	c := &g.cpu[cpu]
	irq, line := g.signalled(cpu)
	if irq < 0 || line == 0 {
		return gicSpurious
	}
	s := g.state(cpu, irq)
	if alias && !s.group1 {
		return gicSpurious
	}
	if !alias && s.group1 && c.ctlr&giccAckCtl == 0 {
		return gicGroup1Ack
	}
	v := uint32(irq)
	if irq < gicNumSGIs {
		src := g.sgiSource(cpu, irq)
		c.sgiSrc[irq] &^= 1 << src
		v |= uint32(src) << 10
	} else {
		s.latched = false
	}
	s.active = true
	// The running priority is the group priority of the acknowledged
	// interrupt, which is what later preemption compares against.
	c.prios = append(c.prios, c.groupPrio(s.prio, s.group1))
	return v
}

// cpuWrite handles a write to CPU cpu's interface.
func (g *gic) cpuWrite(cpu int, off uint64, size int, v uint64) {
	if size != 4 || off&3 != 0 {
		return
	}
	if off == giccEOIR || off == giccAEOIR || off == giccDIR {
		// The handler has just reprogrammed or stopped the timer; its
		// output must drop before the EOI, or the still-high level would
		// be taken again. Writes to the timer registers do not reach us,
		// so look at them here (before taking g.mu: this drives PPIs).
		g.m.refreshTimer(cpu)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	c := &g.cpu[cpu]
	switch off {
	case giccCTLR:
		c.ctlr = uint32(v) & giccCTLRMask
	case giccPMR:
		c.pmr = uint32(v) & 0xff
	case giccBPR:
		c.bpr = uint32(v) & 7
	case giccABPR:
		c.abpr = max(uint32(v)&7, 1)
	case giccEOIR, giccAEOIR:
		g.endOfInterrupt(cpu, int(v&0x3ff))
	case giccDIR:
		if irq := int(v & 0x3ff); irq < gicNumIRQs && c.ctlr&giccEOImode != 0 {
			g.state(cpu, irq).active = false
		}
	default:
		return
	}
	g.update()
}

// endOfInterrupt implements GICC_EOIR: the running priority drops and, with
// EOImode clear, the interrupt is deactivated. Writes that name no
// interrupt, or arrive with nothing active, are ignored (as QEMU).
func (g *gic) endOfInterrupt(cpu, irq int) {
	c := &g.cpu[cpu]
	if irq >= gicNumIRQs || len(c.prios) == 0 {
		return
	}
	c.prios = c.prios[:len(c.prios)-1]
	if c.ctlr&giccEOImode == 0 {
		g.state(cpu, irq).active = false
	}
}
