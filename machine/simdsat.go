package machine

// Saturating arithmetic of Advanced SIMD shared by the vector, scalar and
// by-element forms: the doubling multiplies and the saturating shifts by
// immediate. Each returns the result and whether it saturated (FPSR.QC).

// sqdmulh is SQDMULH (round false) and SQRDMULH on sign-extended n-bit
// (16 or 32) elements: the high half of 2*x*y (+ 2^(n-1) when rounding),
// saturated. It works on x*y, which fits in 62 bits, rather than 2*x*y,
// which does not for n = 32: (2p + 2^(n-1)) >> n = (p + 2^(n-2)) >> (n-1).
func sqdmulh(x, y int64, n uint, round bool) (uint64, bool) {
	p := x * y
	if round {
		p += 1 << (n - 2)
	}
	return satS(p>>(n-1), n)
}

// sqdmull is the 2n-bit product 2*x*y of SQDMULL, SQDMLAL and SQDMLSL
// (n 16 or 32), saturated: only INT_MIN*INT_MIN saturates.
func sqdmull(x, y int64, n uint) (uint64, bool) {
	p := x * y
	if n == 32 {
		if p == 1<<62 {
			return 1<<63 - 1, true
		}
		return uint64(2 * p), false
	}
	return satS(2*p, 2*n)
}

// sqdmlal is SQDMLAL (sub false) and SQDMLSL: the saturated doubled
// product of sqdmull added to or subtracted from the 2n-bit accumulator
// acc, saturating again.
func sqdmlal(acc uint64, x, y int64, n uint, sub bool) (uint64, bool) {
	p, sat1 := sqdmull(x, y, n)
	r, sat2 := addSat(acc, p, 2*n, true, sub)
	return r, sat1 || sat2
}

// shiftLeftSat is SQSHL, UQSHL (immediate) and SQSHLU: x of n bits,
// signed unless unsignedIn, shifted left by sh < n and saturated to the
// signed range, or to the unsigned one for unsignedOut.
func shiftLeftSat(x uint64, sh, n uint, unsignedIn, unsignedOut bool) (uint64, bool) {
	if unsignedIn == unsignedOut {
		return satShiftBy(x, uint64(sh), n, !unsignedIn, false)
	}
	// SQSHLU: a negative input saturates to zero; a non-negative one
	// shifts as unsigned.
	if sext(x, n)>>63 != 0 {
		return 0, true
	}
	return satShiftBy(x, uint64(sh), n, false, false)
}

// shiftRightNarrowSat is the saturating narrowing shifts (SQ[R]SHRN,
// SQ[R]SHRUN, UQ[R]SHRN): the 2n-bit x (signed unless unsignedIn),
// shifted right by sh in [1, n] with rounding if round, saturated to n
// bits, unsigned if unsignedOut. The rounding bit is added after the
// shift so that a 64-bit x cannot carry out.
func shiftRightNarrowSat(x uint64, sh, n uint, round, unsignedIn, unsignedOut bool) (uint64, bool) {
	wide := 2 * n
	var rb uint64
	if unsignedIn {
		x &= ones(wide)
		if round {
			rb = x >> (sh - 1) & 1
		}
		v := x>>sh + rb
		if v > ones(n) {
			return ones(n), true
		}
		return v, false
	}
	sx := int64(sext(x, wide))
	if round {
		rb = uint64(sx>>(sh-1)) & 1
	}
	v := sx>>sh + int64(rb)
	if unsignedOut {
		return satU(v, n)
	}
	return satS(v, n)
}
