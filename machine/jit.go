package machine

// Block translation: the deterministic interpreter's fast path.
//
// Dispatching each instruction through the interpreter (runFast, then
// execute's switch in a64_decode.go) costs more than most instructions'
// own work (the page check, the decode check, the pc store, an indirect
// jump shared by every opcode). So runs of the common integer
// instructions are translated to host machine code, a block at a time: a
// block is a run of straight-line instructions of one code page, up to
// and including the first branch, ending early before any instruction the
// translator does not handle (a64.decode says which it handles).
//
// Translated code only ever takes fast paths. Whenever an instruction
// needs more (a load that misses the micro-TLB or touches a device, a
// store to a page holding code, a misaligned SP), the code returns before
// that instruction with every earlier one complete, and runFast executes
// it with the interpreter. So the interpreter stays the one definition of
// every instruction's slow and faulting behaviour, and a block needs no
// way to raise an exception.
//
// In deterministic mode the CPUs share one code cache and one set of
// blocks per page. In parallel mode each vCPU goroutine translates into
// its own cache and keeps its own blocks on the (shared, immutable) code
// pages, so translation needs no locks; its translated code differs where
// other vCPUs run beside it (see parallelState): compare-and-swap
// store-exclusives, fences for DMB and STLR, and stores that check for
// code after they land. Where
// the host has no translator (jit_other.go) every block is empty and
// runFast interprets everything.

// maxBlock bounds a block's length, so that a slice's budget rarely cuts
// one short: runFast runs a block only if all of it fits.
const maxBlock = 64

// maxGroups bounds the groups of accesses (jit_group_amd64.go) whose
// checks a block's code reuses at one time.
const maxGroups = 4

// block is one translated run of instructions of a code page. Its code
// embeds absolute pcs and assumes one data-access path, so it is valid
// only for the virtual page, translation regime and EL it was built for:
// its key is c.blockKey then.
type block struct {
	code  uintptr // the body, where runFast enters; 0 if empty
	chain uintptr // the chain entry, where other blocks' code enters
	n     uint64  // instructions
	key   uint64
	// cold counts the executions left before the block is translated:
	// code that runs a few times (boot, a program's start and exit) is
	// cheaper interpreted than translated.
	cold uint8
}

// jumpCache maps guest pcs to the chain entries of their translated
// blocks, one table per EL, so that translated code follows a branch to
// another page, and a branch through a register, without returning to
// runFast: the kernel's code calls across pages and returns through X30
// about once every 20 instructions, and each return to runFast costs a
// page fetch and a block lookup in Go.
//
// An entry stands for what runFast's fetch found for its pc: the page's
// translation at the entry's EL. So a table is emptied whenever that may
// change (a TLB flush, SCTLR), and whenever blocks are dropped (a store
// to code, a full code cache). EL1's holds only pcs that global
// translations map, which a change of ASID leaves as they are; EL0's
// entries are tagged by ASID, as the TLB's are, so that a TTBR write (a
// context switch) keeps both tables; a TLBI by ASID, or by VA and ASID,
// empties only that ASID's entries of EL0's (flushASID), and a TLBI by VA
// or a store to code empties EL1's only where its entries' pages are
// (jumpCache.lo, hi, paLo, paHi). The EL
// cannot change inside translated code, and nor can xlate (the MMU, which
// flushes the micro-TLB when it changes, and with it the tables).
//
// Emptying is a new generation, not a clear: the kernel stores to pages
// that hold code thousands of times a second (a freed page of a program's
// text reused), and clearing the tables each time cost 6% of its run.
type jumpCache struct {
	tables [2][jumpSize]jumpEntry
	// pages keeps, per EL and under the same generations, what fetch
	// found for recent code pages, so that a page crossing in runFast
	// (an exception's vector, an ERET, a branch the tables miss) skips
	// the translation: a kprobe hit makes some eight.
	pages [2][jumpPages]fetchEntry
	// gen is each table's generation, in pc bits [12:2]: an entry's tag
	// is its pc ^ gen. Entries of an older generation sit in the set
	// jumpSet picks for their pc, so their tags differ from any current
	// one's there (see jumpSet), until the generations wrap, when the
	// table is cleared. EL0's gen also holds the ASID, in bits [63:48],
	// above any EL0 pc (see setASID), and its generation is that ASID's:
	// el0Gen, the emptyings of every ASID's entries, plus asidGens[asid],
	// that ASID's own. Each emptying adds one to the sum of the ASIDs it
	// empties and none to the others', so an ASID's generation only grows
	// and its emptied entries' tags never come back, until a sum would
	// wrap and the table is cleared instead. A process's exit or munmap
	// (TLBI by ASID, by VA and ASID) so leaves the other processes'
	// entries be.
	gen      [2]uint64
	el0Gen   uint64
	asidGens map[uint16]uint64
	maxASID  uint64 // the largest of asidGens
	asid     uint16 // EL0's entries' (setASID)
	// el0Global: EL0's table may hold pcs of global pages, which a TLBI
	// by VA invalidates whatever its ASID (the guest's user pages are
	// not global).
	el0Global bool
	// lo and hi bound the virtual pages of EL1's entries (pcs and
	// pages) since its last emptying, paLo and paHi their physical
	// pages, so that a TLBI by VA or a store to code elsewhere (a
	// process's pages) keeps them.
	lo, hi, paLo, paHi uint64
}

// jumpEntry is one way of a jumpCache set: the block at tag ^ gen,
// entered at chain.
type jumpEntry struct {
	tag   uint64 // jumpEmpty when empty
	chain uintptr
}

// fetchEntry is one jumpCache.pages slot: the code page at tag ^ gen.
type fetchEntry struct {
	tag    uint64 // jumpEmpty when empty
	pa     uint64
	page   *codePage
	global bool
}

const (
	jumpPages     = 64 // pages entries per EL, indexed by VA bits [17:12]
	jumpSetBits   = 11
	jumpSets      = 1 << jumpSetBits    // sets per EL, indexed by jumpSet
	jumpWays      = 2                   // entries per set, side by side
	jumpSize      = jumpSets * jumpWays // entries per EL
	jumpEntrySize = 16                  // bytes: translated code indexes the tables
	jumpSetSize   = jumpWays * jumpEntrySize
	jumpGenMask   = (jumpSets - 1) * 4 // pc bits [12:2]
	jumpEmpty     = 1                  // no aligned pc ^ gen matches; translated code checks alignment
)

// clearJumps empties both tables of c's jump cache by clearing them.
func (c *CPU) clearJumps() {
	c.clearJumpsEL(1)
	c.jumps.gen[1] = 0
	c.clearJumpsEL0()
	c.jumps.setASID(c.asid())
	c.jumps.noBounds()
}

// clearJumpsEL0 clears EL0's table and starts every ASID's generation
// afresh.
func (c *CPU) clearJumpsEL0() {
	j := &c.jumps
	c.clearJumpsEL(0)
	j.el0Gen, j.maxASID, j.el0Global = 0, 0, false
	clear(j.asidGens)
	j.setASID(j.asid)
}

// setASID makes asid the ASID of EL0's entries: those of other ASIDs
// stay, unmatched, for when their address space runs again. A context
// switch writes TTBR0 and emptied EL0's table, so every process switched
// in missed on each of its branches through a register until the table
// held them again. The guest keeps an ASID's translations as the
// architecture asks: a reused ASID, a changed or unmapped page, is
// invalidated by TLBI, which empties its entries (flushASID,
// dropJumpsVA).
func (j *jumpCache) setASID(asid uint16) {
	j.asid = asid
	j.gen[0] = (j.el0Gen+j.asidGens[asid])*4 | uint64(asid)<<48
}

// flushASID empties the entries of ASID asid from EL0's table: a new
// generation of that ASID, unless its sum would wrap.
func (c *CPU) flushASID(asid uint16) {
	j := &c.jumps
	n := j.asidGens[asid] + 1
	if j.el0Gen+n >= jumpSets {
		c.clearJumpsEL0()
		return
	}
	if j.asidGens == nil {
		j.asidGens = make(map[uint16]uint64)
	}
	j.asidGens[asid] = n
	j.maxASID = max(j.maxASID, n)
	j.setASID(j.asid)
}

// clearJumpsEL clears the table and pages of EL el.
func (c *CPU) clearJumpsEL(el int) {
	t := &c.jumps.tables[el]
	for i := range t {
		t[i] = jumpEntry{tag: jumpEmpty}
	}
	for i := range c.jumps.pages[el] {
		c.jumps.pages[el][i] = fetchEntry{tag: jumpEmpty}
	}
}

// flushJumps empties both tables.
func (c *CPU) flushJumps() {
	c.flushJumpsEL(0)
	c.flushJumpsEL(1)
}

// flushJumpsEL empties the table of EL el: a new generation.
func (c *CPU) flushJumpsEL(el int) {
	if el == 0 {
		j := &c.jumps
		if j.el0Gen+1+j.maxASID >= jumpSets {
			c.clearJumpsEL0()
		} else {
			j.el0Gen++
			j.setASID(j.asid)
		}
		return
	}
	g := (c.jumps.gen[el] + 4) & jumpGenMask
	if g == 0 {
		c.clearJumpsEL(el)
	}
	c.jumps.gen[el] = c.jumps.gen[el]&^jumpGenMask | g
	if el == 1 {
		c.jumps.noBounds()
	}
}

// noBounds empties EL1's bounds (lo, hi, paLo, paHi): its table is empty.
func (j *jumpCache) noBounds() {
	j.lo, j.hi, j.paLo, j.paHi = ^uint64(0), 0, ^uint64(0), 0
}

// keepJumpPage widens EL1's bounds (jumpCache.lo, hi, paLo, paHi) to
// take in the current page, about to have entries at the current EL.
func (c *CPU) keepJumpPage() {
	if j := &c.jumps; c.el != 0 {
		j.lo, j.hi = min(j.lo, c.pageVA), max(j.hi, c.pageVA)
		j.paLo, j.paHi = min(j.paLo, c.pagePA), max(j.paHi, c.pagePA)
	} else if c.pageGlobal {
		j.el0Global = true
	}
}

// dropJumpsVA empties the jump tables that may hold pcs of pages in
// [lo, hi], whose translations changed for ASID asid (all ASIDs if
// allASIDs): EL0's entries of that ASID (of every ASID if it may hold
// global pages), EL1's only if its entries' pages reach that range.
func (c *CPU) dropJumpsVA(lo, hi uint64, asid uint16, allASIDs bool) {
	if allASIDs || c.jumps.el0Global {
		c.flushJumpsEL(0)
	} else {
		c.flushASID(asid)
	}
	if lo <= c.jumps.hi && c.jumps.lo <= hi {
		c.flushJumpsEL(1)
	}
}

// jumpSet returns the jump cache set of pc: its bits [12:2] folded with
// bits [23:13]. The kernel workload keeps thousands of blocks hot, many
// at like offsets of different pages: indexed by bits [11:2] alone,
// 1,024 slots, some 2,700 per million instructions of its exits from
// translated code missed on a slot another pc held; folded, in 4,096
// slots, some 740 (in 8,192, 280, but no faster: a bigger CPU). Two ways
// a set take the pairs that still met, such as two functions of a
// kprobe hit's path that shared a slot and cost a miss every hit. An
// older generation's entry still never matches: two pcs of one set
// differ in [12:2] exactly as in [23:13], and generations differ in
// [12:2] alone.
func jumpSet(pc uint64) uint64 {
	return (pc ^ pc>>jumpSetBits) >> 2 & (jumpSets - 1)
}

// jumpHit reports whether the jump cache holds the block at pc for the
// current EL. runFast inlines it.
func (c *CPU) jumpHit(pc uint64) bool {
	el := c.el & 1
	set := c.jumps.tables[el][jumpSet(pc)*jumpWays:][:jumpWays]
	tag := pc ^ c.jumps.gen[el]
	return set[0].tag == tag || set[1].tag == tag
}

// noteJump enters block b, about to run at pc on the current page, in
// the jump cache, where translated code will find it: in the first way
// of its set, whose entry moves to the second (translated code looks in
// the first way inline, in the second out of line).
func (c *CPU) noteJump(pc uint64, b *block) {
	if !c.pageJumpable() {
		return
	}
	el := c.el & 1
	c.keepJumpPage()
	set := c.jumps.tables[el][jumpSet(pc)*jumpWays:][:jumpWays]
	tag := pc ^ c.jumps.gen[el]
	if set[0].tag != tag {
		set[1] = set[0]
	}
	set[0] = jumpEntry{tag: tag, chain: b.chain}
}

// pageJumpable reports whether the jump cache may keep the current page
// (its pcs, and fetch's entry for it): at EL1 with the MMU on, only a
// global page, since TTBR writes keep EL1's half (see jumpCache).
func (c *CPU) pageJumpable() bool {
	return c.el == 0 || c.sys[SCTLR_EL1]&sctlrM == 0 || c.pageGlobal
}

// dropJumpsPA empties the jump tables of every CPU that may hold pcs of
// the RAM page at pa, whose blocks (or decode cache) were dropped:
// EL0's always, EL1's only if its entries' pages reach pa. (The
// kernel's stores drop a process's text pages as it reuses them: its
// own code's entries stay.)
func (m *Machine) dropJumpsPA(pa uint64) {
	for _, c := range m.cpus {
		c.flushJumpsEL(0)
		if c.jumps.paLo <= pa && pa <= c.jumps.paHi {
			c.flushJumpsEL(1)
		}
	}
}

// jitThreshold is how many times a block's first instruction is reached
// before it is translated. Most of a boot's blocks run a few times only:
// at 8 rather than 2 the guest kernel boots about 4 ms sooner (a fifth of
// its boot is translating), and the kernel workload ran 2% faster, in 6
// pairs of 6 (less code to hold, the same hot blocks).
const jitThreshold = 8

// jitCode is a translated block before it goes into the code cache. Its
// code and slots are the translator's buffers, valid until it translates
// the next block.
type jitCode struct {
	code  []byte
	body  int      // offset of the body; the chain entry is at 0
	n     int      // instructions
	slots [][2]int // chaining slots: offset, and the offset of its initial target
	pc    uint64   // the guest pc of the first instruction
}

// Exit flags of translated code (jitEnter's second result). With neither,
// the code stopped at a block boundary: at a fallthrough or a branch not
// taken, or when the next block did not fit the budget.
const (
	jitBail  = 1 // stopped before the instruction at c.pc, for the interpreter
	jitTaken = 2 // a taken branch: runFast polls the interrupt lines
)

// blockKeyFor returns the key of blocks on the page at pageVA: what their
// code assumes. That is the virtual page, whether data accesses are
// translated (the micro-TLB path), and the EL the micro-TLB tags carry.
// fetch sets c.blockKey with pageVA; whatever changes the other two also
// sets pageVA to noPage.
func (c *CPU) blockKeyFor(pageVA uint64) uint64 {
	return pageVA | b2u(c.xlate) | uint64(c.el)<<1
}

// blockAt returns the block starting at slot idx of the current code page,
// translating it if there is no valid one. runFast inlines the lookup.
func (c *CPU) blockAt(idx uint64) *block {
	p := c.page
	var b *block
	if bs := p.blocks[c.jitOwner]; bs != nil {
		b = bs[idx]
	}
	switch {
	case b != nil && b.key == c.blockKey && b.cold == 0:
		return b
	case b != nil && b.key == c.blockKey && b.cold > 1:
		b.cold--
		return b
	case b != nil && b.key == c.blockKey: // its last cold run: hot now
		b = c.translate1(idx)
	case jitThreshold > 1: // first reached (for this key)
		b = &block{key: c.blockKey, cold: jitThreshold - 1}
	default:
		b = c.translate1(idx)
	}
	// After translating: a full code cache drops every page's blocks.
	bs := p.blocks[c.jitOwner]
	if bs == nil {
		bs = new([PageSize / 4]*block)
		p.blocks[c.jitOwner] = bs
		c.pageBlocks = bs
	}
	bs[idx] = b
	return b
}

// translate1 builds the block starting at slot idx of the current page.
func (c *CPU) translate1(idx uint64) *block {
	p := c.page
	b := &block{key: c.blockKey}
	end := min(idx+maxBlock, PageSize/4)
	insts := make([]*inst, 0, end-idx)
	for i := idx; i < end; i++ {
		in := &p.insts[i]
		if in.op == opNone {
			c.decodeSlot(i)
		}
		if !translatable(in, c.el) || c.par && readsCounter(in) {
			break
		}
		insts = append(insts, in)
		if endsBlock(in) && !fallsThrough(in) {
			break
		}
	}
	if len(insts) == 0 {
		return b
	}
	jc := c.emitBlock(insts, c.pageVA+idx*4)
	if base := c.jit.add(c, jc); base != 0 {
		b.code, b.chain, b.n = base+uintptr(jc.body), base, uint64(jc.n)
	}
	return b
}

// fallsThrough reports whether in, which ends a block, is a conditional
// branch: the block goes on with the next instruction, where the branch
// is not taken (a superblock), so that the path the code mostly takes
// keeps its cached registers and checks and needs no chained jump.
func fallsThrough(in *inst) bool {
	switch in.op {
	case opCBZ, opCBNZ, opTBZ, opTBNZ:
		return true
	case opBcond:
		return (*condArgs)(in).cond()&14 != 14
	}
	return false
}

// readsCounter reports whether in is an MRS of the system counter, which
// translated code reads as deterministic mode counts it (instructions),
// not as parallel mode does (the host clock).
func readsCounter(in *inst) bool {
	return in.op == opMRS && (SysReg(in.imm) == CNTVCT_EL0 || SysReg(in.imm) == CNTPCT_EL0)
}

// unmasksIRQ reports whether in, an MSR to DAIF or MSR DAIFClr, may let
// an interrupt in, which runFast polls for after the block (a64.decode's
// endsif).
func unmasksIRQ(in *inst) bool {
	if in.op == opMSRi {
		return (*pstateArgs)(in).field() == pstateDAIFClr
	}
	return SysReg(in.imm) == DAIF
}
