package machine

import "encoding/binary"

// Read-modify-write accesses: the Armv8.1 atomic memory operations (LSE)
// and, in parallel mode, the store-exclusives.
//
// In deterministic mode one goroutine runs every vCPU, so a read followed
// by a write is atomic already. In parallel mode the update of RAM is a
// compare-and-swap loop on the aligned word (ramCAS), and the 16-byte pair
// accesses, which no host instruction Go exposes covers, take
// parallelState.pairMu; ordinary stores by other vCPUs do not, so a
// 16-byte pair update is atomic against other pair operations only.

// sizeMask returns the mask of an access of 1<<lg bytes.
func sizeMask(lg uint8) uint64 {
	if lg >= 3 {
		return ^uint64(0)
	}
	return 1<<(8<<lg) - 1
}

// rmw atomically replaces the 1<<lg bytes at va (which must be aligned:
// atomics take the alignment fault otherwise) with f(old) when f says to
// write, and returns old. Permissions are checked as for a store whether
// or not f writes, as QEMU does for atomics. On a fault the exception is
// taken and ok is false.
func (c *CPU) rmw(va uint64, lg uint8, f func(old uint64) (uint64, bool)) (old uint64, ok bool) {
	m := c.m
	pa, _, ok := c.dataAddr(va, lg, true, true, c.el)
	if !ok {
		return 0, false
	}
	size := 1 << lg
	if off, ok := m.ramOff(pa, size); ok {
		if c.par {
			for {
				old = m.ramLoad(off, lg)
				nv, w := f(old)
				if !w {
					break
				}
				if m.ramCAS(off, lg, old, nv) {
					m.stored(c, off, uint64(size))
					break
				}
			}
		} else {
			old = ramGet(m.ram[off:], lg)
			if nv, w := f(old); w {
				ramPut(m.ram[off:], lg, nv)
				m.stored(c, off, uint64(size))
			}
		}
	} else {
		// A device register: its handlers serialize themselves.
		v, okr := c.physRead(pa, size)
		if !okr {
			c.dataAbort(va, true)
			return 0, false
		}
		old = v
		if nv, w := f(old); w && !c.physWrite(pa, size, nv) {
			c.dataAbort(va, true)
			return 0, false
		}
	}
	if c.dbg.hostWatch {
		m.hostWatchCheck(c, va, uint64(size), true)
	}
	return old, true
}

// pairRMW is rmw for a pair of registers of 1<<lg bytes each (the pair
// aligned to its whole size): f sees the old pair and says what to write.
// It reports false after taking a fault.
func (c *CPU) pairRMW(va uint64, lg uint8, f func(o1, o2 uint64) (uint64, uint64, bool)) bool {
	if lg == 2 {
		// Both words fit one 64-bit access.
		_, ok := c.rmw(va, 3, func(old uint64) (uint64, bool) {
			n1, n2, w := f(old&0xffffffff, old>>32)
			return n1&0xffffffff | n2<<32, w
		})
		return ok
	}
	m := c.m
	pa, _, ok := c.dataAddr(va, 4, true, true, c.el)
	if !ok {
		return false
	}
	off, err := m.ramRange(pa, 16)
	if err != nil {
		// No device here has 16-byte registers.
		c.dataAbort(va, true)
		return false
	}
	if c.par {
		m.par.pairMu.Lock()
		o1, o2 := m.ramLoad(off, 3), m.ramLoad(off+8, 3)
		if n1, n2, w := f(o1, o2); w {
			m.ramStore(off, 3, n1)
			m.ramStore(off+8, 3, n2)
			m.par.pairMu.Unlock()
			m.stored(c, off, 16)
		} else {
			m.par.pairMu.Unlock()
		}
	} else {
		o1, o2 := ramGet(m.ram[off:], 3), ramGet(m.ram[off+8:], 3)
		if n1, n2, w := f(o1, o2); w {
			ramPut(m.ram[off:], 3, n1)
			ramPut(m.ram[off+8:], 3, n2)
			m.stored(c, off, 16)
		}
	}
	if c.dbg.hostWatch {
		m.hostWatchCheck(c, va, 16, true)
	}
	return true
}

// loadPair reads a pair of 1<<lg-byte registers at va (aligned to the
// pair) as one single-copy atomic access, for parallel mode's LDXP.
func (c *CPU) loadPair(va uint64, lg uint8) (v1, v2 uint64, ok bool) {
	if lg == 2 {
		v, ok := c.load(va, 3)
		return v & 0xffffffff, v >> 32, ok
	}
	m := c.m
	pa, _, ok := c.dataAddr(va, 4, false, true, c.el)
	if !ok {
		return 0, 0, false
	}
	off, err := m.ramRange(pa, 16)
	if err != nil {
		c.dataAbort(va, false)
		return 0, 0, false
	}
	m.par.pairMu.Lock()
	v1, v2 = m.ramLoad(off, 3), m.ramLoad(off+8, 3)
	m.par.pairMu.Unlock()
	if c.dbg.hostWatch {
		m.hostWatchCheck(c, va, 16, false)
	}
	return v1, v2, true
}

// ramGet and ramPut access 1<<lg little-endian bytes at the start of b:
// deterministic mode's plain RAM accesses.
func ramGet(b []byte, lg uint8) uint64 {
	switch lg {
	case 0:
		return uint64(b[0])
	case 1:
		return uint64(binary.LittleEndian.Uint16(b))
	case 2:
		return uint64(binary.LittleEndian.Uint32(b))
	}
	return binary.LittleEndian.Uint64(b)
}

func ramPut(b []byte, lg uint8, v uint64) {
	switch lg {
	case 0:
		b[0] = byte(v)
	case 1:
		binary.LittleEndian.PutUint16(b, uint16(v))
	case 2:
		binary.LittleEndian.PutUint32(b, uint32(v))
	default:
		binary.LittleEndian.PutUint64(b, v)
	}
}

// atomicResult computes what LD<op> or SWP (op, an atomic* constant)
// stores, from the old memory value and Rs, at width 1<<lg bytes.
func atomicResult(op, lg uint8, old, rs uint64) uint64 {
	mask := sizeMask(lg)
	s := rs & mask
	bitsN := uint(8) << lg
	switch op {
	case atomicADD:
		return (old + s) & mask
	case atomicCLR:
		return old &^ s
	case atomicEOR:
		return old ^ s
	case atomicSET:
		return old | s
	case atomicSMAX:
		if int64(sext(old, bitsN)) >= int64(sext(s, bitsN)) {
			return old
		}
		return s
	case atomicSMIN:
		if int64(sext(old, bitsN)) <= int64(sext(s, bitsN)) {
			return old
		}
		return s
	case atomicUMAX:
		return max(old, s)
	case atomicUMIN:
		return min(old, s)
	}
	return s // SWP
}

// execLDOP executes LD<op> and SWP: Rt gets the old value, zero-extended.
func (c *CPU) execLDOP(a *atomicArgs, _ uint64) {
	op, lg, rs := a.atomicOp(), a.size(), c.r[a.rm]
	if old, ok := c.rmw(c.r[a.rn], lg, func(old uint64) (uint64, bool) {
		return atomicResult(op, lg, old, rs), true
	}); ok {
		c.r[a.rd] = old
	}
}

// execCAS executes CAS: memory gets Rt if it holds Rs (at the access
// width); Rs gets the old value, zero-extended, either way.
func (c *CPU) execCAS(a *casArgs, _ uint64) {
	lg := a.size()
	cmp, nv := c.r[a.rs()]&sizeMask(lg), c.r[a.rd]
	if old, ok := c.rmw(c.r[a.rn], lg, func(old uint64) (uint64, bool) {
		return nv, old == cmp
	}); ok {
		c.r[a.rm] = old
	}
}

// execCASP executes CASP: the pair at Rn gets <Rt, Rt+1> if it holds
// <Rs, Rs+1>; <Rs, Rs+1> gets the old pair either way.
func (c *CPU) execCASP(a *caspArgs, _ uint64) {
	r := &c.r
	lg := a.size()
	mask := sizeMask(lg)
	c1, c2 := r[a.rs()]&mask, r[a.rs2()]&mask
	n1, n2 := r[a.rd], r[a.rt2()]
	var o1, o2 uint64
	if c.pairRMW(r[a.rn], lg, func(x1, x2 uint64) (uint64, uint64, bool) {
		o1, o2 = x1, x2
		return n1, n2, x1 == c1 && x2 == c2
	}) {
		r[a.rm], r[a.rs2Dst()] = o1, o2
	}
}
