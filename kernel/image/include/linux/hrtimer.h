/* SPDX-License-Identifier: MIT */
/*
 * High-resolution timers, as linux/hrtimer.h: a callback at an absolute
 * time of the generic timer's counter (CNTVCT_EL0), run from the timer
 * interrupt of the CPU that started it, which programs its CNTV_CVAL_EL0
 * for the earlier of its next tick and its first hrtimer
 * (drivers/clocksource/arm_arch_timer.c).
 */
#ifndef _LINUX_HRTIMER_H
#define _LINUX_HRTIMER_H

#include <linux/types.h>

enum hrtimer_restart {
	HRTIMER_NORESTART,
};

struct hrtimer {
	struct hrtimer		*next;		/* in its CPU's queue, soonest first */
	u64			expires;	/* counter value */
	enum hrtimer_restart	(*function)(struct hrtimer *);
	int			cpu;		/* whose queue, -1 if none */
};

void hrtimer_init(struct hrtimer *timer, enum hrtimer_restart (*function)(struct hrtimer *));
void hrtimer_start(struct hrtimer *timer, u64 expires);
void hrtimer_cancel(struct hrtimer *timer);
/* the timer interrupt's part: runs this CPU's expired hrtimers, returns the next expiry (~0 if none) */
u64 hrtimer_interrupt(u64 now);
u64 ns_to_cycles(s64 sec, long nsec);

#endif /* _LINUX_HRTIMER_H */
