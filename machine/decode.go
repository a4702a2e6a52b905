package machine

import "math/bits"

//go:generate go run ./internal/decodegen a64.decode a64_decode.go a64_jit_amd64.go exec.go

// The decoder is generated from the table of instruction patterns in
// a64.decode (see its header): a64_decode.go holds the opcodes, decode
// and execute, a64_jit_amd64.go the translator's dispatch. This file
// holds the decoded form (inst) and the field functions the table's
// expressions call.

// opcode identifies the handler of a pre-decoded instruction: one per
// instruction of a64.decode, named as the table names it.
type opcode uint8

// String returns the opcode's name in a64.decode.
func (o opcode) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return "opcode(?)"
}

// The operations of LDOP (&atomic's atomicOp): LD<op> opc values, then SWP.
const (
	atomicADD = iota
	atomicCLR
	atomicEOR
	atomicSET
	atomicSMAX
	atomicSMIN
	atomicUMAX
	atomicUMIN
	atomicSWP
)

// Load extension kinds (the ext operand of loads).
const (
	extZero   = 0 // zero-extend to 64 bits
	extSign64 = 1 // sign-extend to 64 bits
	extSign32 = 2 // sign-extend to 32 bits, zero the upper half
)

// Addressing modes: the mode operand of &pair, &vpair and &vldst.
const (
	modeOffset = 0
	modePre    = 1
	modePost   = 2
)

// MSR (immediate) PSTATE fields: the field operand of &pstate.
const (
	pstateSPSel   = 0
	pstateDAIFSet = 1
	pstateDAIFClr = 2
)

// EL0 access classes of system instructions: the el0 operand of &sys and
// &pstate (a64.decode).
const (
	el0Undef = 0 // undefined at EL0
	el0OK    = 1 // allowed at EL0
	el0Trap  = 2 // allowed at EL0 if SCTLR_EL1 bit trapBit is set, else trapped (EC 0x18, ISS trapISS)
)

// sysTrapISS is the ISS of an EC 0x18 trap of MSR/MRS/SYS.
func sysTrapISS(op0, op1, crn, crm, op2, rt, read uint32) uint64 {
	return uint64(op0<<20 | op2<<17 | op1<<14 | crn<<10 | rt<<5 | crm<<1 | read)
}

// Checks the interpreter makes before an instruction executes (inst.pre),
// facts of the decode that would otherwise be tested at every execution.
const (
	preSP = 1 << iota // rn is SP as a base address: SP alignment (the table's sp)
	preFP             // FP/SIMD: CPACR_EL1.FPEN (the table's fp)
)

// inst is one pre-decoded instruction. Register fields hold register-file
// slots (see regZR, regSP, regSink), already resolved for the encoding.
// The plain slots mean the same for every instruction; ra, sh, amt, cc,
// neg and im2 are storage that an instruction's argument set names and
// types (a64.decode's &SET lines): code reads them only through that
// set's view (the generated SETArgs types), never by slot name.
type inst struct {
	op  opcode
	sf  bool   // 64-bit operation
	rd  uint8  // destination (or Rt)
	rn  uint8  // first source or base
	rm  uint8  // second source or index
	ra  uint8  // argument set storage
	sh  uint8  // argument set storage
	amt uint8  // argument set storage
	cc  uint8  // argument set storage
	neg bool   // argument set storage
	pre uint8  // checks before exec: preSP, preFP
	imm uint64 // the immediate
	im2 uint64 // argument set storage
}

// codePage is the decode cache of one 4 KiB page; entries decode lazily on
// first execution.
type codePage struct {
	insts [PageSize / 4]inst
	gen   uint32 // parallel mode: Machine.codeGen of the page when decoded
	live  uint16 // deterministic mode: entries decoded (op != opNone)
	// dataStores counts, in deterministic mode, the stores to the page
	// that overwrote no decoded instruction (invalidateSlots).
	dataStores uint16

	// blocks holds the translated blocks (jit.go) by owner
	// (CPU.jitOwner) and starting slot, each table allocated on first
	// use. Each owner's table is touched only by its own goroutine.
	blocks [gicMaxCPUs]*[PageSize / 4]*block
}

// Decoded describes a decoded instruction for tests and tools; it exposes
// only whether the machine implements the encoding.
type Decoded struct {
	Undefined bool // the machine raises an undefined-instruction exception for it
}

// Decode reports how the machine decodes the 32-bit A64 instruction word w.
// Encodings whose legality depends on the exception level are decoded as
// at EL1.
func Decode(w uint32) Decoded {
	var in inst
	decode(&in, w)
	return Decoded{Undefined: in.op == opUndef}
}

// Helpers resolving register number 31 for the different operand roles.
func wZR(r uint32) uint8 { // destination where 31 is XZR
	if r&31 == 31 {
		return regSink
	}
	return uint8(r & 31)
}

func rZR(r uint32) uint8 { return uint8(r & 31) } // source where 31 is XZR

func rSP(r uint32) uint8 { // source or destination where 31 is SP
	if r&31 == 31 {
		return regSP
	}
	return uint8(r & 31)
}

func sext(v uint64, nbits uint) uint64 {
	return uint64(int64(v<<(64-nbits)) >> (64 - nbits))
}

// Field functions of the table (a64.decode).

// logicImmOK reports whether a logical immediate is allocated.
func logicImmOK(sf, n, immr, imms uint32) bool {
	if sf == 0 && n != 0 {
		return false
	}
	_, _, ok := decodeBitMasks(n, imms, immr, true, 32+32*uint(sf))
	return ok
}

// logicImm is a logical immediate's value (its wmask).
func logicImm(sf, n, immr, imms uint32) uint64 {
	wmask, _, _ := decodeBitMasks(n, imms, immr, true, 32+32*uint(sf))
	return wmask
}

// bitfieldOK reports whether a bitfield move (SBFM, BFM, UBFM) is
// allocated.
func bitfieldOK(sf, n, immr, imms uint32) bool {
	if sf != n || sf == 0 && (immr > 31 || imms > 31) {
		return false
	}
	_, _, ok := decodeBitMasks(n, imms, immr, false, 32+32*uint(sf))
	return ok
}

// bfWmask and bfTmask are a bitfield move's masks.
func bfWmask(sf, n, immr, imms uint32) uint64 {
	wmask, _, _ := decodeBitMasks(n, imms, immr, false, 32+32*uint(sf))
	return wmask
}

func bfTmask(sf, n, immr, imms uint32) uint64 {
	_, tmask, _ := decodeBitMasks(n, imms, immr, false, 32+32*uint(sf))
	return tmask
}

// loadOK reports whether size and opc of a single-register load/store
// are a load: LDR (opc 01), LDRS to 64 bits (10, not size 11: PRFM),
// LDRS to 32 bits (11, bytes and halfwords only).
func loadOK(size, opc uint32) bool {
	return opc == 1 || opc == 2 && size < 3 || opc == 3 && size < 2
}

// loadExt is the extension of a load with the given opc.
func loadExt(opc uint32) uint8 {
	switch opc {
	case 2:
		return extSign64
	case 3:
		return extSign32
	}
	return extZero
}

// pairMode is the addressing mode of a pair's bits 24:23; LDNP/STNP (00)
// are plain pairs with a hint.
func pairMode(mode uint32) uint8 {
	return [4]uint8{modeOffset, modePost, modeOffset, modePre}[mode]
}

// indexMode is the addressing mode of an unscaled (00), post-index (01)
// or pre-index (11) single-register load or store.
func indexMode(idx uint32) uint8 {
	return [4]uint8{modeOffset, modePost, modeOffset, modePre}[idx]
}

// tlbiOp and tlbiBroadcast decode TLBI's CRm and op2. Last-level-only
// forms are hints a walk-free TLB may ignore; whatever is not modelled is
// over-invalidated, as is always safe.
func tlbiOp(crm, op2 uint32) uint8 {
	if crm != 3 && crm != 7 {
		return tlbiVMALLE1
	}
	switch op2 {
	case 1, 5: // VAE1, VALE1
		return tlbiVAE1
	case 2:
		return tlbiASIDE1
	case 3, 7: // VAAE1, VAALE1
		return tlbiVAAE1
	}
	return tlbiVMALLE1
}

func tlbiBroadcast(crm, op2 uint32) uint32 {
	if crm != 3 && crm != 7 || op2 == 4 || op2 == 6 || crm == 3 {
		return 1
	}
	return 0
}

// sysRegKnown reports whether sysreg_table.go has the register.
func sysRegKnown(op0, op1, crn, crm, op2 uint32) bool {
	_, _, ok := lookupSysReg(sysRegKey(op0, op1, crn, crm, op2))
	return ok
}

// decodeMRS and decodeMSR finish MRS and MSR (register) from the system
// register table; false for a register not there or not accessible so.
func decodeMRS(in *inst, w uint32) bool { return decodeSysReg(in, w) }
func decodeMSR(in *inst, w uint32) bool { return decodeSysReg(in, w) }

func decodeSysReg(in *inst, w uint32) bool {
	l := w >> 21 & 1
	op0, op1, crn, crm, op2, rt := w>>19&3, w>>16&7, w>>12&15, w>>8&15, w>>5&7, w&31
	r, acc, ok := lookupSysReg(sysRegKey(op0, op1, crn, crm, op2))
	if !ok {
		return false
	}
	in.imm = uint64(r)
	if l == 1 {
		if !acc.read {
			return false
		}
		in.rd = wZR(rt)
		if acc.el0Read {
			in.cc = el0OK
		}
	} else {
		if !acc.write {
			return false
		}
		in.rn = rZR(rt)
		if acc.el0Write {
			in.cc = el0OK
		}
	}
	// Registers EL0 reaches only with an SCTLR_EL1 enable, trapping
	// (EC 0x18) without it, as QEMU does.
	switch r {
	case DAIF:
		in.cc, in.amt = el0Trap, 9 // UMA
	case CTR_EL0:
		in.cc, in.amt = el0Trap, 15 // UCT
	}
	if in.cc == el0Trap {
		in.im2 = sysTrapISS(op0, op1, crn, crm, op2, rt, l)
	}
	return true
}

// decodeBitMasks is the Arm ARM's DecodeBitMasks: it returns the wmask and
// tmask for logical immediates and bitfield operations of the given size.
func decodeBitMasks(n, imms, immr uint32, immediate bool, size uint) (wmask, tmask uint64, ok bool) {
	combined := n<<6 | (^imms & 63)
	if combined == 0 {
		return 0, 0, false
	}
	length := uint(bits.Len32(combined)) - 1
	if length < 1 {
		return 0, 0, false
	}
	levels := uint32(1)<<length - 1
	if immediate && imms&levels == levels {
		return 0, 0, false
	}
	s, r := imms&levels, immr&levels
	d := (s - r) & levels
	esize := uint(1) << length
	welem := ones(uint(s) + 1)
	telem := ones(uint(d) + 1)
	welem = rorN(welem, uint(r), esize)
	return replicate(welem, esize, size), replicate(telem, esize, size), true
}

func ones(n uint) uint64 {
	if n >= 64 {
		return ^uint64(0)
	}
	return 1<<n - 1
}

// rorN rotates the low esize bits of v right by r.
func rorN(v uint64, r, esize uint) uint64 {
	if r == 0 {
		return v
	}
	mask := ones(esize)
	return (v>>r | v<<(esize-r)) & mask
}

func replicate(v uint64, esize, size uint) uint64 {
	var out uint64
	for i := uint(0); i < size; i += esize {
		out |= v << i
	}
	return out & ones(size)
}
