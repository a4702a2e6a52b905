// SPDX-License-Identifier: MIT
/*
 * Exception handling code, as Linux 6.1 arch/arm64/kernel/entry-common.c:
 * the C handlers that entry.S's entry_handler calls, one per vector.
 *
 * Everything here is noinstr (in .noinstr.text, inside the kprobes
 * blacklist): the kprobes BRK path runs through it.
 */
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/sched.h>
#include <linux/irqchip/arm-gic.h>
#include <asm/debug-monitors.h>
#include <asm/esr.h>
#include <asm/ptrace.h>
#include <asm/sysreg.h>

void do_mem_abort(unsigned long far, unsigned long esr, struct pt_regs *regs);
void do_sp_pc_abort(unsigned long addr, unsigned long esr, struct pt_regs *regs);
void do_undefinstr(struct pt_regs *regs, unsigned long esr);
void do_el0_svc(struct pt_regs *regs);
void do_debug_exception(unsigned long addr_if_watchpoint, unsigned long esr,
			struct pt_regs *regs);
const char *esr_get_class_string(unsigned long esr);
void panic_bad_stack(struct pt_regs *regs, unsigned long esr, unsigned long far);

static void noinstr __panic_unhandled(struct pt_regs *regs, const char *vector,
				      unsigned long esr)
{
	pr_crit("Unhandled %s exception on CPU%d, ESR 0x%016lx -- %s\n",
		vector, smp_processor_id(), esr,
		esr_get_class_string(esr));

	__show_regs(regs);
	panic("Unhandled exception");
}

#define UNHANDLED(el, regsize, vector)							\
asmlinkage void noinstr el##_##regsize##_##vector##_handler(struct pt_regs *regs)	\
{											\
	const char *desc = #regsize "-bit " #el " " #vector;				\
	__panic_unhandled(regs, desc, read_sysreg(esr_el1));				\
}

UNHANDLED(el1t, 64, sync)
UNHANDLED(el1t, 64, irq)
UNHANDLED(el1t, 64, fiq)
UNHANDLED(el1t, 64, error)

static void noinstr el1_abort(struct pt_regs *regs, unsigned long esr)
{
	unsigned long far = read_sysreg(far_el1);

	do_mem_abort(far, esr, regs);
}

static void noinstr el1_pc(struct pt_regs *regs, unsigned long esr)
{
	unsigned long far = read_sysreg(far_el1);

	do_sp_pc_abort(far, esr, regs);
}

static void noinstr el1_undef(struct pt_regs *regs, unsigned long esr)
{
	do_undefinstr(regs, esr);
}

static void noinstr el1_dbg(struct pt_regs *regs, unsigned long esr)
{
	unsigned long far = read_sysreg(far_el1);

	do_debug_exception(far, esr, regs);
}

asmlinkage void noinstr el1h_64_sync_handler(struct pt_regs *regs)
{
	unsigned long esr = read_sysreg(esr_el1);

	switch (ESR_ELx_EC(esr)) {
	case ESR_ELx_EC_DABT_CUR:
	case ESR_ELx_EC_IABT_CUR:
		el1_abort(regs, esr);
		break;
	/*
	 * We don't handle ESR_ELx_EC_SP_ALIGN, since we will have hit a
	 * recursive exception when trying to push the initial pt_regs.
	 */
	case ESR_ELx_EC_PC_ALIGN:
		el1_pc(regs, esr);
		break;
	case ESR_ELx_EC_SYS64:
	case ESR_ELx_EC_UNKNOWN:
		el1_undef(regs, esr);
		break;
	case ESR_ELx_EC_BREAKPT_CUR:
	case ESR_ELx_EC_SOFTSTP_CUR:
	case ESR_ELx_EC_WATCHPT_CUR:
	case ESR_ELx_EC_BRK64:
		el1_dbg(regs, esr);
		break;
	default:
		__panic_unhandled(regs, "64-bit el1h sync", esr);
	}
}

/*
 * el1_interrupt(): the GIC's handler (handle_arch_irq), then, on the way
 * back to a preemptible context, arm64_preempt_schedule_irq(). The
 * interrupted context had IRQs unmasked, or the IRQ would not be here.
 */
asmlinkage void noinstr el1h_64_irq_handler(struct pt_regs *regs)
{
	gic_handle_irq(regs);
	if (!preempt_count() && need_resched())
		preempt_schedule_irq();
}

UNHANDLED(el1h, 64, fiq)
UNHANDLED(el1h, 64, error)

/*
 * exit_to_user_mode(): the last thing before ret_to_user, with IRQs
 * masked from here to the ERET: reschedule while asked to, and take a
 * fatal signal that kill(2) sent (Linux's do_notify_resume and
 * get_signal; a fault's signal kills the task where it is raised).
 */
void noinstr exit_to_user_mode(struct pt_regs *regs)
{
	unsigned long mdscr;

	local_irq_disable();
	while (need_resched()) {
		local_irq_enable();
		schedule();
		local_irq_disable();
	}
	if (READ_ONCE(current->pending_sig)) {
		local_irq_enable();
		deliver_pending_signal();
	}
	/*
	 * ret_to_user's enable_step_tsk: MDSCR_EL1.SS follows the task that
	 * returns to EL0 (a uprobe's out-of-line step), never another one.
	 */
	mdscr = read_sysreg(mdscr_el1);
	if (test_thread_flag(TIF_SINGLESTEP)) {
		if (!(mdscr & DBG_MDSCR_SS))
			write_sysreg(mdscr | DBG_MDSCR_SS, mdscr_el1);
	} else if (mdscr & DBG_MDSCR_SS) {
		write_sysreg(mdscr & ~DBG_MDSCR_SS, mdscr_el1);
	}
}

static void noinstr el0_da(struct pt_regs *regs, unsigned long esr)
{
	unsigned long far = read_sysreg(far_el1);

	local_irq_enable();
	do_mem_abort(far, esr, regs);
	exit_to_user_mode(regs);
}

static void noinstr el0_ia(struct pt_regs *regs, unsigned long esr)
{
	unsigned long far = read_sysreg(far_el1);

	local_irq_enable();
	do_mem_abort(far, esr, regs);
	exit_to_user_mode(regs);
}

static void noinstr el0_svc(struct pt_regs *regs)
{
	local_irq_enable();
	do_el0_svc(regs);
	exit_to_user_mode(regs);
}

static void noinstr el0_pc(struct pt_regs *regs, unsigned long esr)
{
	local_irq_enable();
	do_sp_pc_abort(read_sysreg(far_el1), esr, regs);
	exit_to_user_mode(regs);
}

static void noinstr el0_undef(struct pt_regs *regs, unsigned long esr)
{
	local_irq_enable();
	do_undefinstr(regs, esr);
	exit_to_user_mode(regs);
}

/* el0_dbg(): BRK (uprobes) and software step from EL0, IRQs masked. */
static void noinstr el0_dbg(struct pt_regs *regs, unsigned long esr)
{
	unsigned long far = read_sysreg(far_el1);

	do_debug_exception(far, esr, regs);
	local_irq_enable();
	exit_to_user_mode(regs);
}

static void noinstr el0_inv(struct pt_regs *regs, unsigned long esr)
{
	local_irq_enable();
	arm64_notify_die("Unexpected exception from EL0", regs, SIGILL, 0,
			 regs->pc, esr);
	exit_to_user_mode(regs);
}

asmlinkage void noinstr el0t_64_sync_handler(struct pt_regs *regs)
{
	unsigned long esr = read_sysreg(esr_el1);

	switch (ESR_ELx_EC(esr)) {
	case ESR_ELx_EC_SVC64:
		el0_svc(regs);
		break;
	case ESR_ELx_EC_DABT_LOW:
		el0_da(regs, esr);
		break;
	case ESR_ELx_EC_IABT_LOW:
		el0_ia(regs, esr);
		break;
	case ESR_ELx_EC_PC_ALIGN:
	case ESR_ELx_EC_SP_ALIGN:
		el0_pc(regs, esr);
		break;
	case ESR_ELx_EC_UNKNOWN:
	case ESR_ELx_EC_SYS64:
		el0_undef(regs, esr);
		break;
	case ESR_ELx_EC_BREAKPT_LOW:
	case ESR_ELx_EC_SOFTSTP_LOW:
	case ESR_ELx_EC_WATCHPT_LOW:
	case ESR_ELx_EC_BRK64:
		el0_dbg(regs, esr);
		break;
	default:	/* FP (kpemu's user programs use none) */
		el0_inv(regs, esr);
	}
}

/* el0_interrupt(): the GIC's handler, then maybe a reschedule. */
asmlinkage void noinstr el0t_64_irq_handler(struct pt_regs *regs)
{
	gic_handle_irq(regs);
	exit_to_user_mode(regs);
}

UNHANDLED(el0t, 64, fiq)
UNHANDLED(el0t, 64, error)

UNHANDLED(el0t, 32, sync)
UNHANDLED(el0t, 32, irq)
UNHANDLED(el0t, 32, fiq)
UNHANDLED(el0t, 32, error)

/*
 * kernel_ventry found the stack overflowed (a recursion: e.g. a probe on
 * the debug exception path, which every BRK enters again) and __bad_stack
 * moved to this CPU's overflow stack.
 */
asmlinkage void noinstr handle_bad_stack(struct pt_regs *regs)
{
	unsigned long esr = read_sysreg(esr_el1);
	unsigned long far = read_sysreg(far_el1);

	panic_bad_stack(regs, esr, far);
}
