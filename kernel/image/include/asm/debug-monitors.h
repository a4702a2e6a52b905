/* SPDX-License-Identifier: MIT */
/* As arch/arm64/include/asm/debug-monitors.h (6.1). */
#ifndef __ASM_DEBUG_MONITORS_H
#define __ASM_DEBUG_MONITORS_H

#include <asm/brk-imm.h>
#include <asm/esr.h>

/* Low-level stepping controls. */
#define DBG_MDSCR_SS		(1 << 0)
#define DBG_SPSR_SS		(1 << 21)

/* MDSCR_EL1 enabling bits */
#define DBG_MDSCR_KDE		(1 << 13)
#define DBG_MDSCR_MDE		(1 << 15)
#define DBG_MDSCR_MASK		~(DBG_MDSCR_KDE | DBG_MDSCR_MDE)

#define	DBG_ESR_EVT(x)		(((x) >> 27) & 0x7)

/* AArch64 */
#define DBG_ESR_EVT_HWBP	0x0
#define DBG_ESR_EVT_HWSS	0x1
#define DBG_ESR_EVT_HWWP	0x2
#define DBG_ESR_EVT_BRK		0x6

/*
 * Break point instruction encoding
 */
#define BREAK_INSTR_SIZE		4 /* AARCH64_INSN_SIZE */

#define AARCH64_BREAK_MON	0xd4200000

#define BRK64_OPCODE_KPROBES	(AARCH64_BREAK_MON | (KPROBES_BRK_IMM << 5))
#define BRK64_OPCODE_KPROBES_SS	(AARCH64_BREAK_MON | (KPROBES_BRK_SS_IMM << 5))
#define BRK64_OPCODE_UPROBES	(AARCH64_BREAK_MON | (UPROBES_BRK_IMM << 5))

#define DBG_HOOK_HANDLED	0
#define DBG_HOOK_ERROR		1

#ifndef __ASSEMBLY__

#include <linux/types.h>

struct pt_regs;

struct step_hook {
	struct list_head node;
	int (*fn)(struct pt_regs *regs, unsigned long esr);
};

void register_user_step_hook(struct step_hook *hook);
void register_kernel_step_hook(struct step_hook *hook);

struct break_hook {
	struct list_head node;
	int (*fn)(struct pt_regs *regs, unsigned long esr);
	u16 imm;
	u16 mask; /* These bits are ignored when comparing with imm */
};

void register_user_break_hook(struct break_hook *hook);
void register_kernel_break_hook(struct break_hook *hook);

struct task_struct;
void user_enable_single_step(struct task_struct *task);
void user_disable_single_step(struct task_struct *task);
int arch_init_uprobes(void);

void debug_traps_init(void);
void debug_monitors_starting_cpu(void);

#endif /* !__ASSEMBLY__ */
#endif /* __ASM_DEBUG_MONITORS_H */
