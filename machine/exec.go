package machine

import "math/bits"

// fetch makes c.page the decode cache of the page holding pc. It reports
// false when the fetch faults instead (the exception has been taken).
//
// The decode cache belongs to the physical page; c.pageVA/c.pagePA cache
// this CPU's VA→PA mapping of the page being executed. Anything that can
// change that mapping or its permissions (TLBI, writes to TTBRx, TCR,
// SCTLR, MAIR, a change of EL) sets pageVA to noPage, so the next
// instruction comes through here and is translated afresh: remapped or
// unmapped code never runs from a stale mapping.
func (c *CPU) fetch(pc uint64) bool {
	if c.il {
		c.takeException(ecIllegalState, 0, pc)
		return false
	}
	if pc&3 != 0 {
		c.sys[FAR_EL1] = pc
		c.takeException(ecPCAlign, 0, pc)
		return false
	}
	m := c.m
	pa := pc
	if c.sys[SCTLR_EL1]&sctlrM != 0 {
		var fsc uint32
		var ok bool
		if pa, _, fsc, ok = c.translate(pc, AccessExec, c.el); !ok {
			c.sys[FAR_EL1] = pc
			c.takeException(c.lowerOrSame(ecInsnAbortLow), fsc, pc)
			return false
		}
	}
	off := pa - RAMBase
	if off >= uint64(len(m.ram)) {
		// Executing from a device or from nowhere: synchronous external
		// abort on the instruction fetch.
		c.sys[FAR_EL1] = pc
		c.takeException(c.lowerOrSame(ecInsnAbortLow), fscExternal, pc)
		return false
	}
	var p *codePage
	if c.par {
		p = m.fetchPagePar(off / PageSize)
	} else if p = m.code[off/PageSize].Load(); p == nil {
		// Allocation happens once per page of code, not per instruction.
		p = new(codePage)
		m.code[off/PageSize].Store(p)
		m.decodedPages.Add(1)
	}
	c.page = p
	c.pageVA = pc &^ (PageSize - 1)
	c.pagePA = pa &^ (PageSize - 1)
	c.blockKey = c.blockKeyFor(c.pageVA)
	return true
}

// decodeSlot decodes slot i of the current code page, on its first
// execution (or its first translation).
func (c *CPU) decodeSlot(i uint64) {
	m := c.m
	off := c.pagePA - RAMBase + i*4
	decode(&c.page.insts[i], uint32(m.ram[off])|uint32(m.ram[off+1])<<8|uint32(m.ram[off+2])<<16|uint32(m.ram[off+3])<<24)
	c.page.live++
}

// pollIRQ takes a pending, unmasked interrupt. It is called only where the
// loop polls (see irq.go), so its cost is one atomic load there.
// It is small enough to be inlined at every poll point.
func (c *CPU) pollIRQ() {
	if c.lines.Load() != 0 {
		c.pollSlow()
	}
}

func (c *CPU) pollSlow() {
	if c.takeInterrupt() {
		c.pageVA = noPage // the EL may have changed
	}
}

// pollTLB performs a flush other CPUs requested (tlbFlushReq). It is
// polled where the loop leaves its fast path: at slice entry and on page
// crossings, so a broadcast TLBI in parallel mode reaches every CPU
// within one quantum.
func (c *CPU) pollTLB() {
	if c.tlbFlushReq.Load() {
		c.tlbFlushReq.Store(false)
		c.flushTLB()
	}
}

// run executes up to budget instructions on c and returns how many it
// executed. It stops early when the CPU enters WFI, the machine powers off,
// a hostcall fails (c.err set) or a host debug event stops the machine.
// The caller holds m.mu.
func (c *CPU) run(budget uint64) uint64 {
	if c.dbgActive {
		return c.runDebug(budget)
	}
	return c.runFast(budget)
}

// runFast is the interpreter loop proper. Where blocks are translated
// (jit.go) it enters translated code at each block it can, and
// interprets the instructions that code leaves to it.
func (c *CPU) runFast(budget uint64) uint64 {
	m := c.m
	var n uint64
	translating := m.jit.enabled()
	// Entering the loop is leaving the fast path of whatever ran before.
	c.pollTLB()
	c.pollIRQ()
loop:
	for n < budget {
		pc := c.pc
		// One compare covers "same page" and "aligned": pageVA has the low
		// bits clear, so a misaligned pc never matches.
		if (pc^c.pageVA)&^(PageSize-4) != 0 {
			c.pollTLB()
			c.pollIRQ()
			pc = c.pc
			if !c.fetch(pc) {
				n++
				continue
			}
		}
		if translating {
			// blockAt's hit path, inlined.
			idx := pc >> 2 & (PageSize/4 - 1)
			var b *block
			if bs := c.page.blocks; bs != nil {
				b = bs[idx]
			}
			if b == nil || b.key != c.blockKey || b.cold != 0 {
				b = c.blockAt(idx)
			}
			if b.n != 0 && n+b.n <= budget {
				rest, flags, slot := jitEnter(b.code, c, budget-n)
				n = budget - rest
				pc = c.pc
				if flags&jitBail == 0 {
					if flags&jitTaken != 0 {
						c.pollIRQ()
					}
					if slot != 0 && c.pageVA == pc&^(PageSize-1) {
						// The block left for a block of its page that it
						// is not chained to yet: chain them.
						// (Unless translating emptied the cache, slot's
						// code with it.)
						flushes := m.jit.flushes
						if nb := c.blockAt(pc >> 2 & (PageSize/4 - 1)); nb.n != 0 && m.jit.flushes == flushes {
							m.jit.link(slot, nb.chain)
						}
					}
					continue
				}
				// The code stopped before an instruction that needs the
				// interpreter, on the same page: run it here.
			}
		}
		in := &c.page.insts[pc>>2&(PageSize/4-1)]
		if in.op == opNone {
			c.decodeSlot(pc >> 2 & (PageSize/4 - 1))
		}
		n++
		c.pc = pc + 4

		if in.pre != 0 && c.precheck(in, pc) {
			continue
		}
		if c.execute(in, pc, n) {
			break loop
		}
	}
	c.retired += n
	return n
}

// el0Denied applies the EL0 access class of a system instruction (inst.cc)
// executed at EL0 and reports whether it took an exception instead.
func (c *CPU) el0Denied(in *inst, pc uint64) bool {
	switch in.cc {
	case el0OK:
		return false
	case el0Trap:
		if c.sys[SCTLR_EL1]>>in.amt&1 != 0 {
			return false
		}
		c.sysTrap(in.im2, pc)
		return true
	}
	c.undefined(pc)
	return true
}

// precheck makes the checks in.pre asks for before in executes, and
// reports whether one took an exception instead.
// The FP/SIMD access trap comes before the SP alignment fault of an
// FP/SIMD load or store.
func (c *CPU) precheck(in *inst, pc uint64) bool {
	if in.pre&preFP != 0 && !c.fpEnabled(pc) {
		return true
	}
	return in.pre&preSP != 0 && c.spMisaligned(pc)
}

// spMisaligned takes the SP alignment fault (EC 0x26) if SP, used as the
// base of a load or store, is not 16-byte aligned while SCTLR_EL1.SA (EL1)
// or SA0 (EL0) asks for the check.
func (c *CPU) spMisaligned(pc uint64) bool {
	if c.r[regSP]&15 == 0 {
		return false
	}
	bit := uint64(sctlrSA)
	if c.el == 0 {
		bit = sctlrSA0
	}
	if c.sys[SCTLR_EL1]&bit == 0 {
		return false
	}
	c.takeException(ecSPAlign, 0, pc)
	return true
}

// wr truncates a result to 32 bits (zero-extending) for W-register forms.
func wr(sf bool, v uint64) uint64 {
	if sf {
		return v
	}
	return uint64(uint32(v))
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// addFlags computes x + y + carry at the operation's width, sets NZCV and
// returns the (zero-extended) result. Subtraction passes ^y and carry 1.
func (c *CPU) addFlags(x, y, carry uint64, sf bool) uint64 {
	if sf {
		return c.addFlags64(x, y, carry)
	}
	return c.addFlags32(uint32(x), uint32(y), uint32(carry))
}

// addFlags64 and addFlags32 are addFlags' two widths, small enough for
// the compiler to inline into the interpreter loop.
func (c *CPU) addFlags64(x, y, carry uint64) uint64 {
	s, co := bits.Add64(x, y, carry)
	c.nzcvBits = uint8(s>>63<<3 | b2u(s == 0)<<2 | co<<1 | ((x^s)&(y^s))>>63)
	return s
}

func (c *CPU) addFlags32(x, y, carry uint32) uint64 {
	s, co := bits.Add32(x, y, carry)
	c.nzcvBits = uint8(s>>31<<3 | uint32(b2u(s == 0))<<2 | co<<1 | ((x^s)&(y^s))>>31)
	return uint64(s)
}

// logicFlags sets NZCV for ANDS/BICS (C and V cleared) and returns the
// result truncated to the operation's width.
func (c *CPU) logicFlags(v uint64, sf bool) uint64 {
	if !sf {
		v = uint64(uint32(v))
		c.nzcvBits = uint8(v>>31<<3 | b2u(v == 0)<<2)
		return v
	}
	c.nzcvBits = uint8(v>>63<<3 | b2u(v == 0)<<2)
	return v
}

// logicOperand returns the shifted, optionally inverted second operand of
// a logical (shifted register) instruction.
func (c *CPU) logicOperand(in *inst) uint64 {
	y := shiftReg(c.r[in.rm], in.sh, in.amt, in.sf)
	if in.neg {
		y = ^y
	}
	return y
}

// shiftReg applies LSL/LSR/ASR/ROR (typ 0..3) by amt at the given width.
func shiftReg(v uint64, typ, amt uint8, sf bool) uint64 {
	if sf {
		switch typ {
		case 0:
			return v << amt
		case 1:
			return v >> amt
		case 2:
			return uint64(int64(v) >> amt)
		default:
			return bits.RotateLeft64(v, -int(amt))
		}
	}
	w := uint32(v)
	switch typ {
	case 0:
		w <<= amt
	case 1:
		w >>= amt
	case 2:
		w = uint32(int32(w) >> amt)
	default:
		w = bits.RotateLeft32(w, -int(amt))
	}
	return uint64(w)
}

func shiftAmount(v uint64, sf bool) uint8 {
	if sf {
		return uint8(v & 63)
	}
	return uint8(v & 31)
}

// extendReg applies an extend option (UXTB..SXTX) and a left shift.
func extendReg(v uint64, option, amt uint8) uint64 {
	switch option {
	case 0:
		v = uint64(uint8(v))
	case 1:
		v = uint64(uint16(v))
	case 2:
		v = uint64(uint32(v))
	case 4:
		v = uint64(int64(int8(v)))
	case 5:
		v = uint64(int64(int16(v)))
	case 6:
		v = uint64(int64(int32(v)))
	}
	return v << amt
}

// extendLoad widens a loaded value of 1<<lg bytes as the load requires.
func extendLoad(v uint64, lg, ext uint8) uint64 {
	switch ext {
	case extSign64:
		return sext(v, 8<<lg)
	case extSign32:
		return uint64(uint32(sext(v, 8<<lg)))
	}
	return v
}

// bitfield implements SBFM, BFM and UBFM with the decoded masks
// (imm=wmask, im2=tmask, amt=immr, cc=imms). dst is Rd's old value.
func bitfield(in *inst, src, dst uint64) uint64 {
	size := uint8(32)
	if in.sf {
		size = 64
	}
	wmask, tmask := in.imm, in.im2
	var rot uint64
	if in.sf {
		rot = bits.RotateLeft64(src, -int(in.amt))
	} else {
		rot = uint64(bits.RotateLeft32(uint32(src), -int(in.amt)))
	}
	var bot, top uint64
	switch in.op {
	case opBFM:
		bot = dst&^wmask | rot&wmask
		top = dst
	case opSBFM:
		bot = rot & wmask
		if src>>in.cc&1 != 0 {
			top = ^uint64(0)
		}
	default: // UBFM
		bot = rot & wmask
	}
	res := top&^tmask | bot&tmask
	if size == 32 {
		res = uint64(uint32(res))
	}
	return res
}

func udiv(a, b uint64, sf bool) uint64 {
	if !sf {
		a, b = uint64(uint32(a)), uint64(uint32(b))
	}
	if b == 0 {
		return 0
	}
	return a / b
}

func sdiv(a, b uint64, sf bool) uint64 {
	if sf {
		x, y := int64(a), int64(b)
		switch {
		case y == 0:
			return 0
		case y == -1:
			return uint64(-x) // INT64_MIN / -1 wraps to INT64_MIN
		}
		return uint64(x / y)
	}
	x, y := int32(a), int32(b)
	switch {
	case y == 0:
		return 0
	case y == -1:
		return uint64(uint32(-x))
	}
	return uint64(uint32(x / y))
}

// CRC polynomials in reflected form.
const (
	crcPolyIEEE       = 0xedb88320 // CRC32*
	crcPolyCastagnoli = 0x82f63b78 // CRC32C*
)

// crc32Step is the CRC32/CRC32C instruction: it folds the low 1<<lg bytes
// of v into acc, without the pre- and post-inversion of software CRCs.
func crc32Step(acc uint32, v uint64, lg uint8, castagnoli bool) uint32 {
	poly := uint32(crcPolyIEEE)
	if castagnoli {
		poly = crcPolyCastagnoli
	}
	for i := 0; i < 8<<lg; i++ {
		acc ^= uint32(v>>i) & 1
		if acc&1 != 0 {
			acc = acc>>1 ^ poly
		} else {
			acc >>= 1
		}
	}
	return acc
}

func (c *CPU) execLDP(in *inst, _ uint64) {
	r := &c.r
	base := r[in.rn]
	a := base
	if in.sh != modePost {
		a += in.imm
	}
	v1, ok := c.load(a, in.amt)
	if !ok {
		return
	}
	v2, ok := c.load(a+1<<in.amt, in.amt)
	if !ok {
		return
	}
	if in.sh == modePre {
		r[in.rn] = a
	} else if in.sh == modePost {
		r[in.rn] = base + in.imm
	}
	r[in.rd] = extendLoad(v1, in.amt, in.cc)
	r[in.ra] = extendLoad(v2, in.amt, in.cc)
}

func (c *CPU) execSTP(in *inst, _ uint64) {
	r := &c.r
	base := r[in.rn]
	a := base
	if in.sh != modePost {
		a += in.imm
	}
	// Read both sources before any writeback: STP x0, x1, [x0, #16]! stores
	// the old x0.
	v1, v2 := r[in.rd], r[in.ra]
	if !c.store(a, in.amt, v1) || !c.store(a+1<<in.amt, in.amt, v2) {
		return
	}
	if in.sh == modePre {
		r[in.rn] = a
	} else if in.sh == modePost {
		r[in.rn] = base + in.imm
	}
}

// exclusiveOK reports whether a store-exclusive of 1<<lg bytes at a may
// succeed, and clears the monitor (it is cleared whether or not it does).
func (c *CPU) exclusiveOK(a uint64, lg uint8) bool {
	ok := c.excValid && c.excAddr == a && c.excSize == lg
	c.clearExclusive()
	return ok
}

func (c *CPU) execSTXR(in *inst, _ uint64) {
	r := &c.r
	a := r[in.rn]
	v := r[in.rd]
	if !c.exclusiveOK(a, in.amt) {
		r[in.ra] = 1
		return
	}
	if c.par {
		// Another vCPU's store between the load- and store-exclusive
		// shows as a changed value: compare-and-swap against what the
		// load-exclusive read.
		want := c.excVal
		var done bool
		if _, ok := c.rmw(a, in.amt, func(old uint64) (uint64, bool) {
			done = old == want
			return v, done
		}); ok {
			r[in.ra] = b2u(!done)
		}
		return
	}
	if c.store(a, in.amt, v) {
		r[in.ra] = 0
	}
}

func (c *CPU) execLDXP(in *inst, _ uint64) {
	r := &c.r
	a := r[in.rn]
	// The pair is one single-copy atomic access: aligned to its whole size.
	if !c.aligned(a, in.amt+1, false) {
		return
	}
	if c.par {
		// One single-copy atomic read of the whole pair, whose values
		// the store-exclusive compares against.
		v1, v2, ok := c.loadPair(a, in.amt)
		if !ok {
			return
		}
		r[in.rd], r[in.rm] = v1, v2
		c.excVal, c.excVal2 = v1, v2
		c.setExclusive(a, in.amt+1)
		return
	}
	v1, ok := c.load(a, in.amt)
	if !ok {
		return
	}
	v2, ok := c.load(a+1<<in.amt, in.amt)
	if !ok {
		return
	}
	r[in.rd], r[in.rm] = v1, v2
	c.setExclusive(a, in.amt+1)
}

func (c *CPU) execSTXP(in *inst, _ uint64) {
	r := &c.r
	a := r[in.rn]
	v1, v2 := r[in.rd], r[in.rm]
	if !c.exclusiveOK(a, in.amt+1) {
		r[in.ra] = 1
		return
	}
	if c.par {
		w1, w2 := c.excVal, c.excVal2
		var done bool
		if c.pairRMW(a, in.amt, func(o1, o2 uint64) (uint64, uint64, bool) {
			done = o1 == w1 && o2 == w2
			return v1, v2, done
		}) {
			r[in.ra] = b2u(!done)
		}
		return
	}
	if c.store(a, in.amt, v1) && c.store(a+1<<in.amt, in.amt, v2) {
		r[in.ra] = 0
	}
}
