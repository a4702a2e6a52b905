/* SPDX-License-Identifier: MIT */
/*
 * Low-level exception handling code, as Linux 6.1 arch/arm64/kernel/entry.S.
 *
 * The vector table (VBAR_EL1 = vectors) has 16 entries of 0x80 bytes, built
 * by kernel_ventry. Each entry reserves a struct pt_regs on the stack and
 * branches to el<el><ht>_<regsize>_<label>, built by entry_handler, which
 * saves the registers (kernel_entry), calls the C handler of the same name
 * with "_handler" appended (entry-common.c) and returns through
 * ret_to_kernel (kernel_exit), which reloads ELR_EL1/SPSR_EL1 from the frame:
 * a handler that changed regs->pc or regs->pstate (kprobes does) takes
 * effect at the ERET.
 *
 * Everything here is in .entry.text, between __entry_text_start and
 * __entry_text_end, which kprobes blacklists.
 */
#include <linux/linkage.h>
#include <asm/asm-offsets.h>
#include <asm/brk-imm.h>

/* syscallno = NO_SYSCALL (-1), unused2 = 0, as one 64-bit store */
#define NO_SYSCALL_LO	0xffffffff


	.macro	kernel_ventry, el:req, ht:req, regsize:req, label:req
	.align 7
.Lventry_start\@:
	sub	sp, sp, #PT_REGS_SIZE
	/*
	 * Test whether the SP has overflowed, without corrupting a GPR, as
	 * Linux does with CONFIG_VMAP_STACK. A stack is the upper half of a
	 * THREAD_ALIGN block (asm-offsets.h), so SP & THREAD_SIZE is set on
	 * it and clear in the guard below; Linux's stacks sit in the lower
	 * half and test the bit the other way (tbnz).
	 */
	add	sp, sp, x0			// sp' = sp + x0
	sub	x0, sp, x0			// x0' = sp' - x0 = (sp + x0) - x0 = sp
	tbz	x0, #THREAD_SHIFT, 0f
	sub	x0, sp, x0			// x0'' = sp' - x0' = (sp + x0) - sp = x0
	sub	sp, sp, x0			// sp'' = sp' - x0 = (sp + x0) - x0 = sp
	b	el\el\ht\()_\regsize\()_\label

0:
	/* Stash the original SP (minus PT_REGS_SIZE) in tpidr_el0. */
	msr	tpidr_el0, x0

	/* Recover the original x0 value and stash it in tpidrro_el0 */
	sub	x0, sp, x0
	msr	tpidrro_el0, x0

	/* Switch to this CPU's overflow stack (overflow_stack[MPIDR.Aff0]) */
	adrp	x0, overflow_stack + OVERFLOW_STACK_SIZE
	add	sp, x0, :lo12:overflow_stack + OVERFLOW_STACK_SIZE
	mrs	x0, mpidr_el1
	and	x0, x0, #0xff
	lsl	x0, x0, #OVERFLOW_STACK_SHIFT
	add	sp, sp, x0

	/*
	 * Check whether we were already on the overflow stack. This may happen
	 * after panic() re-enables interrupts.
	 */
	mrs	x0, tpidr_el0			// sp of interrupted context
	sub	x0, sp, x0			// delta with top of overflow stack
	tst	x0, #~(OVERFLOW_STACK_SIZE - 1)	// within range?
	b.ne	__bad_stack			// no? -> bad stack pointer

	/* We were already on the overflow stack. Restore sp/x0 and carry on. */
	sub	sp, sp, x0
	mrs	x0, tpidrro_el0
	b	el\el\ht\()_\regsize\()_\label
.org .Lventry_start\@ + 128	// Did we overflow the ventry slot?
	.endm

	.macro	kernel_entry, el, regsize = 64
	.if	\regsize == 32
	mov	w0, w0				// zero upper 32 bits of x0
	.endif
	stp	x0, x1, [sp, #16 * 0]
	stp	x2, x3, [sp, #16 * 1]
	stp	x4, x5, [sp, #16 * 2]
	stp	x6, x7, [sp, #16 * 3]
	stp	x8, x9, [sp, #16 * 4]
	stp	x10, x11, [sp, #16 * 5]
	stp	x12, x13, [sp, #16 * 6]
	stp	x14, x15, [sp, #16 * 7]
	stp	x16, x17, [sp, #16 * 8]
	stp	x18, x19, [sp, #16 * 9]
	stp	x20, x21, [sp, #16 * 10]
	stp	x22, x23, [sp, #16 * 11]
	stp	x24, x25, [sp, #16 * 12]
	stp	x26, x27, [sp, #16 * 13]
	stp	x28, x29, [sp, #16 * 14]

	.if	\el == 0
	mrs	x21, sp_el0
	/*
	 * sp_el0 held the user's SP; in the kernel it holds current. Linux
	 * loads it from the per-CPU __entry_task (ldr_this_cpu); kpemu
	 * indexes __entry_task[] by MPIDR.Aff0, as smp_processor_id() does.
	 */
	adrp	x19, __entry_task
	add	x19, x19, :lo12:__entry_task
	mrs	x20, mpidr_el1
	and	x20, x20, #0xff
	ldr	x20, [x19, x20, lsl #3]
	msr	sp_el0, x20
	.else
	add	x21, sp, #PT_REGS_SIZE
	.endif /* \el == 0 */
	mrs	x22, elr_el1
	mrs	x23, spsr_el1
	stp	lr, x21, [sp, #S_LR]

	/*
	 * For exceptions from EL0, create a final frame record.
	 * For exceptions from EL1, create a synthetic frame record so the
	 * interrupted code shows up in the backtrace.
	 */
	.if \el == 0
	stp	xzr, xzr, [sp, #S_STACKFRAME]
	.else
	stp	x29, x22, [sp, #S_STACKFRAME]
	.endif
	add	x29, sp, #S_STACKFRAME

	stp	x22, x23, [sp, #S_PC]

	/* Not in a syscall by default (el0_svc overwrites for real syscall) */
	mov	x20, #NO_SYSCALL_LO
	stp	xzr, x20, [sp, #S_ORIG_X0]	// orig_x0 = 0, syscallno = -1, unused2 = 0
	stp	xzr, xzr, [sp, #S_SDEI_TTBR1]	// sdei_ttbr1, pmr_save
	stp	xzr, xzr, [sp, #S_STACKFRAME + 16]	// lockdep_hardirqs, exit_rcu

	/*
	 * Registers that may be useful after this macro is invoked:
	 *
	 * x21 - aborted SP
	 * x22 - aborted PC
	 * x23 - aborted PSTATE
	*/
	.endm

	.macro	kernel_exit, el
	msr	daifset, #0xf			// disable_daif (exit_to_user_mode did, for el 0)

	ldp	x21, x22, [sp, #S_PC]		// load ELR, SPSR

	.if	\el == 0
	ldr	x23, [sp, #S_SP]		// load return stack pointer
	msr	sp_el0, x23
	.endif

	msr	elr_el1, x21			// set up the return data
	msr	spsr_el1, x22
	ldp	x0, x1, [sp, #16 * 0]
	ldp	x2, x3, [sp, #16 * 1]
	ldp	x4, x5, [sp, #16 * 2]
	ldp	x6, x7, [sp, #16 * 3]
	ldp	x8, x9, [sp, #16 * 4]
	ldp	x10, x11, [sp, #16 * 5]
	ldp	x12, x13, [sp, #16 * 6]
	ldp	x14, x15, [sp, #16 * 7]
	ldp	x16, x17, [sp, #16 * 8]
	ldp	x18, x19, [sp, #16 * 9]
	ldp	x20, x21, [sp, #16 * 10]
	ldp	x22, x23, [sp, #16 * 11]
	ldp	x24, x25, [sp, #16 * 12]
	ldp	x26, x27, [sp, #16 * 13]
	ldp	x28, x29, [sp, #16 * 14]

	ldr	lr, [sp, #S_LR]
	add	sp, sp, #PT_REGS_SIZE		// restore sp
	eret
	dsb	nsh				// sb: no speculation past the eret
	isb
	.endm

	.section ".entry.text","ax"

/*
 * Exception vectors.
 */

	.align	11
SYM_CODE_START(vectors)
	kernel_ventry	1, t, 64, sync		// Synchronous EL1t
	kernel_ventry	1, t, 64, irq		// IRQ EL1t
	kernel_ventry	1, t, 64, fiq		// FIQ EL1t
	kernel_ventry	1, t, 64, error		// Error EL1t

	kernel_ventry	1, h, 64, sync		// Synchronous EL1h
	kernel_ventry	1, h, 64, irq		// IRQ EL1h
	kernel_ventry	1, h, 64, fiq		// FIQ EL1h
	kernel_ventry	1, h, 64, error		// Error EL1h

	kernel_ventry	0, t, 64, sync		// Synchronous 64-bit EL0
	kernel_ventry	0, t, 64, irq		// IRQ 64-bit EL0
	kernel_ventry	0, t, 64, fiq		// FIQ 64-bit EL0
	kernel_ventry	0, t, 64, error		// Error 64-bit EL0

	kernel_ventry	0, t, 32, sync		// Synchronous 32-bit EL0
	kernel_ventry	0, t, 32, irq		// IRQ 32-bit EL0
	kernel_ventry	0, t, 32, fiq		// FIQ 32-bit EL0
	kernel_ventry	0, t, 32, error		// Error 32-bit EL0
SYM_CODE_END(vectors)

	.macro entry_handler el:req, ht:req, regsize:req, label:req
SYM_CODE_START_LOCAL(el\el\ht\()_\regsize\()_\label)
	kernel_entry \el, \regsize
	mov	x0, sp
	bl	el\el\ht\()_\regsize\()_\label\()_handler
	.if \el == 0
	b	ret_to_user
	.else
	b	ret_to_kernel
	.endif
SYM_CODE_END(el\el\ht\()_\regsize\()_\label)
	.endm

/*
 * Early exception handlers
 */
	entry_handler	1, t, 64, sync
	entry_handler	1, t, 64, irq
	entry_handler	1, t, 64, fiq
	entry_handler	1, t, 64, error

	entry_handler	1, h, 64, sync
	entry_handler	1, h, 64, irq
	entry_handler	1, h, 64, fiq
	entry_handler	1, h, 64, error

	entry_handler	0, t, 64, sync
	entry_handler	0, t, 64, irq
	entry_handler	0, t, 64, fiq
	entry_handler	0, t, 64, error

	entry_handler	0, t, 32, sync
	entry_handler	0, t, 32, irq
	entry_handler	0, t, 32, fiq
	entry_handler	0, t, 32, error

/*
 * We detected an overflow in kernel_ventry, which switched to the
 * overflow stack. Stash the exception regs, and head to our overflow
 * handler.
 */
SYM_CODE_START_LOCAL(__bad_stack)
	/* Restore the original x0 value */
	mrs	x0, tpidrro_el0

	/*
	 * Store the original GPRs to the new stack. The original SP (minus
	 * PT_REGS_SIZE) was stashed in tpidr_el0 by kernel_ventry.
	 */
	sub	sp, sp, #PT_REGS_SIZE
	kernel_entry 1
	mrs	x0, tpidr_el0
	add	x0, x0, #PT_REGS_SIZE
	str	x0, [sp, #S_SP]

	/* Stash the regs for handle_bad_stack */
	mov	x0, sp

	/* Time to die */
	bl	handle_bad_stack
	brk	#BUG_BRK_IMM			// ASM_BUG(): handle_bad_stack does not return
SYM_CODE_END(__bad_stack)

SYM_CODE_START_LOCAL(ret_to_kernel)
	kernel_exit 1
SYM_CODE_END(ret_to_kernel)

SYM_CODE_START_LOCAL(ret_to_user)
	kernel_exit 0
SYM_CODE_END(ret_to_user)

/*
 * Register switch for AArch64. The callee-saved registers need to be saved
 * and restored. On entry:
 *   x0 = previous task_struct (must be preserved across the switch)
 *   x1 = next task_struct
 * Previous and next are guaranteed not to be the same.
 *
 * As Linux's cpu_switch_to: sp_el0 becomes next, which is what current
 * reads. It lives in .entry.text, which kprobes blacklists.
 */
SYM_FUNC_START(cpu_switch_to)
	mov	x10, #THREAD_CPU_CONTEXT
	add	x8, x0, x10
	mov	x9, sp
	stp	x19, x20, [x8], #16		// store callee-saved registers
	stp	x21, x22, [x8], #16
	stp	x23, x24, [x8], #16
	stp	x25, x26, [x8], #16
	stp	x27, x28, [x8], #16
	stp	x29, x9, [x8], #16
	str	lr, [x8]
	add	x8, x1, x10
	ldp	x19, x20, [x8], #16		// restore callee-saved registers
	ldp	x21, x22, [x8], #16
	ldp	x23, x24, [x8], #16
	ldp	x25, x26, [x8], #16
	ldp	x27, x28, [x8], #16
	ldp	x29, x9, [x8], #16
	ldr	lr, [x8]
	mov	sp, x9
	msr	sp_el0, x1
	ret
SYM_FUNC_END(cpu_switch_to)

/*
 * This is how a new task starts: copy_thread() points its saved pc here
 * and its saved sp at its pt_regs (the top of its kernel stack), with
 * x19 = the function to run and x20 = its argument for a kernel thread,
 * x19 = 0 for a child of a user fork, which returns to user space with
 * the parent's registers and x0 = 0. x0 is prev, as cpu_switch_to() left
 * it. A kernel thread whose function returns exits with its value
 * (ret_from_kernel_thread), unless it exec'd a user program, as pid 1
 * does: then it too goes out through ret_to_user, to the new program.
 */
SYM_CODE_START(ret_from_fork)
	bl	schedule_tail
	cbz	x19, 1f				// not a kernel thread
	mov	x0, x20
	blr	x19
	bl	ret_from_kernel_thread		// returns only after an exec
1:	mov	x0, sp
	bl	exit_to_user_mode
	b	ret_to_user
SYM_CODE_END(ret_from_fork)
