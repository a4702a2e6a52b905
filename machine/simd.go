package machine

import "math/bits"

// The FP/SIMD unit: the V registers, FPCR/FPSR, scalar floating point,
// the SIMD&FP loads and stores and Advanced SIMD.
//
// Every FP/SIMD instruction is decoded once, by the table (a64.decode),
// into its operands, executed by the exec functions here and in
// simdvec.go. Scalar FP, FPCR/FPSR, the copies, the SIMD&FP loads and
// stores and the structure loads and stores get their own opcodes;
// Advanced SIMD gets one per encoding group, whose table line and OK
// function (simdvec.go) decide at decode whether the word is implemented
// and whose execute function, which trusts that, runs it from the
// decoded fields (U, size, opcode, ...).

// FP/SIMD access trap class and CPACR_EL1.FPEN.
const (
	ecFPAccess  = 0x07
	cpacrFPEN   = 20
	fpAccessISS = wfxISSCondAlways // CV=1, COND=AL, as QEMU reports it
)

// fpEnabled applies CPACR_EL1.FPEN and takes the access trap (EC 0x07) if
// FP/SIMD is disabled at the current EL.
func (c *CPU) fpEnabled(pc uint64) bool {
	switch c.sys[CPACR_EL1] >> cpacrFPEN & 3 {
	case 3:
		return true
	case 1:
		if c.el == 1 {
			return true
		}
	}
	c.takeException(ecFPAccess, fpAccessISS, pc)
	return false
}

// Register access. V registers hold two little-endian 64-bit halves.

func elem(v [2]uint64, i, esz uint) uint64 {
	off := i << (esz + 3)
	return v[off>>6&1] >> (off & 63) & ones(8<<esz)
}

func setElem(v *[2]uint64, i, esz uint, x uint64) {
	off := i << (esz + 3)
	m := ones(8<<esz) << (off & 63)
	v[off>>6&1] = v[off>>6&1]&^m | x<<(off&63)&m
}

// setScalar writes the low 8<<sz bits (sz 0..4) of a V register, zeroing
// the rest, as every scalar write does.
func (c *CPU) setScalar(n uint32, x uint64, sz uint) {
	if sz < 3 {
		x &= ones(8 << sz)
	}
	c.vr[n&31] = [2]uint64{x, 0}
}

// setVec writes a vector result; a 64-bit (Q=0) vector clears the top.
func (c *CPU) setVec(n uint32, v [2]uint64, q bool) {
	if !q {
		v[1] = 0
	}
	c.vr[n&31] = v
}

// fpType decodes the scalar FP type field: the format's log2 size (2
// single, 3 double, 1 half) and whether it is allocated. Half-precision
// arithmetic (FEAT_FP16) is not implemented: half only where half says.
func fpType(ptype uint32, half bool) (uint, bool) {
	switch ptype {
	case 0:
		return 2, true
	case 1:
		return 3, true
	case 3:
		return 1, half
	}
	return 0, false
}

// fp1 is the scalar 1-source operation opc (FMOV, FABS, FNEG, FSQRT,
// FRINT*), also used by the vector forms.
func (c *CPU) fp1(opc uint32, a uint64, sz uint) uint64 {
	switch opc {
	case 0:
		return a
	case 1:
		return a &^ fpSignBit(sz)
	case 2:
		return a ^ fpSignBit(sz)
	case 3:
		return c.fp.sqrt(a, sz)
	case 8, 9, 10, 11:
		return c.fp.roundToInt(a, sz, int(opc-8), false)
	case 12:
		return c.fp.roundToInt(a, sz, rmAway, false)
	case 14:
		return c.fp.roundToInt(a, sz, c.fp.rmode(), true)
	case 15:
		return c.fp.roundToInt(a, sz, c.fp.rmode(), false)
	}
	return 0
}

// fp2 is the scalar 2-source operation opc (FMUL, FDIV, FADD, FSUB, FMAX,
// FMIN, FMAXNM, FMINNM, FNMUL).
func (c *CPU) fp2(opc uint32, a, b uint64, sz uint) uint64 {
	switch opc {
	case 0:
		return c.fp.mul(a, b, sz)
	case 1:
		return c.fp.div(a, b, sz)
	case 2:
		return c.fp.add(a, b, sz, false)
	case 3:
		return c.fp.add(a, b, sz, true)
	case 4:
		return c.fp.maxMin(a, b, sz, true, false)
	case 5:
		return c.fp.maxMin(a, b, sz, false, false)
	case 6:
		return c.fp.maxMin(a, b, sz, true, true)
	case 7:
		return c.fp.maxMin(a, b, sz, false, true)
	case 8:
		return c.fp.mul(a, b, sz) ^ fpSignBit(sz)
	}
	return 0
}

// fcvtMode maps the rmode field of FCVT[NPMZ]* (N, P, M, Z) to a rounding
// mode; it happens to be the FPCR encoding.
func fcvtMode(rmode int) int { return rmode }

// SIMD&FP loads and stores.

// ldV loads 1<<sz bytes (sz 0..4) at a into a value pair.
func (c *CPU) ldV(a uint64, sz uint) ([2]uint64, bool) {
	if sz == 4 {
		lo, ok := c.load(a, 3)
		if !ok {
			return [2]uint64{}, false
		}
		hi, ok := c.load(a+8, 3)
		return [2]uint64{lo, hi}, ok
	}
	v, ok := c.load(a, uint8(sz))
	return [2]uint64{v, 0}, ok
}

func (c *CPU) stV(a uint64, sz uint, v [2]uint64) bool {
	if sz == 4 {
		return c.store(a, 3, v[0]) && c.store(a+8, 3, v[1])
	}
	return c.store(a, uint8(sz), v[0])
}

// Field functions of the table's structure load and store lines.

// structMultiOK reports whether a multiple structures opcode and size
// are allocated (the 64-bit elements only in a Q vector but for LD1/ST1).
func structMultiOK(q, opc, size uint32) bool {
	return structSElem(opc) != 0 && (size != 3 || q == 1 || structSElem(opc) == 1)
}

// structNRegs and structSElem are the registers and the elements in a
// structure of a multiple structures opcode; 0: unallocated.
func structNRegs(opc uint32) uint8 {
	return [16]uint8{0: 1, 2: 4, 4: 1, 6: 3, 7: 1, 8: 1, 10: 2}[opc]
}

func structSElem(opc uint32) uint8 {
	return [16]uint8{0: 4, 2: 1, 4: 3, 6: 1, 7: 1, 8: 2, 10: 1}[opc]
}

// structSingleOK reports whether a single structure's opcode (bits
// 15:13, scale = opc>>1 below 3), S and size are allocated.
func structSingleOK(opc, s, size uint32) bool {
	switch opc >> 1 {
	case 1:
		return size&1 == 0
	case 2:
		return size&2 == 0 && (size&1 == 0 || s == 0)
	}
	return true
}

// structSingleEsz is a single structure's log2 element size.
func structSingleEsz(opc, size uint32) uint {
	scale := uint(opc >> 1)
	if scale == 2 && size&1 != 0 {
		return 3
	}
	return scale
}

// structSingleIndex is a single structure's element index: Q:S:size,
// with size's bits below the element size dropped.
func structSingleIndex(q, opc, s, size uint32) uint {
	return uint(q<<3|s<<2|size) >> structSingleEsz(opc, size)
}

// structPost writes back a structure load's or store's base register
// after post-index: by the index register, or (rm = 31) by total bytes.
func (c *CPU) structPost(a *vstructArgs, base, total uint64) {
	if a.post() == 0 {
		return
	}
	if a.rm == 31 {
		c.r[a.rn] = base + total
	} else {
		c.r[a.rn] = base + c.r[a.rm]
	}
}

// execSIMDStructRepl executes LD1R..LD4R; the interpreter has checked
// SP's alignment.
func (c *CPU) execSIMDStructRepl(a *vstructArgs, _ uint64) {
	esz, selem, rt := uint(a.esize()), uint(a.selem()), uint32(a.rd)
	base := c.r[a.rn]
	addr := base
	ebytes := uint64(1) << esz
	for s := uint(0); s < selem; s++ {
		v, ok := c.load(addr, uint8(esz))
		if !ok {
			return
		}
		var r [2]uint64
		for i := uint(0); i < 16>>esz; i++ {
			setElem(&r, i, esz, v)
		}
		c.setVec((rt+uint32(s))&31, r, a.sf)
		addr += ebytes
	}
	c.structPost(a, base, uint64(selem)*ebytes)
}

// execSIMDStructSingle executes LD1..LD4 and ST1..ST4 (single
// structure); the interpreter has checked SP's alignment.
func (c *CPU) execSIMDStructSingle(a *vstructArgs, _ uint64) {
	esz, selem, index, rt := uint(a.esize()), uint(a.selem()), uint(a.index()), uint32(a.rd)
	base := c.r[a.rn]
	addr := base
	ebytes := uint64(1) << esz
	for s := uint(0); s < selem; s++ {
		t := (rt + uint32(s)) & 31
		if a.load() {
			v, ok := c.load(addr, uint8(esz))
			if !ok {
				return
			}
			setElem(&c.vr[t], index, esz, v)
		} else if !c.store(addr, uint8(esz), elem(c.vr[t], index, esz)) {
			return
		}
		addr += ebytes
	}
	c.structPost(a, base, uint64(selem)*ebytes)
}

// execSIMDStructMulti executes LD1..LD4 and ST1..ST4 (multiple
// structures); the interpreter has checked SP's alignment.
func (c *CPU) execSIMDStructMulti(a *vstructArgs, _ uint64) {
	esz, selem, nregs, rt := uint(a.esize()), uint(a.selem()), uint(a.nregs()), uint32(a.rd)
	l := a.load()
	base := c.r[a.rn]
	addr := base
	ebytes := uint64(1) << esz
	elems := uint(8<<b2u(a.sf)) >> esz
	// Load into copies so a fault leaves whole registers untouched.
	var regs [4][2]uint64
	for r := uint(0); r < nregs*selem; r++ {
		regs[r] = c.vr[(rt+uint32(r))&31]
	}
	for r := uint(0); r < nregs; r++ {
		for e := uint(0); e < elems; e++ {
			for s := uint(0); s < selem; s++ {
				t := r + s
				if l {
					v, ok := c.load(addr, uint8(esz))
					if !ok {
						return
					}
					setElem(&regs[t], e, esz, v)
				} else if !c.store(addr, uint8(esz), elem(regs[t], e, esz)) {
					return
				}
				addr += ebytes
			}
		}
	}
	if l {
		for r := uint(0); r < nregs*selem; r++ {
			c.setVec((rt+uint32(r))&31, regs[r], a.sf)
		}
	}
	c.structPost(a, base, uint64(nregs*selem*elems)*ebytes)
}

// clsN counts leading sign bits of an n-bit value, excluding the sign.
func clsN(x uint64, n uint) uint64 {
	x = sext(x, n)
	if int64(x) < 0 {
		x = ^x
	}
	return uint64(bits.LeadingZeros64(x)) - (64 - uint64(n)) - 1
}

// Field functions of the table's scalar FP lines.

// fpOK reports whether the FP type field is a format the arithmetic
// implements (single, double; half only for FCVT: fpCvtOK).
func fpOK(ptype uint32) bool {
	_, ok := fpType(ptype, false)
	return ok
}

// fpSize is the FP type field's log2 size.
func fpSize(ptype uint32) uint {
	sz, _ := fpType(ptype, true)
	return sz
}

// fpCvtOK reports whether FCVT between the two type fields is allocated.
func fpCvtOK(from, to uint32) bool {
	fsz, ok1 := fpType(from, true)
	tsz, ok2 := fpType(to, true)
	return ok1 && ok2 && fsz != tsz
}

// Scalar FP: the execute functions of the table's FP lines.

// execFMRS reads FPCR or FPSR.
func (c *CPU) execFMRS(a *fpsysArgs, _ uint64) {
	v := uint64(c.fp.cr)
	if a.reg() == 1 {
		v = uint64(c.fp.sr)
	}
	c.r[a.rd] = v
}

// execFMSR writes FPCR or FPSR.
func (c *CPU) execFMSR(a *fpsysArgs, _ uint64) {
	v := c.r[a.rn]
	if a.reg() == 1 {
		c.fp.sr = uint32(v) & fpsrMask
	} else {
		c.fp.cr = uint32(v) & fpcrMask
	}
}

// execFCVT converts between FP formats.
func (c *CPU) execFCVT(a *fcvtArgs, _ uint64) {
	sz, to := uint(a.size()), uint(a.toSize())
	c.setScalar(uint32(a.rd), c.fp.convert(elem(c.vr[a.rn], 0, sz), sz, to), to)
}

// execFP1 executes the 1-source operations but FCVT.
func (c *CPU) execFP1(a *fpopArgs, _ uint64) {
	sz := uint(a.size())
	c.setScalar(uint32(a.rd), c.fp1(uint32(a.opc()), elem(c.vr[a.rn], 0, sz), sz), sz)
}

// execFCMP executes FCMP and FCMPE.
func (c *CPU) execFCMP(a *fcmpArgs, _ uint64) {
	sz := uint(a.size())
	x := elem(c.vr[a.rn], 0, sz)
	y := elem(c.vr[a.rm], 0, sz)
	if a.zero() {
		y = 0
	}
	c.setNZCV(c.fp.compare(x, y, sz, a.signal() != 0) << 28)
}

// execFMOVi executes FMOV (scalar, immediate).
func (c *CPU) execFMOVi(a *fpsizeArgs, _ uint64) {
	c.setScalar(uint32(a.rd), a.imm, uint(a.size()))
}

// execFCCMP executes FCCMP and FCCMPE.
func (c *CPU) execFCCMP(a *fccmpArgs, _ uint64) {
	sz := uint(a.size())
	if c.cond(a.cond()) {
		c.setNZCV(c.fp.compare(elem(c.vr[a.rn], 0, sz), elem(c.vr[a.rm], 0, sz), sz, a.signal() != 0) << 28)
	} else {
		c.setNZCV(a.imm << 28)
	}
}

// execFP2 executes the 2-source operations.
func (c *CPU) execFP2(a *fpopArgs, _ uint64) {
	sz := uint(a.size())
	c.setScalar(uint32(a.rd), c.fp2(uint32(a.opc()), elem(c.vr[a.rn], 0, sz), elem(c.vr[a.rm], 0, sz), sz), sz)
}

// execFCSEL executes FCSEL.
func (c *CPU) execFCSEL(a *fcselArgs, _ uint64) {
	sz := uint(a.size())
	src := a.rm
	if c.cond(a.cond()) {
		src = a.rn
	}
	c.setScalar(uint32(a.rd), elem(c.vr[src], 0, sz), sz)
}

// execFP3 executes FMADD, FMSUB, FNMADD and FNMSUB.
func (c *CPU) execFP3(a *fmaddArgs, _ uint64) {
	sz := uint(a.size())
	x, n, m := elem(c.vr[a.addend()], 0, sz), elem(c.vr[a.rn], 0, sz), elem(c.vr[a.rm], 0, sz)
	if a.negAddend() != 0 {
		x ^= fpSignBit(sz)
	}
	if a.negProduct() {
		n ^= fpSignBit(sz)
	}
	c.setScalar(uint32(a.rd), c.fp.mulAdd(x, n, m, sz), sz)
}

// execFMOVtoGP executes FMOV from an FP register (or the upper half of a
// vector) to a general register.
func (c *CPU) execFMOVtoGP(a *fmovgpArgs, _ uint64) {
	c.r[a.rd] = elem(c.vr[a.rn], uint(a.upper()), uint(a.size()))
}

// execFMOVfromGP executes FMOV from a general register.
func (c *CPU) execFMOVfromGP(a *fmovgpArgs, _ uint64) {
	if a.upper() == 1 {
		c.vr[a.rd][1] = c.r[a.rn]
		return
	}
	c.setScalar(uint32(a.rd), c.r[a.rn], uint(a.size()))
}

// execICVTF executes SCVTF and UCVTF (integer and fixed point).
func (c *CPU) execICVTF(a *icvtfArgs, _ uint64) {
	sz := uint(a.size())
	ibits := uint(32) << b2u(a.sf)
	c.setScalar(uint32(a.rd), c.fp.fromFixed(c.r[a.rn], ibits, uint(a.fbits()), a.unsigned(), sz, c.fp.rmode()), sz)
}

// execFCVTI executes FCVT[NPMZA][SU] (integer and fixed point).
func (c *CPU) execFCVTI(a *fcvtiArgs, _ uint64) {
	sz := uint(a.size())
	ibits := uint(32) << b2u(a.sf)
	c.r[a.rd] = c.fp.toFixed(elem(c.vr[a.rn], 0, sz), sz, uint(a.fbits()), a.unsigned(), fcvtMode(int(a.rmode())), ibits)
}

// SIMD&FP loads and stores but the structures: the execute functions of
// the table's V lines.

// execVLDRlit executes LDR (literal, SIMD&FP).
func (c *CPU) execVLDRlit(a *vlitArgs, pc uint64) {
	if v, ok := c.ldV(pc+a.imm, uint(a.size())); ok {
		c.vr[a.rd] = v
	}
}

// vAddr returns the address of a single-register or pair access and the
// base register's written-back value, for the base register rn, the
// offset imm and the addressing mode.
func (c *CPU) vAddr(rn uint8, imm uint64, mode uint8) (a, wb uint64) {
	base := c.r[rn]
	switch mode {
	case modePost:
		return base, base + imm
	case modePre:
		return base + imm, base + imm
	}
	return base + imm, base
}

// execVLDP executes LDP (SIMD&FP).
func (c *CPU) execVLDP(a *vpairArgs, _ uint64) {
	addr, wb := c.vAddr(a.rn, a.imm, a.mode())
	sz := uint(a.size())
	v1, ok := c.ldV(addr, sz)
	if !ok {
		return
	}
	v2, ok := c.ldV(addr+1<<sz, sz)
	if !ok {
		return
	}
	c.vr[a.rd], c.vr[a.rt2()] = v1, v2
	c.r[a.rn] = wb
}

// execVSTP executes STP (SIMD&FP).
func (c *CPU) execVSTP(a *vpairArgs, _ uint64) {
	addr, wb := c.vAddr(a.rn, a.imm, a.mode())
	sz := uint(a.size())
	if c.stV(addr, sz, c.vr[a.rd]) && c.stV(addr+1<<sz, sz, c.vr[a.rt2()]) {
		c.r[a.rn] = wb
	}
}

// execVLDR executes LDR and LDUR (SIMD&FP, immediate).
func (c *CPU) execVLDR(a *vldstArgs, _ uint64) {
	addr, wb := c.vAddr(a.rn, a.imm, a.mode())
	if v, ok := c.ldV(addr, uint(a.size())); ok {
		c.vr[a.rd] = v
		c.r[a.rn] = wb
	}
}

// execVSTR executes STR and STUR (SIMD&FP, immediate).
func (c *CPU) execVSTR(a *vldstArgs, _ uint64) {
	addr, wb := c.vAddr(a.rn, a.imm, a.mode())
	if c.stV(addr, uint(a.size()), c.vr[a.rd]) {
		c.r[a.rn] = wb
	}
}

// execVLDRreg executes LDR (SIMD&FP, register offset).
func (c *CPU) execVLDRreg(a *vldstregArgs, _ uint64) {
	addr := c.r[a.rn] + extendReg(c.r[a.rm], a.extend(), uint8(a.amount()))
	if v, ok := c.ldV(addr, uint(a.size())); ok {
		c.vr[a.rd] = v
	}
}

// execVSTRreg executes STR (SIMD&FP, register offset).
func (c *CPU) execVSTRreg(a *vldstregArgs, _ uint64) {
	c.stV(c.r[a.rn]+extendReg(c.r[a.rm], a.extend(), uint8(a.amount())), uint(a.size()), c.vr[a.rd])
}
