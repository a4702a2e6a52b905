// SPDX-License-Identifier: MIT
/*
 * Kprobes support for ARM64, the guest half (Linux:
 * arch/arm64/kernel/probes/kprobes.c).
 *
 * kpemu's probe subsystem is Go, in the host. The guest keeps Linux's shape:
 * arch_init_kprobes() registers the two kernel break hooks, for BRK #0x004
 * (a probe hit) and BRK #0x006 (the BRK that follows the instruction in an
 * out-of-line slot), and the page-fault path calls kprobe_fault_handler().
 * Each handler is a gate that passes the pt_regs frame and ESR to the host
 * with a hostcall; the host reads and writes the frame (regs->pc, pstate,
 * x0..x30) and returns DBG_HOOK_HANDLED (0) or DBG_HOOK_ERROR (1), and for
 * faults 1 if it handled the fault. Anything else (e.g. -1 when no host
 * handler exists, as under QEMU) counts as not handled.
 */
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <asm/bug.h>
#include <asm/debug-monitors.h>
#include <asm/hostcall.h>
#include <asm/ptrace.h>
#include <asm/smp.h>

/* The host's answer for a probe hit while another is being stepped. */
#define KPROBE_UNRECOVERABLE	2

static int __kprobes
kprobe_breakpoint_handler(struct pt_regs *regs, unsigned long esr)
{
	unsigned long ret = HOSTCALL2(HC_KPROBE_BRK, regs, esr);

	if (ret == KPROBE_UNRECOVERABLE) {
		/* reenter_kprobe(): the host logged dump_kprobe() */
		pr_warn("Unrecoverable kprobe detected.\n");
		BUG();
	}
	return ret == DBG_HOOK_HANDLED ? DBG_HOOK_HANDLED : DBG_HOOK_ERROR;
}

static struct break_hook kprobes_break_hook = {
	.imm = KPROBES_BRK_IMM,
	.fn = kprobe_breakpoint_handler,
};

static int __kprobes
kprobe_breakpoint_ss_handler(struct pt_regs *regs, unsigned long esr)
{
	unsigned long ret = HOSTCALL2(HC_KPROBE_SS_BRK, regs, esr);

	return ret == DBG_HOOK_HANDLED ? DBG_HOOK_HANDLED : DBG_HOOK_ERROR;
}

static struct break_hook kprobes_break_ss_hook = {
	.imm = KPROBES_BRK_SS_IMM,
	.fn = kprobe_breakpoint_ss_handler,
};

int __kprobes kprobe_fault_handler(struct pt_regs *regs, unsigned int fsr)
{
	unsigned long ret = HOSTCALL2(HC_KPROBE_FAULT, regs, fsr);

	return ret == 1;
}

/*
 * The C half of __kretprobe_trampoline: the host runs the return handlers
 * of the kretprobe instances of this frame (__kretprobe_trampoline_handler),
 * sets regs->pc to the real return address and returns it.
 */
void __kprobes *trampoline_probe_handler(struct pt_regs *regs)
{
	return (void *)HOSTCALL2(HC_KRETPROBE_TRAMPOLINE, regs, 0);
}

/*
 * jprobe_return: end of a jprobe handler, as Linux 4.14's arm64
 * kprobes.c. It goes back to the stack pointer the probed function had
 * at the probe (which the handler's frame sat below), then hits the kprobe
 * BRK at jprobe_return_break, where no probe is registered: the host sees
 * a jprobe returning, restores the probed function's registers and steps
 * its first instruction.
 */
unsigned long jprobe_saved_sp[NR_CPUS];

void __kprobes __noreturn jprobe_return(void)
{
	asm volatile("	mov	sp, %0\n"
		     "	.globl	jprobe_return_break\n"
		     "jprobe_return_break:\n"
		     "	brk	%1\n"
		     :
		     : "r" (jprobe_saved_sp[smp_processor_id()]),
		       "I" (KPROBES_BRK_IMM)
		     : "memory");
	unreachable();
}

/*
 * kprobe_flush_task: a task is gone; the host recycles the kretprobe
 * instances it still held (returns that will never happen).
 */
void __kprobes kprobe_flush_task(struct task_struct *tk)
{
	HOSTCALL2(HC_KPROBE_FLUSH_TASK, tk, 0);
}

int arch_init_kprobes(void)
{
	register_kernel_break_hook(&kprobes_break_hook);
	register_kernel_break_hook(&kprobes_break_ss_hook);

	return 0;
}
