/* SPDX-License-Identifier: MIT */
/*
 * The function tracer's trampolines, as Linux 6.1's
 * arch/arm64/kernel/entry-ftrace.S with CONFIG_DYNAMIC_FTRACE_WITH_REGS.
 *
 * -fpatchable-function-entry=2 put two NOPs before every traceable
 * function's prologue. At boot the host made the first one MOV X9, LR; for
 * a traced function it makes the second one BL ftrace_caller (or
 * ftrace_regs_caller, for a tracer that wants every register), so that
 * the function starts with
 *
 *	MOV	X9, LR
 *	BL	<entry>
 *
 * Each instrumented function follows the AAPCS, so here x0-x8 and x18-x30
 * are live, and x9-x17 are safe to clobber.
 *
 * The trampoline saves the callsite's context into a pt_regs, with a frame
 * record for the callsite and one for itself (so that a backtrace from the
 * tracer's callback runs through the traced function into its caller),
 * calls ftrace_call's target with (ip, parent_ip, op, regs), restores the
 * function's arguments, FP and LR, and returns to the function's body.
 *
 * ftrace_call is "BL ftrace_stub" while no tracer is registered; the host
 * points it at arch_ftrace_ops_list_func (kernel/trace/ftrace.c), the gate
 * to the tracers, which are Go functions in the host, while any is.
 *
 * The function graph tracer is an ops like any other (Linux 6.1's
 * ftrace_graph_func with DYNAMIC_FTRACE_WITH_REGS): its callback, in the
 * host, replaces the callsite's LR saved in the pt_regs (S_LR) with
 * return_to_handler, which ftrace_common then restores into x30, so the
 * traced function returns through return_to_handler below.
 *
 * This is .text, as in Linux, and has no patchable entry of its own.
 */
#include <linux/linkage.h>
#include <asm/asm-offsets.h>
#include <asm/ftrace.h>

	.macro  ftrace_regs_entry, allregs=0
	/* Make room for pt_regs, plus a callee frame */
	sub	sp, sp, #(PT_REGS_SIZE + 16)

	/* Save function arguments (and x9 for simplicity) */
	stp	x0, x1, [sp, #S_X0]
	stp	x2, x3, [sp, #S_X2]
	stp	x4, x5, [sp, #S_X4]
	stp	x6, x7, [sp, #S_X6]
	stp	x8, x9, [sp, #S_X8]

	/* Optionally save the callee-saved registers, always save the FP */
	.if \allregs == 1
	stp	x10, x11, [sp, #S_X10]
	stp	x12, x13, [sp, #S_X12]
	stp	x14, x15, [sp, #S_X14]
	stp	x16, x17, [sp, #S_X16]
	stp	x18, x19, [sp, #S_X18]
	stp	x20, x21, [sp, #S_X20]
	stp	x22, x23, [sp, #S_X22]
	stp	x24, x25, [sp, #S_X24]
	stp	x26, x27, [sp, #S_X26]
	stp	x28, x29, [sp, #S_X28]
	.else
	str	x29, [sp, #S_FP]
	.endif

	/* Save the callsite's SP and LR */
	add	x10, sp, #(PT_REGS_SIZE + 16)
	stp	x9, x10, [sp, #S_LR]

	/* Save the PC after the ftrace callsite */
	str	x30, [sp, #S_PC]

	/* Create a frame record for the callsite above pt_regs */
	stp	x29, x9, [sp, #PT_REGS_SIZE]
	add	x29, sp, #PT_REGS_SIZE

	/* Create our frame record within pt_regs. */
	stp	x29, x30, [sp, #S_STACKFRAME]
	add	x29, sp, #S_STACKFRAME
	.endm

SYM_CODE_START(ftrace_regs_caller)
	ftrace_regs_entry	1
	b	ftrace_common
SYM_CODE_END(ftrace_regs_caller)

SYM_CODE_START(ftrace_caller)
	ftrace_regs_entry	0
	b	ftrace_common
SYM_CODE_END(ftrace_caller)

SYM_CODE_START(ftrace_common)
	sub	x0, x30, #AARCH64_INSN_SIZE	// ip (callsite's BL insn)
	mov	x1, x9				// parent_ip (callsite's LR)
	adrp	x2, function_trace_op		// op (ldr_l)
	ldr	x2, [x2, :lo12:function_trace_op]
	mov	x3, sp				// regs

	.globl	ftrace_call
ftrace_call:
	bl	ftrace_stub

/*
 * At the callsite x0-x8 and x19-x30 were live. Any C code will have preserved
 * x19-x29 per the AAPCS, and we created frame records upon entry, so we need
 * to restore x0-x8, x29, and x30.
 */
	/* Restore function arguments */
	ldp	x0, x1, [sp]
	ldp	x2, x3, [sp, #S_X2]
	ldp	x4, x5, [sp, #S_X4]
	ldp	x6, x7, [sp, #S_X6]
	ldr	x8, [sp, #S_X8]

	/* Restore the callsite's FP, LR, PC */
	ldr	x29, [sp, #S_FP]
	ldr	x30, [sp, #S_LR]
	ldr	x9, [sp, #S_PC]

	/* Restore the callsite's SP */
	add	sp, sp, #PT_REGS_SIZE + 16

	ret	x9
SYM_CODE_END(ftrace_common)

SYM_FUNC_START(ftrace_stub)
	ret
SYM_FUNC_END(ftrace_stub)

/*
 * void return_to_handler(void)
 *
 * Run ftrace_return_to_handler() before going back to parent.
 * @fp is checked against the value passed by ftrace_graph_func().
 * As Linux 6.1's: the traced function's return values are kept around
 * the call.
 */
SYM_CODE_START(return_to_handler)
	/* save return value regs */
	sub sp, sp, #64
	stp x0, x1, [sp]
	stp x2, x3, [sp, #16]
	stp x4, x5, [sp, #32]
	stp x6, x7, [sp, #48]

	mov	x0, x29			//     parent's fp
	bl	ftrace_return_to_handler// addr = ftrace_return_to_hander(fp);
	mov	x30, x0			// restore the original return address

	/* restore return value regs */
	ldp x0, x1, [sp]
	ldp x2, x3, [sp, #16]
	ldp x4, x5, [sp, #32]
	ldp x6, x7, [sp, #48]
	add sp, sp, #64

	ret
SYM_CODE_END(return_to_handler)
