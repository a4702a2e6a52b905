package machine

import "math/bits"

// opcode identifies the handler of a pre-decoded instruction. Names follow
// the Arm ARM mnemonics; a suffix says which encoding group: i immediate,
// r shifted register, x extended register.
type opcode uint8

const (
	opNone  opcode = iota // not decoded yet
	opUndef               // unallocated or unimplemented: undefined-instruction exception

	// Data processing, immediate.
	opADR
	opADRP
	opADDi
	opADDSi
	opSUBi
	opSUBSi
	opANDi
	opORRi
	opEORi
	opANDSi
	opMOVi // MOVZ/MOVN with the result precomputed
	opMOVK
	opSBFM
	opBFM
	opUBFM
	opLSLi // UBFM aliases with a cheaper form
	opLSRi
	opASRi
	opEXTR

	// Data processing, register.
	opANDr
	opORRr
	opEORr
	opANDSr
	opMOVr // ORR Rd, XZR, Rm
	opADDr
	opADDSr
	opSUBr
	opSUBSr
	opADDx
	opADDSx
	opSUBx
	opSUBSx
	opADC
	opADCS
	opSBC
	opSBCS
	opCCMN
	opCCMP
	opCSEL
	opCSINC
	opCSINV
	opCSNEG
	opUDIV
	opSDIV
	opLSLV
	opLSRV
	opASRV
	opRORV
	opCRC32
	opRBIT
	opREV16
	opREV32
	opREV
	opCLZ
	opCLS
	opMADD
	opMSUB
	opSMADDL
	opSMSUBL
	opUMADDL
	opUMSUBL
	opSMULH
	opUMULH

	// Branches, exceptions, system.
	opB
	opBL
	opBcond
	opCBZ
	opCBNZ
	opTBZ
	opTBNZ
	opBR
	opBLR
	opRET
	opERET
	opNOP
	opWFI
	opCLREX
	opMSRi
	opMRS
	opMRSzero // reserved ID register space: reads as zero
	opMSR
	opSYS // cache maintenance with no effect here
	opDCZVA
	opAT   // sh = op2 (S1E1R, S1E1W, S1E0R, S1E0W)
	opTLBI // sh = tlbi* operation, neg = broadcast (IS)
	opSVC
	opHVC
	opBRK

	// Loads and stores. Size is in amt (log2 bytes); ext in cc.
	opLDRo // base + immediate offset, no writeback (also LDUR, LDTR, LDAR)
	opLDRpre
	opLDRpost
	opLDRreg
	opLDRlit
	opSTRo
	opSTRpre
	opSTRpost
	opSTRreg
	opLDP
	opSTP
	opLDXR
	opSTXR
	opLDXP
	opSTXP
	opLDTR // unprivileged: EL0 permissions when executed at EL1
	opSTTR
	opLDAR // acquire/release: plain accesses that must be aligned (also LDAPR)
	opSTLR

	// Atomic memory operations (Armv8.1 LSE); size in amt. Acquire and
	// release semantics need nothing more: every access is sequentially
	// consistent here (in parallel mode, through sync/atomic).
	opLDOP // LD<op> and SWP: sh = atomic*, rm = Rs, rd = Rt (gets the old value)
	opCAS  // ra = Rs to compare, rm = Rs to write the old value, rd = Rt
	opCASP // amt = size of each register; ra/rm = Rs, sh/cc = Rs+1 (read/write), rd = Rt, im2 = Rt+1

	opISB // context synchronization: parallel mode refetches the code page

	opFP // FP/SIMD (simd.go): the instruction word in imm
)

// The operations of opLDOP (inst.sh): LD<op> opc values, then SWP.
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

// Load extension kinds (inst.cc for loads).
const (
	extZero   = 0 // zero-extend to 64 bits
	extSign64 = 1 // sign-extend to 64 bits
	extSign32 = 2 // sign-extend to 32 bits, zero the upper half
)

// Addressing modes for pairs (inst.sh).
const (
	modeOffset = 0
	modePre    = 1
	modePost   = 2
)

// MSR (immediate) PSTATE fields (inst.sh).
const (
	pstateSPSel   = 0
	pstateDAIFSet = 1
	pstateDAIFClr = 2
)

// EL0 access classes of system instructions (inst.cc of opMRS, opMSR,
// opMSRi, opSYS, opDCZVA).
const (
	el0Undef = 0 // undefined at EL0
	el0OK    = 1 // allowed at EL0
	el0Trap  = 2 // allowed at EL0 if SCTLR_EL1 bit amt is set, else trapped (EC 0x18, ISS in im2)
)

// sysTrapISS is the ISS of an EC 0x18 trap of MSR/MRS/SYS.
func sysTrapISS(op0, op1, crn, crm, op2, rt, read uint32) uint64 {
	return uint64(op0<<20 | op2<<17 | op1<<14 | crn<<10 | rt<<5 | crm<<1 | read)
}

// inst is one pre-decoded instruction. Register fields hold register-file
// slots (see regZR, regSP, regSink), already resolved for the encoding.
type inst struct {
	op  opcode
	sf  bool  // 64-bit operation
	rd  uint8 // destination (or Rt)
	rn  uint8 // first source or base
	rm  uint8 // second source or index
	ra  uint8 // third source, Rt2, Rs, or Rd read as a source
	sh  uint8 // shift type, extend option, addressing mode, sub-operation
	amt uint8 // shift amount or access size
	cc  uint8 // condition, nzcv, load extension
	neg bool  // invert second operand; CRC32C; immediate form of CCMP
	imm uint64
	im2 uint64
}

// codePage is the decode cache of one 4 KiB page; entries decode lazily on
// first execution.
type codePage struct {
	insts [PageSize / 4]inst
	gen   uint32 // parallel mode: Machine.codeGen of the page when decoded
	live  uint16 // deterministic mode: entries decoded (op != opNone)

	// blocks holds the translated blocks (jit.go) by starting slot;
	// deterministic mode only, allocated on first use.
	blocks *[PageSize / 4]*block
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

// decode fills in from the instruction word w. Anything unallocated or not
// implemented becomes opUndef.
func decode(in *inst, w uint32) {
	*in = inst{op: opUndef}
	switch {
	case w>>25&7 == 7, w>>25&5 == 4 && w>>26&1 == 1, w&0xffdfffc0 == 0xd51b4400:
		// FP/SIMD data processing and loads/stores, MRS/MSR FPCR/FPSR.
		if (*CPU)(nil).simd(w) {
			in.op, in.imm = opFP, uint64(w)
		}
	case w>>26&0x7 == 0x4: // x100: data processing, immediate
		decodeDPImm(in, w)
	case w>>26&0x7 == 0x5: // x101: branches, exceptions, system
		decodeBranchSys(in, w)
	case w>>25&0x5 == 0x4: // x1x0: loads and stores
		decodeLoadStore(in, w)
	case w>>25&0x7 == 0x5: // x101: data processing, register
		decodeDPReg(in, w)
	}
	// Everything else (reserved, SVE) stays undefined.
	if in.op == opUndef {
		// The word is kept for the undefined-instruction statistics.
		*in = inst{op: opUndef, imm: uint64(w)}
	}
}

func decodeDPImm(in *inst, w uint32) {
	sf := w>>31 != 0
	rd, rn := w&31, w>>5&31
	in.sf = sf
	switch w >> 23 & 7 {
	case 0, 1: // PC-relative addressing
		imm := uint64(w>>5&0x7ffff)<<2 | uint64(w>>29&3)
		in.rd = wZR(rd)
		if w>>31 == 0 {
			in.op = opADR
			in.imm = sext(imm, 21)
		} else {
			in.op = opADRP
			in.imm = sext(imm, 21) << 12
		}
	case 2: // add/subtract immediate
		imm := uint64(w >> 10 & 0xfff)
		if w>>22&1 != 0 {
			imm <<= 12
		}
		in.imm = imm
		in.rn = rSP(rn)
		s := w>>29&1 != 0
		if s {
			in.rd = wZR(rd)
		} else {
			in.rd = rSP(rd)
		}
		in.op = [4]opcode{opADDi, opADDSi, opSUBi, opSUBSi}[w>>29&3]
	case 4: // logical immediate
		n := w >> 22 & 1
		if !sf && n != 0 {
			return
		}
		size := uint(32)
		if sf {
			size = 64
		}
		wmask, _, ok := decodeBitMasks(n, w>>10&63, w>>16&63, true, size)
		if !ok {
			return
		}
		in.imm = wmask
		in.rn = rZR(rn)
		opc := w >> 29 & 3
		if opc == 3 {
			in.rd = wZR(rd)
		} else {
			in.rd = rSP(rd)
		}
		in.op = [4]opcode{opANDi, opORRi, opEORi, opANDSi}[opc]
	case 5: // move wide
		hw := w >> 21 & 3
		if !sf && hw > 1 {
			return
		}
		imm := uint64(w>>5&0xffff) << (16 * hw)
		in.rd = wZR(rd)
		switch w >> 29 & 3 {
		case 0: // MOVN
			in.op = opMOVi
			in.imm = ^imm
			if !sf {
				in.imm = uint64(uint32(in.imm))
			}
		case 2: // MOVZ
			in.op = opMOVi
			in.imm = imm
		case 3: // MOVK
			in.op = opMOVK
			in.ra = rZR(rd)
			in.imm = imm
			in.im2 = ^(uint64(0xffff) << (16 * hw))
		}
	case 6: // bitfield
		n := w >> 22 & 1
		opc := w >> 29 & 3
		immr, imms := w>>16&63, w>>10&63
		if opc == 3 || (sf && n == 0) || (!sf && (n != 0 || immr > 31 || imms > 31)) {
			return
		}
		size := uint(32)
		if sf {
			size = 64
		}
		wmask, tmask, ok := decodeBitMasks(n, imms, immr, false, size)
		if !ok {
			return
		}
		in.rd, in.rn, in.ra = wZR(rd), rZR(rn), rZR(rd)
		in.imm, in.im2 = wmask, tmask
		in.amt, in.cc = uint8(immr), uint8(imms)
		switch opc {
		case 0:
			in.op = opSBFM
			if imms == uint32(size-1) {
				in.op = opASRi
			}
		case 1:
			in.op = opBFM
		case 2:
			in.op = opUBFM
			switch {
			case imms == uint32(size-1):
				in.op = opLSRi
			case imms+1 == immr:
				in.op = opLSLi
				in.amt = uint8(uint32(size) - immr)
			}
		}
	case 7: // extract
		if w>>29&3 != 0 || w>>21&1 != 0 || (w>>22&1 != 0) != sf {
			return
		}
		lsb := w >> 10 & 63
		if !sf && lsb > 31 {
			return
		}
		in.op = opEXTR
		in.rd, in.rn, in.rm = wZR(rd), rZR(rn), rZR(w>>16)
		in.amt = uint8(lsb)
	}
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

func decodeBranchSys(in *inst, w uint32) {
	switch {
	case w>>26&0x1f == 0x05: // B, BL
		in.imm = sext(uint64(w&0x3ffffff)<<2, 28)
		in.op = opB
		if w>>31 != 0 {
			in.op = opBL
		}
	case w>>25&0x3f == 0x1a: // CBZ, CBNZ
		in.sf = w>>31 != 0
		in.rn = rZR(w)
		in.imm = sext(uint64(w>>5&0x7ffff)<<2, 21)
		in.op = opCBZ
		if w>>24&1 != 0 {
			in.op = opCBNZ
		}
	case w>>25&0x3f == 0x1b: // TBZ, TBNZ
		in.rn = rZR(w)
		in.amt = uint8(w>>31<<5 | w>>19&31)
		in.imm = sext(uint64(w>>5&0x3fff)<<2, 16)
		in.op = opTBZ
		if w>>24&1 != 0 {
			in.op = opTBNZ
		}
	case w>>24 == 0x54: // B.cond
		if w&0x10 != 0 {
			return
		}
		in.op = opBcond
		in.cc = uint8(w & 15)
		in.imm = sext(uint64(w>>5&0x7ffff)<<2, 21)
	case w>>24 == 0xd4: // exception generation
		decodeException(in, w)
	case w>>22 == 0x354: // system
		decodeSystem(in, w)
	case w>>25 == 0x6b: // unconditional branch (register)
		opc, op2, op3, rn, op4 := w>>21&15, w>>16&31, w>>10&63, w>>5&31, w&31
		if op2 != 31 || op3 != 0 || op4 != 0 {
			return // pointer-authentication forms are not implemented
		}
		in.rn = rZR(rn)
		switch opc {
		case 0:
			in.op = opBR
		case 1:
			in.op = opBLR
		case 2:
			in.op = opRET
		case 4:
			if rn == 31 {
				in.op = opERET
			}
		}
	}
}

func decodeException(in *inst, w uint32) {
	opc, op2, ll := w>>21&7, w>>2&7, w&3
	if op2 != 0 {
		return
	}
	in.imm = uint64(w >> 5 & 0xffff)
	switch {
	case opc == 0 && ll == 1:
		in.op = opSVC
	case opc == 0 && ll == 2:
		in.op = opHVC
	case opc == 1 && ll == 0:
		in.op = opBRK
	}
	// SMC (no EL3), HLT (no external debug), DCPS: undefined.
}

func decodeSystem(in *inst, w uint32) {
	l := w >> 21 & 1
	op0, op1, crn, crm, op2, rt := w>>19&3, w>>16&7, w>>12&15, w>>8&15, w>>5&7, w&31
	switch {
	case op0 == 0 && l == 0 && crn == 2 && rt == 31: // hints
		switch crm<<3 | op2 {
		case 3:
			in.op = opWFI
		default:
			// NOP, YIELD, WFE, SEV, SEVL and every other hint (BTI,
			// PACIASP, ...) execute as NOPs, as unimplemented hints must.
			in.op = opNOP
		}
	case op0 == 0 && l == 0 && crn == 3 && rt == 31: // barriers
		switch op2 {
		case 2:
			in.op = opCLREX
		case 4, 5: // DSB, DMB: every access is sequentially consistent here
			in.op = opNOP
		case 6:
			in.op = opISB
		}
	case op0 == 0 && l == 0 && crn == 4 && rt == 31: // MSR (immediate)
		in.imm = uint64(crm)
		switch op1<<3 | op2 {
		case 0<<3 | 5:
			in.op, in.sh = opMSRi, pstateSPSel
		case 3<<3 | 6:
			in.op, in.sh = opMSRi, pstateDAIFSet
		case 3<<3 | 7:
			in.op, in.sh = opMSRi, pstateDAIFClr
		}
		if in.sh != pstateSPSel {
			// EL0 may change DAIF when SCTLR_EL1.UMA allows it.
			in.cc, in.amt, in.im2 = el0Trap, 9, sysTrapISS(op0, op1, crn, crm, op2, rt, 0)
		}
	case op0 == 1 && l == 0: // SYS
		decodeSYS(in, op1, crn, crm, op2, rt)
	case op0 >= 2: // MSR/MRS (register)
		key := sysRegKey(op0, op1, crn, crm, op2)
		r, acc, ok := lookupSysReg(key)
		if !ok {
			if l == 1 && op0 == 3 && op1 == 0 && crn == 0 && crm >= 1 {
				// Unassigned ID registers in this space read as zero.
				in.op, in.rd = opMRSzero, wZR(rt)
			}
			return
		}
		in.imm = uint64(r)
		if l == 1 {
			if !acc.read {
				return
			}
			in.op, in.rd = opMRS, wZR(rt)
			if acc.el0Read {
				in.cc = el0OK
			}
		} else {
			if !acc.write {
				return
			}
			in.op, in.rn = opMSR, rZR(rt)
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
	}
}

func decodeSYS(in *inst, op1, crn, crm, op2, rt uint32) {
	in.rn = rZR(rt)
	iss := sysTrapISS(1, op1, crn, crm, op2, rt, 0)
	switch {
	case crn == 7 && op1 == 3 && crm == 4 && op2 == 1: // DC ZVA
		in.op, in.cc, in.amt, in.im2 = opDCZVA, el0Trap, 14, iss // DZE
	case crn == 7 && op1 == 3 && crm == 5 && op2 == 1, // IC IVAU
		crn == 7 && op1 == 3 && crm == 10 && op2 == 1, // DC CVAC
		crn == 7 && op1 == 3 && crm == 11 && op2 == 1, // DC CVAU
		crn == 7 && op1 == 3 && crm == 14 && op2 == 1: // DC CIVAC
		// The decode cache is kept coherent by stores, so instruction
		// cache maintenance has nothing left to do. EL0 needs
		// SCTLR_EL1.UCI.
		in.op, in.cc, in.amt, in.im2 = opSYS, el0Trap, 26, iss
	case crn == 7 && op1 == 0 && crm == 1 && op2 == 0, // IC IALLUIS
		crn == 7 && op1 == 0 && crm == 5 && op2 == 0,               // IC IALLU
		crn == 7 && op1 == 0 && crm == 6 && (op2 == 1 || op2 == 2), // DC IVAC, ISW
		crn == 7 && op1 == 0 && crm == 10 && op2 == 2,              // DC CSW
		crn == 7 && op1 == 0 && crm == 14 && op2 == 2:              // DC CISW
		in.op = opSYS
	case crn == 7 && op1 == 0 && crm == 8 && op2 <= 3: // AT S1E1R/W, S1E0R/W
		in.op, in.sh = opAT, uint8(op2)
	case crn == 8 && op1 == 0: // TLBI
		in.op = opTLBI
		in.neg = crm == 3
		switch op2 {
		case 0:
			in.sh = tlbiVMALLE1
		case 1, 5: // VAE1, VALE1: last-level only is a hint a walk-free TLB may ignore
			in.sh = tlbiVAE1
		case 2:
			in.sh = tlbiASIDE1
		case 3, 7: // VAAE1, VAALE1
			in.sh = tlbiVAAE1
		default:
			in.sh, in.neg = tlbiVMALLE1, true // an over-invalidation is always safe
		}
		if crm != 3 && crm != 7 {
			in.sh, in.neg = tlbiVMALLE1, true
		}
	}
}

func decodeLoadStore(in *inst, w uint32) {
	size := w >> 30
	rt, rn := w&31, w>>5&31
	if w>>26&1 != 0 {
		return // FP/SIMD registers: not implemented
	}
	switch {
	case w>>24&0x3f == 0x08: // load/store exclusive, acquire/release
		decodeExclusive(in, w)
	case w>>27&7 == 3 && w>>24&3 == 0: // load register (literal)
		in.imm = sext(uint64(w>>5&0x7ffff)<<2, 21)
		in.rd = wZR(rt)
		switch w >> 30 {
		case 0:
			in.op, in.amt = opLDRlit, 2
		case 1:
			in.op, in.amt = opLDRlit, 3
		case 2:
			in.op, in.amt, in.cc = opLDRlit, 2, extSign64
		case 3:
			in.op = opNOP // PRFM (literal)
		}
	case w>>27&7 == 5: // load/store pair
		decodePair(in, w)
	case w>>27&7 == 7 && w>>24&3 == 1: // unsigned immediate offset
		if !ldstSizeOpc(in, size, w>>22&3) {
			return
		}
		in.rn = rSP(rn)
		in.imm = uint64(w>>10&0xfff) << size
		if in.op == opNOP {
			return // PRFM
		}
		if in.op == opLDRo {
			in.rd = wZR(rt)
		} else {
			in.rd = rZR(rt)
		}
	case w>>27&7 == 7 && w>>24&3 == 0 && w>>21&1 == 0: // unscaled, pre/post-index, unprivileged
		if !ldstSizeOpc(in, size, w>>22&3) {
			return
		}
		in.rn = rSP(rn)
		in.imm = sext(uint64(w>>12&0x1ff), 9)
		idx := w >> 10 & 3
		if in.op == opNOP {
			if idx != 0 {
				in.op = opUndef // PRFUM only exists unscaled
			}
			return
		}
		load := in.op == opLDRo
		if load {
			in.rd = wZR(rt)
		} else {
			in.rd = rZR(rt)
		}
		switch idx {
		case 1:
			in.op = pick(load, opLDRpost, opSTRpost)
		case 2:
			in.op = pick(load, opLDTR, opSTTR)
		case 3:
			in.op = pick(load, opLDRpre, opSTRpre)
		}
		// idx 0 (LDUR) keeps the plain offset form.
	case w>>27&7 == 7 && w>>24&3 == 0 && w>>21&1 == 1 && w>>10&3 == 0: // atomic memory operations
		decodeAtomic(in, w)
	case w>>27&7 == 7 && w>>24&3 == 0 && w>>21&1 == 1 && w>>10&3 == 2: // register offset
		option := w >> 13 & 7
		if option&2 == 0 {
			return // UXTB/UXTH/SXTB/SXTH are reserved here
		}
		if !ldstSizeOpc(in, size, w>>22&3) {
			return
		}
		if in.op == opNOP {
			return // PRFM (register)
		}
		in.rn, in.rm = rSP(rn), rZR(w>>16)
		in.sh = uint8(option)
		if w>>12&1 != 0 {
			in.im2 = uint64(size)
		}
		if in.op == opLDRo {
			in.op, in.rd = opLDRreg, wZR(rt)
		} else {
			in.op, in.rd = opSTRreg, rZR(rt)
		}
	}
	// The rest: undefined.
}

// decodeAtomic decodes the Armv8.1 atomic memory operations (LD<op>, SWP;
// ST<op> is LD<op> with Rt = XZR) and the Armv8.3 LDAPR family.
func decodeAtomic(in *inst, w uint32) {
	size, a, r, rs, o3, opc := w>>30, w>>23&1, w>>22&1, w>>16&31, w>>15&1, w>>12&7
	in.amt = uint8(size)
	in.rn = rSP(w >> 5)
	in.rd = wZR(w)
	switch {
	case o3 == 0:
		in.op, in.sh = opLDOP, uint8(opc)
	case opc == 0:
		in.op, in.sh = opLDOP, atomicSWP
	case opc == 4 && a == 1 && r == 0 && rs == 31: // LDAPR, LDAPRB, LDAPRH
		in.op = opLDAR
		return
	default:
		return
	}
	in.rm = rZR(rs)
}

func pick(cond bool, a, b opcode) opcode {
	if cond {
		return a
	}
	return b
}

// ldstSizeOpc decodes size and opc of single-register loads/stores into
// in.op (opLDRo/opSTRo, or opNOP for PRFM), in.amt and in.cc. It reports
// false for unallocated combinations.
func ldstSizeOpc(in *inst, size, opc uint32) bool {
	in.amt = uint8(size)
	switch opc {
	case 0:
		in.op = opSTRo
	case 1:
		in.op = opLDRo
	case 2:
		if size == 3 {
			in.op = opNOP // PRFM
			return true
		}
		in.op, in.cc = opLDRo, extSign64
	case 3:
		if size >= 2 {
			return false
		}
		in.op, in.cc = opLDRo, extSign32
	}
	return true
}

func decodePair(in *inst, w uint32) {
	opc, l := w>>30, w>>22&1
	rt, rt2, rn := w&31, w>>10&31, w>>5&31
	var lg uint32
	switch {
	case opc == 0:
		lg = 2
	case opc == 2:
		lg = 3
	case opc == 1 && l == 1:
		lg, in.cc = 2, extSign64 // LDPSW
	default:
		return
	}
	mode := w >> 23 & 3
	if mode == 0 && in.cc == extSign64 {
		return // no LDNPSW
	}
	in.amt = uint8(lg)
	in.imm = sext(uint64(w>>15&0x7f), 7) << lg
	in.rn = rSP(rn)
	switch mode {
	case 0, 2:
		in.sh = modeOffset // LDNP/STNP are plain pairs with a hint
	case 1:
		in.sh = modePost
	case 3:
		in.sh = modePre
	}
	if l == 1 {
		in.op, in.rd, in.ra = opLDP, wZR(rt), wZR(rt2)
	} else {
		in.op, in.rd, in.ra = opSTP, rZR(rt), rZR(rt2)
	}
}

func decodeExclusive(in *inst, w uint32) {
	size, o2, l, o1, o0 := w>>30, w>>23&1, w>>22&1, w>>21&1, w>>15&1
	rs, rt2, rn, rt := w>>16&31, w>>10&31, w>>5&31, w&31
	in.rn = rSP(rn)
	in.amt = uint8(size)
	switch {
	case o2 == 0 && o1 == 0: // LDXR/LDAXR, STXR/STLXR
		if l == 1 {
			in.op, in.rd = opLDXR, wZR(rt)
		} else {
			in.op, in.rd, in.ra = opSTXR, rZR(rt), wZR(rs)
		}
	case o2 == 0 && o1 == 1 && size >= 2: // LDXP/LDAXP, STXP/STLXP
		if l == 1 {
			in.op, in.rd, in.rm = opLDXP, wZR(rt), wZR(rt2)
		} else {
			in.op, in.rd, in.rm, in.ra = opSTXP, rZR(rt), rZR(rt2), wZR(rs)
		}
	case o2 == 1 && o1 == 0 && o0 == 1: // LDAR, STLR: ordinary accesses in an in-order machine
		if l == 1 {
			in.op, in.rd = opLDAR, wZR(rt)
		} else {
			in.op, in.rd = opSTLR, rZR(rt)
		}
	case o2 == 1 && o1 == 1 && rt2 == 31: // CAS, CASA, CASL, CASAL (B, H, W, X)
		in.op, in.ra, in.rm, in.rd = opCAS, rZR(rs), wZR(rs), rZR(rt)
	case o2 == 0 && o1 == 1 && size < 2 && rt2 == 31: // CASP family
		if rs&1 != 0 || rt&1 != 0 {
			return // odd register pairs are unallocated
		}
		in.op, in.amt = opCASP, uint8(2+size)
		in.ra, in.rm, in.rd = rZR(rs), wZR(rs), rZR(rt)
		in.sh, in.cc, in.im2 = rZR(rs+1), wZR(rs+1), uint64(rZR(rt+1))
	}
	// LDLAR/STLLR (LOR, o0 = 0): not implemented, undefined.
}

func decodeDPReg(in *inst, w uint32) {
	sf := w>>31 != 0
	in.sf = sf
	rd, rn, rm := w&31, w>>5&31, w>>16&31
	imm6 := w >> 10 & 63
	switch {
	case w>>24&0x1f == 0x0a: // logical (shifted register)
		if !sf && imm6 > 31 {
			return
		}
		in.rd, in.rn, in.rm = wZR(rd), rZR(rn), rZR(rm)
		in.sh, in.amt = uint8(w>>22&3), uint8(imm6)
		in.neg = w>>21&1 != 0
		in.op = [4]opcode{opANDr, opORRr, opEORr, opANDSr}[w>>29&3]
		if in.op == opORRr && rn == 31 && imm6 == 0 && !in.neg {
			in.op = opMOVr
		}
	case w>>24&0x1f == 0x0b && w>>21&1 == 0: // add/subtract (shifted register)
		if w>>22&3 == 3 || (!sf && imm6 > 31) {
			return
		}
		in.rd, in.rn, in.rm = wZR(rd), rZR(rn), rZR(rm)
		in.sh, in.amt = uint8(w>>22&3), uint8(imm6)
		in.op = [4]opcode{opADDr, opADDSr, opSUBr, opSUBSr}[w>>29&3]
	case w>>24&0x1f == 0x0b: // add/subtract (extended register)
		imm3 := w >> 10 & 7
		if w>>22&3 != 0 || imm3 > 4 {
			return
		}
		in.rn, in.rm = rSP(rn), rZR(rm)
		if w>>29&1 != 0 {
			in.rd = wZR(rd)
		} else {
			in.rd = rSP(rd)
		}
		in.sh, in.amt = uint8(w>>13&7), uint8(imm3)
		in.op = [4]opcode{opADDx, opADDSx, opSUBx, opSUBSx}[w>>29&3]
	case w>>21&0xff == 0xd0: // add/subtract with carry
		if w>>10&63 != 0 {
			return
		}
		in.rd, in.rn, in.rm = wZR(rd), rZR(rn), rZR(rm)
		in.op = [4]opcode{opADC, opADCS, opSBC, opSBCS}[w>>29&3]
	case w>>21&0xff == 0xd2: // conditional compare
		if w>>29&1 == 0 || w>>10&1 != 0 || w>>4&1 != 0 {
			return
		}
		in.rn, in.rm = rZR(rn), rZR(rm)
		in.cc = uint8(w >> 12 & 15)
		in.amt = uint8(w & 15) // nzcv
		in.neg = w>>11&1 != 0  // immediate form
		in.imm = uint64(rm)
		in.op = opCCMN
		if w>>30&1 != 0 {
			in.op = opCCMP
		}
	case w>>21&0xff == 0xd4: // conditional select
		if w>>29&1 != 0 || w>>11&1 != 0 {
			return
		}
		in.rd, in.rn, in.rm = wZR(rd), rZR(rn), rZR(rm)
		in.cc = uint8(w >> 12 & 15)
		in.op = [4]opcode{opCSEL, opCSINC, opCSINV, opCSNEG}[w>>30&1<<1|w>>10&1]
	case w>>21&0xff == 0xd6: // data processing (1 or 2 source)
		if w>>29&1 != 0 {
			return
		}
		in.rd, in.rn, in.rm = wZR(rd), rZR(rn), rZR(rm)
		opcode := w >> 10 & 63
		if w>>30&1 == 0 {
			decodeDP2(in, opcode, sf)
		} else if rm == 0 {
			decodeDP1(in, opcode, sf)
		}
	case w>>24&0x1f == 0x1b: // data processing (3 source)
		if w>>29&3 != 0 {
			return
		}
		in.rd, in.rn, in.rm, in.ra = wZR(rd), rZR(rn), rZR(rm), rZR(w>>10)
		o0 := w >> 15 & 1
		switch op31 := w >> 21 & 7; {
		case op31 == 0:
			in.op = pick(o0 == 0, opMADD, opMSUB)
		case !sf:
			// The widening and high multiplies exist only with sf=1.
		case op31 == 1:
			in.op = pick(o0 == 0, opSMADDL, opSMSUBL)
		case op31 == 5:
			in.op = pick(o0 == 0, opUMADDL, opUMSUBL)
		case op31 == 2 && o0 == 0:
			in.op = opSMULH
		case op31 == 6 && o0 == 0:
			in.op = opUMULH
		}
	}
}

func decodeDP2(in *inst, opcode uint32, sf bool) {
	switch opcode {
	case 2:
		in.op = opUDIV
	case 3:
		in.op = opSDIV
	case 8:
		in.op = opLSLV
	case 9:
		in.op = opLSRV
	case 10:
		in.op = opASRV
	case 11:
		in.op = opRORV
	case 16, 17, 18, 19, 20, 21, 22, 23: // CRC32{,C}{B,H,W,X}
		sz := opcode & 3
		if (sz == 3) != sf {
			return
		}
		in.op, in.amt, in.neg = opCRC32, uint8(sz), opcode&4 != 0
	}
}

func decodeDP1(in *inst, opcode uint32, sf bool) {
	switch opcode {
	case 0:
		in.op = opRBIT
	case 1:
		in.op = opREV16
	case 2:
		in.op = pick(sf, opREV32, opREV)
	case 3:
		if sf {
			in.op = opREV
		}
	case 4:
		in.op = opCLZ
	case 5:
		in.op = opCLS
	}
}
