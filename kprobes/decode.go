package kprobes

// Instruction decoding for probing, after Linux's
// arch/arm64/kernel/probes/decode-insn.c (arm_kprobe_decode_insn) and
// arch/arm64/kernel/insn.c (aarch64_insn_is_steppable).

// insnClass says how a probed instruction can be executed.
type insnClass int

const (
	insnRejected   insnClass = iota // cannot be probed: EINVAL
	insnGoodNoSlot                  // must be simulated on the saved pt_regs
	insnGood                        // stepped out of line in a slot
)

func (c insnClass) String() string {
	switch c {
	case insnGood:
		return "steppable"
	case insnGoodNoSlot:
		return "simulated"
	default:
		return "rejected"
	}
}

// maxAtomicContext is MAX_ATOMIC_CONTEXT_SIZE in instructions (128 bytes).
const maxAtomicContext = 32

type maskValue struct{ mask, value uint32 }

func (mv maskValue) is(insn uint32) bool { return insn&mv.mask == mv.value }

// Encodings from arch/arm64/include/asm/insn.h (__AARCH64_INSN_FUNCS).
var (
	insnB          = maskValue{0xFC000000, 0x14000000}
	insnBL         = maskValue{0xFC000000, 0x94000000}
	insnCBZ        = maskValue{0x7F000000, 0x34000000}
	insnCBNZ       = maskValue{0x7F000000, 0x35000000}
	insnTBZ        = maskValue{0x7F000000, 0x36000000}
	insnTBNZ       = maskValue{0x7F000000, 0x37000000}
	insnBcond      = maskValue{0xFF000010, 0x54000000}
	insnBR         = maskValue{0xFFFFFC1F, 0xD61F0000}
	insnBLR        = maskValue{0xFFFFFC1F, 0xD63F0000}
	insnRET        = maskValue{0xFFFFFC1F, 0xD65F0000}
	insnBRAuth     = maskValue{0xFEFFF800, 0xD61F0800} // braa/brab/blraa/blrab (Z and register forms)
	insnRETAuth    = maskValue{0xFFFFFBFF, 0xD65F0BFF} // retaa/retab
	insnERET       = maskValue{0xFFFFFFFF, 0xD69F03E0}
	insnERETAuth   = maskValue{0xFFFFFBFF, 0xD69F0BFF}
	insnHint       = maskValue{0xFFFFF01F, 0xD503201F}
	insnMRS        = maskValue{0xFFF00000, 0xD5300000}
	insnMSRImm     = maskValue{0xFFF8F01F, 0xD500401F}
	insnMSRReg     = maskValue{0xFFF00000, 0xD5100000}
	insnExcept     = maskValue{0xFF000000, 0xD4000000}
	insnADR        = maskValue{0x9F000000, 0x10000000}
	insnADRP       = maskValue{0x9F000000, 0x90000000}
	insnLDRLit     = maskValue{0xBF000000, 0x18000000}
	insnLDRSWLit   = maskValue{0xFF000000, 0x98000000}
	insnPRFMLit    = maskValue{0xFF000000, 0xD8000000}
	insnExclusive  = maskValue{0x3F800000, 0x08000000}
	insnLoadEx     = maskValue{0x3F400000, 0x08400000}
	insnStoreEx    = maskValue{0x3F400000, 0x08000000}
	insnMOPS       = maskValue{0x3B200C00, 0x19000400}
	classBranchSys = maskValue{0x1C000000, 0x14000000}
)

// sysregDAIF is DAIF (S3_3_C4_C2_1) as op0:op1:CRn:CRm:op2, the MRS
// instruction's bits [20:5] (AARCH64_INSN_SPCLREG_DAIF).
const sysregDAIF = 0xda11

// steppableHints is Linux 6.1's aarch64_insn_is_steppable_hint whitelist,
// as CRm:op2 of HINT: NOP, the PAC hints that are safe, BTI.
func isSteppableHint(insn uint32) bool {
	switch (insn >> 5) & 0x7f {
	case 0x00: // NOP
		return true
	case 0x07, 0x08, 0x0a, 0x18, 0x19, 0x1a, 0x1b: // XPACLRI, PACIA1716, PACIB1716, PACIAZ, PACIASP, PACIBZ, PACIBSP
		return true
	case 0x20, 0x22, 0x24, 0x26: // BTI, BTI c, BTI j, BTI jc
		return true
	}
	return false
}

func isBranch(insn uint32) bool {
	for _, mv := range []maskValue{insnB, insnBL, insnCBZ, insnCBNZ, insnTBZ, insnTBNZ, insnRET, insnBR, insnBLR, insnBcond, insnBRAuth, insnRETAuth} {
		if mv.is(insn) {
			return true
		}
	}
	return false
}

// isSteppable is aarch64_insn_is_steppable.
func isSteppable(insn uint32) bool {
	if classBranchSys.is(insn) {
		switch {
		case isBranch(insn), insnMSRImm.is(insn), insnMSRReg.is(insn), insnExcept.is(insn),
			insnERET.is(insn), insnERETAuth.is(insn):
			return false
		case insnMRS.is(insn):
			// Reading DAIF out of line would see the masked state of the step.
			return (insn>>5)&0xffff != sysregDAIF
		case insnHint.is(insn):
			return isSteppableHint(insn)
		}
		return true
	}
	switch {
	case insnLDRLit.is(insn), insnLDRSWLit.is(insn), insnADR.is(insn), insnADRP.is(insn),
		insnPRFMLit.is(insn), insnExclusive.is(insn), insnMOPS.is(insn):
		return false
	}
	return true
}

// decodeInsn is arm_probe_decode_insn for one instruction word.
func decodeInsn(insn uint32) insnClass {
	if insnLDRLit.is(insn) || insnLDRSWLit.is(insn) {
		return insnGoodNoSlot
	}
	if isSteppable(insn) {
		return insnGood
	}
	switch {
	case insnBcond.is(insn), insnCBZ.is(insn), insnCBNZ.is(insn), insnTBZ.is(insn), insnTBNZ.is(insn),
		insnADR.is(insn), insnADRP.is(insn), insnB.is(insn), insnBL.is(insn),
		insnBR.is(insn), insnBLR.is(insn), insnRET.is(insn):
		return insnGoodNoSlot
	}
	return insnRejected
}

// decodeAtAddr is arm_kprobe_decode_insn: the instruction's class, but
// rejected when it sits inside an exclusive sequence (a load-exclusive in
// the preceding 32 instructions of the same function with no
// store-exclusive after it), since a BRK there would clear the monitor
// forever. prev(i) returns the i-th instruction before the probe address
// (i >= 1) and false at the function start.
func decodeAtAddr(insn uint32, prev func(i int) (uint32, bool)) insnClass {
	class := decodeInsn(insn)
	if class == insnRejected {
		return class
	}
	for i := 1; i <= maxAtomicContext; i++ {
		p, ok := prev(i)
		if !ok {
			break
		}
		if insnStoreEx.is(p) {
			break
		}
		if insnLoadEx.is(p) {
			return insnRejected
		}
	}
	return class
}
