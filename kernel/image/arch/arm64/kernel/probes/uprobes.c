// SPDX-License-Identifier: MIT
/*
 * Uprobes for ARM64, the guest half (Linux: arch/arm64/kernel/probes/uprobes.c).
 *
 * The user break hook for BRK #0x005 and the user step hook are gates into
 * the host (kprobes/uprobes.go), which runs handle_swbp() and
 * handle_singlestep() on the pt_regs frame: it runs the consumers, then
 * points regs->pc at the instruction's out-of-line slot in the [uprobes]
 * page (answering UPROBE_HC_STEP: step it, as arch_uprobe_pre_xol), or
 * simulates it, or, at the uretprobe trampoline, returns to the real
 * caller. After the step it sets regs->pc past the probed instruction
 * (arch_uprobe_post_xol) and the gate stops stepping.
 */
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/uprobes.h>
#include <asm/debug-monitors.h>
#include <asm/hostcall.h>
#include <asm/ptrace.h>

static int uprobe_breakpoint_handler(struct pt_regs *regs, unsigned long esr)
{
	struct mm_struct *mm = current->mm;
	unsigned long ret;

	if (!mm)
		return DBG_HOOK_ERROR;
	ret = HOSTCALL3(HC_UPROBE_BRK, regs, esr, mm);
	if (ret == UPROBE_HC_NEED_XOL) {
		/* get_xol_area(): a task without one cannot step or return */
		if (xol_add_vma(mm))
			return DBG_HOOK_ERROR;
		ret = HOSTCALL3(HC_UPROBE_BRK, regs, esr, mm);
	}
	switch (ret) {
	case UPROBE_HC_STEP:
		user_enable_single_step(current);
		return DBG_HOOK_HANDLED;
	case DBG_HOOK_HANDLED:
		return DBG_HOOK_HANDLED;
	default:	/* not a uprobe's BRK, or no host (QEMU): SIGTRAP */
		return DBG_HOOK_ERROR;
	}
}

static int uprobe_single_step_handler(struct pt_regs *regs, unsigned long esr)
{
	unsigned long ret = HOSTCALL3(HC_UPROBE_SS, regs, esr, current->mm);

	switch (ret) {
	case DBG_HOOK_HANDLED:
		user_disable_single_step(current);
		return DBG_HOOK_HANDLED;
	case UPROBE_HC_REWIND:
		/* user_rewind_single_step(): out of active-pending */
		regs->pstate |= DBG_SPSR_SS;
		return DBG_HOOK_HANDLED;
	default:
		return DBG_HOOK_ERROR;
	}
}

/* uprobe breakpoint handler hook */
static struct break_hook uprobes_break_hook = {
	.imm = UPROBES_BRK_IMM,
	.fn = uprobe_breakpoint_handler,
};

/* uprobe single step handler hook */
static struct step_hook uprobes_step_hook = {
	.fn = uprobe_single_step_handler,
};

int arch_init_uprobes(void)
{
	register_user_break_hook(&uprobes_break_hook);
	register_user_step_hook(&uprobes_step_hook);
	return 0;
}
