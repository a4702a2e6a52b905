package machine

import (
	"errors"
	"fmt"
	"math/bits"
)

// Stage-1 translation for the EL1&0 regime with the 4 KiB granule (Arm ARM
// D8, "The AArch64 Virtual Memory System Architecture"), the TLB that
// caches it, and the data-access micro-TLB in front of that.
//
// Only the 4 KiB granule exists here (ID_AA64MMFR0_EL1 says so); a TCR_EL1
// TG0/TG1 value naming another granule is treated as 4 KiB, which the
// architecture allows for an unimplemented granule size.

// SCTLR_EL1 bits.
const (
	sctlrM   = 1 << 0  // MMU enable
	sctlrA   = 1 << 1  // alignment check
	sctlrSA  = 1 << 3  // SP alignment check at EL1
	sctlrSA0 = 1 << 4  // SP alignment check at EL0
	sctlrUMA = 1 << 9  // EL0 access to DAIF
	sctlrDZE = 1 << 14 // EL0 DC ZVA
	sctlrUCT = 1 << 15 // EL0 access to CTR_EL0
	sctlrNTW = 1 << 16 // nTWI: EL0 WFI not trapped
	sctlrWXN = 1 << 19 // writable implies execute-never
	sctlrUCI = 1 << 26 // EL0 cache maintenance by VA
)

// TCR_EL1 fields.
const (
	tcrEPD0 = 1 << 7
	tcrEPD1 = 1 << 23
	tcrA1   = 1 << 22
	tcrAS   = 1 << 36
	tcrTBI0 = 1 << 37
	tcrTBI1 = 1 << 38
)

// Fault status codes (the low six bits of DFSC/IFSC and PAR_EL1.FST); the
// level-relative ones add the lookup level.
const (
	fscAddrSize    = 0x00
	fscTranslation = 0x04
	fscAccessFlag  = 0x08
	fscPermission  = 0x0c
	fscWalkExt     = 0x14
)

// paBits is the physical address size (ID_AA64MMFR0_EL1.PARange = 44 bits).
const paBits = 44

// AccessKind is the kind of access a translation is checked for.
type AccessKind int

// Access kinds for TranslateVA.
const (
	AccessRead  AccessKind = iota // data read
	AccessWrite                   // data write
	AccessExec                    // instruction fetch
)

// ErrTranslation is wrapped by the errors of TranslateVA, ReadVirt and
// WriteVirt for addresses the guest's translation does not map (or maps
// without the permission asked for). The error is a *TranslationError.
var ErrTranslation = errors.New("machine: translation fault")

// TranslationError describes why a virtual address did not translate.
type TranslationError struct {
	VA  uint64
	FSC uint32 // fault status code as DFSC/IFSC would report it
}

func (e *TranslationError) Error() string {
	return fmt.Sprintf("machine: translation of %#x failed (fault status %#x: %s)", e.VA, e.FSC, fscName(e.FSC))
}

// Unwrap makes errors.Is(err, ErrTranslation) hold.
func (e *TranslationError) Unwrap() error { return ErrTranslation }

func fscName(fsc uint32) string {
	switch fsc &^ 3 {
	case fscAddrSize:
		return "address size fault"
	case fscTranslation:
		return "translation fault"
	case fscAccessFlag:
		return "access flag fault"
	case fscPermission:
		return "permission fault"
	case fscWalkExt:
		return "external abort on table walk"
	}
	switch fsc {
	case fscExternal:
		return "external abort"
	case fscAlignment:
		return "alignment fault"
	}
	return "fault"
}

// Permission bits of a translation (tlbEntry.perm).
const (
	permR1 = 1 << iota // EL1 read
	permW1             // EL1 write
	permX1             // EL1 execute
	permR0             // EL0 read
	permW0             // EL0 write
	permX0             // EL0 execute
)

// tlbEntry caches one successful stage-1 walk. Blocks are cached whole
// (mask covers the block), so a TLBI by any address inside a block drops
// the block, as it must.
type tlbEntry struct {
	va     uint64 // VA of the block or page start; tlbInvalid when empty
	mask   uint64 // block or page size - 1
	pa     uint64 // output address of the block or page start
	asid   uint16
	global bool
	perm   uint8
	attr   uint8 // MAIR_EL1 attribute byte
	sh     uint8 // shareability, for PAR_EL1
}

// tlbSize entries, indexed by VA bits [19:12]: a modest direct-mapped TLB.
const (
	tlbSize    = 256
	tlbInvalid = 1 // no block starts at an odd address
)

// utlbEntry maps one 4 KiB VA page to RAM for loads (rtag) and, if
// writable and not holding code, stores (wtag). A tag is utlbTag of the
// page at the EL it was filled for, so EL0 and EL1 never share an entry
// and exception entry needs no flush.
// Translated code indexes it by shifts: it is 32 bytes.
type utlbEntry struct {
	rtag, wtag uint64
	off        uint64 // RAM offset of the page
	// host is the host address of the page's RAM less the VA page, so
	// that translated code loads from host+va.
	host uint64
}

const (
	utlbEntrySize = 32 // bytes, a power of two (see utlbEntry)
	// utlbSize: a miss leaves translated code for the interpreter. In
	// 3 billion instructions of the kernel's workload, 1,024 entries
	// missed 660,000 times less than 256 (4,096 saved little more).
	utlbSize    = 1024
	utlbMask    = utlbSize - 1
	utlbInvalid = 2 // never a valid tag (see utlbTag)
)

// utlbTag returns the micro-TLB tag of va's page at EL el: the page with
// its low 12 bits clear at EL0, set at EL1. Translated code makes it
// from any address in the page with one AND or one OR.
func utlbTag(va uint64, el uint8) uint64 {
	if el != 0 {
		return va | 0xfff
	}
	return va &^ 0xfff
}

// mmuChanged recomputes the access-path flags after SCTLR_EL1 or debug
// state changed.
func (c *CPU) mmuChanged() {
	sctlr := c.sys[SCTLR_EL1]
	watch := c.watchActive()
	c.xlate = sctlr&(sctlrM|sctlrA) != 0 || watch || c.par
	c.utlbOK = sctlr&sctlrA == 0 && !watch
	c.flushUTLB()
	c.pageVA = noPage
}

func (c *CPU) flushUTLB() {
	c.flushJumps()
	for i := range c.utlb {
		c.utlb[i] = utlbEntry{rtag: utlbInvalid, wtag: utlbInvalid}
	}
}

func (c *CPU) flushTLB() {
	for i := range c.tlb {
		c.tlb[i].va = tlbInvalid
	}
	c.flushUTLB()
	c.pageVA = noPage
}

// translationChanged is called when a register the translation depends on
// (TTBRx, TCR, MAIR) is written. The TLB proper is tagged by ASID and keeps
// its entries, except on TCR writes, which (as in QEMU) flush it because
// its fields change how every cached entry was formed. The micro-TLB and
// the fetch page are keyed by VA only: on a TTBR write (a context switch)
// the micro-TLB keeps what the TLB would still match whatever the ASID,
// its global entries; otherwise it is dropped. The jump cache is tagged
// by ASID as the TLB is (jumpCache.setASID).
func (c *CPU) translationChanged(r SysReg) {
	switch r {
	case TTBR0_EL1, TTBR1_EL1:
		c.dropNonGlobalUTLB()
		c.pageVA = noPage
	case TCR_EL1, SCTLR_EL1:
		c.flushTLB()
		c.mmuChanged()
	default:
		c.mmuChanged()
	}
	c.jumps.setASID(c.asid())
}

// asid returns the current ASID (TCR_EL1.A1 picks TTBR0 or TTBR1, TCR.AS
// the width).
func (c *CPU) asid() uint16 {
	tcr := c.sys[TCR_EL1]
	ttbr := c.sys[TTBR0_EL1]
	if tcr&tcrA1 != 0 {
		ttbr = c.sys[TTBR1_EL1]
	}
	a := uint16(ttbr >> 48)
	if tcr&tcrAS == 0 {
		a &= 0xff
	}
	return a
}

// walkResult is a translation with the permissions for every EL.
type walkResult = tlbEntry // the same shape: what the TLB caches is a walk

// walk performs the stage-1 table walk for va (data selects whether the
// top byte may be ignored). On failure ok is false and fsc is the fault
// status code, the fault kind plus the lookup level (an address size
// fault at level 0 has fsc 0). It neither reads nor fills the TLB.
func (c *CPU) walk(va uint64, data bool) (res walkResult, fsc uint32, ok bool) {
	tcr := c.sys[TCR_EL1]
	hi := va>>55&1 != 0
	var txsz uint64
	var ttbr uint64
	var tbi, epd bool
	if hi {
		txsz = tcr >> 16 & 63
		ttbr = c.sys[TTBR1_EL1]
		tbi = tcr&tcrTBI1 != 0
		epd = tcr&tcrEPD1 != 0
	} else {
		txsz = tcr & 63
		ttbr = c.sys[TTBR0_EL1]
		tbi = tcr&tcrTBI0 != 0
		epd = tcr&tcrEPD0 != 0
	}
	// Out-of-range sizes are clamped, as QEMU does for the 4K granule
	// without the small-translation-table extension.
	if txsz < 16 {
		txsz = 16
	} else if txsz > 39 {
		txsz = 39
	}
	inBits := 64 - txsz
	// Output addresses must fit the smaller of TCR_EL1.IPS and the
	// implemented PA size.
	outBits := uint64(paBits)
	if ips := [8]uint64{32, 36, 40, 42, 44, 48, 52, 52}[tcr>>32&7]; ips < outBits {
		outBits = ips
	}
	// The bits above the input size must all equal bit 55 (or bit 63's
	// region when the top byte is not ignored).
	top := va >> inBits
	topBits := 64 - inBits
	if tbi && data {
		top &= 1<<(56-inBits) - 1
		topBits = 56 - inBits
	}
	want := uint64(0)
	if hi {
		want = 1<<topBits - 1
	}
	if top != want || epd {
		return res, fscTranslation + 0, false
	}
	// Starting level for 4 KiB: each level resolves 9 bits above bit 12.
	level := uint64(3) - (inBits-12-1)/9
	start := level
	startEntries := uint64(1) << (inBits - (12 + 9*(3-start)))
	// The start table is aligned to its size (at least 64 bytes); BADDR
	// bits below that are RES0 and ignored.
	align := startEntries * 8
	if align < 64 {
		align = 64
	}
	table := ttbr & (1<<48 - 1) &^ (align - 1)
	if table>>outBits != 0 {
		return res, fscAddrSize + 0, false
	}
	var apTable, xnTable, pxnTable uint64
	for {
		shift := 12 + 9*(3-level)
		idx := va >> shift & 511
		if level == start {
			idx = va >> shift & (startEntries - 1)
		}
		da := table + idx*8
		desc, okRead := c.m.readDesc(da)
		if !okRead {
			return res, fscWalkExt + uint32(level), false
		}
		if desc&1 == 0 || (level == 3 && desc&2 == 0) || (level == 0 && desc&2 == 0) {
			return res, fscTranslation + uint32(level), false
		}
		if level < 3 && desc&2 != 0 {
			// Table descriptor: hierarchical permissions accumulate.
			apTable |= desc >> 61 & 3
			xnTable |= desc >> 60 & 1
			pxnTable |= desc >> 59 & 1
			table = desc & (1<<48 - 1) &^ 0xfff
			if table>>outBits != 0 {
				return res, fscAddrSize + uint32(level), false
			}
			level++
			continue
		}
		// Block (level 1 or 2) or page (level 3).
		mask := uint64(1)<<shift - 1
		oa := desc & (1<<48 - 1) &^ mask
		if oa>>outBits != 0 {
			return res, fscAddrSize + uint32(level), false
		}
		if desc&(1<<10) == 0 {
			return res, fscAccessFlag + uint32(level), false
		}
		ap := desc >> 6 & 3
		// APTable[0] removes EL0 access, APTable[1] write access.
		if apTable&1 != 0 {
			ap &^= 1
		}
		if apTable&2 != 0 {
			ap |= 2
		}
		var perm uint8
		perm |= permR1
		if ap&2 == 0 {
			perm |= permW1
		}
		if ap&1 != 0 {
			perm |= permR0
			if ap&2 == 0 {
				perm |= permW0
			}
		}
		uxn := desc>>54&1 != 0 || xnTable != 0
		// EL0-writable memory is never executable at EL1 (the implicit
		// PXN of the architecture, which QEMU implements too).
		pxn := desc>>53&1 != 0 || pxnTable != 0 || perm&permW0 != 0
		wxn := c.sys[SCTLR_EL1]&sctlrWXN != 0
		if !pxn && !(wxn && perm&permW1 != 0) {
			perm |= permX1
		}
		if !uxn && !(wxn && perm&permW0 != 0) {
			perm |= permX0
		}
		attrIdx := desc >> 2 & 7
		res = tlbEntry{
			va:     va &^ mask,
			mask:   mask,
			pa:     oa,
			global: desc&(1<<11) == 0,
			perm:   perm,
			attr:   uint8(c.sys[MAIR_EL1] >> (8 * attrIdx)),
			sh:     uint8(desc >> 8 & 3),
		}
		if !res.global {
			res.asid = c.asid()
		}
		return res, 0, true
	}
}

// readDesc reads a translation table descriptor at physical address pa;
// ok is false when pa is not in RAM (an external abort on the walk).
func (m *Machine) readDesc(pa uint64) (uint64, bool) {
	off := pa - RAMBase
	if pa&7 != 0 || off >= uint64(len(m.ram)) {
		return 0, false
	}
	if m.par != nil {
		// Another vCPU goroutine may be writing the table.
		return m.ramLoad(off, 3), true
	}
	b := m.ram[off : off+8]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56, true
}

// lookup returns the translation of va from the TLB, walking and filling
// it on a miss.
func (c *CPU) lookup(va uint64, data bool) (*tlbEntry, uint32, bool) {
	// With the top byte ignored, the TLB must not see the tag.
	key := va
	if data {
		key = c.stripTag(va)
	}
	e := &c.tlb[key>>12&(tlbSize-1)]
	if e.va != tlbInvalid && key&^e.mask == e.va && (e.global || e.asid == c.asid()) {
		return e, 0, true
	}
	res, fsc, ok := c.walk(va, data)
	if !ok {
		return nil, fsc, false
	}
	res.va = key &^ res.mask
	*e = res
	return e, 0, true
}

// stripTag replaces the top byte of a data address by copies of bit 55
// when TCR_EL1.TBIx says the top byte is ignored.
func (c *CPU) stripTag(va uint64) uint64 {
	tcr := c.sys[TCR_EL1]
	if va>>55&1 != 0 {
		if tcr&tcrTBI1 != 0 {
			return va | 0xff<<56
		}
	} else if tcr&tcrTBI0 != 0 {
		return va &^ (0xff << 56)
	}
	return va
}

// permFor returns the permission bit needed for an access.
func permFor(el uint8, kind AccessKind) uint8 {
	var p uint8
	switch kind {
	case AccessRead:
		p = permR1
	case AccessWrite:
		p = permW1
	default:
		p = permX1
	}
	if el == 0 {
		p <<= 3
	}
	return p
}

// isDevice reports whether a MAIR attribute byte is Device memory.
func isDevice(attr uint8) bool { return attr&0xf0 == 0 }

// translate maps va for an access of the given kind at the given EL. With
// the MMU off it is the identity. On a fault it returns the FSC.
func (c *CPU) translate(va uint64, kind AccessKind, el uint8) (pa uint64, attr uint8, fsc uint32, ok bool) {
	if c.sys[SCTLR_EL1]&sctlrM == 0 {
		// Untranslated data accesses are Device-nGnRnE; that only
		// matters for PAR_EL1 here (see dataAddr on alignment).
		return va, 0, 0, true
	}
	e, fsc, ok := c.lookup(va, kind != AccessExec)
	if !ok {
		return 0, 0, fsc, false
	}
	if e.perm&permFor(el, kind) == 0 {
		level := uint32(3)
		switch e.mask {
		case 1<<30 - 1:
			level = 1
		case 1<<21 - 1:
			level = 2
		}
		return 0, 0, fscPermission + level, false
	}
	key := va
	if kind != AccessExec {
		key = c.stripTag(va)
	}
	return e.pa | key&e.mask, e.attr, 0, true
}

// dataAddr checks and translates a data access of 1<<lg bytes at va by
// the current instruction: alignment (SCTLR_EL1.A, or always when
// aligned is set), translation and permissions at EL el, Device-memory
// alignment, and guest watchpoints. On success it returns the physical
// address of the first byte and, for an access that crosses into the next
// page, the physical address of that page (else ^0). On a fault it takes
// the exception and returns ok=false.
func (c *CPU) dataAddr(va uint64, lg uint8, write, aligned bool, el uint8) (pa, pa2 uint64, ok bool) {
	size := uint64(1) << lg
	if va&(size-1) != 0 && (aligned || c.sys[SCTLR_EL1]&sctlrA != 0) {
		c.dataFault(va, fscAlignment, write, false)
		return 0, 0, false
	}
	kind := AccessRead
	if write {
		kind = AccessWrite
	}
	pa, attr, fsc, ok := c.translate(va, kind, el)
	if !ok {
		c.dataFault(va, fsc, write, false)
		return 0, 0, false
	}
	pa2 = ^uint64(0)
	dev := isDevice(attr)
	if va&0xfff+size > PageSize {
		next := va&^0xfff + PageSize
		p2, attr2, fsc, ok := c.translate(next, kind, el)
		if !ok {
			c.dataFault(next, fsc, write, false)
			return 0, 0, false
		}
		pa2 = p2
		dev = dev || isDevice(attr2)
	}
	mmuOn := c.sys[SCTLR_EL1]&sctlrM != 0
	// Device memory forbids unaligned accesses. With the MMU off every
	// data access is Device-nGnRnE, but QEMU 7.2 (the differential
	// oracle) does not check that case and compiled C relies on it, so
	// only translated Device mappings are checked.
	if va&(size-1) != 0 && mmuOn && dev {
		c.dataFault(va, fscAlignment, write, false)
		return 0, 0, false
	}
	if c.dbg.guestWatch && c.watchpointHit(va, size, write) {
		return 0, 0, false
	}
	// Device-attributed RAM stays off the fast path, which would not
	// check alignment.
	if c.utlbOK && (!mmuOn || !dev) {
		c.fillUTLB(va, pa, write, el)
	}
	return pa, pa2, true
}

// fillUTLB caches the RAM page of a successful access for the fast path.
func (c *CPU) fillUTLB(va, pa uint64, write bool, el uint8) {
	if el != c.el {
		return // LDTR/STTR at EL1 check EL0 permissions: not the EL of the tag
	}
	off := pa&^0xfff - RAMBase
	if off >= uint64(len(c.m.ram)) {
		return
	}
	i := va >> 12 & utlbMask
	e := &c.utlb[i]
	tag := utlbTag(va, el)
	if e.rtag != tag || e.off != off {
		*e = utlbEntry{rtag: utlbInvalid, wtag: utlbInvalid, off: off, host: uint64(addrOf(c.m.ram)) + off - va&^0xfff}
	}
	te := c.tlbMatched(c.stripTag(va))
	c.utlbGlobal[i] = te != nil && te.global
	if !c.utlbGlobal[i] {
		c.utlbLocal[i/64] |= 1 << (i % 64)
	}
	// A read fill proves read permission; a store proves write (and, on
	// this architecture, writable implies readable at the same EL). A
	// read fill also grants stores if the TLB entry it used allows them
	// (with the MMU off, RAM is writable): else the first store to a
	// page the code read first would leave translated code.
	e.rtag = tag
	if !write {
		write = c.sys[SCTLR_EL1]&sctlrM == 0 || te != nil && te.perm&permFor(el, AccessWrite) != 0
	}
	if write && c.m.code[off/PageSize].Load() == nil {
		e.wtag = tag
	}
}

// tlbMatched returns the TLB entry translate has just matched (or
// filled) for key, or nil if there is none (the MMU is off).
func (c *CPU) tlbMatched(key uint64) *tlbEntry {
	te := &c.tlb[key>>12&(tlbSize-1)]
	if te.va == tlbInvalid || key&^te.mask != te.va {
		return nil
	}
	return te
}

// tlbGlobal reports whether the TLB entry translate has just matched (or
// filled) for key is global: one that a change of ASID leaves valid.
func (c *CPU) tlbGlobal(key uint64) bool {
	te := c.tlbMatched(key)
	return te != nil && te.global
}

// codeAppeared drops the store permission of every micro-TLB entry that
// maps RAM offset off, a page that now holds decoded code: translated
// code stores through an entry without asking whether its page holds
// code, so no page that does may have one (see fillUTLB).
func (m *Machine) codeAppeared(off uint64) {
	for _, c := range m.cpus {
		for i := range c.utlb {
			if c.utlb[i].off == off {
				c.utlb[i].wtag = utlbInvalid
			}
		}
	}
}

// TranslateVA translates va as the CPU would for an access of the given
// kind at its current exception level, without touching the TLBs (a host
// debugger's look must not change what the guest observes). The error
// wraps ErrTranslation (a *TranslationError) when the access would fault.
func (c *CPU) TranslateVA(va uint64, kind AccessKind) (uint64, error) {
	if c.sys[SCTLR_EL1]&sctlrM == 0 {
		return va, nil
	}
	res, fsc, ok := c.walk(va, kind != AccessExec)
	if !ok {
		return 0, &TranslationError{VA: va, FSC: fsc}
	}
	if res.perm&permFor(c.el, kind) == 0 {
		return 0, &TranslationError{VA: va, FSC: fscPermission + 3}
	}
	if kind != AccessExec {
		va = c.stripTag(va)
	}
	return res.pa | va&res.mask, nil
}

// TLBI operations: the operation operand of &tlbi.
const (
	tlbiVMALLE1 = iota
	tlbiVAE1
	tlbiASIDE1
	tlbiVAAE1
)

// tlbi performs a TLB invalidation on c; arg is the Xt operand.
func (c *CPU) tlbi(op uint8, arg uint64) {
	// Xt holds VA[55:12] in bits [43:0], sign-extended from bit 55 to
	// address either range, and the ASID in bits [63:48].
	va := sext(arg&(1<<44-1), 44) << 12
	asid := uint16(arg >> 48)
	if c.sys[TCR_EL1]&tcrAS == 0 {
		asid &= 0xff
	}
	for i := range c.tlb {
		e := &c.tlb[i]
		if e.va == tlbInvalid {
			continue
		}
		var drop bool
		switch op {
		case tlbiVMALLE1:
			drop = true
		case tlbiVAE1:
			drop = va&^e.mask == e.va && (e.global || e.asid == asid)
		case tlbiASIDE1:
			drop = !e.global && e.asid == asid
		case tlbiVAAE1:
			drop = va&^e.mask == e.va
		}
		if drop {
			e.va = tlbInvalid
		}
	}
	// What the TLB derived from the entries dropped goes too, and no
	// more: the kernel invalidates a process's pages thousands of times
	// a second, and emptying its own translations and jump cache each
	// time would make its code fetch and translate them again.
	switch op {
	case tlbiVMALLE1:
		c.flushUTLB()
	case tlbiASIDE1:
		c.dropNonGlobalUTLB()
		c.flushASID(asid)
	default:
		// A TLB entry is at most a level-1 block (4 KiB granule): 1 GiB.
		const block = 1<<30 - 1
		c.dropUTLBVA(va&^block, va|block)
		c.dropJumpsVA(va&^block, va|block, asid, op == tlbiVAAE1)
	}
	c.pageVA = noPage
}

// dropNonGlobalUTLB drops the micro-TLB entries of non-global
// translations.
func (c *CPU) dropNonGlobalUTLB() {
	for w, set := range c.utlbLocal {
		for ; set != 0; set &= set - 1 {
			// (An entry refilled from a global entry since keeps its bit.)
			if i := w*64 + bits.TrailingZeros64(set); !c.utlbGlobal[i] {
				c.utlb[i] = utlbEntry{rtag: utlbInvalid, wtag: utlbInvalid}
			}
		}
		c.utlbLocal[w] = 0
	}
}

// dropUTLBVA drops the micro-TLB entries of pages in [lo, hi]. Bits
// [63:56] are not compared: a tag may carry a top byte. (An entry's
// wtag is its rtag or invalid: the rtag says which page it is.)
func (c *CPU) dropUTLBVA(lo, hi uint64) {
	const va = 1<<56 - 1
	lo, hi = lo&va, hi&va|0xfff
	for i := range c.utlb {
		if t := c.utlb[i].rtag & va; c.utlb[i].rtag != utlbInvalid && lo <= t && t <= hi {
			c.utlb[i] = utlbEntry{rtag: utlbInvalid, wtag: utlbInvalid}
		}
	}
}

// at performs AT S1E1R/S1E1W/S1E0R/S1E0W (op2 0..3) for va and writes
// PAR_EL1 in the 64-bit format. Faults are reported in PAR_EL1 and not
// taken, except external aborts on the walk. The layout follows QEMU: bit 11 set, NS set for this Non-secure
// machine.
func (c *CPU) at(op2 uint8, va uint64) {
	el := uint8(1)
	if op2 >= 2 {
		el = 0
	}
	kind := AccessRead
	if op2&1 != 0 {
		kind = AccessWrite
	}
	par := uint64(1 << 11)
	if c.sys[SCTLR_EL1]&sctlrM == 0 {
		par |= va&(1<<48-1)&^0xfff | 1<<9
		c.sys[PAR_EL1] = par
		return
	}
	pa, _, fsc, ok := c.translate(va, kind, el)
	if !ok {
		if fsc&^3 == fscWalkExt {
			// An external abort on the walk is not reported in PAR but
			// taken as a data abort marked as cache maintenance (CM),
			// as QEMU does; PAR_EL1 keeps its old value.
			c.dataFault(va, fsc, kind == AccessWrite, true)
			return
		}
		c.sys[PAR_EL1] = par | 1 | uint64(fsc&0x3f)<<1
		return
	}
	e, _, _ := c.lookup(va, true)
	c.sys[PAR_EL1] = par | pa&(1<<48-1)&^0xfff | 1<<9 | uint64(e.attr)<<56 | uint64(e.sh)<<7
}
