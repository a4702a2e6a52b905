// SPDX-License-Identifier: MIT
/*
 * The periodic tick from the Arm generic timer, after
 * drivers/clocksource/arm_arch_timer.c (virtual timer, PPI 27, as Linux
 * uses at EL1) and kernel/time/tick-common.c: every CPU programs
 * CNTV_TVAL_EL0 to CNTFRQ / HZ counter ticks and re-arms it on each
 * interrupt. CPU 0 advances jiffies (tick_do_timer_cpu), every CPU runs
 * its expired timers and scheduler_tick().
 *
 * In kpemu's deterministic mode the counter counts retired instructions,
 * so the tick, and with it every preemption, falls at the same
 * instruction in every run with the same inputs.
 */
#include <linux/kernel.h>
#include <linux/sched.h>
#include <linux/timer.h>
#include <linux/irqchip/arm-gic.h>
#include <asm/sysreg.h>

#define ARCH_TIMER_CTRL_ENABLE		(1 << 0)

volatile u64 jiffies;

static unsigned long arch_timer_period(void)
{
	unsigned long frq = read_sysreg(cntfrq_el0) & 0xffffffff;

	if (!frq)
		frq = 62500000;
	return frq / HZ;
}

void arch_timer_starting_cpu(void)
{
	write_sysreg(arch_timer_period(), cntv_tval_el0);
	write_sysreg(ARCH_TIMER_CTRL_ENABLE, cntv_ctl_el0);
	isb();
	gic_enable_ppi(ARCH_TIMER_VIRT_PPI);
}

/* tick_periodic() */
void arch_timer_handler_virt(void)
{
	write_sysreg(arch_timer_period(), cntv_tval_el0);
	isb();
	if (smp_processor_id() == 0)
		jiffies++;
	run_local_timers();
	scheduler_tick();
}
