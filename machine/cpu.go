package machine

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
)

// Register-file slots. The architectural X0..X30 live in r[0..30]; the
// decoder rewrites register number 31 to whichever of these the encoding
// means, so the interpreter never branches on "is this SP or XZR".
const (
	regZR   = 31 // reads as zero; never written
	regSP   = 32 // the stack pointer selected by PSTATE.EL/SPSel
	regSink = 33 // writes to XZR land here; never read
)

// noPage is a pageVA no fetch address can match (it is misaligned), used to
// force the next fetch through the slow path.
const noPage = 1

// CPU is one AArch64 processing element. Its methods are not synchronized:
// use them from a hostcall handler, inside Machine.Exclusive, or while the
// machine is not running.
type CPU struct {
	// Hot state first: the interpreter touches these every instruction.
	cpuState

	m     *Machine
	index int

	// lines is the level of the CPU's interrupt inputs (lineIRQ, lineFIQ),
	// driven by the interrupt controller; see irq.go. It lives outside
	// cpuState so that reset, which may run while the GIC or another vCPU
	// goroutine touches it, never overwrites it non-atomically.
	lines atomic.Uint32
	// tlbFlushReq asks this CPU to flush its TLBs at its next poll point:
	// how a broadcast TLBI reaches CPUs that run on other goroutines in
	// parallel mode. Outside cpuState for the same reason as lines.
	tlbFlushReq atomic.Bool

	// jit is the cache this CPU translates blocks into, and jitOwner the
	// index of its blocks in codePage.blocks: shared by every CPU (0) in
	// deterministic mode, this CPU's own (its index) in parallel mode.
	jit      *jitCache
	jitOwner uint8

	// jumps is the jump cache of translated code (jit.go). It is outside
	// cpuState because its empty entries are not zero: reset clears it.
	// The padding puts its sets in whole cache lines (TestCPULayout).
	_     [32]byte
	jumps jumpCache

	// flagBits maps OF<<8 | the byte x86's LAHF loads, after an ADD or
	// AND (row 0) or a SUB (row 1), to NZCV as nzcvBits has it, for
	// translated code's flag-setting instructions (jit_amd64.go).
	flagBits [2][512]uint8

	// host is the machine's host-debugger state (hostdebug.go), shared by
	// all its CPUs and kept across resets; nil until first used.
	host *hostDebug
}

// cpuState is the part of a CPU that reset returns to its initial state.
type cpuState struct {
	r      [256]uint64 // indexed by uint8 register slots, so no bounds checks
	pc     uint64
	pageVA uint64    // virtual base of the page being executed, or noPage
	page   *codePage // decode cache of that page
	pagePA uint64    // physical base of that page
	// pageGlobal: a global translation maps that page (with the MMU on),
	// one that TTBR writes leave as it is.
	pageGlobal bool
	// blockKey is blockKeyFor(pageVA): the key of the translated blocks
	// (jit.go) valid on that page.
	blockKey uint64
	// pageBlocks is page.blocks[jitOwner], kept here so that runFast's
	// block lookup makes one dependent load fewer. Whatever drops the
	// page's table also makes the CPU fetch the page afresh.
	pageBlocks *[PageSize / 4]*block

	// nzcvBits is PSTATE.NZCV as N<<3 | Z<<2 | C<<1 | V, so that cond is
	// a table lookup. It has a cache line of its own (TestCPULayout):
	// translated code stores it at every flag-setting instruction, and in
	// the line of the fields above, which runFast reads at every entry
	// into translated code, the kernel's workload ran some 10% slower.
	_        [64]byte
	nzcvBits uint8
	_        [128]byte

	retired uint64

	el    uint8 // PSTATE.EL: 0 or 1
	spsel uint8 // PSTATE.SP
	daif  uint8 // PSTATE.{D,A,I,F} as a 4-bit value
	ss    bool  // PSTATE.SS
	il    bool  // PSTATE.IL

	on  bool // powered on
	wfi bool // waiting for an interrupt
	// yielded: a WFE or YIELD ended the run; the deterministic run loop
	// goes on with the next vCPU.
	yielded bool

	spEL0, spEL1 uint64 // banked stack pointers; the selected one is live in r[regSP]

	sys [numSysRegs]uint64 // plain storage for registers without side effects

	// The FP/SIMD registers V0..V31 (low, high 64 bits) and FPCR/FPSR.
	vr [32][2]uint64
	fp fpState

	// codeStore is, in parallel mode, 1 + the RAM page of code that
	// translated code stored to before it stopped (jitBail) for runFast
	// to do storedPar's bookkeeping; else 0.
	codeStore uint64
	// runBudget is runFast's budget, from which translated code that
	// reads the counter finds how far into the run it is.
	runBudget uint64
	// pageHost holds, for translated code, the micro-TLB host of a
	// group's page that later accesses of the block reuse
	// (jit_group_amd64.go).
	pageHost [maxGroups]uint64
	// codeSeen is Machine.invalidations when this CPU last emptied its
	// jump cache for pages withdrawn (parallel mode; syncJumps).
	codeSeen uint64

	// The local exclusive monitor.
	excValid bool
	excAddr  uint64
	excPA    uint64 // excAddr's physical address: what other agents' stores snoop
	excSize  uint8  // log2 of the reserved size (for pairs, of the whole pair)
	// excVal and excVal2 hold what the load-exclusive read: in parallel
	// mode the store-exclusive succeeds only if memory still holds them
	// (a compare-and-swap, as QEMU's MTTCG does).
	excVal, excVal2 uint64

	// xlate sends every data access through the slow path (dataAddr): set
	// while the MMU is on, SCTLR_EL1.A checks alignment, or a watchpoint
	// may fire, and always in parallel mode, where RAM must be reached
	// through the atomic accessors. With it clear, VA == PA and loads and
	// stores go straight to RAM as before the MMU existed.
	xlate bool
	// utlbOK allows filling the micro-TLB; clear while every access must
	// be checked (alignment checking, watchpoints). In parallel mode
	// only translated code uses it (see load).
	utlbOK bool
	// (The padding keeps each entry in one cache line: TestCPULayout.)
	_    [39]byte
	utlb [utlbSize]utlbEntry // data-access micro-TLB, see mmu.go
	// utlbGlobal marks the micro-TLB entries filled from a global TLB
	// entry, which a change of ASID leaves valid (the kernel's
	// mappings), so they survive TTBR writes.
	utlbGlobal [utlbSize]bool
	// utlbLocal has a bit set for each micro-TLB entry filled from a
	// non-global TLB entry since the last dropNonGlobal, which visits
	// those alone: a process touches a few dozen pages between context
	// switches, and walking all 256 entries (then) at each was 1.2% of a
	// probed kernel's host instructions.
	utlbLocal [utlbSize / 64]uint64
	tlb       [tlbSize]tlbEntry // the TLB proper, tagged by ASID

	// dbgActive makes run take the per-instruction debug path (debug.go):
	// set while software step, a hardware breakpoint or watchpoint, or a
	// host breakpoint or watchpoint is enabled.
	dbgActive bool
	dbg       cpuDebug

	// par is set on every CPU of a parallel-mode machine: the interpreter
	// takes its thread-safe paths (atomic RAM, compare-and-swap
	// exclusives, whole-page decoding). It is a copy of Machine.parallel
	// kept here so the checks read a field of the CPU already in cache.
	par bool
	// inSlice is set while a parallel-mode vCPU goroutine runs this CPU
	// holding the world lock for reading (so a hostcall must trade it
	// for the write lock); clear under Step, which holds it for writing.
	inSlice bool
	// err is a hostcall failure that stops the run: per CPU, so vCPU
	// goroutines of parallel mode never share it.
	err error
}

// reset puts the CPU in its powered-off reset state.
func (c *CPU) reset() {
	c.cpuState = cpuState{}
	c.clearJumps()
	c.par = c.m.parallel
	c.pageVA = noPage
	c.el, c.spsel, c.daif = 1, 1, 0xf
	c.sys[SCTLR_EL1] = 0x00c50838 // Cortex-A57 reset value: RES1 bits, MMU and caches off
	c.sys[OSLSR_EL1] = 0xa        // OS lock implemented and locked, as after a cold reset
	c.sys[CNTFRQ_EL0] = cntFrequency
	c.flushTLB()
	c.mmuChanged()
	c.debugChanged()
}

// Index returns the CPU's number, which is also MPIDR_EL1.Aff0.
func (c *CPU) Index() int { return c.index }

// X returns general-purpose register n (0..30); 31 reads as zero.
func (c *CPU) X(n int) uint64 {
	if n < 0 || n > 30 {
		return 0
	}
	return c.r[n]
}

// SetX sets general-purpose register n (0..30); 31 is ignored.
func (c *CPU) SetX(n int, v uint64) {
	if n >= 0 && n <= 30 {
		c.r[n] = v
	}
}

// SP returns the stack pointer selected by the current EL and PSTATE.SP.
func (c *CPU) SP() uint64 { return c.r[regSP] }

// SetSP sets the stack pointer selected by the current EL and PSTATE.SP.
func (c *CPU) SetSP(v uint64) { c.r[regSP] = v }

// PC returns the address of the next instruction to execute.
func (c *CPU) PC() uint64 { return c.pc }

// SetPC sets the address of the next instruction to execute.
func (c *CPU) SetPC(v uint64) { c.pc = v }

// Retired returns the number of instructions this CPU executed. An
// instruction that takes an exception counts too.
func (c *CPU) Retired() uint64 { return c.retired }

// PoweredOn reports whether the CPU is powered on.
func (c *CPU) PoweredOn() bool { return c.on }

// Waiting reports whether the CPU sleeps in WFI.
func (c *CPU) Waiting() bool { return c.wfi }

// EL returns the current exception level (0 or 1).
func (c *CPU) EL() int { return int(c.el) }

// PSTATE bits in SPSR format.
const (
	spsrN  = 1 << 31
	spsrZ  = 1 << 30
	spsrC  = 1 << 29
	spsrV  = 1 << 28
	spsrSS = 1 << 21
	spsrIL = 1 << 20
)

// PSTATE returns PSTATE in SPSR_EL1 format: NZCV, SS, IL, DAIF, M[3:0]
// (EL and SPSel; nRW is 0 for AArch64).
func (c *CPU) PSTATE() uint64 {
	v := c.nzcv() | uint64(c.daif)<<6 | uint64(c.el)<<2 | uint64(c.spsel)
	if c.ss {
		v |= spsrSS
	}
	if c.il {
		v |= spsrIL
	}
	return v
}

// SetPSTATE sets PSTATE from a value in SPSR format, as an exception return
// would, except that an illegal mode is ignored (EL and SPSel stay).
func (c *CPU) SetPSTATE(v uint64) {
	c.setNZCV(v)
	c.daif = uint8(v>>6) & 0xf
	c.ss = v&spsrSS != 0
	c.il = v&spsrIL != 0
	if mode := v & 0x1f; mode == 0 || mode == 4 || mode == 5 {
		c.setMode(uint8(mode>>2), uint8(mode&1))
	}
	if c.il {
		c.pageVA = noPage
	}
}

// fillFlagBits fills flagBits. LAHF's byte is SF ZF 0 AF 0 PF 1 CF; after
// a SUB, x86's CF is the borrow, A64's C its inverse.
func (c *CPU) fillFlagBits() {
	for i := range 512 {
		n, z, cf, v := uint8(i>>7&1), uint8(i>>6&1), uint8(i&1), uint8(i>>8)
		c.flagBits[0][i] = n<<3 | z<<2 | cf<<1 | v
		c.flagBits[1][i] = n<<3 | z<<2 | (cf^1)<<1 | v
	}
}

func (c *CPU) nzcv() uint64 { return uint64(c.nzcvBits) << 28 }

func (c *CPU) setNZCV(v uint64) { c.nzcvBits = uint8(v >> 28 & 15) }

// carry is PSTATE.C as 0 or 1.
func (c *CPU) carry() uint64 { return uint64(c.nzcvBits >> 1 & 1) }

// setMode changes PSTATE.EL and PSTATE.SP, swapping the banked stack
// pointer in and out of the live slot.
func (c *CPU) setMode(el, spsel uint8) {
	if c.el == 0 || c.spsel == 0 {
		c.spEL0 = c.r[regSP]
	} else {
		c.spEL1 = c.r[regSP]
	}
	c.el, c.spsel = el, spsel
	if el == 0 || spsel == 0 {
		c.r[regSP] = c.spEL0
	} else {
		c.r[regSP] = c.spEL1
	}
}

// cond evaluates an A64 condition code against NZCV.
func (c *CPU) cond(cc uint8) bool { return condTable[cc&15]>>c.nzcvBits&1 != 0 }

// condTable holds, for each condition code, the NZCV values (as bit
// indexes N<<3|Z<<2|C<<1|V) for which it holds: EQ is Z, CS is C, MI is
// N, VS is V, HI is C && !Z, GE is N == V, GT is N == V && !Z, AL and NV
// always; an odd code is the even one's negation (TestCondTable checks it
// against those definitions). Read only.
var condTable = [16]uint16{
	0xf0f0, 0x0f0f, 0xcccc, 0x3333, 0xff00, 0x00ff, 0xaaaa, 0x5555,
	0x0c0c, 0xf3f3, 0xaa55, 0x55aa, 0x0a05, 0xf5fa, 0xffff, 0xffff,
}

// clearExclusive and setExclusive keep m.reservations, the count that lets
// deterministic-mode stores skip the snoop. Parallel mode neither counts
// nor snoops (another goroutine owns each monitor): its store-exclusive
// compares memory with what the load-exclusive read instead.
func (c *CPU) clearExclusive() {
	if c.excValid {
		c.excValid = false
		if !c.par {
			c.m.reservations--
		}
	}
}

func (c *CPU) setExclusive(addr uint64, lg uint8) {
	if !c.excValid {
		c.excValid = true
		if !c.par {
			c.m.reservations++
		}
	}
	c.excAddr, c.excSize, c.excPA = addr, lg, addr
	if c.sys[SCTLR_EL1]&sctlrM != 0 {
		// The load just translated addr, so this cannot fault.
		if pa, _, _, ok := c.translate(addr, AccessRead, c.el); ok {
			c.excPA = pa
		}
	}
}

// Exception classes (ESR_ELx.EC), Arm ARM D17.2.37.
const (
	ecUnknown        = 0x00
	ecWFx            = 0x01
	ecIllegalState   = 0x0e
	ecSVC64          = 0x15
	ecSysTrap        = 0x18
	ecInsnAbortLow   = 0x20
	ecInsnAbort      = 0x21
	ecPCAlign        = 0x22
	ecDataAbortLow   = 0x24
	ecDataAbort      = 0x25
	ecSPAlign        = 0x26
	ecBreakpointLow  = 0x30
	ecBreakpoint     = 0x31
	ecSoftStepLow    = 0x32
	ecSoftStep       = 0x33
	ecWatchpointLow  = 0x34
	ecWatchpoint     = 0x35
	ecBRK64          = 0x3c
	ecSameELOffset   = 1    // the "taken without a change of EL" class is the lower-EL one plus 1
	fscExternal      = 0x10 // synchronous external abort, not on a table walk
	fscAlignment     = 0x21
	fscDebug         = 0x22 // debug exception (breakpoint, step, watchpoint)
	issWnR           = 1 << 6
	issCM            = 1 << 8
	issDebugISV      = 1 << 24
	issDebugEX       = 1 << 6
	wfxISSCondAlways = 1<<24 | 0xe<<20 // CV=1, COND=AL: how QEMU reports a trapped A64 WFI
)

// takeException takes a synchronous exception to EL1 with the given class,
// syndrome and preferred return address. IL is always 1: every A64
// instruction is 32 bits, and the classes without an instruction
// (aborts, PC/SP alignment, debug, unknown) have IL RES1.
func (c *CPU) takeException(ec, iss uint32, elr uint64) {
	c.sys[ESR_EL1] = uint64(ec)<<26 | 1<<25 | uint64(iss)
	c.enterEL1(elr, 0)
}

// enterEL1 is the part of exception entry shared by synchronous
// exceptions and interrupts: it saves PSTATE and the return address and
// vectors to VBAR_EL1 + the group offset + off.
func (c *CPU) enterEL1(elr, off uint64) {
	spsr := c.PSTATE()
	switch {
	case c.el == 0:
		off += 0x400 // lower EL using AArch64
	case c.spsel == 1:
		off += 0x200 // current EL with SP_ELx
	}
	c.sys[ELR_EL1] = elr
	c.sys[SPSR_EL1] = spsr
	if c.el != 1 {
		// Permissions and debug state depend on the EL: let the fetch
		// path look the page up again.
		c.pageVA = noPage
	}
	c.setMode(1, 1)
	c.daif = 0xf
	c.ss, c.il = false, false
	c.clearExclusive()
	c.pc = c.sys[VBAR_EL1] + off
	c.m.exceptions.Add(1)
}

// lowerOrSame returns ec (the lower-EL class) or its same-EL twin.
func (c *CPU) lowerOrSame(ec uint32) uint32 {
	if c.el == 0 {
		return ec
	}
	return ec + ecSameELOffset
}

// takeUndefined takes the undefined-instruction exception for the
// instruction at pc (undefstats.go counts it by mnemonic first).
func (c *CPU) takeUndefined(pc uint64) {
	c.m.undefined.Add(1)
	// Debug level: a guest may execute undefined instructions on purpose
	// (feature probing, BUG()), so this is not a host-side problem.
	if c.m.log.Enabled(context.Background(), slog.LevelDebug) {
		c.m.log.Debug("machine: undefined instruction", "cpu", c.index, "pc", fmt.Sprintf("%#x", pc), "el", c.el)
	}
	c.takeException(ecUnknown, 0, pc)
}

// dataAbort takes a synchronous external abort for a data access to va by
// the instruction being executed (c.pc already points past it).
func (c *CPU) dataAbort(va uint64, write bool) {
	c.dataFault(va, fscExternal, write, false)
}

// dataFault takes a data abort with the given fault status code for the
// instruction being executed (c.pc already points past it). ISV is 0: as
// in QEMU, the instruction syndrome is only reported for aborts taken to
// EL2, which this machine does not have. cm marks cache maintenance
// (DC ZVA is not one: it reports as a store).
func (c *CPU) dataFault(va uint64, fsc uint32, write, cm bool) {
	iss := fsc
	if write {
		iss |= issWnR
	}
	if cm {
		iss |= issCM
	}
	c.sys[FAR_EL1] = va
	c.takeException(c.lowerOrSame(ecDataAbortLow), iss, c.pc-4)
}

// sysTrap takes the EC 0x18 trap of an MSR, MRS or SYS instruction at pc
// with the ISS precomputed by the decoder.
func (c *CPU) sysTrap(iss uint64, pc uint64) {
	c.takeException(ecSysTrap, uint32(iss), pc)
}

// eret performs an exception return from EL1.
func (c *CPU) eret() {
	spsr, elr := c.sys[SPSR_EL1], c.sys[ELR_EL1]
	c.clearExclusive()
	c.setNZCV(spsr)
	c.daif = uint8(spsr>>6) & 0xf
	c.pc = elr
	mode := spsr & 0x1f
	if mode != 0 && mode != 4 && mode != 5 {
		// Illegal exception return (AArch32, EL2/EL3, or EL0 with SP_EL1):
		// EL and SP stay, PSTATE.IL is set and the next instruction takes
		// the illegal execution state exception.
		c.il = true
		c.pageVA = noPage
		return
	}
	c.ss = spsr&spsrSS != 0
	c.il = spsr&spsrIL != 0
	if c.il || uint8(mode>>2) != c.el {
		c.pageVA = noPage
	}
	c.setMode(uint8(mode>>2), uint8(mode&1))
}
