package machine

import "math/bits"

// Advanced SIMD: the vector groups and their scalar twins (which share
// the encodings with bit 28 set and one element).

// vecShape returns the element count of a vector (q) of 2^esz-byte
// elements, or 1 for a scalar.
func vecShape(q bool, esz uint, scalar bool) uint {
	if scalar {
		return 1
	}
	if q {
		return 16 >> esz
	}
	return 8 >> esz
}

// finish writes a result: a scalar of esz, or a vector.
func (c *CPU) finish(rd uint32, r [2]uint64, q bool, scalar bool, esz uint) {
	if scalar {
		c.setScalar(rd, r[0], esz)
		return
	}
	c.setVec(rd, r, q)
}

func boolMask(b bool, esz uint) uint64 {
	if b {
		return ones(8 << esz)
	}
	return 0
}

// shiftBy is the register-controlled shift of SSHL/USHL/SRSHL/URSHL: the
// signed low byte of s shifts x of n bits left (positive) or right.
func shiftBy(x, s uint64, n uint, signed, round bool) uint64 {
	sh := int(int8(s))
	if signed {
		x = sext(x, n)
	} else {
		x &= ones(n)
	}
	if sh >= 0 {
		if sh >= int(n) {
			return 0
		}
		return x << uint(sh) & ones(n)
	}
	r := uint(-sh)
	if round && r > n {
		return 0
	}
	if r > 64 {
		r = 64
	}
	var res, rb uint64
	if signed {
		if r >= 64 {
			res = uint64(int64(x) >> 63)
		} else {
			res = uint64(int64(x) >> r)
		}
	} else if r < 64 {
		res = x >> r
	}
	if round && r <= 64 && r > 0 {
		rb = x >> (r - 1) & 1
	}
	return (res + rb) & ones(n)
}

// satShiftBy is the saturating register-controlled shift of SQSHL,
// UQSHL, SQRSHL and UQRSHL: like shiftBy, but a left shift saturates to
// the n-bit signed or unsigned range (reported) instead of dropping bits.
func satShiftBy(x, s uint64, n uint, signed, round bool) (uint64, bool) {
	sh := int(int8(s))
	if sh < 0 {
		return shiftBy(x, s, n, signed, round), false
	}
	if signed {
		sx := int64(sext(x, n))
		if sx == 0 {
			return 0, false
		}
		if r := sx << uint(sh); sh < int(n) && r>>uint(sh) == sx {
			return satS(r, n) // r>>sh differs only when n = 64
		}
		if sx < 0 {
			return 1 << (n - 1), true
		}
		return ones(n - 1), true
	}
	x &= ones(n)
	if x == 0 {
		return 0, false
	}
	if sh >= int(n) {
		return ones(n), true
	}
	r := x << uint(sh)
	if r>>uint(sh) != x || r > ones(n) {
		return ones(n), true
	}
	return r, false
}

// simdThreeSameOK reports whether execSIMD3Same implements the fields
// (the table's condition).
func simdThreeSameOK(qf, uf, size, opc uint32, scalar bool) bool {
	q, u := qf == 1, uf == 1
	if scalar {
		switch opc {
		case 0x01, 0x05, 0x09, 0x0b: // SQADD/UQADD, SQSUB/UQSUB, [SU]Q[R]SHL
		case 0x16: // SQDMULH, SQRDMULH
			if size == 0 || size == 3 {
				return false
			}
		case 0x06, 0x07, 0x08, 0x0a, 0x10, 0x11: // CMGT.., SSHL, SRSHL, ADD/SUB, CMTST/CMEQ
			if size != 3 {
				return false
			}
		default:
			return false
		}
	} else {
		switch opc {
		case 0x03:
		case 0x01, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x10, 0x11, 0x17:
			if size == 3 && !q {
				return false
			}
			if opc == 0x17 && u {
				return false
			}
		case 0x00, 0x02, 0x04, 0x0c, 0x0d, 0x0e, 0x0f, 0x12, 0x14, 0x15:
			if size == 3 {
				return false
			}
		case 0x13: // MUL, PMUL
			if size == 3 || u && size != 0 {
				return false
			}
		case 0x16: // SQDMULH, SQRDMULH
			if size == 0 || size == 3 {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// execSIMD3Same executes the integer three-same group.
func (c *CPU) execSIMD3Same(arg *simdArgs, _ uint64) {
	q, u, size, opc, scalar := arg.sf, arg.u() == 1, uint32(arg.size()), uint32(arg.opcode()), arg.scalar()
	rd, rn, rm := uint32(arg.rd), uint32(arg.rn), uint32(arg.rm)
	esz := uint(size)
	a, b, d := c.vr[rn], c.vr[rm], c.vr[rd]
	if opc == 0x03 { // logical
		var r [2]uint64
		for i := range 2 {
			x, y, z := a[i], b[i], d[i]
			switch {
			case !u && size == 0:
				r[i] = x & y
			case !u && size == 1:
				r[i] = x &^ y
			case !u && size == 2:
				r[i] = x | y
			case !u:
				r[i] = x | ^y
			case size == 0:
				r[i] = x ^ y
			case size == 1: // BSL
				r[i] = z&x | ^z&y
			case size == 2: // BIT
				r[i] = y&x | ^y&z
			default: // BIF
				r[i] = ^y&x | y&z
			}
		}
		c.setVec(rd, r, q)
		return
	}
	n := vecShape(q, esz, scalar)
	nb := uint(8 << esz)
	var r [2]uint64
	sat := false
	for i := uint(0); i < n; i++ {
		x, y, z := elem(a, i, esz), elem(b, i, esz), elem(d, i, esz)
		sx, sy := int64(sext(x, nb)), int64(sext(y, nb))
		var v uint64
		switch opc {
		case 0x00, 0x02, 0x04: // [SU]HADD, [SU]RHADD, [SU]HSUB
			var s uint64
			if !u {
				s = uint64(sx + sy)
				if opc == 4 {
					s = uint64(sx - sy)
				}
			} else {
				s = x + y
				if opc == 4 {
					s = x - y
				}
			}
			if opc == 2 {
				s++
			}
			if u {
				v = s >> 1
			} else {
				v = uint64(int64(s) >> 1)
			}
		case 0x01, 0x05:
			var qc bool
			v, qc = addSat(x, y, nb, !u, opc == 5)
			sat = sat || qc
		case 0x06: // CMGT, CMHI
			v = boolMask(pick3(u, x > y, sx > sy), esz)
		case 0x07: // CMGE, CMHS
			v = boolMask(pick3(u, x >= y, sx >= sy), esz)
		case 0x08:
			v = shiftBy(x, y, nb, !u, false)
		case 0x0a:
			v = shiftBy(x, y, nb, !u, true)
		case 0x09, 0x0b: // [SU]QSHL, [SU]QRSHL
			var qc bool
			v, qc = satShiftBy(x, y, nb, !u, opc == 0x0b)
			sat = sat || qc
		case 0x0c, 0x14: // [SU]MAX
			v = pickU(pick3(u, x > y, sx > sy), x, y)
		case 0x0d, 0x15: // [SU]MIN
			v = pickU(pick3(u, x < y, sx < sy), x, y)
		case 0x0e, 0x0f: // [SU]ABD, [SU]ABA
			if pick3(u, x > y, sx > sy) {
				v = x - y
			} else {
				v = y - x
			}
			if opc == 0x0f {
				v += z
			}
		case 0x10:
			v = x + y
			if u {
				v = x - y
			}
		case 0x11: // CMTST, CMEQ
			v = boolMask(pick3(u, x == y, x&y != 0), esz)
		case 0x12: // MLA, MLS
			if u {
				v = z - x*y
			} else {
				v = z + x*y
			}
		case 0x13:
			if u {
				v = pmul(x, y, nb)
			} else {
				v = x * y
			}
		case 0x16: // SQDMULH, SQRDMULH
			var qc bool
			v, qc = sqdmulh(sx, sy, nb, u)
			sat = sat || qc
		case 0x17: // ADDP
			v = 0 // pairwise: computed below
		}
		setElem(&r, i, esz, v&ones(nb))
	}
	if opc == 0x14 || opc == 0x15 || opc == 0x17 {
		r = c.pairwise(a, b, n, esz, func(x, y uint64) uint64 {
			sx, sy := int64(sext(x, nb)), int64(sext(y, nb))
			switch opc {
			case 0x14:
				return pickU(pick3(u, x > y, sx > sy), x, y)
			case 0x15:
				return pickU(pick3(u, x < y, sx < sy), x, y)
			}
			return x + y
		})
	}
	if sat {
		c.fp.sr |= fpsrQC
	}
	c.finish(rd, r, q, scalar, esz)
}

// pairwise applies f to adjacent pairs of the concatenation b:a.
func (c *CPU) pairwise(a, b [2]uint64, n, esz uint, f func(x, y uint64) uint64) [2]uint64 {
	var r [2]uint64
	for i := uint(0); i < n; i++ {
		src, j := a, 2*i
		if j >= n {
			src, j = b, j-n
		}
		setElem(&r, i, esz, f(elem(src, j, esz), elem(src, j+1, esz))&ones(8<<esz))
	}
	return r
}

func pick3(u bool, unsigned, signed bool) bool {
	if u {
		return unsigned
	}
	return signed
}

func pickU(cond bool, a, b uint64) uint64 {
	if cond {
		return a
	}
	return b
}

// pmul is the polynomial (carry-less) multiply of n-bit values, truncated.
func pmul(x, y uint64, n uint) uint64 {
	var r uint64
	for i := uint(0); i < n; i++ {
		if y>>i&1 != 0 {
			r ^= x << i
		}
	}
	return r
}

// simdThreeSameFPOK reports whether execSIMD3SameFP implements the
// fields (the table's condition).
func simdThreeSameFPOK(qf, u, a, sz, opc uint32, scalar bool) bool {
	q := qf == 1
	if !scalar && sz == 1 && !q {
		return false
	}
	key := u<<4 | a<<3 | opc
	if scalar {
		switch key {
		case 0x03, 0x04, 0x07, 0x0f, 0x14, 0x15, 0x1a, 0x1c, 0x1d:
		default:
			return false
		}
	} else {
		switch key {
		case 0x00, 0x01, 0x02, 0x03, 0x04, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0e, 0x0f,
			0x10, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x1a, 0x1c, 0x1d, 0x1e:
		default:
			return false
		}
	}
	return true
}

// execSIMD3SameFP is the FP three-same group (single and double).
func (c *CPU) execSIMD3SameFP(arg *simdfpArgs, _ uint64) {
	q, u, a, opc, scalar := arg.sf, uint32(arg.u()), uint32(arg.a()), uint32(arg.opcode()), arg.scalar()
	key := u<<4 | a<<3 | opc
	rd, rn, rm := uint32(arg.rd), uint32(arg.rn), uint32(arg.rm)
	esz := uint(arg.esize())
	va, vb, vd := c.vr[rn], c.vr[rm], c.vr[rd]
	n := vecShape(q, esz, scalar)
	s := &c.fp
	sb := fpSignBit(esz)
	op := func(x, y, d uint64) uint64 {
		switch key {
		case 0x00, 0x10: // FMAXNM, FMAXNMP
			return s.maxMin(x, y, esz, true, true)
		case 0x08, 0x18: // FMINNM, FMINNMP
			return s.maxMin(x, y, esz, false, true)
		case 0x01:
			return s.mulAdd(d, x, y, esz)
		case 0x09:
			return s.mulAdd(d, x^sb, y, esz)
		case 0x02, 0x12: // FADD, FADDP
			return s.add(x, y, esz, false)
		case 0x0a:
			return s.add(x, y, esz, true)
		case 0x03:
			return s.mulx(x, y, esz)
		case 0x13:
			return s.mul(x, y, esz)
		case 0x04:
			return boolMask(s.compareCond(x, y, esz, fcmEQ), esz)
		case 0x14:
			return boolMask(s.compareCond(x, y, esz, fcmGE), esz)
		case 0x1c:
			return boolMask(s.compareCond(x, y, esz, fcmGT), esz)
		case 0x15:
			return boolMask(s.compareCond(x&^sb, y&^sb, esz, fcmGE), esz)
		case 0x1d:
			return boolMask(s.compareCond(x&^sb, y&^sb, esz, fcmGT), esz)
		case 0x06, 0x16:
			return s.maxMin(x, y, esz, true, false)
		case 0x0e, 0x1e:
			return s.maxMin(x, y, esz, false, false)
		case 0x07:
			return s.recipStep(x, y, esz, false)
		case 0x0f:
			return s.recipStep(x, y, esz, true)
		case 0x17:
			return s.div(x, y, esz)
		case 0x1a: // FABD
			return s.add(x, y, esz, true) &^ sb
		}
		return 0
	}
	var r [2]uint64
	switch key {
	case 0x10, 0x18, 0x12, 0x16, 0x1e: // pairwise
		r = c.pairwise(va, vb, n, esz, func(x, y uint64) uint64 { return op(x, y, 0) })
	default:
		for i := uint(0); i < n; i++ {
			setElem(&r, i, esz, op(elem(va, i, esz), elem(vb, i, esz), elem(vd, i, esz)))
		}
	}
	c.finish(rd, r, q, scalar, esz)
}

// accSat is the saturating accumulate of SUQADD (signed, the n-bit
// accumulator d signed and x unsigned, saturating to the signed range) and
// USQADD (d unsigned, x signed, saturating to the unsigned range).
func accSat(d, x uint64, n uint, signed bool) (uint64, bool) {
	if n < 64 {
		if signed {
			return satS(int64(sext(d, n))+int64(x&ones(n)), n)
		}
		return satU(int64(d&ones(n))+int64(sext(x, n)), n)
	}
	if signed {
		sd := int64(d)
		switch {
		case sd >= 0 && x > uint64(1<<63-1-sd):
			return 1<<63 - 1, true
		case sd < 0 && x >= 1<<63 && x-1<<63 >= uint64(-sd):
			return 1<<63 - 1, true
		}
		return d + x, false
	}
	if sx := int64(x); sx >= 0 {
		if s := d + x; s >= d {
			return s, false
		}
		return ^uint64(0), true
	} else if m := uint64(-sx); m > d {
		return 0, true
	} else {
		return d - m, false
	}
}

// simdTwoMiscOK reports whether execSIMD2Misc implements the fields (the
// table's condition).
func simdTwoMiscOK(qf, u, size, opc uint32, scalar bool) bool {
	q := qf == 1
	key := u<<5 | opc
	if opc >= 0x0c && opc <= 0x0f || opc >= 0x18 {
		return simdTwoMiscFPOK(qf, u, size>>1, size&1, opc, scalar)
	}
	if scalar {
		switch key {
		case 0x08, 0x09, 0x0a, 0x0b, 0x28, 0x29, 0x2b: // CM* zero, ABS, NEG
			if size != 3 {
				return false
			}
		case 0x03, 0x23, 0x07, 0x27: // SUQADD, USQADD, SQABS, SQNEG
		case 0x14, 0x34, 0x32: // SQXTN, UQXTN, SQXTUN
			if size == 3 {
				return false
			}
		case 0x36: // FCVTXN
			if size != 1 {
				return false
			}
		default:
			return false
		}
	} else {
		switch key {
		case 0x00: // REV64
			if size == 3 {
				return false
			}
		case 0x20, 0x01: // REV32, REV16
			if size >= 2-opc&1 {
				return false
			}
		case 0x02, 0x22, 0x06, 0x26, 0x04, 0x24: // [SU]ADDLP, [SU]ADALP, CLS, CLZ
			if size == 3 {
				return false
			}
		case 0x05: // CNT
			if size != 0 {
				return false
			}
		case 0x25: // NOT, RBIT
			if size > 1 {
				return false
			}
		case 0x03, 0x23, 0x07, 0x27, 0x08, 0x09, 0x0a, 0x0b, 0x28, 0x29, 0x2b:
			if size == 3 && !q {
				return false
			}
		case 0x12, 0x14, 0x34, 0x32, 0x33: // XTN, SQXTN, UQXTN, SQXTUN, SHLL
			if size == 3 {
				return false
			}
		case 0x16, 0x17: // FCVTN, FCVTL (size<1> set: BFCVTN, not Armv8.0)
			if size > 1 {
				return false
			}
		case 0x36: // FCVTXN
			if size != 1 {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// execSIMD2Misc is the two-register miscellaneous group.
func (c *CPU) execSIMD2Misc(arg *simdArgs, _ uint64) {
	q, u, size, opc, scalar := arg.sf, uint32(arg.u()), uint32(arg.size()), uint32(arg.opcode()), arg.scalar()
	rd, rn := uint32(arg.rd), uint32(arg.rn)
	esz := uint(size)
	key := u<<5 | opc
	a, d := c.vr[rn], c.vr[rd]
	n := vecShape(q, esz, scalar)
	nb := uint(8 << esz)
	var r [2]uint64
	sat := false
	switch key {
	case 0x00, 0x20, 0x01: // REV64, REV32, REV16
		cont := uint(3 - u - 2*(opc&1)) // container log2 bytes: REV64 3, REV32 2, REV16 1
		per := uint(1) << (cont - esz)
		for i := uint(0); i < n; i++ {
			base := i &^ (per - 1)
			setElem(&r, base+per-1-(i-base), esz, elem(a, i, esz))
		}
	case 0x02, 0x22, 0x06, 0x26: // [SU]ADDLP, [SU]ADALP
		for i := uint(0); i < n/2; i++ {
			x, y := elem(a, 2*i, esz), elem(a, 2*i+1, esz)
			if u == 0 {
				x, y = sext(x, nb), sext(y, nb)
			}
			v := x + y
			if opc == 6 {
				v += elem(d, i, esz+1)
			}
			setElem(&r, i, esz+1, v&ones(2*nb))
		}
	case 0x04, 0x24: // CLS, CLZ
		for i := uint(0); i < n; i++ {
			x := elem(a, i, esz)
			if u == 1 {
				setElem(&r, i, esz, uint64(bits.LeadingZeros64(x))-(64-uint64(nb)))
			} else {
				setElem(&r, i, esz, clsN(x, nb))
			}
		}
	case 0x05:
		for i := uint(0); i < n; i++ {
			setElem(&r, i, 0, uint64(bits.OnesCount8(uint8(elem(a, i, 0)))))
		}
	case 0x25:
		for i := uint(0); i < vecShape(q, 0, false); i++ {
			x := uint8(elem(a, i, 0))
			if size == 0 {
				x = ^x
			} else {
				x = bits.Reverse8(x)
			}
			setElem(&r, i, 0, uint64(x))
		}
	case 0x03, 0x23: // SUQADD, USQADD
		for i := uint(0); i < n; i++ {
			v, qc := accSat(elem(d, i, esz), elem(a, i, esz), nb, u == 0)
			sat = sat || qc
			setElem(&r, i, esz, v)
		}
	case 0x07, 0x27: // SQABS, SQNEG
		for i := uint(0); i < n; i++ {
			x := int64(sext(elem(a, i, esz), nb))
			if u == 1 || x < 0 {
				x = -x
			}
			var v uint64
			var qc bool
			if nb == 64 && x == -1<<63 {
				v, qc = 1<<63-1, true
			} else {
				v, qc = satS(x, nb)
			}
			sat = sat || qc
			setElem(&r, i, esz, v)
		}
	case 0x08, 0x09, 0x0a, 0x28, 0x29: // CMGT, CMEQ, CMLT, CMGE, CMLE (zero)
		for i := uint(0); i < n; i++ {
			x := int64(sext(elem(a, i, esz), nb))
			var b bool
			switch key {
			case 0x08:
				b = x > 0
			case 0x09:
				b = x == 0
			case 0x0a:
				b = x < 0
			case 0x28:
				b = x >= 0
			case 0x29:
				b = x <= 0
			}
			setElem(&r, i, esz, boolMask(b, esz))
		}
	case 0x0b, 0x2b: // ABS, NEG
		for i := uint(0); i < n; i++ {
			x := int64(sext(elem(a, i, esz), nb))
			if u == 1 || x < 0 {
				x = -x
			}
			setElem(&r, i, esz, uint64(x)&ones(nb))
		}
	case 0x12, 0x14, 0x34, 0x32: // XTN, SQXTN, UQXTN, SQXTUN
		m := uint(8 >> esz)
		if scalar {
			m = 1
		}
		for i := uint(0); i < m; i++ {
			x := elem(a, i, esz+1)
			var v uint64
			var qc bool
			switch key {
			case 0x12:
				v = x & ones(nb)
			case 0x14:
				v, qc = satS(int64(sext(x, 2*nb)), nb)
			case 0x34:
				if nb == 32 && x > ones(32) {
					v, qc = ones(32), true
				} else {
					v, qc = satU(int64(x), nb)
				}
			case 0x32:
				v, qc = satU(int64(sext(x, 2*nb)), nb)
			}
			sat = sat || qc
			setElem(&r, i, esz, v)
		}
		if scalar {
			c.setScalar(rd, r[0], esz)
		} else {
			c.writeNarrow(rd, r, q)
		}
		if sat {
			c.fp.sr |= fpsrQC
		}
		return
	case 0x33: // SHLL
		src := a[0]
		if q {
			src = a[1]
		}
		for i := uint(0); i < 8>>esz; i++ {
			setElem(&r, i, esz+1, elem([2]uint64{src}, i, esz)<<nb)
		}
		c.vr[rd] = r
		return
	case 0x16: // FCVTN: size<0> picks double->single (1) or single->half (0)
		from := uint(2 + size&1)
		to := from - 1
		for i := uint(0); i < uint(2+2*(1-size&1)); i++ {
			setElem(&r, i, to, c.fp.convert(elem(a, i, from), from, to))
		}
		c.writeNarrow(rd, r, q)
		return
	case 0x36: // FCVTXN: double to single, rounding to odd
		m := uint(2)
		if scalar {
			m = 1
		}
		for i := uint(0); i < m; i++ {
			setElem(&r, i, 2, c.fp.convertRM(elem(a, i, 3), 3, 2, rmOdd))
		}
		if scalar {
			c.setScalar(rd, r[0], 2)
		} else {
			c.writeNarrow(rd, r, q)
		}
		return
	case 0x17: // FCVTL
		to := uint(2 + size&1)
		from := to - 1
		src := a[0]
		if q {
			src = a[1]
		}
		for i := uint(0); i < uint(2+2*(1-size&1)); i++ {
			setElem(&r, i, to, c.fp.convert(elem([2]uint64{src}, i, from), from, to))
		}
		c.vr[rd] = r
		return
	}
	if sat {
		c.fp.sr |= fpsrQC
	}
	c.finish(rd, r, q, scalar, esz)
}

// writeNarrow writes a narrowed result (64 bits in r[0]) to the low half
// of rd, or with Q (the "2" forms) to the high half, keeping the low.
func (c *CPU) writeNarrow(rd uint32, r [2]uint64, q bool) {
	if q {
		c.vr[rd][1] = r[0]
		return
	}
	c.vr[rd] = [2]uint64{r[0], 0}
}

// simdTwoMiscFPOK reports whether execSIMD2MiscFP implements the fields
// (the table's condition).
func simdTwoMiscFPOK(qf, u, a, sz, opc uint32, scalar bool) bool {
	q := qf == 1
	if !scalar && sz == 1 && !q {
		return false
	}
	key := u<<6 | a<<5 | opc
	if scalar {
		switch key {
		case 0x1a, 0x1b, 0x1c, 0x1d, 0x3a, 0x3b, 0x2c, 0x2d, 0x2e, 0x6c, 0x6d,
			0x5a, 0x5b, 0x5c, 0x5d, 0x7a, 0x7b,
			0x3d, 0x7d, 0x3f: // FRECPE, FRSQRTE, FRECPX
		default:
			return false
		}
	} else {
		switch key {
		case 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x2c, 0x2d, 0x2e, 0x2f, 0x38, 0x39, 0x3a, 0x3b,
			0x58, 0x59, 0x5a, 0x5b, 0x5c, 0x5d, 0x6c, 0x6d, 0x6f, 0x79, 0x7a, 0x7b, 0x7f,
			0x3d, 0x7d: // FRECPE, FRSQRTE
		case 0x3c, 0x7c: // URECPE, URSQRTE
			if sz != 0 {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// execSIMD2MiscFP is the FP part of two-register miscellaneous.
func (c *CPU) execSIMD2MiscFP(arg *simdfpArgs, _ uint64) {
	q, u, a, opc, scalar := arg.sf, uint32(arg.u()), uint32(arg.a()), uint32(arg.opcode()), arg.scalar()
	rd, rn := uint32(arg.rd), uint32(arg.rn)
	key := u<<6 | a<<5 | opc
	esz := uint(arg.esize())
	s := &c.fp
	src := c.vr[rn]
	n := vecShape(q, esz, scalar)
	ibits := uint(8 << esz)
	var r [2]uint64
	for i := uint(0); i < n; i++ {
		x := elem(src, i, esz)
		var v uint64
		switch key {
		case 0x18, 0x19, 0x38, 0x39: // FRINTN, FRINTM, FRINTP, FRINTZ
			v = s.roundToInt(x, esz, [4]int{rmNearest, rmMinInf, rmPlusInf, rmZero}[a<<1|opc&1], false)
		case 0x58:
			v = s.roundToInt(x, esz, rmAway, false)
		case 0x59:
			v = s.roundToInt(x, esz, s.rmode(), true)
		case 0x79:
			v = s.roundToInt(x, esz, s.rmode(), false)
		case 0x1a, 0x1b, 0x3a, 0x3b, 0x5a, 0x5b, 0x7a, 0x7b: // FCVT[NMPZ][SU]
			rm := [4]int{rmNearest, rmMinInf, rmPlusInf, rmZero}[a<<1|opc&1]
			v = s.toFixed(x, esz, 0, u == 1, rm, ibits)
		case 0x1c, 0x5c: // FCVTAS, FCVTAU
			v = s.toFixed(x, esz, 0, u == 1, rmAway, ibits)
		case 0x1d, 0x5d: // SCVTF, UCVTF
			v = s.fromFixed(x, ibits, 0, u == 1, esz, s.rmode())
		case 0x2c: // FCMGT zero
			v = boolMask(s.compareCond(x, 0, esz, fcmGT), esz)
		case 0x2d:
			v = boolMask(s.compareCond(x, 0, esz, fcmEQ), esz)
		case 0x2e: // FCMLT zero
			v = boolMask(s.compareCond(0, x, esz, fcmGT), esz)
		case 0x6c:
			v = boolMask(s.compareCond(x, 0, esz, fcmGE), esz)
		case 0x6d: // FCMLE zero
			v = boolMask(s.compareCond(0, x, esz, fcmGE), esz)
		case 0x2f:
			v = x &^ fpSignBit(esz)
		case 0x6f:
			v = x ^ fpSignBit(esz)
		case 0x7f:
			v = s.sqrt(x, esz)
		case 0x3d:
			v = s.recipEstimateFP(x, esz)
		case 0x7d:
			v = s.rsqrtEstimateFP(x, esz)
		case 0x3f:
			v = s.recpX(x, esz)
		case 0x3c:
			v = uRecipEstimate(x)
		case 0x7c:
			v = uRsqrtEstimate(x)
		}
		setElem(&r, i, esz, v)
	}
	c.finish(rd, r, q, scalar, esz)
}

// simdAcrossOK reports whether execSIMDAcross implements the fields (the
// table's condition).
func simdAcrossOK(qf, u, size, opc uint32) bool {
	q := qf == 1
	switch {
	case opc == 0x0c || opc == 0x0f:
		if u != 1 || size&1 != 0 || !q {
			return false // only the single-precision forms (FP16 forms use u=0)
		}
	case opc == 0x03 || opc == 0x0a || opc == 0x1a || opc == 0x1b && u == 0:
		if size == 3 || size == 2 && !q {
			return false
		}
	default:
		return false
	}
	return true
}

// execSIMDAcross is the across-lanes group.
func (c *CPU) execSIMDAcross(arg *simdArgs, _ uint64) {
	q, u, size, opc := arg.sf, uint32(arg.u()), uint32(arg.size()), uint32(arg.opcode())
	rd, rn := uint32(arg.rd), uint32(arg.rn)
	esz := uint(size)
	fpOp := opc == 0x0c || opc == 0x0f
	if fpOp {
		esz = 2 // single precision
	}
	a := c.vr[rn]
	n := vecShape(q, esz, false)
	nb := uint(8 << esz)
	if fpOp {
		isMin := size>>1 == 1
		var red func(lo, hi uint) uint64
		red = func(lo, cnt uint) uint64 {
			if cnt == 1 {
				return elem(a, lo, esz)
			}
			h := cnt / 2
			x, y := red(lo, h), red(lo+h, h)
			return c.fp.maxMin(x, y, esz, !isMin, opc == 0x0c)
		}
		c.setScalar(rd, red(0, n), esz)
		return
	}
	var acc uint64
	for i := uint(0); i < n; i++ {
		x := elem(a, i, esz)
		sx := int64(sext(x, nb))
		if i == 0 && opc != 0x03 && opc != 0x1b {
			acc = x
			continue
		}
		sa := int64(sext(acc, nb))
		switch opc {
		case 0x03: // [SU]ADDLV
			if u == 0 {
				x = sext(x, nb)
			}
			acc += x
		case 0x1b:
			acc += x
		case 0x0a:
			acc = pickU(pick3(u == 1, x > acc, sx > sa), x, acc)
		case 0x1a:
			acc = pickU(pick3(u == 1, x < acc, sx < sa), x, acc)
		}
	}
	if opc == 0x03 {
		c.setScalar(rd, acc, esz+1)
	} else {
		c.setScalar(rd, acc, esz)
	}
}

// simdPairwiseScalarOK reports whether execSIMDPairwise implements the
// fields (the table's condition).
func simdPairwiseScalarOK(u, size, opc uint32) bool {
	switch {
	case u == 0 && opc == 0x1b:
		if size != 3 {
			return false
		}
	case u == 1 && (opc == 0x0c || opc == 0x0d || opc == 0x0f):
		if opc == 0x0d && size>>1 != 0 {
			return false
		}
	default:
		return false
	}
	return true
}

// execSIMDPairwise is ADDP (scalar) and the FP pairwise reductions of a
// two-element vector.
func (c *CPU) execSIMDPairwise(arg *simdArgs, _ uint64) {
	size, opc := uint32(arg.size()), uint32(arg.opcode())
	rd, rn := uint32(arg.rd), uint32(arg.rn)
	esz := 2 + uint(size&1) // FP: single or double
	if opc == 0x1b {
		esz = 3 // ADDP
	}
	a := c.vr[rn]
	x, y := elem(a, 0, esz), elem(a, 1, esz)
	var v uint64
	switch {
	case opc == 0x1b:
		v = x + y
	case opc == 0x0d:
		v = c.fp.add(x, y, esz, false)
	default:
		v = c.fp.maxMin(x, y, esz, size>>1 == 0, opc == 0x0c)
	}
	c.setScalar(rd, v, esz)
}

// simdThreeDiffOK reports whether execSIMD3Diff implements the fields
// (the table's condition).
func simdThreeDiffOK(u, size, opc uint32, scalar bool) bool {
	switch opc {
	case 9, 11, 13: // SQDMLAL, SQDMLSL, SQDMULL
		if u != 0 || size == 0 || size == 3 {
			return false
		}
	case 0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 12:
		if size == 3 || scalar {
			return false
		}
	case 14: // PMULL (8-bit only here)
		if u != 0 || size != 0 || scalar {
			return false
		}
	default:
		return false
	}
	return true
}

// execSIMD3Diff is the three-different group (widening and narrowing),
// whose scalar forms are SQDMLAL, SQDMLSL and SQDMULL.
func (c *CPU) execSIMD3Diff(arg *simdArgs, _ uint64) {
	q, u, size, opc, scalar := arg.sf, uint32(arg.u()), uint32(arg.size()), uint32(arg.opcode()), arg.scalar()
	rd, rn, rm := uint32(arg.rd), uint32(arg.rn), uint32(arg.rm)
	esz := uint(size)
	a, b, d := c.vr[rn], c.vr[rm], c.vr[rd]
	nb := uint(8 << esz)
	if opc == 9 || opc == 11 || opc == 13 {
		if q && !scalar { // the "2" forms
			a, b = [2]uint64{a[1]}, [2]uint64{b[1]}
		}
		c.satDoublingLong(rd, a, b, -1, opc, esz, scalar)
		return
	}
	half := func(v [2]uint64) [2]uint64 {
		if q {
			return [2]uint64{v[1]}
		}
		return [2]uint64{v[0]}
	}
	ext := func(x uint64) uint64 {
		if u == 0 {
			return sext(x, nb)
		}
		return x
	}
	var r [2]uint64
	n := uint(8 >> esz)
	switch opc {
	case 4, 6: // [R]ADDHN, [R]SUBHN
		for i := uint(0); i < 2*n/2; i++ {
			x, y := elem(a, i, esz+1), elem(b, i, esz+1)
			if opc == 6 {
				y = -y
			}
			s := x + y
			if u == 1 {
				s += 1 << (nb - 1)
			}
			setElem(&r, i, esz, s>>nb&ones(nb))
		}
		c.writeNarrow(rd, r, q)
		return
	}
	ha, hb := half(a), half(b)
	for i := uint(0); i < n; i++ {
		var x uint64
		if opc == 1 || opc == 3 { // wide first operand
			x = elem(a, i, esz+1)
		} else {
			x = ext(elem(ha, i, esz))
		}
		y := ext(elem(hb, i, esz))
		acc := elem(d, i, esz+1)
		var v uint64
		switch opc {
		case 0, 1:
			v = x + y
		case 2, 3:
			v = x - y
		case 5, 7: // [SU]ABAL, [SU]ABDL
			if u == 0 && int64(x) > int64(y) || u == 1 && x > y {
				v = x - y
			} else {
				v = y - x
			}
			if opc == 5 {
				v += acc
			}
		case 8:
			v = acc + x*y
		case 10:
			v = acc - x*y
		case 12:
			v = x * y
		case 14:
			v = pmul(elem(ha, i, 0), elem(hb, i, 0), 16)
		}
		setElem(&r, i, esz+1, v&ones(2*nb))
	}
	c.vr[rd] = r
}

// satDoublingLong writes SQDMULL (opc 13), SQDMLAL (9) or SQDMLSL (11)
// of the elements of esz in the low halves of a and b, or, for idx >= 0
// (by element), of a's elements and element idx of b, to the wide
// elements of rd.
func (c *CPU) satDoublingLong(rd uint32, a, b [2]uint64, idx int, opc uint32, esz uint, scalar bool) {
	nb := uint(8 << esz)
	n := uint(8 >> esz)
	if scalar {
		n = 1
	}
	d := c.vr[rd]
	var r [2]uint64
	sat := false
	for i := uint(0); i < n; i++ {
		j := i
		if idx >= 0 {
			j = uint(idx)
		}
		x, y := int64(sext(elem(a, i, esz), nb)), int64(sext(elem(b, j, esz), nb))
		var v uint64
		var qc bool
		switch opc {
		case 13:
			v, qc = sqdmull(x, y, nb)
		default:
			v, qc = sqdmlal(elem(d, i, esz+1), x, y, nb, opc == 11)
		}
		sat = sat || qc
		setElem(&r, i, esz+1, v)
	}
	if sat {
		c.fp.sr |= fpsrQC
	}
	if scalar {
		c.setScalar(rd, r[0], esz+1)
		return
	}
	c.vr[rd] = r
}

// The copy group: DUP (element, general), INS, SMOV, UMOV, and DUP
// (scalar, element), decoded by the table (esize = the element size, imm
// = the element index, sf = Q).

// copyEsz and copyIdx decode imm5: the element size and index.
func copyEsz(imm5 uint32) uint { return uint(bits.TrailingZeros32(imm5)) }

func copyIdx(imm5 uint32) uint32 { return imm5 >> (copyEsz(imm5) + 1) }

// execSIMDDupS executes DUP (scalar, element).
func (c *CPU) execSIMDDupS(a *copyArgs, _ uint64) {
	esz := uint(a.esize())
	c.setScalar(uint32(a.rd), elem(c.vr[a.rn], uint(a.imm), esz), esz)
}

// execSIMDInsE executes INS (element).
func (c *CPU) execSIMDInsE(a *inselemArgs, _ uint64) {
	esz := uint(a.esize())
	setElem(&c.vr[a.rd], uint(a.imm), esz, elem(c.vr[a.rn], uint(a.srcIndex()), esz))
}

// dup writes x to every element of a vector.
func (c *CPU) dup(rd uint8, x uint64, esz uint, q bool) {
	var r [2]uint64
	for i := uint(0); i < vecShape(q, esz, false); i++ {
		setElem(&r, i, esz, x)
	}
	c.setVec(uint32(rd), r, q)
}

// execSIMDDupE executes DUP (element).
func (c *CPU) execSIMDDupE(a *copyArgs, _ uint64) {
	esz := uint(a.esize())
	c.dup(a.rd, elem(c.vr[a.rn], uint(a.imm), esz), esz, a.sf)
}

// execSIMDDupG executes DUP (general).
func (c *CPU) execSIMDDupG(a *copyArgs, _ uint64) {
	esz := uint(a.esize())
	c.dup(a.rd, c.r[a.rn]&ones(8<<esz), esz, a.sf)
}

// execSIMDInsG executes INS (general).
func (c *CPU) execSIMDInsG(a *copyArgs, _ uint64) {
	esz := uint(a.esize())
	setElem(&c.vr[a.rd], uint(a.imm), esz, c.r[a.rn]&ones(8<<esz))
}

// execSIMDSMOV executes SMOV.
func (c *CPU) execSIMDSMOV(a *copyArgs, _ uint64) {
	esz := uint(a.esize())
	c.r[a.rd] = wr(a.sf, sext(elem(c.vr[a.rn], uint(a.imm), esz), 8<<esz))
}

// execSIMDUMOV executes UMOV.
func (c *CPU) execSIMDUMOV(a *copyArgs, _ uint64) {
	c.r[a.rd] = elem(c.vr[a.rn], uint(a.imm), uint(a.esize()))
}

// execSIMDPermute is UZP1/2, TRN1/2, ZIP1/2.
func (c *CPU) execSIMDPermute(arg *simdArgs, _ uint64) {
	q, size, opc := arg.sf, uint32(arg.size()), uint32(arg.opcode())
	rd, rn, rm := uint32(arg.rd), uint32(arg.rn), uint32(arg.rm)
	esz := uint(size)
	a, b := c.vr[rn], c.vr[rm]
	n := vecShape(q, esz, false)
	part := uint(opc >> 2)
	var r [2]uint64
	for i := uint(0); i < n; i++ {
		var v uint64
		switch opc & 3 {
		case 1: // UZP
			j := 2*i + part
			if j < n {
				v = elem(a, j, esz)
			} else {
				v = elem(b, j-n, esz)
			}
		case 2: // TRN
			j := i&^1 + part
			if i&1 == 0 {
				v = elem(a, j, esz)
			} else {
				v = elem(b, j, esz)
			}
		case 3: // ZIP
			j := part*n/2 + i/2
			if i&1 == 0 {
				v = elem(a, j, esz)
			} else {
				v = elem(b, j, esz)
			}
		}
		setElem(&r, i, esz, v)
	}
	c.setVec(rd, r, q)
}

// execSIMDExt is EXT.
func (c *CPU) execSIMDExt(in *inst, _ uint64) {
	q, imm4 := in.sf, uint(in.imm)
	rd, rn, rm := uint32(in.rd), uint32(in.rn), uint32(in.rm)
	a, b := c.vr[rn], c.vr[rm]
	n := vecShape(q, 0, false)
	var r [2]uint64
	for i := uint(0); i < n; i++ {
		j := i + imm4
		if j < n {
			setElem(&r, i, 0, elem(a, j, 0))
		} else {
			setElem(&r, i, 0, elem(b, j-n, 0))
		}
	}
	c.setVec(rd, r, q)
}

// execSIMDTbl is TBL and TBX.
func (c *CPU) execSIMDTbl(arg *tblArgs, _ uint64) {
	q, l, tbx := arg.sf, uint(arg.regs()), arg.tbx()
	rd, rn, rm := uint32(arg.rd), uint32(arg.rn), uint32(arg.rm)
	idx, d := c.vr[rm], c.vr[rd]
	var r [2]uint64
	for i := uint(0); i < vecShape(q, 0, false); i++ {
		x := uint(elem(idx, i, 0))
		switch {
		case x < 16*l:
			setElem(&r, i, 0, elem(c.vr[(rn+uint32(x/16))&31], x%16, 0))
		case tbx:
			setElem(&r, i, 0, elem(d, i, 0))
		}
	}
	c.setVec(rd, r, q)
}

// The forms of a modified immediate's operation (modimmArgs.form).
const (
	modImmMOVI = iota // MOVI, FMOV: the immediate
	modImmMVNI        // its complement
	modImmORR         // rd | the immediate
	modImmBIC         // rd &^ the immediate
)

// modImmForm is the operation of a modified immediate's op and cmode.
func modImmForm(op, cmode uint32) uint8 {
	isLogic := cmode&1 == 1 && cmode < 12
	switch {
	case isLogic && op == 0:
		return modImmORR
	case isLogic:
		return modImmBIC
	case op == 1 && cmode < 14:
		return modImmMVNI
	}
	return modImmMOVI
}

// modImmExpand is AdvSIMDExpandImm: the 64-bit immediate of op, cmode
// and imm8 (a:b:c:d:e:f:g:h).
func modImmExpand(op, cmode, imm8w uint32) uint64 {
	imm8 := uint64(imm8w)
	var imm uint64
	switch cmode >> 1 {
	case 0, 1, 2, 3:
		imm = replicate(imm8<<(8*(cmode>>1)), 32, 64)
	case 4, 5:
		imm = replicate(imm8<<(8*(cmode>>1&1)), 16, 64)
	case 6:
		if cmode&1 == 0 {
			imm = replicate(imm8<<8|0xff, 32, 64)
		} else {
			imm = replicate(imm8<<16|0xffff, 32, 64)
		}
	case 7:
		switch {
		case cmode&1 == 0 && op == 0:
			imm = replicate(imm8, 8, 64)
		case cmode&1 == 0:
			for i := uint(0); i < 8; i++ {
				if imm8>>i&1 != 0 {
					imm |= 0xff << (8 * i)
				}
			}
		case op == 0:
			imm = replicate(vfpExpandImm(uint32(imm8), 2), 32, 64)
		default:
			imm = vfpExpandImm(uint32(imm8), 3)
		}
	}
	return imm
}

// execSIMDModImm executes MOVI, MVNI, ORR, BIC (vector, immediate) and
// FMOV (vector, immediate).
func (c *CPU) execSIMDModImm(arg *modimmArgs, _ uint64) {
	imm, d := arg.imm, c.vr[arg.rd]
	var r [2]uint64
	for i := range 2 {
		switch arg.form() {
		case modImmORR:
			r[i] = d[i] | imm
		case modImmBIC:
			r[i] = d[i] &^ imm
		case modImmMVNI:
			r[i] = ^imm
		default:
			r[i] = imm
		}
	}
	c.setVec(uint32(arg.rd), r, arg.sf)
}

// shiftEsz is a shift by immediate's log2 element size: immh's highest
// set bit.
func shiftEsz(immh uint32) uint { return uint(bits.Len32(immh)) - 1 }

// shiftRight is a shift by immediate's right shift amount, 2 * esize bits
// - immh:immb (1 to esize bits).
func shiftRight(immh, immb uint32) uint { return 16<<shiftEsz(immh) - uint(immh<<3|immb) }

// shiftLeft is a shift by immediate's left shift amount, immh:immb -
// esize bits (0 to esize bits - 1).
func shiftLeft(immh, immb uint32) uint { return uint(immh<<3|immb) - 8<<shiftEsz(immh) }

// simdShiftImmOK reports whether execSIMDShiftImm implements the fields
// (the table's condition).
func simdShiftImmOK(qf, u, immh, opc uint32, scalar bool) bool {
	q := qf == 1
	esz := shiftEsz(immh)
	key := u<<5 | opc
	switch key {
	case 0x00, 0x20, 0x02, 0x22, 0x04, 0x24, 0x06, 0x26, 0x28, 0x0a, 0x2a:
		if scalar && esz != 3 || !scalar && esz == 3 && !q {
			return false
		}
	case 0x0e, 0x2e, 0x2c: // SQSHL, UQSHL (immediate), SQSHLU
		if !scalar && esz == 3 && !q {
			return false
		}
	case 0x12, 0x13, 0x30, 0x31, 0x32, 0x33: // SQ[R]SHRN, SQ[R]SHRUN, UQ[R]SHRN
		if esz == 3 {
			return false
		}
	case 0x14, 0x34, 0x10, 0x11: // [SU]SHLL, SHRN, RSHRN
		if scalar || esz == 3 {
			return false
		}
	case 0x1c, 0x3c, 0x1f, 0x3f: // [SU]CVTF, FCVTZ[SU] (fixed point)
		if esz < 2 || !scalar && esz == 3 && !q {
			return false
		}
	default:
		return false
	}
	return true
}

// execSIMDShiftImm is the shift-by-immediate group, vector and scalar.
func (c *CPU) execSIMDShiftImm(arg *simdshiftArgs, _ uint64) {
	q, u, opc, scalar := arg.sf, uint32(arg.u()), uint32(arg.opcode()), arg.scalar()
	rd, rn := uint32(arg.rd), uint32(arg.rn)
	esz := uint(arg.esize())
	nb := uint(8 << esz)
	rshift, lshift := uint(arg.rshift()), uint(arg.lshift())
	key := u<<5 | opc
	a, d := c.vr[rn], c.vr[rd]
	var r [2]uint64
	switch key {
	case 0x14, 0x34: // SSHLL, USHLL
		src := [2]uint64{a[0]}
		if q {
			src[0] = a[1]
		}
		for i := uint(0); i < 8>>esz; i++ {
			x := elem(src, i, esz)
			if u == 0 {
				x = sext(x, nb)
			}
			setElem(&r, i, esz+1, x<<lshift&ones(2*nb))
		}
		c.vr[rd] = r
		return
	case 0x10, 0x11: // SHRN, RSHRN
		for i := uint(0); i < 8>>esz; i++ {
			x := elem(a, i, esz+1)
			if opc == 0x11 {
				x += 1 << (rshift - 1)
			}
			setElem(&r, i, esz, x>>rshift&ones(nb))
		}
		c.writeNarrow(rd, r, q)
		return
	case 0x12, 0x13, 0x30, 0x31, 0x32, 0x33:
		m := uint(8 >> esz)
		if scalar {
			m = 1
		}
		sat := false
		for i := uint(0); i < m; i++ {
			v, qc := shiftRightNarrowSat(elem(a, i, esz+1), rshift, nb, opc&1 != 0, key >= 0x32, u == 1)
			sat = sat || qc
			setElem(&r, i, esz, v)
		}
		if sat {
			c.fp.sr |= fpsrQC
		}
		if scalar {
			c.setScalar(rd, r[0], esz)
		} else {
			c.writeNarrow(rd, r, q)
		}
		return
	}
	n := vecShape(q, esz, scalar)
	sat := false
	for i := uint(0); i < n; i++ {
		x, z := elem(a, i, esz), elem(d, i, esz)
		var v uint64
		switch key {
		case 0x0e, 0x2e, 0x2c:
			var qc bool
			v, qc = shiftLeftSat(x, lshift, nb, key == 0x2e, u == 1)
			sat = sat || qc
		case 0x00, 0x20, 0x02, 0x22, 0x04, 0x24, 0x06, 0x26: // [SU][R]SHR, [SU][R]SRA
			v = shiftBy(x, uint64(-int64(rshift)), nb, u == 0, opc&4 != 0)
			if opc&2 != 0 {
				v += z
			}
		case 0x0a: // SHL
			v = x << lshift
		case 0x2a: // SLI
			v = x<<lshift | z&ones(lshift)
		case 0x28: // SRI
			v = z
			if rshift < nb {
				v = z&^(ones(nb)>>rshift) | x>>rshift
			}
		case 0x1c, 0x3c:
			v = c.fp.fromFixed(x, nb, rshift, u == 1, esz, c.fp.rmode())
		case 0x1f, 0x3f:
			v = c.fp.toFixed(x, esz, rshift, u == 1, rmZero, nb)
		}
		setElem(&r, i, esz, v&ones(nb))
	}
	if sat {
		c.fp.sr |= fpsrQC
	}
	c.finish(rd, r, q, scalar, esz)
}

// simdByElemOK reports whether execSIMDByElem implements the fields (the
// table's condition).
func simdByElemOK(qf, u, size, l, opc uint32, scalar bool) bool {
	q := qf == 1
	key := u<<4 | opc
	if opc == 1 || opc == 5 || opc == 9 { // FP
		if key == 0x11 || key == 0x15 {
			return false
		}
		switch size {
		case 2:
		case 3:
			if l != 0 || !scalar && !q {
				return false
			}
		default:
			return false
		}
	} else {
		switch key {
		case 0x08, 0x10, 0x14, 0x0a, 0x1a, 0x02, 0x12, 0x06, 0x16:
			if scalar {
				return false
			}
		case 0x03, 0x07, 0x0b, 0x0c, 0x0d: // SQDMLAL, SQDMLSL, SQDMULL, SQDMULH, SQRDMULH
		default:
			return false
		}
		if size != 1 && size != 2 {
			return false
		}
	}
	return true
}

// byElemEsz is a "by element" encoding's log2 element size.
func byElemEsz(size, opc uint32) uint {
	fp := opc == 1 || opc == 5 || opc == 9
	switch {
	case fp && size == 3:
		return 3
	case size == 2:
		return 2
	}
	return 1
}

// byElemIndex is a "by element" encoding's index of rm's element: H, H:L
// or H:L:M by the element size.
func byElemIndex(size, l, m, h, opc uint32) uint {
	switch byElemEsz(size, opc) {
	case 3:
		return uint(h)
	case 2:
		return uint(h<<1 | l)
	}
	return uint(h<<2 | l<<1 | m)
}

// byElemRm is a "by element" encoding's Rm: M:Rm<3:0>, but Rm<3:0> for
// 16-bit elements, whose index M is part of.
func byElemRm(size, m, rm, opc uint32) uint32 {
	if byElemEsz(size, opc) == 1 {
		return rm
	}
	return rm | m<<4
}

// execSIMDByElem is the vector and scalar "by element" group: MUL, MLA, MLS,
// [SU]MULL, [SU]MLAL, [SU]MLSL, SQDMULL, SQDMLAL, SQDMLSL, SQDMULH,
// SQRDMULH, FMUL, FMLA, FMLS, FMULX.
func (c *CPU) execSIMDByElem(arg *simdelemArgs, _ uint64) {
	q, u, opc, scalar := arg.sf, uint32(arg.u()), uint32(arg.opcode()), arg.scalar()
	rd, rn, rm := uint32(arg.rd), uint32(arg.rn), uint32(arg.rm)
	key := u<<4 | opc
	fp := opc == 1 || opc == 5 || opc == 9
	esz, idx := uint(arg.esize()), uint(arg.index())
	a, d := c.vr[rn], c.vr[rd]
	y := elem(c.vr[rm], idx, esz)
	nb := uint(8 << esz)
	var r [2]uint64
	if fp {
		n := vecShape(q, esz, scalar)
		for i := uint(0); i < n; i++ {
			x, z := elem(a, i, esz), elem(d, i, esz)
			var v uint64
			switch key {
			case 0x09:
				v = c.fp.mul(x, y, esz)
			case 0x19:
				v = c.fp.mulx(x, y, esz)
			case 0x01:
				v = c.fp.mulAdd(z, x, y, esz)
			case 0x05:
				v = c.fp.mulAdd(z, x^fpSignBit(esz), y, esz)
			}
			setElem(&r, i, esz, v)
		}
		c.finish(rd, r, q, scalar, esz)
		return
	}
	switch key {
	case 0x0c, 0x0d: // SQDMULH, SQRDMULH
		sy := int64(sext(y, nb))
		sat := false
		for i := uint(0); i < vecShape(q, esz, scalar); i++ {
			v, qc := sqdmulh(int64(sext(elem(a, i, esz), nb)), sy, nb, key == 0x0d)
			sat = sat || qc
			setElem(&r, i, esz, v)
		}
		if sat {
			c.fp.sr |= fpsrQC
		}
		c.finish(rd, r, q, scalar, esz)
		return
	case 0x03, 0x07, 0x0b: // SQDMLAL, SQDMLSL, SQDMULL: opc 9, 11, 13 of three-different
		if q && !scalar {
			a = [2]uint64{a[1]}
		}
		c.satDoublingLong(rd, a, c.vr[rm], int(idx), [...]uint32{3: 9, 7: 11, 11: 13}[opc], esz, scalar)
		return
	case 0x08, 0x10, 0x14: // MUL, MLA, MLS
		for i := uint(0); i < vecShape(q, esz, false); i++ {
			x, z := elem(a, i, esz), elem(d, i, esz)
			v := x * y
			switch key {
			case 0x10:
				v = z + v
			case 0x14:
				v = z - v
			}
			setElem(&r, i, esz, v&ones(nb))
		}
		c.setVec(rd, r, q)
		return
	}
	src := [2]uint64{a[0]}
	if q {
		src[0] = a[1]
	}
	if u == 0 {
		y = sext(y, nb)
	}
	for i := uint(0); i < 8>>esz; i++ {
		x := elem(src, i, esz)
		if u == 0 {
			x = sext(x, nb)
		}
		z := elem(d, i, esz+1)
		v := x * y
		switch opc {
		case 2:
			v = z + v
		case 6:
			v = z - v
		}
		setElem(&r, i, esz+1, v&ones(2*nb))
	}
	c.vr[rd] = r
}
