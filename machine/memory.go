package machine

import (
	"encoding/binary"
	"fmt"
	"io"
	"unsafe"
)

// region is one device range of the physical memory map (TinyEMU's iomem
// style): accesses within [base, base+size) call read/write with the offset
// from base and the access size in bytes (1, 2, 4 or 8). They get the
// accessing CPU (nil for the host) because devices such as the GIC bank
// registers per CPU, and in parallel mode no global says which CPU runs.
type region struct {
	name       string
	base, size uint64
	read       func(c *CPU, off uint64, size int) uint64
	write      func(c *CPU, off uint64, size int, v uint64)
	// poll, if set, lets a device act on the system counter by itself
	// (a NIC's traffic source): the deterministic scheduler calls it with
	// every timer evaluation, and it returns the counter value at which it
	// wants the next call, or noDeadline.
	poll func(now uint64) uint64
}

// bus is the device part of the physical memory map. RAM is not in the
// table: it is checked first, inline, on every access.
type bus struct {
	regions []region
}

func (b *bus) add(r region) { b.regions = append(b.regions, r) }

// poll calls every region's poll hook and returns the earliest deadline.
func (b *bus) poll(now uint64) uint64 {
	d := uint64(noDeadline)
	for i := range b.regions {
		if p := b.regions[i].poll; p != nil {
			d = min(d, p(now))
		}
	}
	return d
}

// find returns the region holding [pa, pa+size), or nil.
func (b *bus) find(pa uint64, size int) *region {
	for i := range b.regions {
		r := &b.regions[i]
		if pa-r.base < r.size && pa-r.base+uint64(size) <= r.size {
			return r
		}
	}
	return nil
}

// ramRange returns the RAM offset of [addr, addr+n) or an error wrapping
// ErrBadAddress.
func (m *Machine) ramRange(addr uint64, n int) (uint64, error) {
	off, ok := m.ramOff(addr, n)
	if !ok {
		return 0, fmt.Errorf("machine: physical range %#x+%#x: %w", addr, n, ErrBadAddress)
	}
	return off, nil
}

// ramOff is ramRange for the access paths, where a range outside RAM is
// a device and no error: it reports whether [addr, addr+n) is RAM.
func (m *Machine) ramOff(addr uint64, n int) (uint64, bool) {
	off := addr - RAMBase
	if off > uint64(len(m.ram)) || uint64(n) > uint64(len(m.ram))-off {
		return 0, false
	}
	return off, true
}

// ReadMem copies guest RAM at physical address addr into p.
func (m *Machine) ReadMem(addr uint64, p []byte) error {
	off, err := m.ramRange(addr, len(p))
	if err != nil {
		return err
	}
	copy(p, m.ram[off:])
	return nil
}

// WriteMem copies p into guest RAM at physical address addr. It invalidates
// the decode cache of every page it touches and breaks other CPUs'
// exclusive reservations on the range, as a store by another observer would.
func (m *Machine) WriteMem(addr uint64, p []byte) error {
	off, err := m.ramRange(addr, len(p))
	if err != nil {
		return err
	}
	copy(m.ram[off:], p)
	m.stored(nil, off, uint64(len(p)))
	return nil
}

// ReadMemFrom reads n bytes from r straight into guest RAM at physical
// address addr, as WriteMem would store them, without a buffer between:
// loading an image so faults in only the RAM's pages.
func (m *Machine) ReadMemFrom(addr uint64, r io.Reader, n int) error {
	off, err := m.ramRange(addr, n)
	if err != nil {
		return err
	}
	_, err = io.ReadFull(r, m.ram[off:off+uint64(n)])
	m.stored(nil, off, uint64(n))
	if err != nil {
		return fmt.Errorf("machine: reading into %#x+%#x: %w", addr, n, err)
	}
	return nil
}

// Read32 reads a little-endian 32-bit word of guest RAM.
func (m *Machine) Read32(addr uint64) (uint32, error) {
	var b [4]byte
	if err := m.ReadMem(addr, b[:]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b[:]), nil
}

// Read64 reads a little-endian 64-bit word of guest RAM.
func (m *Machine) Read64(addr uint64) (uint64, error) {
	var b [8]byte
	if err := m.ReadMem(addr, b[:]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}

// Write32 writes a little-endian 32-bit word of guest RAM.
func (m *Machine) Write32(addr uint64, v uint32) error {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], v)
	return m.WriteMem(addr, b[:])
}

// Write64 writes a little-endian 64-bit word of guest RAM.
func (m *Machine) Write64(addr uint64, v uint64) error {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	return m.WriteMem(addr, b[:])
}

// stored does the bookkeeping after n bytes at RAM offset off changed:
// it drops decode caches of the touched pages and clears exclusive monitors
// of CPUs other than by (nil: the host) whose granule overlaps.
//
// In parallel mode a store by a vCPU goes to storedPar instead; a store by
// the host happens with the world stopped (the Machine's concurrency
// contract), so it may touch every CPU, and it snoops every monitor since
// that mode does not count reservations.
func (m *Machine) stored(by *CPU, off, n uint64) {
	if n == 0 {
		return
	}
	if m.par != nil {
		if by != nil {
			m.storedPar(by, off, n)
			return
		}
		for p := off / PageSize; p <= (off+n-1)/PageSize; p++ {
			if m.codeGen[p].Load() != 0 {
				m.codeGen[p].Add(2)
			}
			if m.code[p].Load() != nil {
				m.invalidate(p)
			}
		}
		m.snoop(nil, off+RAMBase, n)
		return
	}
	for p := off / PageSize; p <= (off+n-1)/PageSize; p++ {
		if cp := m.code[p].Load(); cp != nil {
			m.invalidateSlots(p, cp, off, n)
		}
	}
	if m.reservations != 0 {
		m.snoop(by, off+RAMBase, n)
	}
}

// invalidateSlots forgets the decoded instructions of RAM page p (decode
// cache cp) that the store to [off, off+n) overwrote: they decode afresh
// when next executed. Only those: data that shares a page with code (a
// small program's .data, a stack, a module's sections) would otherwise
// throw away the page's decoded code at every store. A page left with no
// decoded instruction is dropped, so the cache holds only live code.
// Deterministic mode only: parallel mode's CPUs read the entries
// concurrently, and it drops whole pages (storedPar).
func (m *Machine) invalidateSlots(p uint64, cp *codePage, off, n uint64) {
	base := p * PageSize
	lo, hi := max(off, base)-base, min(off+n, base+PageSize)-base
	hit := false
	for i := lo / 4; i < (hi+3)/4; i++ {
		if cp.insts[i].op != opNone {
			// Only op: an instruction that overwrote itself still reads
			// its other fields after the store.
			cp.insts[i].op = opNone
			cp.live--
			hit = true
		}
	}
	if !hit {
		// A store beside the page's code. Stores to the page keep
		// bailing out of translated code while it holds decoded
		// instructions, and a page that takes many of them while no CPU
		// runs its code mostly holds dead code: a freed page of a
		// program's text reused for the kernel's data. So after
		// dropAfter such stores since its code last ran (fetch resets
		// the count) the page is dropped; code still live there decodes
		// afresh when it next runs.
		if !m.running(p) {
			if cp.dataStores++; cp.dataStores >= dropAfter {
				m.invalidate(p)
			}
		}
		return
	}
	if cp.live == 0 {
		m.invalidate(p)
		return
	}
	m.invalidations.Add(1)
	// Any translated block may hold an overwritten instruction: drop them
	// all, and make a CPU running one leave it after the store. Only
	// blocks have jump cache entries (fetch's entries for the page stay
	// valid: it is the same page): once they are dropped, further stores
	// to the page (a program's data beside its code, a page of text
	// freed and cleared) need not empty the caches again.
	if cp.blocks[0] != nil { // deterministic mode's CPUs share owner 0
		cp.blocks[0] = nil
		m.dropJumpsPA(base + RAMBase)
	}
	m.refetch(p)
}

// dropAfter is how many stores beside a page's decoded instructions
// drop its decode cache (invalidateSlots).
const dropAfter = 256

// invalidate drops the decode cache of RAM page p and makes every CPU that
// was executing from it look the page up again on its next fetch.
func (m *Machine) invalidate(p uint64) {
	m.code[p].Store(nil)
	m.dropJumpsPA(p*PageSize + RAMBase)
	m.decodedPages.Add(-1)
	m.invalidations.Add(1)
	m.refetch(p)
}

// running reports whether a CPU is executing from RAM page p.
func (m *Machine) running(p uint64) bool {
	for _, c := range m.cpus {
		if c.pagePA == p*PageSize+RAMBase && c.pageVA != noPage {
			return true
		}
	}
	return false
}

// refetch makes every CPU executing from RAM page p fetch it afresh.
func (m *Machine) refetch(p uint64) {
	for _, c := range m.cpus {
		if c.pagePA == p*PageSize+RAMBase {
			c.pageVA = noPage
		}
	}
}

// The exclusive reservation granule: 64 bytes, as CTR_EL0.ERG reports.
const ergMask = ^uint64(63)

// snoop clears the exclusive monitors of CPUs other than by whose
// reservation granule overlaps the physical range [pa, pa+n).
func (m *Machine) snoop(by *CPU, pa, n uint64) {
	lo, hi := pa&ergMask, (pa+n-1)&ergMask
	for _, c := range m.cpus {
		if c != by && c.excValid && c.excPA&ergMask >= lo && c.excPA&ergMask <= hi {
			c.clearExclusive()
		}
	}
}

// load reads size bytes (1<<lg) at virtual address va, zero-extended. On a
// fault it takes the data abort and returns ok=false.
//
// The fast path is plain RAM: with the MMU off VA == PA, and with it on the
// micro-TLB maps the page (tagged by EL, refilled by the slow path). An
// access that could straddle the page goes the slow way.
func (c *CPU) load(va uint64, lg uint8) (uint64, bool) {
	ram := c.m.ram
	off := va - RAMBase
	if c.xlate {
		e := &c.utlb[va>>12&utlbMask]
		// In parallel mode only translated code takes the micro-TLB's
		// plain access: Go code must reach RAM through atomics.
		if e.rtag != utlbTag(va, c.el) || va&0xfff > PageSize-8 || c.par {
			return c.loadSlow(va, lg, c.el)
		}
		off = e.off + va&0xfff
	}
	if off < uint64(len(ram))-7 {
		switch lg {
		case 0:
			return uint64(ram[off]), true
		case 1:
			return uint64(binary.LittleEndian.Uint16(ram[off:])), true
		case 2:
			return uint64(binary.LittleEndian.Uint32(ram[off:])), true
		default:
			return binary.LittleEndian.Uint64(ram[off:]), true
		}
	}
	return c.loadSlow(va, lg, c.el)
}

// loadAt is load with the permissions of EL el: LDTR at EL1 reads as EL0.
func (c *CPU) loadAt(va uint64, lg uint8, el uint8) (uint64, bool) {
	if el == c.el || c.sys[SCTLR_EL1]&sctlrM == 0 {
		return c.load(va, lg)
	}
	return c.loadSlow(va, lg, el)
}

// storeAt is store with the permissions of EL el (STTR).
func (c *CPU) storeAt(va uint64, lg uint8, v uint64, el uint8) bool {
	if el == c.el || c.sys[SCTLR_EL1]&sctlrM == 0 {
		return c.store(va, lg, v)
	}
	return c.storeSlow(va, lg, v, el)
}

// aligned checks the alignment that exclusives and acquire/release
// accesses always require, taking the alignment fault if it fails.
func (c *CPU) aligned(va uint64, lg uint8, write bool) bool {
	if va&(1<<lg-1) == 0 {
		return true
	}
	c.dataFault(va, fscAlignment, write, false)
	return false
}

// physAddr2 returns the physical address of byte i of an access whose
// first page maps to pa and whose second (if crossed) maps to pa2.
func physAddr2(va, pa, pa2, i uint64) uint64 {
	if pa2 == ^uint64(0) || (va+i)&^0xfff == va&^0xfff {
		return pa + i
	}
	return pa2 + (va+i)&0xfff
}

// sizeLog returns log2 of an access size of 1, 2, 4 or 8 bytes.
func sizeLog(size int) uint8 {
	switch size {
	case 1:
		return 0
	case 2:
		return 1
	case 4:
		return 2
	}
	return 3
}

func (c *CPU) loadSlow(va uint64, lg uint8, el uint8) (uint64, bool) {
	size := 1 << lg
	pa, pa2 := va, ^uint64(0)
	if c.xlate {
		var ok bool
		if pa, pa2, ok = c.dataAddr(va, lg, false, false, el); !ok {
			return 0, false
		}
	}
	var v uint64
	if pa2 != ^uint64(0) {
		for i := size - 1; i >= 0; i-- {
			b, ok := c.physRead(physAddr2(va, pa, pa2, uint64(i)), 1)
			if !ok {
				c.dataAbort(va, false)
				return 0, false
			}
			v = v<<8 | b
		}
	} else {
		var ok bool
		if v, ok = c.physRead(pa, size); !ok {
			c.dataAbort(va, false)
			return 0, false
		}
	}
	if c.dbg.hostWatch {
		c.m.hostWatchCheck(c, va, uint64(size), false)
	}
	return v, true
}

// physRead reads size bytes at physical address pa from RAM or a device.
func (c *CPU) physRead(pa uint64, size int) (uint64, bool) {
	m := c.m
	if off, ok := m.ramOff(pa, size); ok {
		if c.par {
			return m.ramLoad(off, sizeLog(size)), true
		}
		return ramGet(m.ram[off:], sizeLog(size)), true
	}
	if r := m.bus.find(pa, size); r != nil {
		return r.read(c, pa-r.base, size), true
	}
	return 0, false
}

// physWrite writes size bytes at physical address pa to RAM or a device.
func (c *CPU) physWrite(pa uint64, size int, v uint64) bool {
	m := c.m
	if off, ok := m.ramOff(pa, size); ok {
		if c.par {
			m.ramStore(off, sizeLog(size), v)
		} else {
			ramPut(m.ram[off:], sizeLog(size), v)
		}
		m.stored(c, off, uint64(size))
		return true
	}
	if r := m.bus.find(pa, size); r != nil {
		r.write(c, pa-r.base, size, v)
		if c.lines.Load() != 0 {
			// The write may have raised this CPU's interrupt (a self-SGI,
			// unmasking in the GIC): leave the fast path so the next
			// instruction boundary polls the lines, as QEMU ends the
			// translation block after an I/O write.
			c.pageVA = noPage
		}
		return true
	}
	return false
}

// store writes the low size bytes (1<<lg) of v at virtual address va. On a
// fault it takes the data abort and returns false.
func (c *CPU) store(va uint64, lg uint8, v uint64) bool {
	m := c.m
	ram := m.ram
	off := va - RAMBase
	if c.xlate {
		e := &c.utlb[va>>12&utlbMask]
		if e.wtag != utlbTag(va, c.el) || va&0xfff > PageSize-8 || c.par { // (see load)
			return c.storeSlow(va, lg, v, c.el)
		}
		off = e.off + va&0xfff
	}
	if off < uint64(len(ram))-7 {
		switch lg {
		case 0:
			ram[off] = byte(v)
		case 1:
			binary.LittleEndian.PutUint16(ram[off:], uint16(v))
		case 2:
			binary.LittleEndian.PutUint32(ram[off:], uint32(v))
		default:
			binary.LittleEndian.PutUint64(ram[off:], v)
		}
		// An unaligned store may straddle two pages; check both ends.
		end := off + 1<<lg - 1
		if m.code[off/PageSize].Load() != nil || m.code[end/PageSize].Load() != nil || m.reservations != 0 {
			m.stored(c, off, 1<<lg)
		}
		return true
	}
	return c.storeSlow(va, lg, v, c.el)
}

func (c *CPU) storeSlow(va uint64, lg uint8, v uint64, el uint8) bool {
	size := 1 << lg
	pa, pa2 := va, ^uint64(0)
	if c.xlate {
		var ok bool
		if pa, pa2, ok = c.dataAddr(va, lg, true, false, el); !ok {
			return false
		}
	}
	if pa2 != ^uint64(0) {
		for i := 0; i < size; i++ {
			if !c.physWrite(physAddr2(va, pa, pa2, uint64(i)), 1, v>>(8*i)) {
				c.dataAbort(va+uint64(i), true)
				return false
			}
		}
	} else if !c.physWrite(pa, size, v) {
		c.dataAbort(va, true)
		return false
	}
	if c.dbg.hostWatch {
		c.m.hostWatchCheck(c, va, uint64(size), true)
	}
	return true
}

// addrOf returns the address of b's first byte. RAM is never moved, so
// translated code and the micro-TLB may keep addresses into it.
func addrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(&b[0])) }
