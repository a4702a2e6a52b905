// SPDX-License-Identifier: MIT
/*
 * The periodic tick and the high-resolution timers on the Arm generic
 * timer, after drivers/clocksource/arm_arch_timer.c (virtual timer, PPI
 * 27, as Linux uses at EL1) and kernel/time/tick-common.c: every CPU
 * ticks CNTFRQ / HZ counter ticks after its last tick, and programs
 * CNTV_CVAL_EL0 for the earlier of that and its first hrtimer
 * (kernel/time/hrtimer.c). On a tick CPU 0 advances jiffies
 * (tick_do_timer_cpu), every CPU runs its expired timers and
 * scheduler_tick().
 *
 * In kpemu's deterministic mode the counter counts retired instructions,
 * so the tick, and with it every preemption, falls at the same
 * instruction in every run with the same inputs.
 */
#include <linux/kernel.h>
#include <linux/hrtimer.h>
#include <linux/sched.h>
#include <linux/timer.h>
#include <linux/irqchip/arm-gic.h>
#include <asm/smp.h>
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

/* each CPU's next tick, a counter value */
static u64 next_tick[NR_CPUS];

/*
 * arch_timer_program: CNTV_CVAL_EL0 := the earlier of this CPU's next
 * tick and its first hrtimer (clockevents_program_event); IRQs off.
 */
void arch_timer_program(void)
{
	unsigned int cpu = smp_processor_id();
	u64 next = hrtimer_interrupt(read_sysreg(cntvct_el0));

	if (next_tick[cpu] < next)
		next = next_tick[cpu];
	write_sysreg(next, cntv_cval_el0);
	isb();
}

void arch_timer_starting_cpu(void)
{
	next_tick[smp_processor_id()] = read_sysreg(cntvct_el0) + arch_timer_period();
	arch_timer_program();
	write_sysreg(ARCH_TIMER_CTRL_ENABLE, cntv_ctl_el0);
	isb();
	gic_enable_ppi(ARCH_TIMER_VIRT_PPI);
}

/*
 * tick_periodic() when a tick is due, hrtimer_interrupt() for the
 * hrtimers that expired, then the next event.
 */
void arch_timer_handler_virt(void)
{
	unsigned int cpu = smp_processor_id();
	u64 now = read_sysreg(cntvct_el0);

	if (now >= next_tick[cpu]) {
		next_tick[cpu] = now + arch_timer_period();
		if (cpu == 0)
			jiffies++;
		run_local_timers();
		scheduler_tick();
	}
	arch_timer_program();	/* runs the expired hrtimers */
}
