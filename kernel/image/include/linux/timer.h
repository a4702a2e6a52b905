/* SPDX-License-Identifier: MIT */
/*
 * Kernel timers and jiffies, as linux/timer.h, linux/jiffies.h and
 * linux/delay.h. The tick is the generic timer's virtual timer (PPI 27)
 * at HZ per second of guest time (drivers/clocksource/arm_arch_timer.c);
 * CPU 0's tick advances jiffies; each CPU runs its own expired timers.
 */
#ifndef _LINUX_TIMER_H
#define _LINUX_TIMER_H

#include <linux/list.h>
#include <linux/types.h>

#define HZ		250
#define MAX_SCHEDULE_TIMEOUT	((long)(~0UL >> 1))

extern volatile u64 jiffies;

#define time_after_eq(a, b)	((long)((a) - (b)) >= 0)

static inline unsigned long msecs_to_jiffies(unsigned int m)
{
	return (m + (1000 / HZ) - 1) / (1000 / HZ);
}

struct timer_list {
	struct list_head	entry;
	unsigned long		expires;
	void			(*function)(struct timer_list *);
	u32			flags;		/* the CPU whose base holds it */
	int			pending;
};

void timer_setup(struct timer_list *timer,
		 void (*func)(struct timer_list *), unsigned int flags);
void add_timer(struct timer_list *timer);
int del_timer(struct timer_list *timer);
void run_local_timers(void);
void init_timers(void);

signed long schedule_timeout(signed long timeout);
signed long schedule_timeout_uninterruptible(signed long timeout);
void msleep(unsigned int msecs);

#endif /* _LINUX_TIMER_H */
