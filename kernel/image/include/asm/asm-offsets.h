/* SPDX-License-Identifier: MIT */
/*
 * Linux generates these from arch/arm64/kernel/asm-offsets.c; kpemu writes
 * them down and arch/arm64/kernel/asm-offsets.c checks them against
 * struct pt_regs with _Static_assert.
 */
#ifndef __ASM_OFFSETS_H
#define __ASM_OFFSETS_H

#define S_X0		0	/* offsetof(struct pt_regs, regs[0]) */
#define S_X2		16
#define S_X4		32
#define S_X6		48
#define S_X8		64
#define S_X10		80
#define S_X12		96
#define S_X14		112
#define S_X16		128
#define S_X18		144
#define S_X20		160
#define S_X22		176
#define S_X24		192
#define S_X26		208
#define S_X28		224
#define S_FP		232	/* x29 */
#define S_LR		240	/* x30 */
#define S_SP		248
#define S_PC		256
#define S_PSTATE	264
#define S_ORIG_X0	272
#define S_SYSCALLNO	280
#define S_SDEI_TTBR1	288
#define S_PMR_SAVE	296
#define S_STACKFRAME	304
#define PT_REGS_SIZE	336	/* sizeof(struct pt_regs), 16-byte aligned */

#define THREAD_SHIFT	14
#define THREAD_SIZE	16384	/* init_stack, every kernel stack: 1 << THREAD_SHIFT */
/*
 * Every kernel stack is the upper THREAD_SIZE of a THREAD_ALIGN-aligned
 * block (struct thread_stack) whose lower half is never used: a guard, as
 * Linux's VMAP_STACK guard pages, so that SP has bit THREAD_SHIFT set on
 * the stack and clear once it overflowed, which kernel_ventry tests.
 */
#define THREAD_ALIGN	(2 * THREAD_SIZE)
/* Each CPU's stack for reporting a stack overflow (traps.c). */
#define OVERFLOW_STACK_SHIFT	12
#define OVERFLOW_STACK_SIZE	4096	/* 1 << OVERFLOW_STACK_SHIFT */

#define TSK_TI_FLAGS		0	/* offsetof(struct task_struct, thread_info.flags) */
#define TSK_TI_PREEMPT		8	/* thread_info.preempt_count */
#define TSK_TI_CPU		12	/* thread_info.cpu */
#define THREAD_CPU_CONTEXT	16	/* offsetof(struct task_struct, thread.cpu_context) */
#define TSK_STACK		120	/* offsetof(struct task_struct, stack) */

#endif /* __ASM_OFFSETS_H */
