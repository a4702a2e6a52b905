package machine

import (
	"math"
	"math/bits"
)

// The reciprocal and reciprocal square root estimates (FRECPE, FRSQRTE,
// URECPE, URSQRTE) and FRECPX, after the Arm ARM's FPRecipEstimate,
// FPRSqrtEstimate, RecipEstimate, RecipSqrtEstimate and FPRecpX. The
// estimates are defined bit for bit by those integer algorithms (8 bits
// of fraction), not by the true reciprocal, so they are computed exactly
// as written there.

// recipEstimate is RecipEstimate: for a in [256, 512), a fixed-point
// value in [0.5, 1) in steps of 1/512, the estimate of 1/a in [256, 512),
// a value in [1, 2) in steps of 1/256.
func recipEstimate(a uint64) uint64 {
	a = a*2 + 1 // round to nearest
	b := (1 << 19) / a
	return (b + 1) / 2
}

// rsqrtEstimate is RecipSqrtEstimate: for a in [128, 512), a fixed-point
// value in [0.25, 1) in steps of 1/512, the estimate of 1/sqrt(a) in
// [256, 512).
func rsqrtEstimate(a uint64) uint64 {
	if a < 256 { // 0.25 .. 0.5, in units of 1/512 rounded to nearest
		a = a*2 + 1
	} else { // 0.5 .. 1.0: discard the bottom bit, in units of 1/256 rounded to nearest
		a = (a>>1<<1 + 1) * 2
	}
	// b is the largest integer with a*b*b < 2^28 (the pseudocode counts
	// up from 512, which always qualifies): the integer square root of
	// (2^28-1)/a.
	m := (1<<28 - 1) / a
	b := uint64(math.Sqrt(float64(m)))
	for b*b > m {
		b--
	}
	for (b+1)*(b+1) <= m {
		b++
	}
	return (b + 1) / 2
}

// recipEstimateFP is FPRecipEstimate (FRECPE) for single (sz 2) and
// double (sz 3).
func (s *fpState) recipEstimateFP(x uint64, sz uint) uint64 {
	v := s.unpack(x, sz)
	eb, fb := fmtBits(sz)
	switch v.k {
	case fkQNaN, fkSNaN:
		return s.procNaN(x, v.k, sz)
	case fkInf:
		return fpZero(sz, v.neg)
	case fkZero:
		s.sr |= fpsrDZC
		return fpInf(sz, v.neg)
	}
	// log2 of |value|, rounded down.
	l2 := bits.Len64(v.mant) - 1 + v.exp
	bias := 1<<(eb-1) - 1
	switch {
	case l2 < -bias-1: // |value| < 2^-128 (2^-1024): the reciprocal overflows
		s.sr |= fpsrOFC | fpsrIXC
		rm := s.rmode()
		if rm == rmNearest || rm == rmPlusInf && !v.neg || rm == rmMinInf && v.neg {
			return fpInf(sz, v.neg)
		}
		return fpMaxNormal(sz, v.neg)
	case s.cr&fpcrFZ != 0 && l2 >= bias-1: // |value| >= 2^126 (2^1022): the result is tiny
		s.sr |= fpsrUFC
		return fpZero(sz, v.neg)
	}
	// The fraction left-aligned to 52 bits, as the pseudocode has it.
	frac := x & ones(fb) << (52 - fb)
	exp := int(x >> fb & ones(eb))
	if exp == 0 {
		if frac>>51&1 == 0 {
			exp = -1
			frac = frac << 2 & ones(52)
		} else {
			frac = frac << 1 & ones(52)
		}
	}
	est := recipEstimate(1<<8 | frac>>44)
	resExp := 2*bias - 1 - exp // 253 - exp or 2045 - exp
	frac = (est & 0xff) << 44
	switch resExp {
	case 0:
		frac = 1<<51 | frac>>1
	case -1:
		frac = 1<<50 | frac>>2
		resExp = 0
	}
	return fpSignBit(sz)*b2u(v.neg) | uint64(resExp)<<fb | frac>>(52-fb)
}

// rsqrtEstimateFP is FPRSqrtEstimate (FRSQRTE) for single and double.
func (s *fpState) rsqrtEstimateFP(x uint64, sz uint) uint64 {
	v := s.unpack(x, sz)
	eb, fb := fmtBits(sz)
	switch {
	case v.isNaN():
		return s.procNaN(x, v.k, sz)
	case v.k == fkZero:
		s.sr |= fpsrDZC
		return fpInf(sz, v.neg)
	case v.neg:
		return s.invalid(sz)
	case v.k == fkInf:
		return 0
	}
	frac := x & ones(fb) << (52 - fb)
	exp := int(x >> fb & ones(eb))
	if exp == 0 { // normalise the denormal
		for frac>>51&1 == 0 {
			frac = frac << 1 & ones(52)
			exp--
		}
		frac = frac << 1 & ones(52)
	}
	var scaled uint64
	if exp&1 == 0 {
		scaled = 1<<8 | frac>>44
	} else {
		scaled = 1<<7 | frac>>45
	}
	bias := 1<<(eb-1) - 1
	// (380 - exp) DIV 2 for single, (3068 - exp) DIV 2 for double; the
	// dividend is positive, so Go's truncating division is the floor.
	resExp := (3*bias - 1 - exp) / 2
	est := rsqrtEstimate(scaled)
	return uint64(resExp)<<fb | (est&0xff)<<(fb-8)
}

// recpX is FPRecpX (FRECPX): the sign, the exponent inverted (the
// largest finite exponent for a zero or denormal exponent) and a zero
// fraction.
func (s *fpState) recpX(x uint64, sz uint) uint64 {
	v := s.unpack(x, sz)
	if v.isNaN() {
		return s.procNaN(x, v.k, sz)
	}
	eb, fb := fmtBits(sz)
	exp := x >> fb & ones(eb)
	if exp == 0 {
		exp = ones(eb) - 1
	} else {
		exp = ^exp & ones(eb)
	}
	return x&fpSignBit(sz) | exp<<fb
}

// uRecipEstimate is URECPE on one 32-bit element.
func uRecipEstimate(x uint64) uint64 {
	if x>>31&1 == 0 {
		return ones(32)
	}
	return recipEstimate(x>>23&0x1ff) << 23
}

// uRsqrtEstimate is URSQRTE on one 32-bit element.
func uRsqrtEstimate(x uint64) uint64 {
	if x>>30&3 == 0 {
		return ones(32)
	}
	return rsqrtEstimate(x>>23&0x1ff) << 23
}
