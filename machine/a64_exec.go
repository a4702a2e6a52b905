package machine

import (
	"fmt"
	"math/bits"
)

// The execute functions of the table (a64.decode), one per instruction:
// execute (a64_decode.go) calls them with c.pc already at pc+4, after the
// SP alignment check of the table's sp instructions.

// execADR executes ADR.
func (c *CPU) execADR(in *inst, pc uint64) {
	r := &c.r
	r[in.rd] = pc + in.imm
}

// execADRP executes ADRP.
func (c *CPU) execADRP(in *inst, pc uint64) {
	r := &c.r
	r[in.rd] = pc&^0xfff + in.imm
}

// execADDi executes ADDi.
func (c *CPU) execADDi(in *inst, pc uint64) {
	r := &c.r
	r[in.rd] = wr(in.sf, r[in.rn]+in.imm)
}

// execSUBi executes SUBi.
func (c *CPU) execSUBi(in *inst, pc uint64) {
	r := &c.r
	r[in.rd] = wr(in.sf, r[in.rn]-in.imm)
}

// execADDSi executes ADDSi.
func (c *CPU) execADDSi(in *inst, pc uint64) {
	r := &c.r
	if in.sf {
		r[in.rd] = c.addFlags64(r[in.rn], in.imm, 0)
	} else {
		r[in.rd] = c.addFlags32(uint32(r[in.rn]), uint32(in.imm), 0)
	}
}

// execSUBSi executes SUBSi.
func (c *CPU) execSUBSi(in *inst, pc uint64) {
	r := &c.r
	if in.sf { // CMP (immediate) mostly: the hottest flag setter
		r[in.rd] = c.addFlags64(r[in.rn], ^in.imm, 1)
	} else {
		r[in.rd] = c.addFlags32(uint32(r[in.rn]), ^uint32(in.imm), 1)
	}
}

// execANDi executes ANDi.
func (c *CPU) execANDi(in *inst, pc uint64) {
	r := &c.r
	r[in.rd] = r[in.rn] & in.imm
}

// execORRi executes ORRi.
func (c *CPU) execORRi(in *inst, pc uint64) {
	r := &c.r
	r[in.rd] = wr(in.sf, r[in.rn]|in.imm)
}

// execEORi executes EORi.
func (c *CPU) execEORi(in *inst, pc uint64) {
	r := &c.r
	r[in.rd] = wr(in.sf, r[in.rn]^in.imm)
}

// execANDSi executes ANDSi.
func (c *CPU) execANDSi(in *inst, pc uint64) {
	r := &c.r
	r[in.rd] = c.logicFlags(r[in.rn]&in.imm, in.sf)
}

// execMOVi executes MOVi.
func (c *CPU) execMOVi(in *inst, pc uint64) {
	r := &c.r
	r[in.rd] = in.imm
}

// execMOVK executes MOVK.
func (c *CPU) execMOVK(a *movkArgs, pc uint64) {
	r := &c.r
	r[a.rd] = wr(a.sf, r[a.old()]&a.keep()|a.imm)
}

// execLSLi executes LSLi.
func (c *CPU) execLSLi(a *shiftimmArgs, pc uint64) {
	r := &c.r
	r[a.rd] = wr(a.sf, r[a.rn]<<a.shift())
}

// execLSRi executes LSRi.
func (c *CPU) execLSRi(a *shiftimmArgs, pc uint64) {
	r := &c.r
	if a.sf {
		r[a.rd] = r[a.rn] >> a.shift()
	} else {
		r[a.rd] = uint64(uint32(r[a.rn]) >> a.shift())
	}
}

// execASRi executes ASRi.
func (c *CPU) execASRi(a *shiftimmArgs, pc uint64) {
	r := &c.r
	if a.sf {
		r[a.rd] = uint64(int64(r[a.rn]) >> a.shift())
	} else {
		r[a.rd] = uint64(uint32(int32(r[a.rn]) >> a.shift()))
	}
}

// execBitfield executes SBFM, BFM and UBFM.
func (c *CPU) execBitfield(a *bitfieldArgs, pc uint64) {
	r := &c.r
	r[a.rd] = bitfield(a, r[a.rn], r[a.old()])
}

// execEXTR executes EXTR.
func (c *CPU) execEXTR(a *extrArgs, pc uint64) {
	r := &c.r
	if a.sf {
		if a.lsb() == 0 {
			r[a.rd] = r[a.rm]
		} else {
			r[a.rd] = r[a.rm]>>a.lsb() | r[a.rn]<<(64-a.lsb())
		}
	} else {
		cat := r[a.rn]<<32 | uint64(uint32(r[a.rm]))
		r[a.rd] = uint64(uint32(cat >> a.lsb()))
	}
}

// execMOVr executes MOVr.
func (c *CPU) execMOVr(in *inst, pc uint64) {
	r := &c.r
	r[in.rd] = wr(in.sf, r[in.rm])
}

// execANDr executes ANDr.
func (c *CPU) execANDr(a *shiftedArgs, pc uint64) {
	r := &c.r
	r[a.rd] = wr(a.sf, r[a.rn]&c.logicOperand(a))
}

// execORRr executes ORRr.
func (c *CPU) execORRr(a *shiftedArgs, pc uint64) {
	r := &c.r
	r[a.rd] = wr(a.sf, r[a.rn]|c.logicOperand(a))
}

// execEORr executes EORr.
func (c *CPU) execEORr(a *shiftedArgs, pc uint64) {
	r := &c.r
	r[a.rd] = wr(a.sf, r[a.rn]^c.logicOperand(a))
}

// execANDSr executes ANDSr.
func (c *CPU) execANDSr(a *shiftedArgs, pc uint64) {
	r := &c.r
	r[a.rd] = c.logicFlags(r[a.rn]&c.logicOperand(a), a.sf)
}

// execADDr executes ADDr.
func (c *CPU) execADDr(a *shiftedArgs, pc uint64) {
	r := &c.r
	r[a.rd] = wr(a.sf, r[a.rn]+shiftReg(r[a.rm], a.shift(), a.amount(), a.sf))
}

// execSUBr executes SUBr.
func (c *CPU) execSUBr(a *shiftedArgs, pc uint64) {
	r := &c.r
	r[a.rd] = wr(a.sf, r[a.rn]-shiftReg(r[a.rm], a.shift(), a.amount(), a.sf))
}

// execADDSr executes ADDSr.
func (c *CPU) execADDSr(a *shiftedArgs, pc uint64) {
	r := &c.r
	r[a.rd] = c.addFlags(r[a.rn], shiftReg(r[a.rm], a.shift(), a.amount(), a.sf), 0, a.sf)
}

// execSUBSr executes SUBSr.
func (c *CPU) execSUBSr(a *shiftedArgs, pc uint64) {
	r := &c.r
	if a.sf {
		r[a.rd] = c.addFlags64(r[a.rn], ^shiftReg(r[a.rm], a.shift(), a.amount(), true), 1)
	} else {
		r[a.rd] = c.addFlags32(uint32(r[a.rn]), ^uint32(shiftReg(r[a.rm], a.shift(), a.amount(), false)), 1)
	}
}

// execADDx executes ADDx.
func (c *CPU) execADDx(a *extendedArgs, pc uint64) {
	r := &c.r
	r[a.rd] = wr(a.sf, r[a.rn]+extendReg(r[a.rm], a.extend(), a.amount()))
}

// execSUBx executes SUBx.
func (c *CPU) execSUBx(a *extendedArgs, pc uint64) {
	r := &c.r
	r[a.rd] = wr(a.sf, r[a.rn]-extendReg(r[a.rm], a.extend(), a.amount()))
}

// execADDSx executes ADDSx.
func (c *CPU) execADDSx(a *extendedArgs, pc uint64) {
	r := &c.r
	r[a.rd] = c.addFlags(r[a.rn], extendReg(r[a.rm], a.extend(), a.amount()), 0, a.sf)
}

// execSUBSx executes SUBSx.
func (c *CPU) execSUBSx(a *extendedArgs, pc uint64) {
	r := &c.r
	r[a.rd] = c.addFlags(r[a.rn], ^extendReg(r[a.rm], a.extend(), a.amount()), 1, a.sf)
}

// execADC executes ADC.
func (c *CPU) execADC(in *inst, pc uint64) {
	r := &c.r
	r[in.rd] = wr(in.sf, r[in.rn]+r[in.rm]+c.carry())
}

// execSBC executes SBC.
func (c *CPU) execSBC(in *inst, pc uint64) {
	r := &c.r
	r[in.rd] = wr(in.sf, r[in.rn]+^r[in.rm]+c.carry())
}

// execADCS executes ADCS.
func (c *CPU) execADCS(in *inst, pc uint64) {
	r := &c.r
	r[in.rd] = c.addFlags(r[in.rn], r[in.rm], c.carry(), in.sf)
}

// execSBCS executes SBCS.
func (c *CPU) execSBCS(in *inst, pc uint64) {
	r := &c.r
	r[in.rd] = c.addFlags(r[in.rn], ^r[in.rm], c.carry(), in.sf)
}

// execCCMP executes CCMN, CCMP.
func (c *CPU) execCCMP(a *ccmpArgs, pc uint64) {
	r := &c.r
	if c.cond(a.cond()) {
		y := a.imm
		if !a.immediate() {
			y = r[a.rm]
		}
		if a.op == opCCMP {
			c.addFlags(r[a.rn], ^y, 1, a.sf)
		} else {
			c.addFlags(r[a.rn], y, 0, a.sf)
		}
	} else {
		c.setNZCV(uint64(a.nzcv()) << 28)
	}
}

// execCSEL executes CSEL.
func (c *CPU) execCSEL(a *condArgs, pc uint64) {
	r := &c.r
	if c.cond(a.cond()) {
		r[a.rd] = wr(a.sf, r[a.rn])
	} else {
		r[a.rd] = wr(a.sf, r[a.rm])
	}
}

// execCSINC executes CSINC.
func (c *CPU) execCSINC(a *condArgs, pc uint64) {
	r := &c.r
	if c.cond(a.cond()) {
		r[a.rd] = wr(a.sf, r[a.rn])
	} else {
		r[a.rd] = wr(a.sf, r[a.rm]+1)
	}
}

// execCSINV executes CSINV.
func (c *CPU) execCSINV(a *condArgs, pc uint64) {
	r := &c.r
	if c.cond(a.cond()) {
		r[a.rd] = wr(a.sf, r[a.rn])
	} else {
		r[a.rd] = wr(a.sf, ^r[a.rm])
	}
}

// execCSNEG executes CSNEG.
func (c *CPU) execCSNEG(a *condArgs, pc uint64) {
	r := &c.r
	if c.cond(a.cond()) {
		r[a.rd] = wr(a.sf, r[a.rn])
	} else {
		r[a.rd] = wr(a.sf, -r[a.rm])
	}
}

// execUDIV executes UDIV.
func (c *CPU) execUDIV(in *inst, pc uint64) {
	r := &c.r
	r[in.rd] = udiv(r[in.rn], r[in.rm], in.sf)
}

// execSDIV executes SDIV.
func (c *CPU) execSDIV(in *inst, pc uint64) {
	r := &c.r
	r[in.rd] = sdiv(r[in.rn], r[in.rm], in.sf)
}

// execLSLV executes LSLV.
func (c *CPU) execLSLV(in *inst, pc uint64) {
	r := &c.r
	r[in.rd] = shiftReg(r[in.rn], 0, shiftAmount(r[in.rm], in.sf), in.sf)
}

// execLSRV executes LSRV.
func (c *CPU) execLSRV(in *inst, pc uint64) {
	r := &c.r
	r[in.rd] = shiftReg(r[in.rn], 1, shiftAmount(r[in.rm], in.sf), in.sf)
}

// execASRV executes ASRV.
func (c *CPU) execASRV(in *inst, pc uint64) {
	r := &c.r
	r[in.rd] = shiftReg(r[in.rn], 2, shiftAmount(r[in.rm], in.sf), in.sf)
}

// execRORV executes RORV.
func (c *CPU) execRORV(in *inst, pc uint64) {
	r := &c.r
	r[in.rd] = shiftReg(r[in.rn], 3, shiftAmount(r[in.rm], in.sf), in.sf)
}

// execCRC32 executes CRC32.
func (c *CPU) execCRC32(a *crcArgs, pc uint64) {
	r := &c.r
	r[a.rd] = uint64(crc32Step(uint32(r[a.rn]), r[a.rm], a.size(), a.castagnoli()))
}

// execRBIT executes RBIT.
func (c *CPU) execRBIT(in *inst, pc uint64) {
	r := &c.r
	if in.sf {
		r[in.rd] = bits.Reverse64(r[in.rn])
	} else {
		r[in.rd] = uint64(bits.Reverse32(uint32(r[in.rn])))
	}
}

// execREV16 executes REV16.
func (c *CPU) execREV16(in *inst, pc uint64) {
	r := &c.r
	x := r[in.rn]
	r[in.rd] = wr(in.sf, (x&0x00ff00ff00ff00ff)<<8|(x>>8)&0x00ff00ff00ff00ff)
}

// execREV32 executes REV32.
func (c *CPU) execREV32(in *inst, pc uint64) {
	r := &c.r
	x := bits.ReverseBytes64(r[in.rn])
	r[in.rd] = x<<32 | x>>32
}

// execREV executes REV.
func (c *CPU) execREV(in *inst, pc uint64) {
	r := &c.r
	if in.sf {
		r[in.rd] = bits.ReverseBytes64(r[in.rn])
	} else {
		r[in.rd] = uint64(bits.ReverseBytes32(uint32(r[in.rn])))
	}
}

// execCLZ executes CLZ.
func (c *CPU) execCLZ(in *inst, pc uint64) {
	r := &c.r
	if in.sf {
		r[in.rd] = uint64(bits.LeadingZeros64(r[in.rn]))
	} else {
		r[in.rd] = uint64(bits.LeadingZeros32(uint32(r[in.rn])))
	}
}

// execCLS executes CLS.
func (c *CPU) execCLS(in *inst, pc uint64) {
	r := &c.r
	x := r[in.rn]
	if in.sf {
		r[in.rd] = uint64(bits.LeadingZeros64((x>>1^x)&(1<<63-1)) - 1)
	} else {
		x32 := uint32(x)
		r[in.rd] = uint64(bits.LeadingZeros32((x32>>1^x32)&(1<<31-1)) - 1)
	}
}

// execMADD executes MADD.
func (c *CPU) execMADD(a *muladdArgs, pc uint64) {
	r := &c.r
	r[a.rd] = wr(a.sf, r[a.addend()]+r[a.rn]*r[a.rm])
}

// execMSUB executes MSUB.
func (c *CPU) execMSUB(a *muladdArgs, pc uint64) {
	r := &c.r
	r[a.rd] = wr(a.sf, r[a.addend()]-r[a.rn]*r[a.rm])
}

// execSMADDL executes SMADDL.
func (c *CPU) execSMADDL(a *muladdArgs, pc uint64) {
	r := &c.r
	r[a.rd] = r[a.addend()] + uint64(int64(int32(r[a.rn]))*int64(int32(r[a.rm])))
}

// execSMSUBL executes SMSUBL.
func (c *CPU) execSMSUBL(a *muladdArgs, pc uint64) {
	r := &c.r
	r[a.rd] = r[a.addend()] - uint64(int64(int32(r[a.rn]))*int64(int32(r[a.rm])))
}

// execUMADDL executes UMADDL.
func (c *CPU) execUMADDL(a *muladdArgs, pc uint64) {
	r := &c.r
	r[a.rd] = r[a.addend()] + uint64(uint32(r[a.rn]))*uint64(uint32(r[a.rm]))
}

// execUMSUBL executes UMSUBL.
func (c *CPU) execUMSUBL(a *muladdArgs, pc uint64) {
	r := &c.r
	r[a.rd] = r[a.addend()] - uint64(uint32(r[a.rn]))*uint64(uint32(r[a.rm]))
}

// execSMULH executes SMULH.
func (c *CPU) execSMULH(in *inst, pc uint64) {
	r := &c.r
	a, b := r[in.rn], r[in.rm]
	hi, _ := bits.Mul64(a, b)
	// Signed high half from the unsigned one: subtract the
	// other operand for each negative input.
	if int64(a) < 0 {
		hi -= b
	}
	if int64(b) < 0 {
		hi -= a
	}
	r[in.rd] = hi
}

// execUMULH executes UMULH.
func (c *CPU) execUMULH(in *inst, pc uint64) {
	r := &c.r
	hi, _ := bits.Mul64(r[in.rn], r[in.rm])
	r[in.rd] = hi
}

// execB executes B.
func (c *CPU) execB(in *inst, pc uint64) {
	c.pc = pc + in.imm
	c.pollIRQ()
}

// execBL executes BL.
func (c *CPU) execBL(in *inst, pc uint64) {
	r := &c.r
	r[30] = pc + 4
	c.pc = pc + in.imm
	c.pollIRQ()
}

// execBcond executes Bcond.
func (c *CPU) execBcond(a *condArgs, pc uint64) {
	if c.cond(a.cond()) {
		c.pc = pc + a.imm
		c.pollIRQ()
	}
}

// execCBZ executes CBZ.
func (c *CPU) execCBZ(in *inst, pc uint64) {
	r := &c.r
	if wr(in.sf, r[in.rn]) == 0 {
		c.pc = pc + in.imm
		c.pollIRQ()
	}
}

// execCBNZ executes CBNZ.
func (c *CPU) execCBNZ(in *inst, pc uint64) {
	r := &c.r
	if wr(in.sf, r[in.rn]) != 0 {
		c.pc = pc + in.imm
		c.pollIRQ()
	}
}

// execTBZ executes TBZ.
func (c *CPU) execTBZ(a *testbitArgs, pc uint64) {
	r := &c.r
	if r[a.rn]>>a.bit()&1 == 0 {
		c.pc = pc + a.imm
		c.pollIRQ()
	}
}

// execTBNZ executes TBNZ.
func (c *CPU) execTBNZ(a *testbitArgs, pc uint64) {
	r := &c.r
	if r[a.rn]>>a.bit()&1 != 0 {
		c.pc = pc + a.imm
		c.pollIRQ()
	}
}

// execBR executes BR, RET.
func (c *CPU) execBR(in *inst, pc uint64) {
	r := &c.r
	c.pc = r[in.rn]
	c.pollIRQ()
}

// execBLR executes BLR.
func (c *CPU) execBLR(in *inst, pc uint64) {
	r := &c.r
	t := r[in.rn] // read before the link write: BLR x30 branches to the old x30
	r[30] = pc + 4
	c.pc = t
	c.pollIRQ()
}

// execLDRo executes LDRo.
func (c *CPU) execLDRo(a *ldstArgs, pc uint64) {
	r := &c.r
	if v, ok := c.load(r[a.rn]+a.imm, a.size()); ok {
		r[a.rd] = extendLoad(v, a.size(), a.ext())
	}
}

// execSTRo executes STRo.
func (c *CPU) execSTRo(a *ldstArgs, pc uint64) {
	r := &c.r
	c.store(r[a.rn]+a.imm, a.size(), r[a.rd])
}

// execLDRpre executes LDRpre.
func (c *CPU) execLDRpre(a *ldstArgs, pc uint64) {
	r := &c.r
	va := r[a.rn] + a.imm
	if v, ok := c.load(va, a.size()); ok {
		r[a.rn] = va
		r[a.rd] = extendLoad(v, a.size(), a.ext())
	}
}

// execLDRpost executes LDRpost.
func (c *CPU) execLDRpost(a *ldstArgs, pc uint64) {
	r := &c.r
	va := r[a.rn]
	if v, ok := c.load(va, a.size()); ok {
		r[a.rn] = va + a.imm
		r[a.rd] = extendLoad(v, a.size(), a.ext())
	}
}

// execSTRpre executes STRpre.
func (c *CPU) execSTRpre(a *ldstArgs, pc uint64) {
	r := &c.r
	va := r[a.rn] + a.imm
	if c.store(va, a.size(), r[a.rd]) {
		r[a.rn] = va
	}
}

// execSTRpost executes STRpost.
func (c *CPU) execSTRpost(a *ldstArgs, pc uint64) {
	r := &c.r
	va := r[a.rn]
	if c.store(va, a.size(), r[a.rd]) {
		r[a.rn] = va + a.imm
	}
}

// execLDRreg executes LDRreg.
func (c *CPU) execLDRreg(a *ldstRegArgs, pc uint64) {
	r := &c.r
	va := r[a.rn] + extendReg(r[a.rm], a.extend(), a.shift())
	if v, ok := c.load(va, a.size()); ok {
		r[a.rd] = extendLoad(v, a.size(), a.ext())
	}
}

// execSTRreg executes STRreg.
func (c *CPU) execSTRreg(a *ldstRegArgs, pc uint64) {
	r := &c.r
	c.store(r[a.rn]+extendReg(r[a.rm], a.extend(), a.shift()), a.size(), r[a.rd])
}

// execLDRlit executes LDRlit.
func (c *CPU) execLDRlit(a *ldstArgs, pc uint64) {
	r := &c.r
	if v, ok := c.load(pc+a.imm, a.size()); ok {
		r[a.rd] = extendLoad(v, a.size(), a.ext())
	}
}

// execLDXR executes LDXR.
func (c *CPU) execLDXR(a *ldstArgs, pc uint64) {
	r := &c.r
	va := r[a.rn]
	if !c.aligned(va, a.size(), false) {
		return
	}
	if v, ok := c.load(va, a.size()); ok {
		r[a.rd] = v
		c.excVal = v
		c.setExclusive(va, a.size())
	}
}

// execLDTR executes LDTR.
func (c *CPU) execLDTR(a *ldstArgs, pc uint64) {
	r := &c.r
	if v, ok := c.loadAt(r[a.rn]+a.imm, a.size(), 0); ok {
		r[a.rd] = extendLoad(v, a.size(), a.ext())
	}
}

// execSTTR executes STTR.
func (c *CPU) execSTTR(a *ldstArgs, pc uint64) {
	r := &c.r
	c.storeAt(r[a.rn]+a.imm, a.size(), r[a.rd], 0)
}

// execLDAR executes LDAR.
func (c *CPU) execLDAR(a *ldstArgs, pc uint64) {
	r := &c.r
	va := r[a.rn]
	if !c.aligned(va, a.size(), false) {
		return
	}
	if v, ok := c.load(va, a.size()); ok {
		r[a.rd] = v
	}
}

// execSTLR executes STLR.
func (c *CPU) execSTLR(a *ldstArgs, pc uint64) {
	r := &c.r
	va := r[a.rn]
	if c.aligned(va, a.size(), true) {
		c.store(va, a.size(), r[a.rd])
	}
}

// execNOP executes NOP.
func (c *CPU) execNOP(in *inst, pc uint64) {

}

// execDMB executes DMB and DSB: nothing to do, as every access of the
// interpreter is sequentially consistent (parallel mode's are atomics).
func (c *CPU) execDMB(in *inst, pc uint64) {

}

// execISB executes ISB.
func (c *CPU) execISB(in *inst, pc uint64) {
	if c.par {
		// Context synchronization: code another vCPU patched (and
		// invalidated) before this CPU observed its flag runs from now
		// on. Deterministic mode invalidates every CPU's page at the
		// store itself.
		c.syncCode()
	}
}

// execWFI executes WFI.
func (c *CPU) execWFI(in *inst, pc, n uint64) bool {
	// WFI completes at once when an interrupt is pending, masked or
	// not; only then may it sleep, or (at EL0 without
	// SCTLR_EL1.nTWI) trap, in the order QEMU checks them.
	if c.lines.Load() != 0 {
		c.pollIRQ()
		return false
	}
	if c.el == 0 && c.sys[SCTLR_EL1]&sctlrNTW == 0 {
		c.takeException(ecWFx, wfxISSCondAlways, pc)
		return false
	}
	c.wfi = true
	return true
}

// execWFE executes WFE and YIELD: hints that the CPU waits for another
// (a spinlock's holder, a flag's writer). WFE may complete at any time,
// so neither sleeps. In deterministic mode both end the vCPU's slice,
// so that the vCPU it waits for runs instead of it spinning out its
// quantum, as QEMU yields at them; in parallel mode the others run
// meanwhile, and both are NOPs.
func (c *CPU) execWFE(in *inst, pc, n uint64) bool {
	if c.par {
		return false
	}
	c.yielded = true
	return true
}

// execCLREX executes CLREX.
func (c *CPU) execCLREX(in *inst, pc uint64) {
	c.clearExclusive()
}

// execMSRi executes MSRi.
func (c *CPU) execMSRi(a *pstateArgs, pc uint64) {
	if c.el == 0 && c.el0Denied(a.el0(), a.trapBit(), a.trapISS(), pc) {
		return
	}
	switch a.field() {
	case pstateSPSel:
		c.setMode(c.el, uint8(a.imm&1))
	case pstateDAIFSet:
		c.daif |= uint8(a.imm)
	case pstateDAIFClr:
		c.daif &^= uint8(a.imm)
		c.pollIRQ()
	}
}

// execMRS executes MRS.
func (c *CPU) execMRS(a *sysArgs, pc, n uint64) bool {
	r := &c.r
	if c.el == 0 && a.el0() != el0OK && c.el0Denied(a.el0(), a.trapBit(), a.trapISS(), pc) {
		return false
	}
	r[a.rd] = c.readSys(SysReg(a.imm), n-1)
	return false
}

// execMRSzero executes MRSzero.
func (c *CPU) execMRSzero(in *inst, pc uint64) {
	r := &c.r
	if c.el == 0 {
		c.undefined(pc)
		return
	}
	r[in.rd] = 0
}

// execMSR executes MSR.
func (c *CPU) execMSR(a *sysArgs, pc, n uint64) bool {
	r := &c.r
	if c.el == 0 && a.el0() != el0OK && c.el0Denied(a.el0(), a.trapBit(), a.trapISS(), pc) {
		return false
	}
	sr := SysReg(a.imm)
	if sr == SP_EL0 && c.spsel == 0 {
		c.undefined(pc) // SP_EL0 is not accessible while it is the current SP
		return false
	}
	c.writeSys(sr, r[a.rn], n-1)
	switch {
	case c.dbgActive:
		// The write enabled a debug feature (MDSCR_EL1, a
		// breakpoint, the OS lock): continue on the debug path.
		return true
	case sr == DAIF:
		c.pollIRQ()
	case sr >= CNTP_TVAL_EL0 && sr <= CNTV_CVAL_EL0:
		// The scheduler evaluates the timers between slices and
		// sizes slices to the next deadline: end this one so a
		// timer change takes effect at a deterministic point.
		return true
	}
	return false
}

// execSYS executes SYS.
func (c *CPU) execSYS(a *sysArgs, pc uint64) {
	// Cache maintenance has no effect here; at EL0 it may trap.
	if c.el == 0 {
		c.el0Denied(a.el0(), a.trapBit(), a.trapISS(), pc)
	}
}

// execAT executes AT.
func (c *CPU) execAT(a *atArgs, pc uint64) {
	r := &c.r
	if c.el == 0 {
		c.undefined(pc)
		return
	}
	c.at(a.kind(), r[a.rn])
}

// execTLBI executes TLBI.
func (c *CPU) execTLBI(a *tlbiArgs, pc uint64) {
	r := &c.r
	m := c.m
	if c.el == 0 {
		c.undefined(pc)
		return
	}
	if a.broadcast() {
		c.tlbi(a.operation(), r[a.rn])
		for _, o := range m.cpus {
			switch {
			case o == c:
			case m.par != nil:
				// Another goroutine runs o: over-invalidate at
				// its next poll point instead of touching its
				// TLB from here.
				o.tlbFlushReq.Store(true)
			default:
				o.tlbi(a.operation(), r[a.rn])
			}
		}
	} else {
		c.tlbi(a.operation(), r[a.rn])
	}
}

// execDCZVA executes DCZVA.
func (c *CPU) execDCZVA(a *sysArgs, pc uint64) {
	r := &c.r
	if c.el == 0 && c.el0Denied(a.el0(), a.trapBit(), a.trapISS(), pc) {
		return
	}
	va := r[a.rn] &^ (dczBlock - 1)
	for i := uint64(0); i < dczBlock; i += 8 {
		if !c.store(va+i, 3, 0) {
			return
		}
	}
}

// execSVC executes SVC.
func (c *CPU) execSVC(in *inst, pc uint64) {
	if c.dbg.stepping {
		c.ss = false // SVC completes: the step is done (SPSR.SS = 0)
	}
	c.takeException(ecSVC64, uint32(in.imm), pc+4)
}

// execBRK executes BRK.
func (c *CPU) execBRK(in *inst, pc uint64) {
	c.takeException(ecBRK64, uint32(in.imm), pc)
}

// execHVC executes HVC.
func (c *CPU) execHVC(in *inst, pc, n uint64) bool {
	m := c.m
	if c.el == 0 {
		c.undefined(pc)
		return false
	}
	if c.dbg.stepping {
		c.ss = false
	}
	if in.imm == 0 {
		return c.psci()
	}
	fn := m.hostcall(uint16(in.imm))
	if fn == nil {
		c.undefined(pc)
		return false
	}
	m.hostcallCount.Add(1)
	c.retired += n // let the handler see an up-to-date count
	m.hostcallInSlice.Store(n)
	err := m.callHostcall(c, fn)
	m.hostcallInSlice.Store(0)
	c.retired -= n
	if err != nil {
		c.err = fmt.Errorf("machine: hostcall %#x at pc %#x on cpu %d: %w", in.imm, pc, c.index, err)
		return true
	}
	if m.off.Load() {
		return true
	}
	return false
}

// execERET executes ERET.
func (c *CPU) execERET(in *inst, pc uint64) {
	if c.el == 0 {
		c.undefined(pc)
		return
	}
	c.eret()
	c.pollIRQ()
}

// execUndef takes the undefined-instruction exception for an unallocated
// or unimplemented word (kept in imm for the statistics).
func (c *CPU) execUndef(in *inst, pc uint64) {
	c.undefinedWord(pc, uint32(in.imm))
}
