package machine

import (
	"errors"
	"testing"
)

// Page-table descriptor bits for the tests.
const (
	ptTable  = 3
	ptPage   = 3 // level 3
	ptBlock  = 1 // levels 1, 2
	ptAF     = 1 << 10
	ptNG     = 1 << 11
	ptSH     = 3 << 8
	ptAPEL0  = 1 << 6 // AP[1]: EL0 access
	ptAPRO   = 1 << 7 // AP[2]: read-only
	ptPXN    = 1 << 53
	ptUXN    = 1 << 54
	ptDevice = 1 << 2 // AttrIndx 1 (MAIR byte 1 = Device-nGnRnE)
	ptNormal = ptAF | ptSH

	testMAIR   = 0x00ff // attr 0 normal write-back, attr 1 Device-nGnRnE
	testSCTLR  = 0x30d00800
	tcr39      = 25 | 25<<16 | 2<<30 | 2<<32 // T0SZ=T1SZ=25 (39-bit), TG1=4K, IPS=40 bits
	tcr48      = 16 | 16<<16 | 2<<30 | 2<<32
	ptPool     = RAMBase + 0x100000 // page tables are allocated from here
	testHighVA = 0xffffffc000000000 // the start of the 39-bit TTBR1 range
)

// pageTables builds stage-1 tables in guest RAM.
type pageTables struct {
	t     testing.TB
	m     *Machine
	next  uint64
	root  uint64
	start int // starting level
}

func newPageTables(t testing.TB, m *Machine, start int) *pageTables {
	pt := &pageTables{t: t, m: m, next: ptPool, start: start}
	pt.root = pt.alloc()
	return pt
}

func (pt *pageTables) alloc() uint64 {
	a := pt.next
	pt.next += PageSize
	if err := pt.m.WriteMem(a, make([]byte, PageSize)); err != nil {
		pt.t.Fatal(err)
	}
	return a
}

// set writes the descriptor desc for va at level, creating tables above.
func (pt *pageTables) set(va uint64, level int, desc uint64) uint64 {
	table := pt.root
	for l := pt.start; ; l++ {
		shift := 12 + 9*uint(3-l)
		da := table + (va>>shift&511)*8
		if l == level {
			mustWrite64(pt.t, pt.m, da, desc)
			return da
		}
		d := mustRead64(pt.t, pt.m, da)
		if d&3 != ptTable {
			d = pt.alloc() | ptTable
			mustWrite64(pt.t, pt.m, da, d)
		}
		table = d &^ 0xfff & (1<<48 - 1)
	}
}

// page maps one 4 KiB page.
func (pt *pageTables) page(va, pa, attrs uint64) uint64 {
	return pt.set(va, 3, pa|attrs|ptPage)
}

// newMMUMachine returns a test machine with the MMU on: a 39-bit VA space
// with RAM below testData+64K identity-mapped by pages (EL1 only, so the
// tests can map the rest as they like), and the same through TTBR1 at
// testHighVA+offset.
func newMMUMachine(t testing.TB, code []uint32) (*Machine, *CPU, *pageTables) {
	t.Helper()
	return newMMUMachineWith(t, code, Config{})
}

// newMMUMachineWith is newMMUMachine with cfg's mode.
func newMMUMachineWith(t testing.TB, code []uint32, cfg Config) (*Machine, *CPU, *pageTables) {
	t.Helper()
	m, c, _ := newTestMachineWith(t, code, cfg)
	pt := newPageTables(t, m, 1)
	for a := uint64(RAMBase); a < testData+0x10000; a += PageSize {
		pt.page(a, a, ptNormal)
	}
	// The tables themselves, so that tests can edit them from the guest.
	for a := uint64(ptPool); a < ptPool+0x10000; a += PageSize {
		pt.page(a, a, ptNormal)
	}
	c.SetSysReg(MAIR_EL1, testMAIR)
	c.SetSysReg(TCR_EL1, tcr39)
	c.SetSysReg(TTBR0_EL1, pt.root)
	c.SetSysReg(SCTLR_EL1, testSCTLR|sctlrM)
	return m, c, pt
}

func TestMMUTranslation(t *testing.T) {
	const va = 0x12345000
	const data = testData + 0x8000
	cases := []struct {
		name  string
		build func(pt *pageTables)
		el0   bool
		code  string
		esr   uint64 // 0: no fault, x0 must read 0x1122334455667788
		far   uint64
	}{
		{name: "page", build: func(pt *pageTables) { pt.page(va, data, ptNormal) }, code: "ldr x0, [x1]"},
		{name: "block-2M", build: func(pt *pageTables) { pt.set(0x60000000, 2, testData&^(1<<21-1)|ptNormal|ptBlock) },
			code: "ldr x0, [x1]"},
		{name: "block-1G", build: func(pt *pageTables) { pt.set(0x80000000, 1, RAMBase|ptNormal|ptBlock) }, code: "ldr x0, [x1]"},
		{name: "unmapped-l1", build: func(pt *pageTables) {}, code: "ldr x0, [x1]", esr: 0x25<<26 | 1<<25 | 0x05, far: va},
		{name: "unmapped-l3", build: func(pt *pageTables) { pt.page(va+PageSize, data, ptNormal) }, code: "ldr x0, [x1]", esr: 0x25<<26 | 1<<25 | 0x07, far: va},
		{name: "access-flag", build: func(pt *pageTables) { pt.page(va, data, ptSH) }, code: "ldr x0, [x1]", esr: 0x25<<26 | 1<<25 | 0x0b, far: va},
		{name: "read-only", build: func(pt *pageTables) { pt.page(va, data, ptNormal|ptAPRO) }, code: "str x0, [x1]", esr: 0x25<<26 | 1<<25 | issWnR | 0x0f, far: va},
		{name: "el0-no-access", build: func(pt *pageTables) { pt.page(va, data, ptNormal) }, el0: true, code: "ldr x0, [x1]", esr: 0x24<<26 | 1<<25 | 0x0f, far: va},
		{name: "el0-rw", build: func(pt *pageTables) { pt.page(va, data, ptNormal|ptAPEL0) }, el0: true, code: "ldr x0, [x1]"},
		{name: "ldtr-el1", build: func(pt *pageTables) { pt.page(va, data, ptNormal) }, code: "ldtr x0, [x1]", esr: 0x25<<26 | 1<<25 | 0x0f, far: va},
		{name: "ldtr-el0-page", build: func(pt *pageTables) { pt.page(va, data, ptNormal|ptAPEL0) }, code: "ldtr x0, [x1]"},
		{name: "addr-size", build: func(pt *pageTables) { pt.page(va, 1<<40, ptNormal) }, code: "ldr x0, [x1]", esr: 0x25<<26 | 1<<25 | 0x03, far: va},
		{name: "walk-outside-ram", build: func(pt *pageTables) { pt.set(va, 2, 0x50000000|ptTable) }, code: "ldr x0, [x1]", esr: 0x25<<26 | 1<<25 | 0x17, far: va},
		{name: "device-unaligned", build: func(pt *pageTables) { pt.page(va, data, ptNormal|ptDevice) }, code: "ldr x0, [x1, #1]", esr: 0x25<<26 | 1<<25 | 0x21, far: va + 1},
		{name: "aptable-ro", build: func(pt *pageTables) {
			pt.page(va, data, ptNormal)
			da := pt.root + (va>>30&511)*8
			mustWrite64(t, pt.m, da, mustRead64(t, pt.m, da)|1<<62)
		}, code: "str x0, [x1]", esr: 0x25<<26 | 1<<25 | issWnR | 0x0f, far: va},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, c, pt := newMMUMachine(t, nil)
			mustWrite32(t, m, testCode, I(tc.code))
			tc.build(pt)
			// Map the code for EL0 too when the case runs there.
			if tc.el0 {
				pt.page(testCode, testCode, ptNormal|ptAPEL0|ptAPRO)
				c.SetPSTATE(0)
			}
			mustWrite64(t, m, data, 0x1122334455667788)
			mustWrite64(t, m, testData, 0x1122334455667788)
			addr := uint64(va)
			switch tc.name {
			case "block-2M":
				addr = 0x60000000 + testData&(1<<21-1)
			case "block-1G":
				addr = 0x80000000 + testData - RAMBase
			}
			c.SetX(1, addr)
			if err := m.Step(1); err != nil {
				t.Fatal(err)
			}
			if tc.esr == 0 {
				if c.PC() != testCode+4 || c.X(0) != 0x1122334455667788 {
					t.Fatalf("pc = %#x x0 = %#x ESR = %#x", c.PC(), c.X(0), c.SysReg(ESR_EL1))
				}
				return
			}
			if got := c.SysReg(ESR_EL1); got != tc.esr {
				t.Errorf("ESR = %#x, want %#x", got, tc.esr)
			}
			if got := c.SysReg(FAR_EL1); got != tc.far {
				t.Errorf("FAR = %#x, want %#x", got, tc.far)
			}
		})
	}
}

func TestMMUFetchPermissions(t *testing.T) {
	const va = 0x20000000
	cases := []struct {
		name  string
		attrs uint64
		el0   bool
		esr   uint64
	}{
		{"el1-exec", ptNormal, false, 0},
		{"pxn", ptNormal | ptPXN, false, 0x21<<26 | 1<<25 | 0x0f},
		{"el0-writable-implies-pxn", ptNormal | ptAPEL0, false, 0x21<<26 | 1<<25 | 0x0f},
		{"el0-exec", ptNormal | ptAPEL0 | ptAPRO, true, 0},
		{"uxn", ptNormal | ptAPEL0 | ptAPRO | ptUXN, true, 0x20<<26 | 1<<25 | 0x0f},
		{"unmapped", 0, false, 0x21<<26 | 1<<25 | 0x07},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, c, pt := newMMUMachine(t, prog("br x1"))
			pt.page(testCode, testCode, ptNormal|ptAPEL0|ptAPRO)
			if tc.attrs != 0 {
				pt.page(va, testData, tc.attrs)
			} else {
				pt.page(va+PageSize, testData, ptNormal)
			}
			mustWrite32(t, m, testData, I("mov x0, #7"))
			c.SetX(1, va)
			if tc.el0 {
				c.SetPSTATE(0)
			}
			if err := m.Step(2); err != nil {
				t.Fatal(err)
			}
			if tc.esr == 0 {
				if c.X(0) != 7 {
					t.Fatalf("x0 = %d, pc = %#x, ESR = %#x", c.X(0), c.PC(), c.SysReg(ESR_EL1))
				}
				return
			}
			if got := c.SysReg(ESR_EL1); got != tc.esr {
				t.Errorf("ESR = %#x, want %#x", got, tc.esr)
			}
			if c.SysReg(FAR_EL1) != va || c.SysReg(ELR_EL1) != va {
				t.Errorf("FAR = %#x ELR = %#x", c.SysReg(FAR_EL1), c.SysReg(ELR_EL1))
			}
		})
	}
}

// TestMMURemapTLBI checks that a remap is invisible until TLBI, then
// visible for data and for code (the fetch path's cached page too).
func TestMMURemapTLBI(t *testing.T) {
	const va = 0x30000000
	const pa1, pa2 = testData + 0x1000, testData + 0x2000
	m, c, pt := newMMUMachine(t, prog(
		"ldr x0, [x1]", // old mapping, fills the TLB
		"str x3, [x2]", // remap (x2 = descriptor address, x3 = new descriptor)
		"ldr x4, [x1]", // stale: still the old page
		"lsr x5, x1, #12",
		"tlbi vae1is, x5",
		"ldr x6, [x1]", // new page
	))
	da := pt.page(va, pa1, ptNormal)
	mustWrite64(t, m, pa1, 111)
	mustWrite64(t, m, pa2, 222)
	c.SetX(1, va)
	c.SetX(2, da)
	c.SetX(3, pa2|ptNormal|ptPage)
	if err := m.Step(6); err != nil {
		t.Fatal(err)
	}
	if c.X(0) != 111 || c.X(4) != 111 || c.X(6) != 222 {
		t.Fatalf("x0 x4 x6 = %d %d %d, want 111 111 222 (ESR %#x)", c.X(0), c.X(4), c.X(6), c.SysReg(ESR_EL1))
	}

	// Code: run a page, remap its VA to other code, TLBI, run it again.
	m, c, pt = newMMUMachine(t, prog("blr x1", "str x3, [x2]", "lsr x5, x1, #12", "tlbi vaae1, x5", "blr x1"))
	da = pt.page(va, pa1, ptNormal)
	mustWrite32(t, m, pa1, I("mov x0, #1"))
	mustWrite32(t, m, pa1+4, I("ret"))
	mustWrite32(t, m, pa2, I("mov x0, #2"))
	mustWrite32(t, m, pa2+4, I("ret"))
	c.SetX(1, va)
	c.SetX(2, da)
	c.SetX(3, pa2|ptNormal|ptPage)
	if err := m.Step(3); err != nil {
		t.Fatal(err)
	}
	if c.X(0) != 1 {
		t.Fatalf("first call x0 = %d", c.X(0))
	}
	if err := m.Step(5); err != nil {
		t.Fatal(err)
	}
	if c.X(0) != 2 {
		t.Fatalf("after remap x0 = %d, want 2", c.X(0))
	}
}

// TestMMUASID checks that non-global entries are tagged with the ASID of
// TCR_EL1.A1's TTBR and global ones are shared, and TLBI ASIDE1.
func TestMMUASID(t *testing.T) {
	const va, gva = 0x30000000, 0x30001000
	m, c, pt := newMMUMachine(t, prog(
		"ldr x0, [x1]", // ASID 1: page A (non-global)
		"ldr x7, [x8]", // global page G
		"msr ttbr0_el1, x2", "isb",
		"ldr x3, [x1]", // ASID 2, other tables: page B
		"ldr x9, [x8]", // G from the TLB although ASID 2's tables lack it
		"msr ttbr0_el1, x4", "isb",
		"tlbi aside1, x4",
		"ldr x5, [x1]", // ASID 1 after its TLBI: the tables now say C
	))
	pt.page(va, testData+0x1000, ptNormal|ptNG)
	pt.page(gva, testData+0x4000, ptNormal)
	mustWrite64(t, m, testData+0x1000, 0xa)
	mustWrite64(t, m, testData+0x2000, 0xb)
	mustWrite64(t, m, testData+0x3000, 0xc)
	mustWrite64(t, m, testData+0x4000, 0x6)
	root1 := pt.root
	pt2 := &pageTables{t: t, m: m, next: pt.next, start: 1}
	pt2.root = pt2.alloc()
	for a := uint64(RAMBase); a < testData+0x10000; a += PageSize {
		pt2.page(a, a, ptNormal)
	}
	pt2.page(va, testData+0x2000, ptNormal|ptNG)
	c.SetSysReg(TCR_EL1, tcr39|tcrAS)
	c.SetSysReg(TTBR0_EL1, root1|1<<48)
	c.SetX(1, va)
	c.SetX(8, gva)
	c.SetX(2, pt2.root|2<<48)
	c.SetX(4, root1|1<<48)
	if err := m.Step(2); err != nil {
		t.Fatal(err)
	}
	pt.page(va, testData+0x3000, ptNormal|ptNG)
	if err := m.Step(8); err != nil {
		t.Fatal(err)
	}
	if c.X(0) != 0xa || c.X(3) != 0xb || c.X(5) != 0xc || c.X(7) != 6 || c.X(9) != 6 {
		t.Fatalf("x0 x3 x5 x7 x9 = %#x %#x %#x %#x %#x, want a b c 6 6 (ESR %#x)", c.X(0), c.X(3), c.X(5), c.X(7), c.X(9), c.SysReg(ESR_EL1))
	}
}

func TestMMUTTBR1And48Bit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tcr   uint64
		start int
		va    uint64
	}{
		{"39-ttbr1", tcr39, 1, testHighVA + 0x5000},
		{"48-ttbr0", tcr48, 0, 0x0000_8000_1234_5000},
		{"48-ttbr1", tcr48, 0, 0xffff_0000_0000_5000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, c, _ := newTestMachine(t, prog("ldr x0, [x1]"))
			lo := newPageTables(t, m, tc.start)
			for a := uint64(RAMBase); a < testData+0x10000; a += PageSize {
				lo.page(a, a, ptNormal)
			}
			hi := &pageTables{t: t, m: m, next: lo.next, start: tc.start}
			hi.root = hi.alloc()
			target := lo
			if tc.va>>63 != 0 {
				target = hi
			}
			target.page(tc.va, testData, ptNormal)
			mustWrite64(t, m, testData, 42)
			c.SetSysReg(MAIR_EL1, testMAIR)
			c.SetSysReg(TCR_EL1, tc.tcr)
			c.SetSysReg(TTBR0_EL1, lo.root)
			c.SetSysReg(TTBR1_EL1, hi.root)
			c.SetSysReg(SCTLR_EL1, testSCTLR|sctlrM)
			c.SetX(1, tc.va)
			if err := m.Step(1); err != nil {
				t.Fatal(err)
			}
			if c.X(0) != 42 {
				t.Fatalf("x0 = %d, ESR = %#x", c.X(0), c.SysReg(ESR_EL1))
			}
			if pa, err := c.TranslateVA(tc.va+8, AccessRead); err != nil || pa != testData+8 {
				t.Fatalf("TranslateVA = %#x, %v", pa, err)
			}
			// A VA outside both ranges: level 0 translation fault.
			if _, err := c.TranslateVA(0x00f0_0000_0000_0000, AccessRead); !errors.Is(err, ErrTranslation) {
				t.Fatalf("TranslateVA of a hole: %v", err)
			}
		})
	}
}

func TestAT(t *testing.T) {
	const va = 0x30000000
	cases := []struct {
		insn string
		attr uint64
		want uint64
	}{
		{"at s1e1r, x1", ptNormal, testData | 1<<11 | 1<<9 | 3<<7 | 0xff<<56},
		{"at s1e1w, x1", ptNormal | ptAPRO, 1<<11 | 0x0f<<1 | 1},
		{"at s1e0r, x1", ptNormal, 1<<11 | 0x0f<<1 | 1},
		{"at s1e0w, x1", ptNormal | ptAPEL0 | ptDevice, testData | 1<<11 | 1<<9 | 3<<7},
		{"at s1e1r, x2", ptNormal, 1<<11 | 0x05<<1 | 1},
	}
	for _, tc := range cases {
		t.Run(tc.insn, func(t *testing.T) {
			m, c, pt := newMMUMachine(t, prog(tc.insn, "mrs x0, par_el1"))
			pt.page(va, testData, tc.attr)
			c.SetX(1, va+0x123)
			c.SetX(2, 0x1_0000_0000)
			if err := m.Step(2); err != nil {
				t.Fatal(err)
			}
			if c.X(0) != tc.want {
				t.Fatalf("PAR = %#x, want %#x", c.X(0), tc.want)
			}
		})
	}
}

func TestHostVirtualAccess(t *testing.T) {
	const va = 0x30000000
	_, c, pt := newMMUMachine(t, nil)
	pt.page(va, testData, ptNormal|ptAPRO)
	c.SetPSTATE(0) // EL0 cannot read it; the host still can
	if err := c.WriteVirt(va+0xffc, []byte{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 4)
	if err := c.ReadVirt(va+0xffc, got); err != nil || got[3] != 4 {
		t.Fatalf("ReadVirt = %v, %v", got, err)
	}
	if err := c.ReadVirt(va+0xffe, got); !errors.Is(err, ErrTranslation) {
		t.Fatalf("ReadVirt across into an unmapped page: %v", err)
	}
	before := c.tlb
	if _, err := c.TranslateVA(va, AccessRead); err == nil {
		t.Fatal("TranslateVA at EL0 of an EL1 page succeeded")
	}
	if c.tlb != before {
		t.Fatal("TranslateVA changed the TLB")
	}
}

// TestMMURandomTables walks tables full of random descriptors: whatever
// the guest puts there, translation gives an architectural answer and
// never panics the host.
func TestMMURandomTables(t *testing.T) {
	m, c, _ := newTestMachine(t, prog("ldr x0, [x1]", "str x0, [x1]", "at s1e0w, x1", "br x1"))
	rng := uint64(0x9e3779b97f4a7c15)
	next := func() uint64 {
		rng ^= rng << 13
		rng ^= rng >> 7
		rng ^= rng << 17
		return rng
	}
	for a := uint64(ptPool); a < ptPool+0x4000; a += 8 {
		d := next()
		if d&1 != 0 {
			// Point many table descriptors back into the pool so walks go deep.
			d = d&^(1<<48-1) | ptPool + (d>>20&3)*PageSize | d&0xfff
		}
		mustWrite64(t, m, a, d)
	}
	for i := 0; i < 2000; i++ {
		c.SetSysReg(TCR_EL1, next()&^(1<<39|1<<40))
		c.SetSysReg(TTBR0_EL1, ptPool+next()%4*PageSize|next()<<48)
		c.SetSysReg(TTBR1_EL1, ptPool+next()%4*PageSize)
		c.SetSysReg(MAIR_EL1, next())
		va := next()
		_, _ = c.TranslateVA(va, AccessKind(i%3))
		c.at(uint8(i%4), va)
	}
	// And the interpreter, with the MMU on and the code unmapped or not.
	c.SetSysReg(SCTLR_EL1, testSCTLR|sctlrM)
	for i := 0; i < 200; i++ {
		c.SetPC(testCode + uint64(i%4)*4)
		c.SetX(1, next())
		if err := m.Step(3); err != nil {
			t.Fatal(err)
		}
	}
}

// TestExclusiveSnoopTranslated checks that a store to the physical
// granule another agent reserved through a different virtual address
// clears the reservation: the monitor works on physical addresses.
func TestExclusiveSnoopTranslated(t *testing.T) {
	const va = 0x12345000
	const data = testData + 0x8000
	for _, snoop := range []bool{false, true} {
		m, c, pt := newMMUMachine(t, nil)
		pt.page(va, data, ptNormal)
		mustWrite32(t, m, testCode, I("ldxr x0, [x9]"))
		mustWrite32(t, m, testCode+4, I("stxr w1, x0, [x9]"))
		c.SetX(9, va)
		c.SetX(1, 7)
		if err := m.Step(1); err != nil {
			t.Fatal(err)
		}
		if snoop {
			// Another agent's store to the granule, by physical address.
			mustWrite64(t, m, data+8, 0)
		}
		if err := m.Step(1); err != nil {
			t.Fatal(err)
		}
		if got, want := c.X(1), b2u(snoop); got != want {
			t.Errorf("store to the granule: %v; stxr status %d, want %d", snoop, got, want)
		}
	}
}
