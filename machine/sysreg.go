package machine

import "strconv"

// Identification register values: a Cortex-A57-like core implementing
// AArch64 at EL0 and EL1 only, with FP and Advanced SIMD, the CRC32
// extension, the Armv8.1 atomics (LSE) and LDAPR (FEAT_LRCPC).
const (
	midrValue      = 0x411fd070 // Arm Cortex-A57 r1p0
	idAA64PFR0     = 0x00000011 // EL0, EL1 AArch64 only; FP and AdvSIMD implemented (no FP16 arithmetic); no EL2/EL3
	idAA64DFR0     = 0x00305006 // Armv8 debug architecture, 6 breakpoints, 4 watchpoints, no PMU
	idAA64ISAR0    = 0x00210000 // CRC32 instructions; Atomic = 0b0010 (LSE)
	idAA64ISAR1    = 0x00100000 // LRCPC = 1: LDAPR, LDAPRB, LDAPRH
	idAA64MMFR0    = 0x0f001024 // 44-bit PA, 16-bit ASID, 4K granule only, little-endian only
	ctrValue       = 0x8444c004 // 64-byte lines, 64-byte exclusive granule, PIPT I-cache (as QEMU's A57)
	dczidValue     = 4          // DC ZVA block: 2^4 words = 64 bytes
	dczBlock       = 64
	clidrValue     = 0x0a200023 // L1 I+D, L2 unified, as the A57
	cntFrequency   = 62500000   // CNTFRQ_EL0, as QEMU virt (62.5 MHz)
	oslsrOSLM      = 0x8        // OS lock implemented
	oslsrOSLK      = 0x2        // OS lock locked
	vbarReservedLo = 0x7ff      // VBAR_EL1 bits [10:0] are RES0
)

// The system register table (constants, names, encodings, access) is
// generated from sysregs.txt, one line a register.
//go:generate go run ./internal/sysreggen -in sysregs.txt -out sysreg_table.go

// SysReg names a system register, after the Arm ARM.
type SysReg int

// The number of hardware breakpoints and watchpoints.
const (
	numBRPs = 6
	numWRPs = 4
)

// sysRegKey packs op0, op1, CRn, CRm, op2 as in bits [20:5] of MRS/MSR.
func sysRegKey(op0, op1, crn, crm, op2 uint32) uint32 {
	return op0<<14 | op1<<11 | crn<<7 | crm<<3 | op2
}

// sysRegAccess describes how the guest may access a register.
type sysRegAccess struct {
	read, write       bool // at EL1
	el0Read, el0Write bool
}

func itoa(i int) string { return strconv.Itoa(i) }

// counter returns the system counter: instructions executed by every CPU,
// which keeps guest time deterministic. inSlice is the number executed by
// the running CPU in its current slice and not yet added to the total.
func (c *CPU) counter(inSlice uint64) uint64 {
	return c.m.systemCounter(inSlice)
}

// SysReg returns system register r as the host sees it (no access checks).
// The counters read as of the instruction a running hostcall stopped at.
func (c *CPU) SysReg(r SysReg) uint64 { return c.readSys(r, c.m.hostcallInSlice.Load()) }

// SetSysReg sets system register r as the host sees it (no access checks;
// writes to read-only identification registers are ignored).
func (c *CPU) SetSysReg(r SysReg, v uint64) { c.writeSys(r, v, 0) }

func (c *CPU) readSys(r SysReg, inSlice uint64) uint64 {
	switch r {
	case SP_EL0:
		if c.el == 0 || c.spsel == 0 {
			return c.r[regSP]
		}
		return c.spEL0
	case SP_EL1:
		if c.el == 1 && c.spsel == 1 {
			return c.r[regSP]
		}
		return c.spEL1
	case SPSel:
		return uint64(c.spsel)
	case CurrentEL:
		return uint64(c.el) << 2
	case DAIF:
		return uint64(c.daif) << 6
	case NZCV:
		return c.nzcv()
	case MIDR_EL1:
		return midrValue
	case MPIDR_EL1:
		return 1<<31 | uint64(c.index&0xff) // bit 31 RES1; Aff0 = CPU index
	case ID_AA64PFR0_EL1:
		return idAA64PFR0
	case ID_AA64DFR0_EL1:
		return idAA64DFR0
	case ID_AA64ISAR0_EL1:
		return idAA64ISAR0
	case ID_AA64ISAR1_EL1:
		return idAA64ISAR1
	case ID_AA64MMFR0_EL1:
		return idAA64MMFR0
	case REVIDR_EL1, ID_AA64PFR1_EL1, ID_AA64DFR1_EL1, ID_AA64AFR0_EL1, ID_AA64AFR1_EL1,
		ID_AA64MMFR1_EL1, ID_AA64MMFR2_EL1:
		return 0
	case CLIDR_EL1:
		return clidrValue
	case CCSIDR_EL1:
		return 0x701fe01a // 32 KiB, 2-way, 64-byte lines (A57 L1D)
	case CTR_EL0:
		return ctrValue
	case DCZID_EL0:
		// DZP tells EL0 whether DC ZVA is prohibited (SCTLR_EL1.DZE).
		if c.el == 0 && c.sys[SCTLR_EL1]&sctlrDZE == 0 {
			return dczidValue | 1<<4
		}
		return dczidValue
	case CNTPCT_EL0, CNTVCT_EL0:
		return c.counter(inSlice)
	case CNTP_TVAL_EL0:
		return uint64(uint32(c.sys[CNTP_CVAL_EL0] - c.counter(inSlice)))
	case CNTV_TVAL_EL0:
		return uint64(uint32(c.sys[CNTV_CVAL_EL0] - c.counter(inSlice)))
	case CNTP_CTL_EL0, CNTV_CTL_EL0:
		// ISTATUS (bit 2) reports the timer condition even though no
		// interrupt is wired yet.
		v := c.sys[r] &^ 4
		cval := c.sys[CNTP_CVAL_EL0]
		if r == CNTV_CTL_EL0 {
			cval = c.sys[CNTV_CVAL_EL0]
		}
		if v&1 != 0 && c.counter(inSlice) >= cval {
			v |= 4
		}
		return v
	}
	if r < 0 || r >= numSysRegs {
		return 0
	}
	return c.sys[r]
}

func (c *CPU) writeSys(r SysReg, v, inSlice uint64) {
	switch r {
	case SP_EL0:
		if c.el == 0 || c.spsel == 0 {
			c.r[regSP] = v
		} else {
			c.spEL0 = v
		}
	case SP_EL1:
		if c.el == 1 && c.spsel == 1 {
			c.r[regSP] = v
		} else {
			c.spEL1 = v
		}
	case SPSel:
		c.setMode(c.el, uint8(v&1))
	case CurrentEL:
		c.setMode(uint8(v>>2)&1, c.spsel) // host only: the guest cannot write it
	case DAIF:
		c.daif = uint8(v>>6) & 0xf
	case NZCV:
		c.setNZCV(v)
	case VBAR_EL1:
		c.sys[r] = v &^ vbarReservedLo
	case SCTLR_EL1, TTBR0_EL1, TTBR1_EL1, TCR_EL1, MAIR_EL1:
		c.sys[r] = v
		c.translationChanged(r)
	case OSLAR_EL1:
		c.sys[OSLSR_EL1] = oslsrOSLM | (v&1)<<1
		c.debugChanged()
	case MDSCR_EL1:
		c.sys[r] = v
		c.debugChanged()
	case CNTP_TVAL_EL0:
		c.sys[CNTP_CVAL_EL0] = c.counter(inSlice) + uint64(int64(int32(v)))
	case CNTV_TVAL_EL0:
		c.sys[CNTV_CVAL_EL0] = c.counter(inSlice) + uint64(int64(int32(v)))
	case CNTP_CTL_EL0, CNTV_CTL_EL0:
		c.sys[r] = v & 3 // ISTATUS is read-only
	case MIDR_EL1, MPIDR_EL1, REVIDR_EL1, ID_AA64PFR0_EL1, ID_AA64PFR1_EL1, ID_AA64DFR0_EL1,
		ID_AA64DFR1_EL1, ID_AA64AFR0_EL1, ID_AA64AFR1_EL1, ID_AA64ISAR0_EL1, ID_AA64ISAR1_EL1,
		ID_AA64MMFR0_EL1, ID_AA64MMFR1_EL1, ID_AA64MMFR2_EL1, CLIDR_EL1, CCSIDR_EL1, CTR_EL0,
		DCZID_EL0, CNTPCT_EL0, CNTVCT_EL0:
		// Read-only.
	default:
		if r >= DBGBVR0_EL1 && r <= MDCCINT_EL1 {
			c.sys[r] = v
			c.debugChanged()
			return
		}
		if r >= 0 && r < numSysRegs {
			c.sys[r] = v
		}
	}
}
