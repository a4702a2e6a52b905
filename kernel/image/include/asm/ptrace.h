/* SPDX-License-Identifier: MIT */
/* struct pt_regs, exactly as Linux 6.1 arch/arm64/include/asm/ptrace.h. */
#ifndef __ASM_PTRACE_H
#define __ASM_PTRACE_H

#include <linux/types.h>

/* PSTATE bits, arch/arm64/include/uapi/asm/ptrace.h */
#define PSR_MODE_EL0t	0x00000000
#define PSR_MODE_EL1t	0x00000004
#define PSR_MODE_EL1h	0x00000005
#define PSR_MODE_MASK	0x0000000f
#define PSR_F_BIT	0x00000040
#define PSR_I_BIT	0x00000080
#define PSR_A_BIT	0x00000100
#define PSR_D_BIT	0x00000200
#define PSR_BTYPE_MASK	0x00000c00
#define PSR_SSBS_BIT	0x00001000
#define PSR_PAN_BIT	0x00400000
#define PSR_UAO_BIT	0x00800000
#define PSR_DIT_BIT	0x01000000
#define PSR_TCO_BIT	0x02000000
#define PSR_V_BIT	0x10000000
#define PSR_C_BIT	0x20000000
#define PSR_Z_BIT	0x40000000
#define PSR_N_BIT	0x80000000
#define PSR_BTYPE_SHIFT	10

#define NO_SYSCALL	(-1)

#ifndef __ASSEMBLY__

struct stackframe_record {
	u64 fp;
	u64 lr;
};

struct user_pt_regs {
	u64		regs[31];
	u64		sp;
	u64		pc;
	u64		pstate;
};

/*
 * This struct defines the way the registers are stored on the stack during
 * an exception. Note that sizeof(struct pt_regs) has to be a multiple of 16
 * (for stack alignment). kpemu's host (kernel/abi.go) reads and writes it.
 */
struct pt_regs {
	union {
		struct user_pt_regs user_regs;
		struct {
			u64 regs[31];
			u64 sp;
			u64 pc;
			u64 pstate;
		};
	};
	u64 orig_x0;
	s32 syscallno;
	u32 unused2;
	u64 sdei_ttbr1;
	/* Only valid when ARM64_HAS_IRQ_PRIO_MASKING is enabled. */
	u64 pmr_save;
	u64 stackframe[2];

	/* Only valid for some EL1 exceptions. */
	u64 lockdep_hardirqs;
	u64 exit_rcu;
};

#define user_mode(regs)	\
	(((regs)->pstate & PSR_MODE_MASK) == PSR_MODE_EL0t)

static inline unsigned long instruction_pointer(struct pt_regs *regs)
{
	return regs->pc;
}

static inline unsigned long regs_return_value(struct pt_regs *regs)
{
	return regs->regs[0];
}

#endif /* !__ASSEMBLY__ */
#endif /* __ASM_PTRACE_H */
