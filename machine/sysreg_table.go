// The system register table: names, encodings and guest access rights.

package machine

// SysReg names a system register, after the Arm ARM.
type SysReg int

// System registers. Register names follow the Arm ARM, hence the underscores.
const (
	SCTLR_EL1        SysReg = iota // op0=3 op1=0 CRn=1 CRm=0 op2=0
	ACTLR_EL1                      // op0=3 op1=0 CRn=1 CRm=0 op2=1
	CPACR_EL1                      // op0=3 op1=0 CRn=1 CRm=0 op2=2
	TTBR0_EL1                      // op0=3 op1=0 CRn=2 CRm=0 op2=0
	TTBR1_EL1                      // op0=3 op1=0 CRn=2 CRm=0 op2=1
	TCR_EL1                        // op0=3 op1=0 CRn=2 CRm=0 op2=2
	SPSR_EL1                       // op0=3 op1=0 CRn=4 CRm=0 op2=0
	ELR_EL1                        // op0=3 op1=0 CRn=4 CRm=0 op2=1
	SP_EL0                         // op0=3 op1=0 CRn=4 CRm=1 op2=0
	SP_EL1                         // op0=3 op1=4 CRn=4 CRm=1 op2=0
	SPSel                          // op0=3 op1=0 CRn=4 CRm=2 op2=0
	CurrentEL                      // op0=3 op1=0 CRn=4 CRm=2 op2=2
	DAIF                           // op0=3 op1=3 CRn=4 CRm=2 op2=1
	NZCV                           // op0=3 op1=3 CRn=4 CRm=2 op2=0
	AFSR0_EL1                      // op0=3 op1=0 CRn=5 CRm=1 op2=0
	AFSR1_EL1                      // op0=3 op1=0 CRn=5 CRm=1 op2=1
	ESR_EL1                        // op0=3 op1=0 CRn=5 CRm=2 op2=0
	FAR_EL1                        // op0=3 op1=0 CRn=6 CRm=0 op2=0
	PAR_EL1                        // op0=3 op1=0 CRn=7 CRm=4 op2=0
	MAIR_EL1                       // op0=3 op1=0 CRn=10 CRm=2 op2=0
	AMAIR_EL1                      // op0=3 op1=0 CRn=10 CRm=3 op2=0
	VBAR_EL1                       // op0=3 op1=0 CRn=12 CRm=0 op2=0
	CONTEXTIDR_EL1                 // op0=3 op1=0 CRn=13 CRm=0 op2=1
	TPIDR_EL1                      // op0=3 op1=0 CRn=13 CRm=0 op2=4
	TPIDR_EL0                      // op0=3 op1=3 CRn=13 CRm=0 op2=2
	TPIDRRO_EL0                    // op0=3 op1=3 CRn=13 CRm=0 op2=3
	MDSCR_EL1                      // op0=2 op1=0 CRn=0 CRm=2 op2=2
	OSLAR_EL1                      // op0=2 op1=0 CRn=1 CRm=0 op2=4
	OSLSR_EL1                      // op0=2 op1=0 CRn=1 CRm=1 op2=4
	OSDLR_EL1                      // op0=2 op1=0 CRn=1 CRm=3 op2=4
	MIDR_EL1                       // op0=3 op1=0 CRn=0 CRm=0 op2=0
	MPIDR_EL1                      // op0=3 op1=0 CRn=0 CRm=0 op2=5
	REVIDR_EL1                     // op0=3 op1=0 CRn=0 CRm=0 op2=6
	ID_AA64PFR0_EL1                // op0=3 op1=0 CRn=0 CRm=4 op2=0
	ID_AA64PFR1_EL1                // op0=3 op1=0 CRn=0 CRm=4 op2=1
	ID_AA64DFR0_EL1                // op0=3 op1=0 CRn=0 CRm=5 op2=0
	ID_AA64DFR1_EL1                // op0=3 op1=0 CRn=0 CRm=5 op2=1
	ID_AA64AFR0_EL1                // op0=3 op1=0 CRn=0 CRm=5 op2=4
	ID_AA64AFR1_EL1                // op0=3 op1=0 CRn=0 CRm=5 op2=5
	ID_AA64ISAR0_EL1               // op0=3 op1=0 CRn=0 CRm=6 op2=0
	ID_AA64ISAR1_EL1               // op0=3 op1=0 CRn=0 CRm=6 op2=1
	ID_AA64MMFR0_EL1               // op0=3 op1=0 CRn=0 CRm=7 op2=0
	ID_AA64MMFR1_EL1               // op0=3 op1=0 CRn=0 CRm=7 op2=1
	ID_AA64MMFR2_EL1               // op0=3 op1=0 CRn=0 CRm=7 op2=2
	CLIDR_EL1                      // op0=3 op1=1 CRn=0 CRm=0 op2=1
	CCSIDR_EL1                     // op0=3 op1=1 CRn=0 CRm=0 op2=0
	CSSELR_EL1                     // op0=3 op1=2 CRn=0 CRm=0 op2=0
	CTR_EL0                        // op0=3 op1=3 CRn=0 CRm=0 op2=1
	DCZID_EL0                      // op0=3 op1=3 CRn=0 CRm=0 op2=7
	CNTFRQ_EL0                     // op0=3 op1=3 CRn=14 CRm=0 op2=0
	CNTPCT_EL0                     // op0=3 op1=3 CRn=14 CRm=0 op2=1
	CNTVCT_EL0                     // op0=3 op1=3 CRn=14 CRm=0 op2=2
	CNTKCTL_EL1                    // op0=3 op1=0 CRn=14 CRm=1 op2=0
	CNTP_TVAL_EL0                  // op0=3 op1=3 CRn=14 CRm=2 op2=0
	CNTP_CTL_EL0                   // op0=3 op1=3 CRn=14 CRm=2 op2=1
	CNTP_CVAL_EL0                  // op0=3 op1=3 CRn=14 CRm=2 op2=2
	CNTV_TVAL_EL0                  // op0=3 op1=3 CRn=14 CRm=3 op2=0
	CNTV_CTL_EL0                   // op0=3 op1=3 CRn=14 CRm=3 op2=1
	CNTV_CVAL_EL0                  // op0=3 op1=3 CRn=14 CRm=3 op2=2

	// The debug breakpoint and watchpoint registers: DBGBVR<n>_EL1 is
	// DBGBVR0_EL1+n, and so on.
	DBGBVR0_EL1                         // op0=2 op1=0 CRn=0 CRm=n op2=4
	DBGBCR0_EL1 = DBGBVR0_EL1 + numBRPs // op0=2 op1=0 CRn=0 CRm=n op2=5
	DBGWVR0_EL1 = DBGBCR0_EL1 + numBRPs // op0=2 op1=0 CRn=0 CRm=n op2=6
	DBGWCR0_EL1 = DBGWVR0_EL1 + numWRPs // op0=2 op1=0 CRn=0 CRm=n op2=7
	MDCCINT_EL1 = DBGWCR0_EL1 + numWRPs // op0=2 op1=0 CRn=0 CRm=2 op2=0

	numSysRegs = MDCCINT_EL1 + 1 // not a register: the count
)

// The number of hardware breakpoints and watchpoints.
const (
	numBRPs = 6
	numWRPs = 4
)

// String returns the Arm ARM name of the register.
func (r SysReg) String() string {
	switch r {
	case SCTLR_EL1:
		return "SCTLR_EL1"
	case ACTLR_EL1:
		return "ACTLR_EL1"
	case CPACR_EL1:
		return "CPACR_EL1"
	case TTBR0_EL1:
		return "TTBR0_EL1"
	case TTBR1_EL1:
		return "TTBR1_EL1"
	case TCR_EL1:
		return "TCR_EL1"
	case SPSR_EL1:
		return "SPSR_EL1"
	case ELR_EL1:
		return "ELR_EL1"
	case SP_EL0:
		return "SP_EL0"
	case SP_EL1:
		return "SP_EL1"
	case SPSel:
		return "SPSel"
	case CurrentEL:
		return "CurrentEL"
	case DAIF:
		return "DAIF"
	case NZCV:
		return "NZCV"
	case AFSR0_EL1:
		return "AFSR0_EL1"
	case AFSR1_EL1:
		return "AFSR1_EL1"
	case ESR_EL1:
		return "ESR_EL1"
	case FAR_EL1:
		return "FAR_EL1"
	case PAR_EL1:
		return "PAR_EL1"
	case MAIR_EL1:
		return "MAIR_EL1"
	case AMAIR_EL1:
		return "AMAIR_EL1"
	case VBAR_EL1:
		return "VBAR_EL1"
	case CONTEXTIDR_EL1:
		return "CONTEXTIDR_EL1"
	case TPIDR_EL1:
		return "TPIDR_EL1"
	case TPIDR_EL0:
		return "TPIDR_EL0"
	case TPIDRRO_EL0:
		return "TPIDRRO_EL0"
	case MDSCR_EL1:
		return "MDSCR_EL1"
	case OSLAR_EL1:
		return "OSLAR_EL1"
	case OSLSR_EL1:
		return "OSLSR_EL1"
	case OSDLR_EL1:
		return "OSDLR_EL1"
	case MIDR_EL1:
		return "MIDR_EL1"
	case MPIDR_EL1:
		return "MPIDR_EL1"
	case REVIDR_EL1:
		return "REVIDR_EL1"
	case ID_AA64PFR0_EL1:
		return "ID_AA64PFR0_EL1"
	case ID_AA64PFR1_EL1:
		return "ID_AA64PFR1_EL1"
	case ID_AA64DFR0_EL1:
		return "ID_AA64DFR0_EL1"
	case ID_AA64DFR1_EL1:
		return "ID_AA64DFR1_EL1"
	case ID_AA64AFR0_EL1:
		return "ID_AA64AFR0_EL1"
	case ID_AA64AFR1_EL1:
		return "ID_AA64AFR1_EL1"
	case ID_AA64ISAR0_EL1:
		return "ID_AA64ISAR0_EL1"
	case ID_AA64ISAR1_EL1:
		return "ID_AA64ISAR1_EL1"
	case ID_AA64MMFR0_EL1:
		return "ID_AA64MMFR0_EL1"
	case ID_AA64MMFR1_EL1:
		return "ID_AA64MMFR1_EL1"
	case ID_AA64MMFR2_EL1:
		return "ID_AA64MMFR2_EL1"
	case CLIDR_EL1:
		return "CLIDR_EL1"
	case CCSIDR_EL1:
		return "CCSIDR_EL1"
	case CSSELR_EL1:
		return "CSSELR_EL1"
	case CTR_EL0:
		return "CTR_EL0"
	case DCZID_EL0:
		return "DCZID_EL0"
	case CNTFRQ_EL0:
		return "CNTFRQ_EL0"
	case CNTPCT_EL0:
		return "CNTPCT_EL0"
	case CNTVCT_EL0:
		return "CNTVCT_EL0"
	case CNTKCTL_EL1:
		return "CNTKCTL_EL1"
	case CNTP_TVAL_EL0:
		return "CNTP_TVAL_EL0"
	case CNTP_CTL_EL0:
		return "CNTP_CTL_EL0"
	case CNTP_CVAL_EL0:
		return "CNTP_CVAL_EL0"
	case CNTV_TVAL_EL0:
		return "CNTV_TVAL_EL0"
	case CNTV_CTL_EL0:
		return "CNTV_CTL_EL0"
	case CNTV_CVAL_EL0:
		return "CNTV_CVAL_EL0"
	}
	switch {
	case r >= DBGBVR0_EL1 && r < DBGBCR0_EL1:
		return "DBGBVR" + itoa(int(r-DBGBVR0_EL1)) + "_EL1"
	case r >= DBGBCR0_EL1 && r < DBGWVR0_EL1:
		return "DBGBCR" + itoa(int(r-DBGBCR0_EL1)) + "_EL1"
	case r >= DBGWVR0_EL1 && r < DBGWCR0_EL1:
		return "DBGWVR" + itoa(int(r-DBGWVR0_EL1)) + "_EL1"
	case r >= DBGWCR0_EL1 && r < MDCCINT_EL1:
		return "DBGWCR" + itoa(int(r-DBGWCR0_EL1)) + "_EL1"
	case r == MDCCINT_EL1:
		return "MDCCINT_EL1"
	}
	return "SysReg(" + itoa(int(r)) + ")"
}

// sysRegKey packs op0, op1, CRn, CRm, op2 as in bits [20:5] of MRS/MSR.
func sysRegKey(op0, op1, crn, crm, op2 uint32) uint32 {
	return op0<<14 | op1<<11 | crn<<7 | crm<<3 | op2
}

// sysRegAccess describes how the guest may access a register.
type sysRegAccess struct {
	read, write       bool // at EL1
	el0Read, el0Write bool
}

// lookupSysReg maps an MRS/MSR encoding key to a register and its access
// rights; ok is false for encodings the machine does not implement.
func lookupSysReg(key uint32) (r SysReg, acc sysRegAccess, ok bool) {
	// op0=2 op1=0 CRn=0: the breakpoint and watchpoint registers.
	if key&^0x7f == 0x8000 {
		n, op2 := SysReg(key>>3&15), key&7
		rw := sysRegAccess{true, true, false, false}
		switch {
		case op2 == 4 && n < numBRPs:
			return DBGBVR0_EL1 + n, rw, true
		case op2 == 5 && n < numBRPs:
			return DBGBCR0_EL1 + n, rw, true
		case op2 == 6 && n < numWRPs:
			return DBGWVR0_EL1 + n, rw, true
		case op2 == 7 && n < numWRPs:
			return DBGWCR0_EL1 + n, rw, true
		case n == 2 && op2 == 0:
			return MDCCINT_EL1, rw, true
		}
	}
	switch key {
	case 0xc080: // SCTLR_EL1
		return SCTLR_EL1, sysRegAccess{true, true, false, false}, true
	case 0xc081: // ACTLR_EL1
		return ACTLR_EL1, sysRegAccess{true, true, false, false}, true
	case 0xc082: // CPACR_EL1
		return CPACR_EL1, sysRegAccess{true, true, false, false}, true
	case 0xc100: // TTBR0_EL1
		return TTBR0_EL1, sysRegAccess{true, true, false, false}, true
	case 0xc101: // TTBR1_EL1
		return TTBR1_EL1, sysRegAccess{true, true, false, false}, true
	case 0xc102: // TCR_EL1
		return TCR_EL1, sysRegAccess{true, true, false, false}, true
	case 0xc200: // SPSR_EL1
		return SPSR_EL1, sysRegAccess{true, true, false, false}, true
	case 0xc201: // ELR_EL1
		return ELR_EL1, sysRegAccess{true, true, false, false}, true
	case 0xc208: // SP_EL0
		return SP_EL0, sysRegAccess{true, true, false, false}, true
	case 0xc210: // SPSel
		return SPSel, sysRegAccess{true, true, false, false}, true
	case 0xc212: // CurrentEL
		return CurrentEL, sysRegAccess{true, false, false, false}, true
	case 0xda11: // DAIF
		return DAIF, sysRegAccess{true, true, false, false}, true
	case 0xda10: // NZCV
		return NZCV, sysRegAccess{true, true, true, true}, true
	case 0xc288: // AFSR0_EL1
		return AFSR0_EL1, sysRegAccess{true, true, false, false}, true
	case 0xc289: // AFSR1_EL1
		return AFSR1_EL1, sysRegAccess{true, true, false, false}, true
	case 0xc290: // ESR_EL1
		return ESR_EL1, sysRegAccess{true, true, false, false}, true
	case 0xc300: // FAR_EL1
		return FAR_EL1, sysRegAccess{true, true, false, false}, true
	case 0xc3a0: // PAR_EL1
		return PAR_EL1, sysRegAccess{true, true, false, false}, true
	case 0xc510: // MAIR_EL1
		return MAIR_EL1, sysRegAccess{true, true, false, false}, true
	case 0xc518: // AMAIR_EL1
		return AMAIR_EL1, sysRegAccess{true, true, false, false}, true
	case 0xc600: // VBAR_EL1
		return VBAR_EL1, sysRegAccess{true, true, false, false}, true
	case 0xc681: // CONTEXTIDR_EL1
		return CONTEXTIDR_EL1, sysRegAccess{true, true, false, false}, true
	case 0xc684: // TPIDR_EL1
		return TPIDR_EL1, sysRegAccess{true, true, false, false}, true
	case 0xde82: // TPIDR_EL0
		return TPIDR_EL0, sysRegAccess{true, true, true, true}, true
	case 0xde83: // TPIDRRO_EL0
		return TPIDRRO_EL0, sysRegAccess{true, true, true, false}, true
	case 0x8012: // MDSCR_EL1
		return MDSCR_EL1, sysRegAccess{true, true, false, false}, true
	case 0x8084: // OSLAR_EL1
		return OSLAR_EL1, sysRegAccess{false, true, false, false}, true
	case 0x808c: // OSLSR_EL1
		return OSLSR_EL1, sysRegAccess{true, false, false, false}, true
	case 0x809c: // OSDLR_EL1
		return OSDLR_EL1, sysRegAccess{true, true, false, false}, true
	case 0xc000: // MIDR_EL1
		return MIDR_EL1, sysRegAccess{true, false, false, false}, true
	case 0xc005: // MPIDR_EL1
		return MPIDR_EL1, sysRegAccess{true, false, false, false}, true
	case 0xc006: // REVIDR_EL1
		return REVIDR_EL1, sysRegAccess{true, false, false, false}, true
	case 0xc020: // ID_AA64PFR0_EL1
		return ID_AA64PFR0_EL1, sysRegAccess{true, false, false, false}, true
	case 0xc021: // ID_AA64PFR1_EL1
		return ID_AA64PFR1_EL1, sysRegAccess{true, false, false, false}, true
	case 0xc028: // ID_AA64DFR0_EL1
		return ID_AA64DFR0_EL1, sysRegAccess{true, false, false, false}, true
	case 0xc029: // ID_AA64DFR1_EL1
		return ID_AA64DFR1_EL1, sysRegAccess{true, false, false, false}, true
	case 0xc02c: // ID_AA64AFR0_EL1
		return ID_AA64AFR0_EL1, sysRegAccess{true, false, false, false}, true
	case 0xc02d: // ID_AA64AFR1_EL1
		return ID_AA64AFR1_EL1, sysRegAccess{true, false, false, false}, true
	case 0xc030: // ID_AA64ISAR0_EL1
		return ID_AA64ISAR0_EL1, sysRegAccess{true, false, false, false}, true
	case 0xc031: // ID_AA64ISAR1_EL1
		return ID_AA64ISAR1_EL1, sysRegAccess{true, false, false, false}, true
	case 0xc038: // ID_AA64MMFR0_EL1
		return ID_AA64MMFR0_EL1, sysRegAccess{true, false, false, false}, true
	case 0xc039: // ID_AA64MMFR1_EL1
		return ID_AA64MMFR1_EL1, sysRegAccess{true, false, false, false}, true
	case 0xc03a: // ID_AA64MMFR2_EL1
		return ID_AA64MMFR2_EL1, sysRegAccess{true, false, false, false}, true
	case 0xc801: // CLIDR_EL1
		return CLIDR_EL1, sysRegAccess{true, false, false, false}, true
	case 0xc800: // CCSIDR_EL1
		return CCSIDR_EL1, sysRegAccess{true, false, false, false}, true
	case 0xd000: // CSSELR_EL1
		return CSSELR_EL1, sysRegAccess{true, true, false, false}, true
	case 0xd801: // CTR_EL0
		return CTR_EL0, sysRegAccess{true, false, true, false}, true
	case 0xd807: // DCZID_EL0
		return DCZID_EL0, sysRegAccess{true, false, true, false}, true
	case 0xdf00: // CNTFRQ_EL0
		return CNTFRQ_EL0, sysRegAccess{true, true, true, false}, true
	case 0xdf01: // CNTPCT_EL0
		return CNTPCT_EL0, sysRegAccess{true, false, true, false}, true
	case 0xdf02: // CNTVCT_EL0
		return CNTVCT_EL0, sysRegAccess{true, false, true, false}, true
	case 0xc708: // CNTKCTL_EL1
		return CNTKCTL_EL1, sysRegAccess{true, true, false, false}, true
	case 0xdf10: // CNTP_TVAL_EL0
		return CNTP_TVAL_EL0, sysRegAccess{true, true, true, true}, true
	case 0xdf11: // CNTP_CTL_EL0
		return CNTP_CTL_EL0, sysRegAccess{true, true, true, true}, true
	case 0xdf12: // CNTP_CVAL_EL0
		return CNTP_CVAL_EL0, sysRegAccess{true, true, true, true}, true
	case 0xdf18: // CNTV_TVAL_EL0
		return CNTV_TVAL_EL0, sysRegAccess{true, true, true, true}, true
	case 0xdf19: // CNTV_CTL_EL0
		return CNTV_CTL_EL0, sysRegAccess{true, true, true, true}, true
	case 0xdf1a: // CNTV_CVAL_EL0
		return CNTV_CVAL_EL0, sysRegAccess{true, true, true, true}, true
	}
	return 0, sysRegAccess{}, false
}
