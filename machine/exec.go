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
	mmu := c.sys[SCTLR_EL1]&sctlrM != 0
	var f *fetchEntry
	if mmu && !c.par {
		// A page fetched before, under the jump cache's generation.
		el, va := c.el&1, pc&^(PageSize-1)
		f = &c.jumps.pages[el][va>>12&(jumpPages-1)]
		if f.tag == va^c.jumps.gen[el] {
			c.pageGlobal = f.global
			c.enterPage(f.page, va, f.pa)
			return true
		}
	}
	if mmu {
		var fsc uint32
		var ok bool
		if pa, _, fsc, ok = c.translate(pc, AccessExec, c.el); !ok {
			c.sys[FAR_EL1] = pc
			c.takeException(c.lowerOrSame(ecInsnAbortLow), fsc, pc)
			return false
		}
		c.pageGlobal = c.tlbGlobal(pc)
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
		m.codeAppeared(off &^ (PageSize - 1))
	}
	c.enterPage(p, pc&^(PageSize-1), pa&^(PageSize-1))
	if f != nil && c.pageJumpable() {
		c.keepJumpPage()
		*f = fetchEntry{tag: c.pageVA ^ c.jumps.gen[c.el&1], pa: c.pagePA, page: p, global: c.pageGlobal}
	}
	return true
}

// enterPage makes p, the decode cache of the page at va and pa, the
// current one.
func (c *CPU) enterPage(p *codePage, va, pa uint64) {
	c.page, c.pageVA, c.pagePA = p, va, pa
	c.pageBlocks = p.blocks[c.jitOwner&(gicMaxCPUs-1)]
	c.blockKey = c.blockKeyFor(va)
	// Its code runs (see invalidateSlots). Written only when set: parallel
	// mode's pages are shared, and never count.
	if p.dataStores != 0 {
		p.dataStores = 0
	}
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
	var n, entries uint64
	j := c.jit
	translating := j.enabled()
	c.runBudget = budget
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
			if bs := c.pageBlocks; bs != nil {
				b = bs[idx]
			}
			if b == nil || b.key != c.blockKey || b.cold != 0 {
				b = c.blockAt(idx)
			}
			if b.n != 0 && n+b.n <= budget {
				if !c.jumpHit(pc) {
					c.noteJump(pc, b)
				}
				rest, flags, slot := jitEnter(b.code, c, budget-n)
				entries++
				n = budget - rest
				pc = c.pc
				if flags&jitBail == 0 {
					if flags&jitTaken != 0 {
						c.pollIRQ()
					}
					if slot != 0 && c.pc == pc && (pc^c.pageVA)&^(PageSize-4) != 0 && !c.fetch(pc) {
						// The block came from another page through the
						// jump cache: its page is the current one now.
						// (c.pc != pc: an interrupt was taken.)
						n++
						continue
					}
					if slot != 0 && c.pageVA == pc&^(PageSize-1) {
						// The block left for a block of its page that it
						// is not chained to yet: chain them.
						// (Unless translating emptied the cache, slot's
						// code with it.)
						flushes := j.flushes.Load()
						if nb := c.blockAt(pc >> 2 & (PageSize/4 - 1)); nb.n != 0 && j.flushes.Load() == flushes {
							j.link(slot, nb.chain)
						}
					}
					continue
				}
				if c.codeStore != 0 {
					// Parallel mode: the code stored to a page of code
					// and stopped after that store, for the bookkeeping
					// (storedPar) that the interpreter's stores do.
					c.m.storedPar(c, (c.codeStore-1)*PageSize, 1)
					c.codeStore = 0
					continue
				}
				// The code stopped before an instruction that needs the
				// interpreter: run it here, once its page is the current
				// one (the code may have left this page through the jump
				// cache).
				if (pc^c.pageVA)&^(PageSize-4) != 0 && !c.fetch(pc) {
					n++
					continue
				}
			}
		}
		in := &c.page.insts[pc>>2&(PageSize/4-1)]
		if in.op == opNone {
			c.decodeSlot(pc >> 2 & (PageSize/4 - 1))
		}
		n++
		c.pc = pc + 4

		// The checks inst.pre asks for; what passes (FP enabled at EL0
		// and EL1, SP aligned) costs a test each, without a call.
		if in.pre != 0 && (in.pre&preFP != 0 && c.sys[CPACR_EL1]>>cpacrFPEN&3 != 3 ||
			in.pre&preSP != 0 && c.r[regSP]&15 != 0) && c.precheck(in, pc) {
			continue
		}
		// decodegen:dispatch begin
		// Generated from a64.decode: the hot instructions' execute functions,
		// spliced in (returns become continue loop or break loop), then
		// execute for every other.
		switch in.op {
		case opADR: // execADR
			r := &c.r
			r[in.rd] = pc + in.imm
		case opADRP: // execADRP
			r := &c.r
			r[in.rd] = pc&^0xfff + in.imm
		case opADDi: // execADDi
			r := &c.r
			r[in.rd] = wr(in.sf, r[in.rn]+in.imm)
		case opADDSi: // execADDSi
			r := &c.r
			if in.sf {
				r[in.rd] = c.addFlags64(r[in.rn], in.imm, 0)
			} else {
				r[in.rd] = c.addFlags32(uint32(r[in.rn]), uint32(in.imm), 0)
			}
		case opSUBi: // execSUBi
			r := &c.r
			r[in.rd] = wr(in.sf, r[in.rn]-in.imm)
		case opSUBSi: // execSUBSi
			r := &c.r
			if in.sf { // CMP (immediate) mostly: the hottest flag setter
				r[in.rd] = c.addFlags64(r[in.rn], ^in.imm, 1)
			} else {
				r[in.rd] = c.addFlags32(uint32(r[in.rn]), ^uint32(in.imm), 1)
			}
		case opANDi: // execANDi
			r := &c.r
			r[in.rd] = r[in.rn] & in.imm
		case opORRi: // execORRi
			r := &c.r
			r[in.rd] = wr(in.sf, r[in.rn]|in.imm)
		case opEORi: // execEORi
			r := &c.r
			r[in.rd] = wr(in.sf, r[in.rn]^in.imm)
		case opANDSi: // execANDSi
			r := &c.r
			r[in.rd] = c.logicFlags(r[in.rn]&in.imm, in.sf)
		case opMOVi: // execMOVi
			r := &c.r
			r[in.rd] = in.imm
		case opMOVK: // execMOVK
			r := &c.r
			r[in.rd] = wr(in.sf, r[in.ra]&in.im2|in.imm)
		case opASRi: // execASRi
			r := &c.r
			if in.sf {
				r[in.rd] = uint64(int64(r[in.rn]) >> in.amt)
			} else {
				r[in.rd] = uint64(uint32(int32(r[in.rn]) >> in.amt))
			}
		case opSBFM: // execBitfield
			r := &c.r
			r[in.rd] = bitfield((*bitfieldArgs)(in), r[in.rn], r[in.ra])
		case opBFM: // execBitfield
			r := &c.r
			r[in.rd] = bitfield((*bitfieldArgs)(in), r[in.rn], r[in.ra])
		case opLSRi: // execLSRi
			r := &c.r
			if in.sf {
				r[in.rd] = r[in.rn] >> in.amt
			} else {
				r[in.rd] = uint64(uint32(r[in.rn]) >> in.amt)
			}
		case opLSLi: // execLSLi
			r := &c.r
			r[in.rd] = wr(in.sf, r[in.rn]<<in.amt)
		case opUBFM: // execBitfield
			r := &c.r
			r[in.rd] = bitfield((*bitfieldArgs)(in), r[in.rn], r[in.ra])
		case opEXTR: // execEXTR
			r := &c.r
			if in.sf {
				if in.amt == 0 {
					r[in.rd] = r[in.rm]
				} else {
					r[in.rd] = r[in.rm]>>in.amt | r[in.rn]<<(64-in.amt)
				}
			} else {
				cat := r[in.rn]<<32 | uint64(uint32(r[in.rm]))
				r[in.rd] = uint64(uint32(cat >> in.amt))
			}
		case opB: // execB
			c.pc = pc + in.imm
			c.pollIRQ()
		case opBL: // execBL
			r := &c.r
			r[30] = pc + 4
			c.pc = pc + in.imm
			c.pollIRQ()
		case opCBZ: // execCBZ
			r := &c.r
			if wr(in.sf, r[in.rn]) == 0 {
				c.pc = pc + in.imm
				c.pollIRQ()
			}
		case opCBNZ: // execCBNZ
			r := &c.r
			if wr(in.sf, r[in.rn]) != 0 {
				c.pc = pc + in.imm
				c.pollIRQ()
			}
		case opTBZ: // execTBZ
			r := &c.r
			if r[in.rn]>>in.amt&1 == 0 {
				c.pc = pc + in.imm
				c.pollIRQ()
			}
		case opTBNZ: // execTBNZ
			r := &c.r
			if r[in.rn]>>in.amt&1 != 0 {
				c.pc = pc + in.imm
				c.pollIRQ()
			}
		case opBcond: // execBcond
			if c.cond(in.cc) {
				c.pc = pc + in.imm
				c.pollIRQ()
			}
		case opSVC: // execSVC
			if c.dbg.stepping {
				c.ss = false // SVC completes: the step is done (SPSR.SS = 0)
			}
			c.takeException(ecSVC64, uint32(in.imm), pc+4)
		case opWFI: // execWFI
			// WFI completes at once when an interrupt is pending, masked or
			// not; only then may it sleep, or (at EL0 without
			// SCTLR_EL1.nTWI) trap, in the order QEMU checks them.
			if c.lines.Load() != 0 {
				c.pollIRQ()
				continue loop
			}
			if c.el == 0 && c.sys[SCTLR_EL1]&sctlrNTW == 0 {
				c.takeException(ecWFx, wfxISSCondAlways, pc)
				continue loop
			}
			c.wfi = true
			break loop
		case opNOP: // execNOP

		case opCLREX: // execCLREX
			c.clearExclusive()
		case opDMB: // execDMB

		case opISB: // execISB
			if c.par {
				// Context synchronization: code another vCPU patched (and
				// invalidated) before this CPU observed its flag runs from now
				// on. Deterministic mode invalidates every CPU's page at the
				// store itself.
				c.syncCode()
			}
		case opMSRi: // execMSRi
			if c.el == 0 && c.el0Denied(in.cc, in.amt, in.im2, pc) {
				continue loop
			}
			switch in.sh {
			case pstateSPSel:
				c.setMode(c.el, uint8(in.imm&1))
			case pstateDAIFSet:
				c.daif |= uint8(in.imm)
			case pstateDAIFClr:
				c.daif &^= uint8(in.imm)
				c.pollIRQ()
			}
		case opDCZVA: // execDCZVA
			r := &c.r
			if c.el == 0 && c.el0Denied(in.cc, in.amt, in.im2, pc) {
				continue loop
			}
			va := r[in.rn] &^ (dczBlock - 1)
			for i := uint64(0); i < dczBlock; i += 8 {
				if !c.store(va+i, 3, 0) {
					continue loop
				}
			}
		case opMRS: // execMRS
			r := &c.r
			if c.el == 0 && in.cc != el0OK && c.el0Denied(in.cc, in.amt, in.im2, pc) {
				continue loop
			}
			r[in.rd] = c.readSys(SysReg(in.imm), n-1)
		case opMSR: // execMSR
			r := &c.r
			if c.el == 0 && in.cc != el0OK && c.el0Denied(in.cc, in.amt, in.im2, pc) {
				continue loop
			}
			sr := SysReg(in.imm)
			if sr == SP_EL0 && c.spsel == 0 {
				c.undefined(pc) // SP_EL0 is not accessible while it is the current SP
				continue loop
			}
			c.writeSys(sr, r[in.rn], n-1)
			switch {
			case c.dbgActive:
				// The write enabled a debug feature (MDSCR_EL1, a
				// breakpoint, the OS lock): continue on the debug path.
				break loop
			case sr == DAIF:
				c.pollIRQ()
			case sr >= CNTP_TVAL_EL0 && sr <= CNTV_CVAL_EL0:
				// The scheduler evaluates the timers between slices and
				// sizes slices to the next deadline: end this one so a
				// timer change takes effect at a deterministic point.
				break loop
			}
		case opBR: // execBR
			r := &c.r
			c.pc = r[in.rn]
			c.pollIRQ()
		case opBLR: // execBLR
			r := &c.r
			t := r[in.rn] // read before the link write: BLR x30 branches to the old x30
			r[30] = pc + 4
			c.pc = t
			c.pollIRQ()
		case opRET: // execBR
			r := &c.r
			c.pc = r[in.rn]
			c.pollIRQ()
		case opERET: // execERET
			if c.el == 0 {
				c.undefined(pc)
				continue loop
			}
			c.eret()
			c.pollIRQ()
		case opLDXR: // execLDXR
			r := &c.r
			va := r[in.rn]
			if !c.aligned(va, in.amt, false) {
				continue loop
			}
			if v, ok := c.load(va, in.amt); ok {
				r[in.rd] = v
				c.excVal = v
				c.setExclusive(va, in.amt)
			}
		case opSTXR: // execSTXR
			r := &c.r
			va := r[in.rn]
			v := r[in.rd]
			if !c.exclusiveOK(va, in.amt) {
				r[in.ra] = 1
				continue loop
			}
			if c.par {
				// Another vCPU's store between the load- and store-exclusive
				// shows as a changed value: compare-and-swap against what the
				// load-exclusive read.
				want := c.excVal
				var done bool
				if _, ok := c.rmw(va, in.amt, func(old uint64) (uint64, bool) {
					done = old == want
					return v, done
				}); ok {
					r[in.ra] = b2u(!done)
				}
				continue loop
			}
			if c.store(va, in.amt, v) {
				r[in.ra] = 0
			}
		case opLDAR: // execLDAR
			r := &c.r
			va := r[in.rn]
			if !c.aligned(va, in.amt, false) {
				continue loop
			}
			if v, ok := c.load(va, in.amt); ok {
				r[in.rd] = v
			}
		case opSTLR: // execSTLR
			r := &c.r
			va := r[in.rn]
			if c.aligned(va, in.amt, true) {
				c.store(va, in.amt, r[in.rd])
			}
		case opCAS: // execCAS
			lg := in.amt
			cmp, nv := c.r[in.ra]&sizeMask(lg), c.r[in.rd]
			if old, ok := c.rmw(c.r[in.rn], lg, func(old uint64) (uint64, bool) {
				return nv, old == cmp
			}); ok {
				c.r[in.rm] = old
			}
		case opLDRlit: // execLDRlit
			r := &c.r
			if v, ok := c.load(pc+in.imm, in.amt); ok {
				r[in.rd] = extendLoad(v, in.amt, in.cc)
			}
		case opSTP: // execSTP
			r := &c.r
			base := r[in.rn]
			va := base
			if in.sh != modePost {
				va += in.imm
			}
			// Read both sources before any writeback: STP x0, x1, [x0, #16]! stores
			// the old x0.
			v1, v2 := r[in.rd], r[in.ra]
			if !c.store(va, in.amt, v1) || !c.store(va+1<<in.amt, in.amt, v2) {
				continue loop
			}
			if in.sh == modePre {
				r[in.rn] = va
			} else if in.sh == modePost {
				r[in.rn] = base + in.imm
			}
		case opLDP: // execLDP
			r := &c.r
			base := r[in.rn]
			va := base
			if in.sh != modePost {
				va += in.imm
			}
			v1, ok := c.load(va, in.amt)
			if !ok {
				continue loop
			}
			v2, ok := c.load(va+1<<in.amt, in.amt)
			if !ok {
				continue loop
			}
			if in.sh == modePre {
				r[in.rn] = va
			} else if in.sh == modePost {
				r[in.rn] = base + in.imm
			}
			r[in.rd] = extendLoad(v1, in.amt, in.cc)
			r[in.ra] = extendLoad(v2, in.amt, in.cc)
		case opSTRo: // execSTRo
			r := &c.r
			c.store(r[in.rn]+in.imm, in.amt, r[in.rd])
		case opLDRo: // execLDRo
			r := &c.r
			if v, ok := c.load(r[in.rn]+in.imm, in.amt); ok {
				r[in.rd] = extendLoad(v, in.amt, in.cc)
			}
		case opSTRpost: // execSTRpost
			r := &c.r
			va := r[in.rn]
			if c.store(va, in.amt, r[in.rd]) {
				r[in.rn] = va + in.imm
			}
		case opSTRpre: // execSTRpre
			r := &c.r
			va := r[in.rn] + in.imm
			if c.store(va, in.amt, r[in.rd]) {
				r[in.rn] = va
			}
		case opLDRpost: // execLDRpost
			r := &c.r
			va := r[in.rn]
			if v, ok := c.load(va, in.amt); ok {
				r[in.rn] = va + in.imm
				r[in.rd] = extendLoad(v, in.amt, in.cc)
			}
		case opLDRpre: // execLDRpre
			r := &c.r
			va := r[in.rn] + in.imm
			if v, ok := c.load(va, in.amt); ok {
				r[in.rn] = va
				r[in.rd] = extendLoad(v, in.amt, in.cc)
			}
		case opLDOP: // execLDOP
			op, lg, rs := in.sh, in.amt, c.r[in.rm]
			if old, ok := c.rmw(c.r[in.rn], lg, func(old uint64) (uint64, bool) {
				return atomicResult(op, lg, old, rs), true
			}); ok {
				c.r[in.rd] = old
			}
		case opSTRreg: // execSTRreg
			r := &c.r
			c.store(r[in.rn]+extendReg(r[in.rm], in.sh, uint8(in.im2)), in.amt, r[in.rd])
		case opLDRreg: // execLDRreg
			r := &c.r
			va := r[in.rn] + extendReg(r[in.rm], in.sh, uint8(in.im2))
			if v, ok := c.load(va, in.amt); ok {
				r[in.rd] = extendLoad(v, in.amt, in.cc)
			}
		case opMOVr: // execMOVr
			r := &c.r
			r[in.rd] = wr(in.sf, r[in.rm])
		case opANDr: // execANDr
			r := &c.r
			r[in.rd] = wr(in.sf, r[in.rn]&c.logicOperand((*shiftedArgs)(in)))
		case opORRr: // execORRr
			r := &c.r
			r[in.rd] = wr(in.sf, r[in.rn]|c.logicOperand((*shiftedArgs)(in)))
		case opEORr: // execEORr
			r := &c.r
			r[in.rd] = wr(in.sf, r[in.rn]^c.logicOperand((*shiftedArgs)(in)))
		case opANDSr: // execANDSr
			r := &c.r
			r[in.rd] = c.logicFlags(r[in.rn]&c.logicOperand((*shiftedArgs)(in)), in.sf)
		case opADDr: // execADDr
			r := &c.r
			r[in.rd] = wr(in.sf, r[in.rn]+shiftReg(r[in.rm], in.sh, in.amt, in.sf))
		case opADDSr: // execADDSr
			r := &c.r
			r[in.rd] = c.addFlags(r[in.rn], shiftReg(r[in.rm], in.sh, in.amt, in.sf), 0, in.sf)
		case opSUBr: // execSUBr
			r := &c.r
			r[in.rd] = wr(in.sf, r[in.rn]-shiftReg(r[in.rm], in.sh, in.amt, in.sf))
		case opSUBSr: // execSUBSr
			r := &c.r
			if in.sf {
				r[in.rd] = c.addFlags64(r[in.rn], ^shiftReg(r[in.rm], in.sh, in.amt, true), 1)
			} else {
				r[in.rd] = c.addFlags32(uint32(r[in.rn]), ^uint32(shiftReg(r[in.rm], in.sh, in.amt, false)), 1)
			}
		case opADDx: // execADDx
			r := &c.r
			r[in.rd] = wr(in.sf, r[in.rn]+extendReg(r[in.rm], in.sh, in.amt))
		case opADDSx: // execADDSx
			r := &c.r
			r[in.rd] = c.addFlags(r[in.rn], extendReg(r[in.rm], in.sh, in.amt), 0, in.sf)
		case opSUBx: // execSUBx
			r := &c.r
			r[in.rd] = wr(in.sf, r[in.rn]-extendReg(r[in.rm], in.sh, in.amt))
		case opSUBSx: // execSUBSx
			r := &c.r
			r[in.rd] = c.addFlags(r[in.rn], ^extendReg(r[in.rm], in.sh, in.amt), 1, in.sf)
		case opADC: // execADC
			r := &c.r
			r[in.rd] = wr(in.sf, r[in.rn]+r[in.rm]+c.carry())
		case opADCS: // execADCS
			r := &c.r
			r[in.rd] = c.addFlags(r[in.rn], r[in.rm], c.carry(), in.sf)
		case opSBC: // execSBC
			r := &c.r
			r[in.rd] = wr(in.sf, r[in.rn]+^r[in.rm]+c.carry())
		case opSBCS: // execSBCS
			r := &c.r
			r[in.rd] = c.addFlags(r[in.rn], ^r[in.rm], c.carry(), in.sf)
		case opCCMN: // execCCMP
			r := &c.r
			if c.cond(in.cc) {
				y := in.imm
				if !in.neg {
					y = r[in.rm]
				}
				if in.op == opCCMP {
					c.addFlags(r[in.rn], ^y, 1, in.sf)
				} else {
					c.addFlags(r[in.rn], y, 0, in.sf)
				}
			} else {
				c.setNZCV(uint64(in.amt) << 28)
			}
		case opCCMP: // execCCMP
			r := &c.r
			if c.cond(in.cc) {
				y := in.imm
				if !in.neg {
					y = r[in.rm]
				}
				if in.op == opCCMP {
					c.addFlags(r[in.rn], ^y, 1, in.sf)
				} else {
					c.addFlags(r[in.rn], y, 0, in.sf)
				}
			} else {
				c.setNZCV(uint64(in.amt) << 28)
			}
		case opCSEL: // execCSEL
			r := &c.r
			if c.cond(in.cc) {
				r[in.rd] = wr(in.sf, r[in.rn])
			} else {
				r[in.rd] = wr(in.sf, r[in.rm])
			}
		case opCSINC: // execCSINC
			r := &c.r
			if c.cond(in.cc) {
				r[in.rd] = wr(in.sf, r[in.rn])
			} else {
				r[in.rd] = wr(in.sf, r[in.rm]+1)
			}
		case opCSINV: // execCSINV
			r := &c.r
			if c.cond(in.cc) {
				r[in.rd] = wr(in.sf, r[in.rn])
			} else {
				r[in.rd] = wr(in.sf, ^r[in.rm])
			}
		case opCSNEG: // execCSNEG
			r := &c.r
			if c.cond(in.cc) {
				r[in.rd] = wr(in.sf, r[in.rn])
			} else {
				r[in.rd] = wr(in.sf, -r[in.rm])
			}
		case opUDIV: // execUDIV
			r := &c.r
			r[in.rd] = udiv(r[in.rn], r[in.rm], in.sf)
		case opSDIV: // execSDIV
			r := &c.r
			r[in.rd] = sdiv(r[in.rn], r[in.rm], in.sf)
		case opLSLV: // execLSLV
			r := &c.r
			r[in.rd] = shiftReg(r[in.rn], 0, shiftAmount(r[in.rm], in.sf), in.sf)
		case opLSRV: // execLSRV
			r := &c.r
			r[in.rd] = shiftReg(r[in.rn], 1, shiftAmount(r[in.rm], in.sf), in.sf)
		case opASRV: // execASRV
			r := &c.r
			r[in.rd] = shiftReg(r[in.rn], 2, shiftAmount(r[in.rm], in.sf), in.sf)
		case opRORV: // execRORV
			r := &c.r
			r[in.rd] = shiftReg(r[in.rn], 3, shiftAmount(r[in.rm], in.sf), in.sf)
		case opRBIT: // execRBIT
			r := &c.r
			if in.sf {
				r[in.rd] = bits.Reverse64(r[in.rn])
			} else {
				r[in.rd] = uint64(bits.Reverse32(uint32(r[in.rn])))
			}
		case opREV16: // execREV16
			r := &c.r
			x := r[in.rn]
			r[in.rd] = wr(in.sf, (x&0x00ff00ff00ff00ff)<<8|(x>>8)&0x00ff00ff00ff00ff)
		case opREV32: // execREV32
			r := &c.r
			x := bits.ReverseBytes64(r[in.rn])
			r[in.rd] = x<<32 | x>>32
		case opREV: // execREV
			r := &c.r
			if in.sf {
				r[in.rd] = bits.ReverseBytes64(r[in.rn])
			} else {
				r[in.rd] = uint64(bits.ReverseBytes32(uint32(r[in.rn])))
			}
		case opCLZ: // execCLZ
			r := &c.r
			if in.sf {
				r[in.rd] = uint64(bits.LeadingZeros64(r[in.rn]))
			} else {
				r[in.rd] = uint64(bits.LeadingZeros32(uint32(r[in.rn])))
			}
		case opCLS: // execCLS
			r := &c.r
			x := r[in.rn]
			if in.sf {
				r[in.rd] = uint64(bits.LeadingZeros64((x>>1^x)&(1<<63-1)) - 1)
			} else {
				x32 := uint32(x)
				r[in.rd] = uint64(bits.LeadingZeros32((x32>>1^x32)&(1<<31-1)) - 1)
			}
		case opMADD: // execMADD
			r := &c.r
			r[in.rd] = wr(in.sf, r[in.ra]+r[in.rn]*r[in.rm])
		case opMSUB: // execMSUB
			r := &c.r
			r[in.rd] = wr(in.sf, r[in.ra]-r[in.rn]*r[in.rm])
		case opSMADDL: // execSMADDL
			r := &c.r
			r[in.rd] = r[in.ra] + uint64(int64(int32(r[in.rn]))*int64(int32(r[in.rm])))
		case opSMSUBL: // execSMSUBL
			r := &c.r
			r[in.rd] = r[in.ra] - uint64(int64(int32(r[in.rn]))*int64(int32(r[in.rm])))
		case opUMADDL: // execUMADDL
			r := &c.r
			r[in.rd] = r[in.ra] + uint64(uint32(r[in.rn]))*uint64(uint32(r[in.rm]))
		case opUMSUBL: // execUMSUBL
			r := &c.r
			r[in.rd] = r[in.ra] - uint64(uint32(r[in.rn]))*uint64(uint32(r[in.rm]))
		case opSMULH: // execSMULH
			r := &c.r
			a, b := r[in.rn], r[in.rm]
			hi, _ := bits.Mul64(a, b)
			// Signed high half from the unsigned one: subtract the
			// other operand for each negative input.
			if int64(a) < 0 {
				hi -= b
			}
			if int64(b) < 0 {
				hi -= a
			}
			r[in.rd] = hi
		case opUMULH: // execUMULH
			r := &c.r
			hi, _ := bits.Mul64(r[in.rn], r[in.rm])
			r[in.rd] = hi
		default:
			if c.execute(in, pc, n) {
				break loop
			}
		}
		// decodegen:dispatch end
	}
	c.retired += n
	// Published once a slice: an atomic store per entry is a locked
	// XCHG, a full fence after every block's stores.
	j.entries.Store(j.entries.Load() + entries)
	return n
}

// el0Denied applies the EL0 access of a system instruction (el0: el0OK,
// el0Trap with SCTLR_EL1 bit trapBit and the trap's ISS, or el0Undef)
// executed at EL0 and reports whether it took an exception instead.
func (c *CPU) el0Denied(el0, trapBit uint8, trapISS uint64, pc uint64) bool {
	switch el0 {
	case el0OK:
		return false
	case el0Trap:
		if c.sys[SCTLR_EL1]>>trapBit&1 != 0 {
			return false
		}
		c.sysTrap(trapISS, pc)
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
func (c *CPU) logicOperand(a *shiftedArgs) uint64 {
	y := shiftReg(c.r[a.rm], a.shift(), a.amount(), a.sf)
	if a.invert() {
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
func bitfield(a *bitfieldArgs, src, dst uint64) uint64 {
	size := uint8(32)
	if a.sf {
		size = 64
	}
	wmask, tmask := a.imm, a.tmask()
	var rot uint64
	if a.sf {
		rot = bits.RotateLeft64(src, -int(a.immr()))
	} else {
		rot = uint64(bits.RotateLeft32(uint32(src), -int(a.immr())))
	}
	var bot, top uint64
	switch a.op {
	case opBFM:
		bot = dst&^wmask | rot&wmask
		top = dst
	case opSBFM:
		bot = rot & wmask
		if src>>a.imms()&1 != 0 {
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

func (c *CPU) execLDP(a *pairArgs, _ uint64) {
	r := &c.r
	base := r[a.rn]
	va := base
	if a.mode() != modePost {
		va += a.imm
	}
	v1, ok := c.load(va, a.size())
	if !ok {
		return
	}
	v2, ok := c.load(va+1<<a.size(), a.size())
	if !ok {
		return
	}
	if a.mode() == modePre {
		r[a.rn] = va
	} else if a.mode() == modePost {
		r[a.rn] = base + a.imm
	}
	r[a.rd] = extendLoad(v1, a.size(), a.ext())
	r[a.rt2()] = extendLoad(v2, a.size(), a.ext())
}

func (c *CPU) execSTP(a *pairArgs, _ uint64) {
	r := &c.r
	base := r[a.rn]
	va := base
	if a.mode() != modePost {
		va += a.imm
	}
	// Read both sources before any writeback: STP x0, x1, [x0, #16]! stores
	// the old x0.
	v1, v2 := r[a.rd], r[a.rt2()]
	if !c.store(va, a.size(), v1) || !c.store(va+1<<a.size(), a.size(), v2) {
		return
	}
	if a.mode() == modePre {
		r[a.rn] = va
	} else if a.mode() == modePost {
		r[a.rn] = base + a.imm
	}
}

// exclusiveOK reports whether a store-exclusive of 1<<lg bytes at a may
// succeed, and clears the monitor (it is cleared whether or not it does).
func (c *CPU) exclusiveOK(a uint64, lg uint8) bool {
	ok := c.excValid && c.excAddr == a && c.excSize == lg
	c.clearExclusive()
	return ok
}

func (c *CPU) execSTXR(a *exclStoreArgs, _ uint64) {
	r := &c.r
	va := r[a.rn]
	v := r[a.rd]
	if !c.exclusiveOK(va, a.size()) {
		r[a.status()] = 1
		return
	}
	if c.par {
		// Another vCPU's store between the load- and store-exclusive
		// shows as a changed value: compare-and-swap against what the
		// load-exclusive read.
		want := c.excVal
		var done bool
		if _, ok := c.rmw(va, a.size(), func(old uint64) (uint64, bool) {
			done = old == want
			return v, done
		}); ok {
			r[a.status()] = b2u(!done)
		}
		return
	}
	if c.store(va, a.size(), v) {
		r[a.status()] = 0
	}
}

func (c *CPU) execLDXP(a *ldstArgs, _ uint64) {
	r := &c.r
	va := r[a.rn]
	// The pair is one single-copy atomic access: aligned to its whole size.
	if !c.aligned(va, a.size()+1, false) {
		return
	}
	if c.par {
		// One single-copy atomic read of the whole pair, whose values
		// the store-exclusive compares against.
		v1, v2, ok := c.loadPair(va, a.size())
		if !ok {
			return
		}
		r[a.rd], r[a.rm] = v1, v2
		c.excVal, c.excVal2 = v1, v2
		c.setExclusive(va, a.size()+1)
		return
	}
	v1, ok := c.load(va, a.size())
	if !ok {
		return
	}
	v2, ok := c.load(va+1<<a.size(), a.size())
	if !ok {
		return
	}
	r[a.rd], r[a.rm] = v1, v2
	c.setExclusive(va, a.size()+1)
}

func (c *CPU) execSTXP(a *exclStoreArgs, _ uint64) {
	r := &c.r
	va := r[a.rn]
	v1, v2 := r[a.rd], r[a.rm]
	if !c.exclusiveOK(va, a.size()+1) {
		r[a.status()] = 1
		return
	}
	if c.par {
		w1, w2 := c.excVal, c.excVal2
		var done bool
		if c.pairRMW(va, a.size(), func(o1, o2 uint64) (uint64, uint64, bool) {
			done = o1 == w1 && o2 == w2
			return v1, v2, done
		}) {
			r[a.status()] = b2u(!done)
		}
		return
	}
	if c.store(va, a.size(), v1) && c.store(va+1<<a.size(), a.size(), v2) {
		r[a.status()] = 0
	}
}
