package kprobes

import "encoding/binary"

// Simulation of the instructions that cannot run out of line because they
// read or write the PC, after Linux's arch/arm64/kernel/probes/
// simulate-insn.c. Each works on the saved pt_regs of the hit; addr is the
// probed address, where the instruction architecturally executes.

// simulateFunc runs one instruction on regs. It returns false when a
// memory read it needs faults (only the literal loads read memory).
type simulateFunc func(kp *Kprobes, opcode uint32, addr uint64, regs *Regs) bool

// simulatorFor returns the simulation handler for an instruction that
// decodeInsn classed insnGoodNoSlot.
func simulatorFor(insn uint32) simulateFunc {
	switch {
	case insnLDRLit.is(insn):
		return simulateLDRLiteral
	case insnLDRSWLit.is(insn):
		return simulateLDRSWLiteral
	case insnBcond.is(insn):
		return simulateBcond
	case insnCBZ.is(insn), insnCBNZ.is(insn):
		return simulateCBZCBNZ
	case insnTBZ.is(insn), insnTBNZ.is(insn):
		return simulateTBZTBNZ
	case insnADR.is(insn), insnADRP.is(insn):
		return simulateADRADRP
	case insnB.is(insn), insnBL.is(insn):
		return simulateBBL
	case insnBR.is(insn), insnBLR.is(insn), insnRET.is(insn):
		return simulateBRBLRRET
	}
	return nil
}

func signExtend(v uint64, bits uint) uint64 {
	shift := 64 - bits
	return uint64(int64(v<<shift) >> shift)
}

// setX writes Xn, dropping writes to XZR (register 31), as set_x_reg does.
func setX(regs *Regs, n uint32, v uint64) {
	if n < 31 {
		regs.X[n] = v
	}
}

// getX reads Xn; register 31 reads as zero.
func getX(regs *Regs, n uint32) uint64 {
	if n < 31 {
		return regs.X[n]
	}
	return 0
}

// checkCondition evaluates an A64 condition code on PSTATE's NZCV, as
// Linux's aarch32_opcode_cond_checks table does.
func checkCondition(cond uint32, pstate uint64) bool {
	n, z, c, v := pstate>>31&1 == 1, pstate>>30&1 == 1, pstate>>29&1 == 1, pstate>>28&1 == 1
	var r bool
	switch cond >> 1 {
	case 0:
		r = z
	case 1:
		r = c
	case 2:
		r = n
	case 3:
		r = v
	case 4:
		r = c && !z
	case 5:
		r = n == v
	case 6:
		r = n == v && !z
	case 7:
		return true // AL and NV
	}
	if cond&1 == 1 {
		return !r
	}
	return r
}

func simulateADRADRP(_ *Kprobes, op uint32, addr uint64, regs *Regs) bool {
	imm := signExtend(uint64((op>>3)&0x1ffffc|(op>>29)&3), 21)
	var v uint64
	if op&0x80000000 != 0 { // adrp
		v = imm<<12 + addr&^0xfff
	} else {
		v = addr + imm
	}
	setX(regs, op&0x1f, v)
	regs.PC = addr + 4
	return true
}

func simulateBBL(_ *Kprobes, op uint32, addr uint64, regs *Regs) bool {
	disp := signExtend(uint64(op&0x3ffffff)<<2, 28)
	if op&0x80000000 != 0 { // bl
		regs.X[30] = addr + 4
	}
	regs.PC = addr + disp
	return true
}

func simulateBcond(_ *Kprobes, op uint32, addr uint64, regs *Regs) bool {
	if checkCondition(op&0xf, regs.Pstate) {
		regs.PC = addr + signExtend(uint64((op>>5)&0x7ffff)<<2, 21)
	} else {
		regs.PC = addr + 4
	}
	return true
}

func simulateBRBLRRET(_ *Kprobes, op uint32, addr uint64, regs *Regs) bool {
	// The target is read first, so that blr x30 branches to the old x30.
	regs.PC = getX(regs, (op>>5)&0x1f)
	if (op>>21)&3 == 1 { // blr
		regs.X[30] = addr + 4
	}
	return true
}

func simulateCBZCBNZ(_ *Kprobes, op uint32, addr uint64, regs *Regs) bool {
	v := getX(regs, op&0x1f)
	if op&0x80000000 == 0 {
		v = uint64(uint32(v))
	}
	taken := v == 0
	if op&(1<<24) != 0 { // cbnz
		taken = !taken
	}
	if taken {
		regs.PC = addr + signExtend(uint64((op>>5)&0x7ffff)<<2, 21)
	} else {
		regs.PC = addr + 4
	}
	return true
}

func simulateTBZTBNZ(_ *Kprobes, op uint32, addr uint64, regs *Regs) bool {
	bit := (op>>31)<<5 | (op>>19)&0x1f
	set := getX(regs, op&0x1f)>>bit&1 == 1
	taken := !set
	if op&(1<<24) != 0 { // tbnz
		taken = set
	}
	if taken {
		regs.PC = addr + signExtend(uint64((op>>5)&0x3fff)<<2, 16)
	} else {
		regs.PC = addr + 4
	}
	return true
}

// literalAddr is where a literal load at addr reads: a kernel VA, as addr.
func literalAddr(op uint32, addr uint64) uint64 {
	return addr + signExtend(uint64((op>>5)&0x7ffff)<<2, 21)
}

func simulateLDRLiteral(kp *Kprobes, op uint32, addr uint64, regs *Regs) bool {
	var b [8]byte
	n := 4
	if op&(1<<30) != 0 {
		n = 8
	}
	if kp.k.ReadMem(literalAddr(op, addr), b[:n]) != nil {
		return false
	}
	setX(regs, op&0x1f, binary.LittleEndian.Uint64(b[:]))
	regs.PC = addr + 4
	return true
}

func simulateLDRSWLiteral(kp *Kprobes, op uint32, addr uint64, regs *Regs) bool {
	var b [4]byte
	if kp.k.ReadMem(literalAddr(op, addr), b[:]) != nil {
		return false
	}
	setX(regs, op&0x1f, uint64(int64(int32(binary.LittleEndian.Uint32(b[:])))))
	regs.PC = addr + 4
	return true
}
