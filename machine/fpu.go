package machine

import (
	"math/big"
	"math/bits"
)

// This file is the floating-point arithmetic of the FP/SIMD unit: a
// soft-float that follows the Arm ARM's pseudocode (FPUnpack, FPRoundBase,
// FPProcessNaNs, FPToFixed, ...) rather than the host's FPU, because Go's
// float64 operations round to nearest-even only, have no exception flags,
// and propagate NaNs differently. Values are computed exactly (or, for
// division and square root, to 300 bits, which no 53-bit rounding boundary
// lies close enough to for the result to differ) with math/big, and then
// rounded once to the destination format by round, which implements every
// FPCR rounding mode, flush-to-zero and the cumulative flags.

// FPCR and FPSR bits.
const (
	fpcrAHP   = 1 << 26
	fpcrDN    = 1 << 25
	fpcrFZ    = 1 << 24
	fpcrRMode = 22
	// fpcrMask is what FPCR keeps: AHP, DN, FZ, RMode, Stride, FZ16, Len.
	// The trap enables read as zero, as on cores without FP traps.
	fpcrMask = 0x07ff0000

	fpsrIOC  = 1 << 0
	fpsrDZC  = 1 << 1
	fpsrOFC  = 1 << 2
	fpsrUFC  = 1 << 3
	fpsrIXC  = 1 << 4
	fpsrIDC  = 1 << 7
	fpsrQC   = 1 << 27
	fpsrMask = fpsrQC | 0x9f
)

// Rounding modes: FPCR.RMode values, then ties-away (FCVTA*, FRINTA) and
// round-to-odd (FCVTXN: truncate, and set the lowest bit if inexact, so
// that a second rounding to a narrower format cannot round twice).
const (
	rmNearest = 0
	rmPlusInf = 1
	rmMinInf  = 2
	rmZero    = 3
	rmAway    = 4
	rmOdd     = 5
)

// FP value classes from unpack.
const (
	fkZero = iota
	fkNum  // normal, or denormal not flushed
	fkInf
	fkQNaN
	fkSNaN
)

// fpState is the FP control and status of a CPU.
type fpState struct {
	cr uint32 // FPCR
	sr uint32 // FPSR
}

// fmtBits returns the exponent and fraction widths of the format of
// 2^sz bytes (1 half, 2 single, 3 double).
func fmtBits(sz uint) (eb, fb uint) {
	switch sz {
	case 1:
		return 5, 10
	case 2:
		return 8, 23
	}
	return 11, 52
}

func fpSignBit(sz uint) uint64 { return 1 << (8<<sz - 1) }

func fpDefaultNaN(sz uint) uint64 {
	eb, fb := fmtBits(sz)
	return (1<<eb-1)<<fb | 1<<(fb-1)
}

func fpInf(sz uint, neg bool) uint64 {
	eb, fb := fmtBits(sz)
	v := uint64(1<<eb-1) << fb
	if neg {
		v |= fpSignBit(sz)
	}
	return v
}

func fpZero(sz uint, neg bool) uint64 {
	if neg {
		return fpSignBit(sz)
	}
	return 0
}

func fpMaxNormal(sz uint, neg bool) uint64 {
	eb, fb := fmtBits(sz)
	v := uint64(1<<eb-2)<<fb | (1<<fb - 1)
	if neg {
		v |= fpSignBit(sz)
	}
	return v
}

// fpVal is an unpacked FP value: (-1)^neg × mant × 2^exp for fkNum.
type fpVal struct {
	k    uint8
	neg  bool
	mant uint64
	exp  int
}

// unpack is FPUnpack: with FPCR.FZ (single and double only), denormal
// inputs are zeros and raise IDC.
func (s *fpState) unpack(x uint64, sz uint) fpVal {
	eb, fb := fmtBits(sz)
	bias := 1<<(eb-1) - 1
	v := fpVal{neg: x>>(eb+fb)&1 != 0}
	e := int(x >> fb & (1<<eb - 1))
	f := x & (1<<fb - 1)
	switch {
	case e == 0 && f == 0:
		v.k = fkZero
	case e == 0:
		if sz != 1 && s.cr&fpcrFZ != 0 {
			v.k = fkZero
			s.sr |= fpsrIDC
		} else {
			v.k, v.mant, v.exp = fkNum, f, 1-bias-int(fb)
		}
	case e == 1<<eb-1 && f == 0:
		v.k = fkInf
	case e == 1<<eb-1:
		v.k = fkSNaN
		if f>>(fb-1)&1 != 0 {
			v.k = fkQNaN
		}
	default:
		v.k, v.mant, v.exp = fkNum, f|1<<fb, e-bias-int(fb)
	}
	return v
}

func (v fpVal) isNaN() bool { return v.k >= fkQNaN }

// big returns the value of a finite v exactly.
func (v fpVal) big() *big.Float {
	z := new(big.Float).SetUint64(v.mant)
	z.SetMantExp(z, v.exp)
	if v.neg {
		z.Neg(z)
	}
	return z
}

// procNaN is FPProcessNaN: quiet a signalling NaN (raising IOC), or the
// default NaN under FPCR.DN.
func (s *fpState) procNaN(x uint64, k uint8, sz uint) uint64 {
	_, fb := fmtBits(sz)
	if k == fkSNaN {
		s.sr |= fpsrIOC
		x |= 1 << (fb - 1)
	}
	if s.cr&fpcrDN != 0 {
		return fpDefaultNaN(sz)
	}
	return x
}

// procNaNs is FPProcessNaNs3 (and, with fewer operands, FPProcessNaNs):
// the first signalling NaN wins, else the first quiet one.
func (s *fpState) procNaNs(sz uint, xs []uint64, vs []fpVal) (uint64, bool) {
	for i, v := range vs {
		if v.k == fkSNaN {
			return s.procNaN(xs[i], v.k, sz), true
		}
	}
	for i, v := range vs {
		if v.k == fkQNaN {
			return s.procNaN(xs[i], v.k, sz), true
		}
	}
	return 0, false
}

func (s *fpState) invalid(sz uint) uint64 {
	s.sr |= fpsrIOC
	return fpDefaultNaN(sz)
}

func (s *fpState) rmode() int { return int(s.cr >> fpcrRMode & 3) }

// roundInt rounds |m| (non-negative, finite) to an integer with mode rm for a
// value of sign neg; it returns the integer and whether m was inexact.
func roundInt(m *big.Float, neg bool, rm int) (*big.Int, bool) {
	n, _ := m.Int(nil) // truncates
	frac := new(big.Float).Sub(m, new(big.Float).SetInt(n))
	if frac.Sign() == 0 {
		return n, false
	}
	c := frac.Cmp(big.NewFloat(0.5))
	var up bool
	switch rm {
	case rmNearest:
		up = c > 0 || c == 0 && n.Bit(0) == 1
	case rmAway:
		up = c >= 0
	case rmPlusInf:
		up = !neg
	case rmMinInf:
		up = neg
	}
	if up {
		n.Add(n, big.NewInt(1))
	}
	return n, true
}

// round is FPRoundBase: it rounds the finite non-zero x to the format of
// sz with mode rm, flushing tiny results to zero when fz is set.
func (s *fpState) round(x *big.Float, sz uint, rm int, fz bool) uint64 {
	eb, fb := fmtBits(sz)
	bias := 1<<(eb-1) - 1
	emin := 1 - bias
	neg := x.Signbit()
	var sign uint64
	if neg {
		sign = fpSignBit(sz)
	}
	e := x.MantExp(nil) - 1
	if e < emin && fz {
		s.sr |= fpsrUFC
		return sign
	}
	q := max(e, emin) - int(fb)
	m := new(big.Float).SetMantExp(x, -q)
	m.Abs(m)
	ni, inexact := roundInt(m, neg, rm)
	n := ni.Uint64()
	if rm == rmOdd && inexact {
		n |= 1
	}
	if e < emin && inexact {
		s.sr |= fpsrUFC // tininess is detected before rounding
	}
	if n == 1<<(fb+1) {
		n >>= 1
		q++
	}
	biased := 0
	if n >= 1<<fb {
		biased = q + int(fb) + bias
	}
	if biased >= 1<<eb-1 {
		s.sr |= fpsrOFC | fpsrIXC
		if rm == rmNearest || rm == rmAway || rm == rmPlusInf && !neg || rm == rmMinInf && neg {
			return fpInf(sz, neg)
		}
		return fpMaxNormal(sz, neg)
	}
	if inexact {
		s.sr |= fpsrIXC
	}
	return sign | uint64(biased)<<fb | n&(1<<fb-1)
}

// roundFP rounds with the FPCR's mode and flush-to-zero.
func (s *fpState) roundFP(x *big.Float, sz uint) uint64 {
	return s.round(x, sz, s.rmode(), s.cr&fpcrFZ != 0 && sz != 1)
}

// exactPrec holds any sum or product of two doubles, and a double added to
// a product of two, exactly.
const exactPrec = 4400

// add is FPAdd (and FPSub with b's sign flipped after NaN processing).
func (s *fpState) add(a, b uint64, sz uint, sub bool) uint64 {
	va, vb := s.unpack(a, sz), s.unpack(b, sz)
	if r, ok := s.procNaNs(sz, []uint64{a, b}, []fpVal{va, vb}); ok {
		return r
	}
	if sub {
		vb.neg = !vb.neg
	}
	switch {
	case va.k == fkInf && vb.k == fkInf && va.neg != vb.neg:
		return s.invalid(sz)
	case va.k == fkInf:
		return fpInf(sz, va.neg)
	case vb.k == fkInf:
		return fpInf(sz, vb.neg)
	case va.k == fkZero && vb.k == fkZero && va.neg == vb.neg:
		return fpZero(sz, va.neg)
	}
	z := new(big.Float).SetPrec(exactPrec)
	z.Add(s.bigOrZero(va), s.bigOrZero(vb))
	if z.Sign() == 0 {
		return fpZero(sz, s.rmode() == rmMinInf)
	}
	return s.roundFP(z, sz)
}

func (s *fpState) bigOrZero(v fpVal) *big.Float {
	if v.k == fkZero {
		return new(big.Float)
	}
	return v.big()
}

// mul is FPMul.
func (s *fpState) mul(a, b uint64, sz uint) uint64 {
	va, vb := s.unpack(a, sz), s.unpack(b, sz)
	if r, ok := s.procNaNs(sz, []uint64{a, b}, []fpVal{va, vb}); ok {
		return r
	}
	neg := va.neg != vb.neg
	switch {
	case va.k == fkInf && vb.k == fkZero || va.k == fkZero && vb.k == fkInf:
		return s.invalid(sz)
	case va.k == fkInf || vb.k == fkInf:
		return fpInf(sz, neg)
	case va.k == fkZero || vb.k == fkZero:
		return fpZero(sz, neg)
	}
	z := new(big.Float).SetPrec(256)
	return s.roundFP(z.Mul(va.big(), vb.big()), sz)
}

// mulx is FPMulX: as mul, but infinity times zero is 2.0 with the product's
// sign.
func (s *fpState) mulx(a, b uint64, sz uint) uint64 {
	va, vb := s.unpack(a, sz), s.unpack(b, sz)
	if !va.isNaN() && !vb.isNaN() && (va.k == fkInf && vb.k == fkZero || va.k == fkZero && vb.k == fkInf) {
		return s.roundFP(big.NewFloat(2), sz) | b2u(va.neg != vb.neg)*fpSignBit(sz)
	}
	return s.mul(a, b, sz)
}

// div is FPDiv.
func (s *fpState) div(a, b uint64, sz uint) uint64 {
	va, vb := s.unpack(a, sz), s.unpack(b, sz)
	if r, ok := s.procNaNs(sz, []uint64{a, b}, []fpVal{va, vb}); ok {
		return r
	}
	neg := va.neg != vb.neg
	switch {
	case va.k == fkInf && vb.k == fkInf || va.k == fkZero && vb.k == fkZero:
		return s.invalid(sz)
	case va.k == fkInf || vb.k == fkZero:
		if va.k != fkInf {
			s.sr |= fpsrDZC
		}
		return fpInf(sz, neg)
	case va.k == fkZero || vb.k == fkInf:
		return fpZero(sz, neg)
	}
	z := new(big.Float).SetPrec(300)
	return s.roundFP(z.Quo(va.big(), vb.big()), sz)
}

// sqrt is FPSqrt.
func (s *fpState) sqrt(a uint64, sz uint) uint64 {
	va := s.unpack(a, sz)
	switch {
	case va.isNaN():
		return s.procNaN(a, va.k, sz)
	case va.k == fkZero:
		return fpZero(sz, va.neg)
	case va.neg:
		return s.invalid(sz)
	case va.k == fkInf:
		return fpInf(sz, false)
	}
	z := new(big.Float).SetPrec(300)
	return s.roundFP(z.Sqrt(va.big()), sz)
}

// mulAdd is FPMulAdd: addend + a*b with one rounding. Callers negate
// operands (FMSUB, FNMADD, ...) before, as the Arm ARM does, so a negated
// NaN operand comes out negated.
func (s *fpState) mulAdd(addend, a, b uint64, sz uint) uint64 {
	vc, va, vb := s.unpack(addend, sz), s.unpack(a, sz), s.unpack(b, sz)
	infZero := va.k == fkInf && vb.k == fkZero || va.k == fkZero && vb.k == fkInf
	r, nan := s.procNaNs(sz, []uint64{addend, a, b}, []fpVal{vc, va, vb})
	if vc.k == fkQNaN && infZero {
		return s.invalid(sz)
	}
	if nan {
		return r
	}
	negP := va.neg != vb.neg
	infP := va.k == fkInf || vb.k == fkInf
	zeroP := va.k == fkZero || vb.k == fkZero
	switch {
	case infZero || vc.k == fkInf && infP && vc.neg != negP:
		return s.invalid(sz)
	case vc.k == fkInf:
		return fpInf(sz, vc.neg)
	case infP:
		return fpInf(sz, negP)
	case vc.k == fkZero && zeroP && vc.neg == negP:
		return fpZero(sz, vc.neg)
	}
	z := new(big.Float).SetPrec(exactPrec)
	if !zeroP {
		z.Mul(va.big(), vb.big())
	}
	z.Add(z, s.bigOrZero(vc))
	if z.Sign() == 0 {
		return fpZero(sz, s.rmode() == rmMinInf)
	}
	return s.roundFP(z, sz)
}

// valueBits returns the encoding of an unpacked operand as FPMax/FPMin
// return it: zero for flushed denormals.
func valueBits(x uint64, v fpVal, sz uint) uint64 {
	if v.k == fkZero {
		return fpZero(sz, v.neg)
	}
	return x
}

// cmpVal compares two non-NaN values: -1, 0, 1.
func cmpVal(a, b fpVal) int {
	if a.k == fkZero && b.k == fkZero {
		return 0
	}
	sa, sb := fpSignedRank(a), fpSignedRank(b)
	if sa != sb {
		if sa < sb {
			return -1
		}
		return 1
	}
	if a.k == fkInf || b.k == fkInf {
		ia, ib := a.k == fkInf, b.k == fkInf
		switch {
		case ia && ib:
			return 0
		case ia == !a.neg:
			return 1
		default:
			return -1
		}
	}
	return new(big.Float).SetPrec(0).Set(fpBig(a)).Cmp(fpBig(b))
}

// fpSignedRank orders by sign class: negative < zero < positive.
func fpSignedRank(v fpVal) int {
	switch {
	case v.k == fkZero:
		return 0
	case v.neg:
		return -1
	}
	return 1
}

func fpBig(v fpVal) *big.Float {
	if v.k == fkZero {
		return new(big.Float)
	}
	return v.big()
}

// maxMin is FPMax (max) or FPMin; num selects FPMaxNum/FPMinNum, where a
// quiet NaN loses against a number.
func (s *fpState) maxMin(a, b uint64, sz uint, isMax, num bool) uint64 {
	va, vb := s.unpack(a, sz), s.unpack(b, sz)
	if num {
		if va.k == fkQNaN && vb.k != fkQNaN && vb.k != fkSNaN {
			a, va = fpInf(sz, isMax), fpVal{k: fkInf, neg: isMax}
		} else if vb.k == fkQNaN && va.k != fkQNaN && va.k != fkSNaN {
			b, vb = fpInf(sz, isMax), fpVal{k: fkInf, neg: isMax}
		}
	}
	if r, ok := s.procNaNs(sz, []uint64{a, b}, []fpVal{va, vb}); ok {
		return r
	}
	if va.k == fkZero && vb.k == fkZero {
		if isMax {
			return fpZero(sz, va.neg && vb.neg)
		}
		return fpZero(sz, va.neg || vb.neg)
	}
	c := cmpVal(va, vb)
	if c > 0 == isMax && c != 0 {
		return valueBits(a, va, sz)
	}
	return valueBits(b, vb, sz)
}

// compare is FPCompare: the NZCV result (0110 equal, 1000 less, 0010
// greater, 0011 unordered). signal makes quiet NaNs raise IOC too (FCMPE).
func (s *fpState) compare(a, b uint64, sz uint, signal bool) uint64 {
	va, vb := s.unpack(a, sz), s.unpack(b, sz)
	if va.isNaN() || vb.isNaN() {
		if signal || va.k == fkSNaN || vb.k == fkSNaN {
			s.sr |= fpsrIOC
		}
		return 0x3
	}
	switch cmpVal(va, vb) {
	case 0:
		return 0x6
	case -1:
		return 0x8
	}
	return 0x2
}

// Vector comparison kinds (FPCompareEQ/GE/GT).
const (
	fcmEQ = iota
	fcmGE
	fcmGT
)

// compareCond is FPCompareEQ, FPCompareGE or FPCompareGT.
func (s *fpState) compareCond(a, b uint64, sz uint, kind int) bool {
	va, vb := s.unpack(a, sz), s.unpack(b, sz)
	if va.isNaN() || vb.isNaN() {
		if kind != fcmEQ || va.k == fkSNaN || vb.k == fkSNaN {
			s.sr |= fpsrIOC
		}
		return false
	}
	c := cmpVal(va, vb)
	switch kind {
	case fcmEQ:
		return c == 0
	case fcmGE:
		return c >= 0
	}
	return c > 0
}

// roundToInt is FPRoundInt (FRINT*): exact makes an inexact result raise
// IXC (FRINTX).
func (s *fpState) roundToInt(a uint64, sz uint, rm int, exact bool) uint64 {
	va := s.unpack(a, sz)
	switch va.k {
	case fkQNaN, fkSNaN:
		return s.procNaN(a, va.k, sz)
	case fkInf:
		return fpInf(sz, va.neg)
	case fkZero:
		return fpZero(sz, va.neg)
	}
	m := va.big()
	m.Abs(m)
	n, inexact := roundInt(m, va.neg, rm)
	if inexact && exact {
		s.sr |= fpsrIXC
	}
	if n.Sign() == 0 {
		return fpZero(sz, va.neg)
	}
	z := new(big.Float).SetInt(n)
	if va.neg {
		z.Neg(z)
	}
	var saved fpState // the integral result is exact: no flags from rounding it
	saved.cr = s.cr
	return saved.round(z, sz, rmZero, false)
}

// toFixed is FPToFixed: a to a signed or unsigned integer of ibits bits
// with fbits fraction bits, rounding with rm and saturating.
func (s *fpState) toFixed(a uint64, sz uint, fbits uint, unsigned bool, rm int, ibits uint) uint64 {
	va := s.unpack(a, sz)
	var lo, hi *big.Int
	if unsigned {
		lo, hi = new(big.Int), new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), ibits), big.NewInt(1))
	} else {
		hi = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), ibits-1), big.NewInt(1))
		lo = new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(1), ibits-1))
	}
	var n *big.Int
	var inexact bool
	switch va.k {
	case fkQNaN, fkSNaN:
		s.sr |= fpsrIOC
		return 0
	case fkInf:
		s.sr |= fpsrIOC
		if va.neg {
			return uint64(lo.Int64()) & ones(ibits)
		}
		return hi.Uint64()
	case fkZero:
		n = new(big.Int)
	default:
		m := va.big()
		m.SetMantExp(m, int(fbits))
		m.Abs(m)
		n, inexact = roundInt(m, va.neg, rm)
		if va.neg {
			n.Neg(n)
		}
	}
	switch {
	case n.Cmp(hi) > 0:
		s.sr |= fpsrIOC
		n = hi
	case n.Cmp(lo) < 0:
		s.sr |= fpsrIOC
		n = lo
	case inexact:
		s.sr |= fpsrIXC
	}
	if n.Sign() < 0 {
		return uint64(n.Int64()) & ones(ibits)
	}
	return n.Uint64()
}

// fromFixed is FixedToFP: the integer x of ibits bits (signed unless
// unsigned) with fbits fraction bits, rounded to sz with rm.
func (s *fpState) fromFixed(x uint64, ibits, fbits uint, unsigned bool, sz uint, rm int) uint64 {
	z := new(big.Float)
	if unsigned {
		z.SetUint64(x & ones(ibits))
	} else {
		z.SetInt64(int64(sext(x, ibits)))
	}
	if z.Sign() == 0 {
		return 0
	}
	z.SetMantExp(z, -int(fbits))
	return s.round(z, sz, rm, s.cr&fpcrFZ != 0 && sz != 1)
}

// convert is FPConvert between formats (FCVT) with the FPCR's rounding
// mode: NaNs keep their sign and top payload bits. Half precision is IEEE
// (FPCR.AHP is not modelled) and never flushed.
func (s *fpState) convert(a uint64, from, to uint) uint64 {
	return s.convertRM(a, from, to, s.rmode())
}

// convertRM is FPConvert with rounding mode rm.
func (s *fpState) convertRM(a uint64, from, to uint, rm int) uint64 {
	var va fpVal
	if from == 1 {
		saved := s.cr
		s.cr &^= fpcrFZ
		va = s.unpack(a, from)
		s.cr = saved
	} else {
		va = s.unpack(a, from)
	}
	switch va.k {
	case fkQNaN, fkSNaN:
		if va.k == fkSNaN {
			s.sr |= fpsrIOC
		}
		if s.cr&fpcrDN != 0 {
			return fpDefaultNaN(to)
		}
		_, fbf := fmtBits(from)
		eb, fbt := fmtBits(to)
		frac := a << (64 - fbf) >> (64 - fbt) // left-aligned payload, truncated
		r := uint64(1<<eb-1)<<fbt | 1<<(fbt-1) | frac
		if va.neg {
			r |= fpSignBit(to)
		}
		return r
	case fkInf:
		return fpInf(to, va.neg)
	case fkZero:
		return fpZero(to, va.neg)
	}
	return s.round(va.big(), to, rm, s.cr&fpcrFZ != 0 && to != 1)
}

// vfpExpandImm is VFPExpandImm: the 8-bit FMOV immediate for format sz.
func vfpExpandImm(imm8 uint32, sz uint) uint64 {
	eb, fb := fmtBits(sz)
	sign := uint64(imm8 >> 7)
	b6 := uint64(imm8 >> 6 & 1)
	exp := (b6^1)<<(eb-1) | (ones(eb-3)*b6)<<2 | uint64(imm8>>4&3)
	frac := uint64(imm8&15) << (fb - 4)
	return sign<<(eb+fb) | exp<<fb | frac
}

// satS and satU saturate v to a signed or unsigned integer of n bits,
// reporting saturation.
func satS(v int64, n uint) (uint64, bool) {
	lo, hi := -int64(1)<<(n-1), int64(1)<<(n-1)-1
	switch {
	case v > hi:
		return uint64(hi) & ones(n), true
	case v < lo:
		return uint64(lo) & ones(n), true
	}
	return uint64(v) & ones(n), false
}

func satU(v int64, n uint) (uint64, bool) {
	switch {
	case v < 0:
		return 0, true
	case n < 64 && uint64(v) > ones(n):
		return ones(n), true
	}
	return uint64(v), false
}

// addSat adds (or subtracts) n-bit elements with signed or unsigned
// saturation.
func addSat(a, b uint64, n uint, signed, sub bool) (uint64, bool) {
	if signed {
		x, y := int64(sext(a, n)), int64(sext(b, n))
		if n < 64 {
			if sub {
				return satS(x-y, n)
			}
			return satS(x+y, n)
		}
		if sub {
			r := x - y
			if (x^y)&(x^r) < 0 {
				if x < 0 {
					return 1 << 63, true
				}
				return 1<<63 - 1, true
			}
			return uint64(r), false
		}
		r := x + y
		if ^(x^y)&(x^r) < 0 {
			if x < 0 {
				return 1 << 63, true
			}
			return 1<<63 - 1, true
		}
		return uint64(r), false
	}
	a, b = a&ones(n), b&ones(n)
	if sub {
		if b > a {
			return 0, true
		}
		return a - b, false
	}
	r, carry := bits.Add64(a, b, 0)
	if carry != 0 || n < 64 && r > ones(n) {
		return ones(n), true
	}
	return r, false
}

// recipStep is FPRecipStepFused (FRECPS, 2 - a*b) or, with rsqrt,
// FPRSqrtStepFused (FRSQRTS, (3 - a*b) / 2), each rounded once.
func (s *fpState) recipStep(a, b uint64, sz uint, rsqrt bool) uint64 {
	a ^= fpSignBit(sz)
	va, vb := s.unpack(a, sz), s.unpack(b, sz)
	if r, ok := s.procNaNs(sz, []uint64{a, b}, []fpVal{va, vb}); ok {
		return r
	}
	neg := va.neg != vb.neg
	switch {
	case va.k == fkInf && vb.k == fkZero || va.k == fkZero && vb.k == fkInf:
		if rsqrt {
			return s.roundFP(big.NewFloat(1.5), sz)
		}
		return s.roundFP(big.NewFloat(2), sz)
	case va.k == fkInf || vb.k == fkInf:
		return fpInf(sz, neg)
	}
	z := new(big.Float).SetPrec(exactPrec)
	if va.k != fkZero && vb.k != fkZero {
		z.Mul(va.big(), vb.big())
	}
	if rsqrt {
		z.Add(z, big.NewFloat(3))
		z.SetMantExp(z, -1)
	} else {
		z.Add(z, big.NewFloat(2))
	}
	if z.Sign() == 0 {
		return fpZero(sz, s.rmode() == rmMinInf)
	}
	return s.roundFP(z, sz)
}
