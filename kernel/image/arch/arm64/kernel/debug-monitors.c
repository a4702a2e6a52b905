// SPDX-License-Identifier: MIT
/*
 * Debug and trace support, as Linux 6.1 arch/arm64/kernel/debug-monitors.c:
 * the break-hook and step-hook lists and the BRK and single-step handlers
 * that arch/arm64/mm/fault.c's debug_fault_info table calls.
 */
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/list.h>
#include <linux/sched.h>
#include <asm/debug-monitors.h>
#include <asm/ptrace.h>
#include <asm/sysreg.h>

void hook_debug_fault_code(int nr,
			   int (*fn)(unsigned long, unsigned long, struct pt_regs *),
			   int sig, int code, const char *name);

/* EL0 and EL1 Single Step Handler hooks */
static LIST_HEAD(user_step_hook);
static LIST_HEAD(kernel_step_hook);

void register_user_step_hook(struct step_hook *hook)
{
	list_add(&hook->node, &user_step_hook);
}

void register_kernel_step_hook(struct step_hook *hook)
{
	list_add(&hook->node, &kernel_step_hook);
}

/*
 * user_enable_single_step(): step the task's next EL0 instruction. The
 * flag makes exit_to_user_mode() set MDSCR_EL1.SS on the way out (Linux's
 * ret_to_user does it, enable_step_tsk); SPSR.SS makes the step
 * active-not-pending, so that the instruction runs before the exception.
 */
void user_enable_single_step(struct task_struct *task)
{
	set_ti_thread_flag(task_thread_info(task), TIF_SINGLESTEP);
	task_pt_regs(task)->pstate |= DBG_SPSR_SS;
}
NOKPROBE_SYMBOL(user_enable_single_step);

void user_disable_single_step(struct task_struct *task)
{
	clear_ti_thread_flag(task_thread_info(task), TIF_SINGLESTEP);
	task_pt_regs(task)->pstate &= ~DBG_SPSR_SS;
}
NOKPROBE_SYMBOL(user_disable_single_step);

/*
 * Call registered single step handlers
 * There is no Syndrome info to check for determining the handler.
 * So we call all the registered handlers, until the right handler is
 * found which returns zero.
 */
static int call_step_hook(struct pt_regs *regs, unsigned long esr)
{
	struct step_hook *hook;
	int retval = DBG_HOOK_ERROR;

	list_for_each_entry(hook, user_mode(regs) ? &user_step_hook : &kernel_step_hook, node) {
		retval = hook->fn(regs, esr);
		if (retval == DBG_HOOK_HANDLED)
			break;
	}

	return retval;
}
NOKPROBE_SYMBOL(call_step_hook);

static int single_step_handler(unsigned long unused, unsigned long esr,
			       struct pt_regs *regs)
{
	if (call_step_hook(regs, esr) == DBG_HOOK_HANDLED)
		return 0;

	if (user_mode(regs)) {
		/* a step nobody asked for: SIGTRAP, as send_user_sigtrap() */
		user_disable_single_step(current);
		return 1;
	}

	pr_warn("Unexpected kernel single-step exception at EL1\n");
	/*
	 * Re-enable stepping since we know that we will be
	 * returning to regs.
	 */
	regs->pstate |= DBG_SPSR_SS;
	return 0;
}
NOKPROBE_SYMBOL(single_step_handler);

/* EL0 and EL1 BRK hooks */
static LIST_HEAD(user_break_hook);
static LIST_HEAD(kernel_break_hook);

void register_user_break_hook(struct break_hook *hook)
{
	list_add(&hook->node, &user_break_hook);
}

void register_kernel_break_hook(struct break_hook *hook)
{
	list_add(&hook->node, &kernel_break_hook);
}

static int call_break_hook(struct pt_regs *regs, unsigned long esr)
{
	struct break_hook *hook;
	int (*fn)(struct pt_regs *regs, unsigned long esr) = NULL;

	/* The last hook that matches the comment wins. */
	list_for_each_entry(hook, user_mode(regs) ? &user_break_hook : &kernel_break_hook, node) {
		unsigned long comment = esr & ESR_ELx_BRK64_ISS_COMMENT_MASK;

		if ((comment & ~hook->mask) == hook->imm)
			fn = hook->fn;
	}

	return fn ? fn(regs, esr) : DBG_HOOK_ERROR;
}
NOKPROBE_SYMBOL(call_break_hook);

static int brk_handler(unsigned long unused, unsigned long esr,
		       struct pt_regs *regs)
{
	if (call_break_hook(regs, esr) == DBG_HOOK_HANDLED)
		return 0;

	if (user_mode(regs))	/* SIGTRAP (do_debug_exception sends it) */
		return 1;

	pr_warn("Unexpected kernel BRK exception at EL1\n");
	return -EFAULT;
}
NOKPROBE_SYMBOL(brk_handler);

/*
 * The OS lock is set at a cold reset and, while set, holds off every debug
 * exception but BRK; Linux clears it at boot (clear_os_lock).
 */
static void clear_os_lock(void)
{
	asm volatile("msr oslar_el1, xzr\n\tisb" ::: "memory");
}

/*
 * Each CPU comes out of reset with its OS lock set: Linux clears it on
 * every CPU as it comes up (cpuhp's CPUHP_AP_ARM64_DEBUG_MONITORS_STARTING
 * state), or a uprobe's step never comes on a secondary CPU.
 */
void debug_monitors_starting_cpu(void)
{
	clear_os_lock();
}

void debug_traps_init(void)
{
	clear_os_lock();
	hook_debug_fault_code(DBG_ESR_EVT_HWSS, single_step_handler, SIGTRAP,
			      TRAP_TRACE, "single-step handler");
	hook_debug_fault_code(DBG_ESR_EVT_BRK, brk_handler, SIGTRAP,
			      TRAP_BRKPT, "BRK handler");
}
