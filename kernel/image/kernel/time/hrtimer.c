// SPDX-License-Identifier: MIT
/*
 * High-resolution timers and nanosleep(2), after kernel/time/hrtimer.c:
 * each CPU keeps its started hrtimers in a queue ordered by expiry (a
 * list: there are a few at a time), and its timer interrupt runs those
 * that expired and programs the next (arch_timer_handler_virt).
 * hrtimer_nanosleep() -> do_nanosleep() sleeps on one, so a sleep ends
 * when it asked to, not at the next tick, as on Linux with high-resolution
 * timers; interruptible as Linux's.
 */
#include <linux/kernel.h>
#include <linux/hrtimer.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <asm/ptrace.h>
#include <asm/smp.h>
#include <asm/sysreg.h>

#define NSEC_PER_SEC	1000000000L

struct __kernel_timespec {
	s64 tv_sec;
	long long tv_nsec;
};

static struct hrtimer *hrtimer_queue[NR_CPUS];
static DEFINE_RAW_SPINLOCK(hrtimer_lock);

void arch_timer_program(void);

u64 ns_to_cycles(s64 sec, long nsec)
{
	u64 frq = read_sysreg(cntfrq_el0) & 0xffffffff;

	if (!frq)
		frq = 62500000;
	return sec * frq + ((u64)nsec * frq + NSEC_PER_SEC - 1) / NSEC_PER_SEC;
}

void hrtimer_init(struct hrtimer *timer, enum hrtimer_restart (*function)(struct hrtimer *))
{
	timer->next = NULL;
	timer->function = function;
	timer->cpu = -1;
}

/* hrtimer_lock held: takes @timer off its queue if it is on one. */
static void dequeue(struct hrtimer *timer)
{
	struct hrtimer **pp;

	if (timer->cpu < 0)
		return;
	for (pp = &hrtimer_queue[timer->cpu]; *pp; pp = &(*pp)->next)
		if (*pp == timer) {
			*pp = timer->next;
			break;
		}
	timer->cpu = -1;
}

/* Starts @timer to fire at counter value @expires, on this CPU. */
void hrtimer_start(struct hrtimer *timer, u64 expires)
{
	struct hrtimer **pp;
	unsigned long flags;
	unsigned int cpu;

	raw_spin_lock_irqsave(&hrtimer_lock, flags);
	dequeue(timer);
	cpu = smp_processor_id();
	timer->expires = expires;
	timer->cpu = cpu;
	for (pp = &hrtimer_queue[cpu]; *pp && (*pp)->expires <= expires; pp = &(*pp)->next)
		;
	timer->next = *pp;
	*pp = timer;
	raw_spin_unlock_irqrestore(&hrtimer_lock, flags);
	if (hrtimer_queue[cpu] == timer) {
		local_irq_save(flags);
		arch_timer_program();	/* it is the soonest now */
		local_irq_restore(flags);
	}
}

/* Stops @timer; it does not run after this returns (unless running now). */
void hrtimer_cancel(struct hrtimer *timer)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&hrtimer_lock, flags);
	dequeue(timer);
	raw_spin_unlock_irqrestore(&hrtimer_lock, flags);
}

u64 hrtimer_interrupt(u64 now)
{
	unsigned int cpu = smp_processor_id();
	struct hrtimer *t;
	u64 next;

	for (;;) {
		raw_spin_lock(&hrtimer_lock);
		t = hrtimer_queue[cpu];
		if (!t || t->expires > now) {
			next = t ? t->expires : ~0ULL;
			raw_spin_unlock(&hrtimer_lock);
			return next;
		}
		hrtimer_queue[cpu] = t->next;
		t->cpu = -1;
		raw_spin_unlock(&hrtimer_lock);
		t->function(t);
	}
}

struct hrtimer_sleeper {
	struct hrtimer		timer;
	struct task_struct	*task;	/* NULL once it fired */
};

static enum hrtimer_restart hrtimer_wakeup(struct hrtimer *timer)
{
	struct hrtimer_sleeper *t = container_of(timer, struct hrtimer_sleeper, timer);
	struct task_struct *task = t->task;

	WRITE_ONCE(t->task, NULL);
	if (task)
		wake_up_process(task);
	return HRTIMER_NORESTART;
}

static long do_nanosleep(u64 expires)
{
	struct hrtimer_sleeper t = { .task = current };

	hrtimer_init(&t.timer, hrtimer_wakeup);
	set_current_state(TASK_INTERRUPTIBLE);
	hrtimer_start(&t.timer, expires);
	while (READ_ONCE(t.task)) {
		schedule();
		set_current_state(TASK_INTERRUPTIBLE);
	}
	__set_current_state(TASK_RUNNING);
	hrtimer_cancel(&t.timer);
	return 0;
}

long hrtimer_nanosleep(s64 sec, long nsec)
{
	if (sec < 0 || nsec < 0 || nsec >= NSEC_PER_SEC)
		return -EINVAL;
	if (sec > 1000000)
		sec = 1000000;
	return do_nanosleep(read_sysreg(cntvct_el0) + ns_to_cycles(sec, nsec));
}

long __arm64_sys_nanosleep(const struct pt_regs *regs)
{
	struct __kernel_timespec ts;

	if (copy_from_user(&ts, (const void *)regs->regs[0], sizeof(ts)))
		return -EFAULT;
	return hrtimer_nanosleep(ts.tv_sec, ts.tv_nsec);
}
