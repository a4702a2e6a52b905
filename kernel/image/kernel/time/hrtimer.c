// SPDX-License-Identifier: MIT
/*
 * nanosleep(2), after kernel/time/hrtimer.c: hrtimer_nanosleep() ->
 * do_nanosleep(). kpemu has no high-resolution timers: the sleep is
 * rounded up to whole ticks (HZ = 250) and done with schedule_timeout(),
 * on the tick's timer wheel, interruptible as Linux's.
 */
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/timer.h>
#include <asm/ptrace.h>

#define NSEC_PER_SEC	1000000000L
#define TICK_NSEC	(NSEC_PER_SEC / HZ)

struct __kernel_timespec {
	s64 tv_sec;
	long long tv_nsec;
};

static long do_nanosleep(unsigned long timeout)
{
	current->sleep_until = jiffies + timeout;
	__set_current_state(TASK_INTERRUPTIBLE);
	schedule_timeout(timeout);
	return 0;
}

long hrtimer_nanosleep(s64 sec, long nsec)
{
	unsigned long timeout;

	if (sec < 0 || nsec < 0 || nsec >= NSEC_PER_SEC)
		return -EINVAL;
	if (sec > 1000000)
		sec = 1000000;
	timeout = sec * HZ + (nsec + TICK_NSEC - 1) / TICK_NSEC;
	if (!timeout)
		timeout = 1;	/* at least to the next tick, as a real sleep */
	return do_nanosleep(timeout);
}

long __arm64_sys_nanosleep(const struct pt_regs *regs)
{
	struct __kernel_timespec ts;

	if (copy_from_user(&ts, (const void *)regs->regs[0], sizeof(ts)))
		return -EFAULT;
	return hrtimer_nanosleep(ts.tv_sec, ts.tv_nsec);
}
