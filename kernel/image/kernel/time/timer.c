// SPDX-License-Identifier: MIT
/*
 * Kernel timers, after kernel/time/timer.c: a list per CPU, run by that
 * CPU's tick (Linux: the TIMER_SOFTIRQ after the tick); and the sleeping
 * primitives schedule_timeout() and msleep() built on them.
 */
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/timer.h>

struct timer_base {
	raw_spinlock_t		lock;
	struct list_head	list;
};

static struct timer_base timer_bases[NR_CPUS];

void timer_setup(struct timer_list *timer,
		 void (*func)(struct timer_list *), unsigned int flags)
{
	INIT_LIST_HEAD(&timer->entry);
	timer->function = func;
	timer->flags = flags;
	timer->pending = 0;
}

/* add_timer - start a timer on this CPU, to run once jiffies >= expires */
void add_timer(struct timer_list *timer)
{
	unsigned int cpu = smp_processor_id();
	struct timer_base *base = &timer_bases[cpu];
	unsigned long flags;

	raw_spin_lock_irqsave(&base->lock, flags);
	timer->flags = cpu;
	timer->pending = 1;
	list_add_tail(&timer->entry, &base->list);
	raw_spin_unlock_irqrestore(&base->lock, flags);
}

/* del_timer - deactivate a timer; returns whether it was pending */
int del_timer(struct timer_list *timer)
{
	struct timer_base *base = &timer_bases[timer->flags % NR_CPUS];
	unsigned long flags;
	int ret = 0;

	raw_spin_lock_irqsave(&base->lock, flags);
	if (timer->pending) {
		list_del_init(&timer->entry);
		timer->pending = 0;
		ret = 1;
	}
	raw_spin_unlock_irqrestore(&base->lock, flags);
	return ret;
}

/* Runs this CPU's expired timers; from the tick, IRQs off. */
void run_local_timers(void)
{
	struct timer_base *base = &timer_bases[smp_processor_id()];
	struct timer_list *timer, *tmp;
	u64 now = jiffies;

	arch_spin_lock(&base->lock.raw_lock);
again:
	list_for_each_entry_safe(timer, tmp, &base->list, entry) {
		if (!time_after_eq(now, timer->expires))
			continue;
		list_del_init(&timer->entry);
		timer->pending = 0;
		arch_spin_unlock(&base->lock.raw_lock);
		timer->function(timer);
		arch_spin_lock(&base->lock.raw_lock);
		goto again;	/* the list may have changed meanwhile */
	}
	arch_spin_unlock(&base->lock.raw_lock);
}

void init_timers(void)
{
	int cpu;

	for (cpu = 0; cpu < NR_CPUS; cpu++) {
		raw_spin_lock_init(&timer_bases[cpu].lock);
		INIT_LIST_HEAD(&timer_bases[cpu].list);
	}
}

struct process_timer {
	struct timer_list timer;
	struct task_struct *task;
};

static void process_timeout(struct timer_list *t)
{
	struct process_timer *timeout = container_of(t, struct process_timer, timer);

	wake_up_process(timeout->task);
}

/**
 * schedule_timeout - sleep until timeout
 * @timeout: timeout value in jiffies
 *
 * Make the current task sleep until @timeout jiffies have elapsed. The
 * caller sets the task state first (TASK_INTERRUPTIBLE or
 * TASK_UNINTERRUPTIBLE). Returns the jiffies left, 0 if it expired.
 *
 * Several tasks are commonly asleep in here at once, which makes it the
 * function to watch kretprobe's maxactive and nmissed on.
 */
signed long __sched schedule_timeout(signed long timeout)
{
	struct process_timer timer;
	unsigned long expire;

	if (timeout == MAX_SCHEDULE_TIMEOUT) {
		schedule();
		return timeout;
	}
	if (timeout < 0) {
		__set_current_state(TASK_RUNNING);
		return 0;
	}
	expire = timeout + jiffies;

	timer.task = current;
	timer_setup(&timer.timer, process_timeout, 0);
	timer.timer.expires = expire;
	add_timer(&timer.timer);
	schedule();
	/* the timer ran on this CPU's tick, or is still pending: no sync needed */
	del_timer(&timer.timer);

	timeout = expire - jiffies;
	return timeout < 0 ? 0 : timeout;
}

signed long __sched schedule_timeout_uninterruptible(signed long timeout)
{
	__set_current_state(TASK_UNINTERRUPTIBLE);
	return schedule_timeout(timeout);
}

/**
 * msleep - sleep safely even with waitqueue interruptions
 * @msecs: Time in milliseconds to sleep for
 */
void msleep(unsigned int msecs)
{
	unsigned long timeout = msecs_to_jiffies(msecs) + 1;

	while (timeout)
		timeout = schedule_timeout_uninterruptible(timeout);
}
