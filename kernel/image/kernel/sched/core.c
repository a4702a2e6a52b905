// SPDX-License-Identifier: MIT
/*
 * The scheduler, after kernel/sched/core.c: a run queue per CPU, round
 * robin with a timeslice of one tick, no migration (new tasks are placed
 * by wake_up_new_task on the least loaded online CPU).
 *
 * Locking as Linux: rq->lock with IRQs off guards a run queue; __schedule()
 * holds this CPU's across cpu_switch_to() and the next task drops it in
 * finish_task_switch(). A task blocks by setting its state and calling
 * schedule(), which takes it off the run queue; try_to_wake_up() puts it
 * back. A preemption (tick, IPI) never dequeues, so a task preempted
 * between set_current_state() and schedule() stays runnable. Preemption
 * happens on the return from an IRQ to a context with preempt_count 0
 * (spinlocks raise it), as CONFIG_PREEMPT on arm64.
 */
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <trace/events/sched.h>
#include <asm/smp.h>
#include <asm/sysreg.h>

struct rq runqueues[NR_CPUS];

void raw_spin_rq_lock_nested(struct rq *rq, int subclass)
{
	raw_spin_lock(&rq->lock);
}

void raw_spin_rq_unlock(struct rq *rq)
{
	raw_spin_unlock(&rq->lock);
}

/* current per CPU, for kernel_entry from EL0 (entry.S) and the host */
struct task_struct *__entry_task[NR_CPUS];

void switch_mm(struct mm_struct *next);

u64 nr_context_switches[NR_CPUS];	/* switches to another task, per CPU */
u64 sched_ticks[NR_CPUS];		/* scheduler_tick() calls, per CPU */
u64 sched_busy_ticks[NR_CPUS];		/* ticks that found a task, not idle */

/* where wake_up_new_task() places the next new task */
static unsigned int next_new_cpu;

/*
 * NOKPROBE as in Linux 6.1 (kernel/sched/core.c, where they are functions
 * with CONFIG_DEBUG_PREEMPT): the probe path's own preempt_disable() would
 * hit a probe on them again.
 */
void preempt_count_add(int val)
{
	current_thread_info()->preempt_count += val;
}
NOKPROBE_SYMBOL(preempt_count_add);

void preempt_count_sub(int val)
{
	current_thread_info()->preempt_count -= val;
}
NOKPROBE_SYMBOL(preempt_count_sub);

/*
 * Puts p at the end of its class on rq's queue: after the real-time tasks
 * already there if it is one (before every other), else at the tail.
 */
static void queue_task(struct rq *rq, struct task_struct *p)
{
	struct task_struct *q;

	if (rt_task(p)) {
		list_for_each_entry(q, &rq->queue, run_list) {
			if (!rt_task(q)) {
				list_add_tail(&p->run_list, &q->run_list);
				return;
			}
		}
	}
	list_add_tail(&p->run_list, &rq->queue);
}

static void enqueue_task(struct rq *rq, struct task_struct *p)
{
	queue_task(rq, p);
	p->on_rq = 1;
	rq->nr_running++;
}

/* Takes p off the run queue it is on, if any; rq->lock held. */
void dequeue_task(struct rq *rq, struct task_struct *p)
{
	if (!p->on_rq)
		return;
	if (!list_empty(&p->run_list))
		list_del_init(&p->run_list);
	p->on_rq = 0;
	rq->nr_running--;
}

/* Ask rq's CPU to reschedule: the flag, and an IPI if it is another CPU. */
void resched_curr(struct rq *rq)
{
	struct task_struct *curr = rq->curr;

	if (test_tsk_need_resched(curr))
		return;
	set_tsk_need_resched(curr);
	if (rq->cpu != (int)smp_processor_id())
		smp_send_reschedule(rq->cpu);
}

/* sched_fork(): a new task starts in TASK_NEW, off any run queue. */
int sched_fork(unsigned long clone_flags, struct task_struct *p)
{
	p->__state = TASK_NEW;
	p->on_rq = 0;
	p->on_cpu = 0;
	p->prio = current->prio;
	p->nvcsw = p->nivcsw = 0;
	p->thread_info.flags = 0;
	/* schedule_tail() drops it: the task starts inside __schedule() */
	p->thread_info.preempt_count = 1;
	INIT_LIST_HEAD(&p->run_list);
	return 0;
}

/*
 * select_task_rq(): for a new task, as find_idlest_cpu() does for a fork,
 * the online CPU with the fewest runnable tasks; among equals the first
 * after the last one chosen, so that new tasks take idle CPUs in turn.
 * Run queues are read without their locks: it is only a placement.
 */
static int select_task_rq(void)
{
	unsigned int i, cpu, nr, best = 0, best_nr = ~0U;

	for (i = 0; i < NR_CPUS; i++) {
		cpu = (next_new_cpu + i) % NR_CPUS;
		if (!cpu_online(cpu))
			continue;
		nr = READ_ONCE(cpu_rq(cpu)->nr_running);
		if (nr < best_nr) {
			best = cpu;
			best_nr = nr;
		}
	}
	next_new_cpu = best + 1;
	return best;
}

/*
 * wake_up_new_task - wake up a newly created task for the first time.
 *
 * This function will do some initial scheduler statistics housekeeping
 * that must be done for every newly created context, then puts the task
 * on the runqueue and wakes it.
 */
void wake_up_new_task(struct task_struct *p)
{
	struct rq *rq;
	unsigned long flags;

	if (!(p->flags & PF_NO_SETAFFINITY))
		p->thread_info.cpu = select_task_rq();
	rq = cpu_rq(task_cpu(p));
	raw_spin_rq_lock_irqsave(rq, flags);
	WRITE_ONCE(p->__state, TASK_RUNNING);
	enqueue_task(rq, p);
	trace_sched_wakeup_new(p);
	if (rq->curr == rq->idle)
		resched_curr(rq);
	raw_spin_rq_unlock_irqrestore(rq, flags);
}

/*
 * try_to_wake_up - wake up a thread
 * @p: the thread to be awakened
 * @state: the mask of task states that can be woken
 *
 * Returns 1 if p was woken, 0 if it was not in one of @state.
 */
int try_to_wake_up(struct task_struct *p, unsigned int state, int wake_flags)
{
	struct rq *rq = cpu_rq(task_cpu(p));
	unsigned long flags;
	int success = 0;

	raw_spin_rq_lock_irqsave(rq, flags);
	if (!(READ_ONCE(p->__state) & state))
		goto out;
	trace_sched_waking(p);
	WRITE_ONCE(p->__state, TASK_RUNNING);
	success = 1;
	if (p->on_rq) {
		/* still current on its CPU: schedule() keeps it (ttwu_runnable) */
		trace_sched_wakeup(p);
		goto out;
	}
	enqueue_task(rq, p);
	trace_sched_wakeup(p);	/* ttwu_do_wakeup() */
	if (rq->curr == rq->idle || (rt_task(p) && !rt_task(rq->curr)))
		resched_curr(rq);	/* check_preempt_curr() */
out:
	raw_spin_rq_unlock_irqrestore(rq, flags);
	return success;
}

int wake_up_process(struct task_struct *p)
{
	return try_to_wake_up(p, TASK_NORMAL, 0);
}

/*
 * finish_task_switch - clean up after a task-switch, on the next task's
 * stack: prev is off the CPU, the run queue lock and IRQs are released.
 * A dead prev is now safe to reap: its parent is told.
 */
static void finish_task_switch(struct task_struct *prev)
{
	struct rq *rq = cpu_rq(smp_processor_id());
	struct task_struct *parent = prev->real_parent;
	bool dead = READ_ONCE(prev->__state) == TASK_DEAD;

	asm volatile("" : : : "memory");
	__atomic_store_n(&prev->on_cpu, 0, __ATOMIC_RELEASE);
	arch_spin_unlock(&rq->lock.raw_lock);
	local_irq_enable();
	if (dead)
		wake_up(&parent->wait_chldexit);
}

/* schedule_tail - first thing a freshly forked thread must call. */
asmlinkage void schedule_tail(struct task_struct *prev)
{
	int nr;

	finish_task_switch(prev);
	preempt_enable();
	/* CLONE_CHILD_SETTID: in the child's own address space, now loaded */
	if (current->set_child_tid) {
		nr = current->pid;
		copy_to_user(current->set_child_tid, &nr, sizeof(nr));
	}
}

static struct task_struct *pick_next_task(struct rq *rq)
{
	struct task_struct *next;

	if (list_empty(&rq->queue))
		return rq->idle;
	next = list_first_entry(&rq->queue, struct task_struct, run_list);
	list_del_init(&next->run_list);
	return next;
}

/*
 * __schedule() is the main scheduler function; called with preemption
 * disabled. @preempt: involuntary (from the IRQ return), which never
 * takes the task off the run queue. notrace, as in Linux.
 */
static void __sched notrace __schedule(bool preempt)
{
	unsigned int cpu = smp_processor_id();
	struct rq *rq = cpu_rq(cpu);
	struct task_struct *prev, *next;
	unsigned int prev_state;

	local_irq_disable();
	arch_spin_lock(&rq->lock.raw_lock);
	prev = rq->curr;
	prev_state = READ_ONCE(prev->__state);

	if (!preempt && prev_state != TASK_RUNNING) {
		dequeue_task(rq, prev);		/* deactivate_task() */
		prev->nvcsw++;
	} else if (prev != rq->idle) {
		queue_task(rq, prev);
		if (preempt)
			prev->nivcsw++;
	}
	next = pick_next_task(rq);
	clear_tsk_need_resched(prev);

	if (likely(prev != next)) {
		rq->curr = next;
		rq->nr_switches++;
		nr_context_switches[cpu]++;
		next->on_cpu = 1;
		trace_sched_switch(preempt, prev, next, prev_state);
		/* switch_mm_irqs_off() and entry_task_switch() */
		switch_mm(next->mm);
		WRITE_ONCE(__entry_task[cpu], next);
		prev = cpu_switch_to(prev, next);
		finish_task_switch(prev);
	} else {
		arch_spin_unlock(&rq->lock.raw_lock);
		local_irq_enable();
	}
}

asmlinkage __sched void schedule(void)
{
	do {
		preempt_disable();
		__schedule(false);
		sched_preempt_enable_no_resched();
	} while (need_resched());
}

/*
 * This is the entry point to schedule() from kernel preemption off of
 * IRQ context (el1_interrupt's arm64_preempt_schedule_irq). IRQs are off
 * on entry and exit; a nested IRQ meanwhile finds preemption disabled.
 */
asmlinkage __sched void preempt_schedule_irq(void)
{
	do {
		preempt_disable();
		local_irq_enable();
		__schedule(true);
		local_irq_disable();
		sched_preempt_enable_no_resched();
	} while (need_resched());
}

/* Called by the tick with IRQs off: round robin, one tick per slice. */
void scheduler_tick(void)
{
	unsigned int cpu = smp_processor_id();
	struct rq *rq = cpu_rq(cpu);

	arch_spin_lock(&rq->lock.raw_lock);
	sched_ticks[cpu]++;
	if (rq->curr != rq->idle)
		sched_busy_ticks[cpu]++;
	if (!list_empty(&rq->queue) && !rt_task(rq->curr))
		resched_curr(rq);	/* real-time tasks are not time-sliced */
	arch_spin_unlock(&rq->lock.raw_lock);
}

/* init_idle - set up an idle thread for a given CPU */
void init_idle(struct task_struct *idle, int cpu)
{
	struct rq *rq = cpu_rq(cpu);

	if (idle != &init_task) {
		idle->__state = TASK_RUNNING;
		idle->flags = PF_KTHREAD;
		idle->prio = 120;
		idle->real_parent = idle->parent = &init_task;
		INIT_LIST_HEAD(&idle->children);
		INIT_LIST_HEAD(&idle->sibling);
		INIT_LIST_HEAD(&idle->tasks);
		init_waitqueue_head(&idle->wait_chldexit);
		snprintf(idle->comm, sizeof(idle->comm), "swapper/%d", cpu);
	}
	INIT_LIST_HEAD(&idle->run_list);
	idle->thread_info.cpu = cpu;
	idle->thread_info.preempt_count = 0;
	idle->on_cpu = 1;
	rq->curr = rq->idle = idle;
	__entry_task[cpu] = idle;
}

/*
 * The idle loop (kernel/sched/idle.c's do_idle): WFI with IRQs masked, so
 * that an interrupt arriving between the check and the WFI still wakes it,
 * then unmask to take it.
 */
__noreturn void cpu_startup_entry(void)
{
	for (;;) {
		while (!need_resched()) {
			local_irq_disable();
			if (!need_resched())
				wfi();
			local_irq_enable();
		}
		schedule();
	}
}

void sched_init(void)
{
	int cpu;

	for (cpu = 0; cpu < NR_CPUS; cpu++) {
		struct rq *rq = cpu_rq(cpu);

		raw_spin_lock_init(&rq->lock);
		INIT_LIST_HEAD(&rq->queue);
		rq->nr_running = 0;
		rq->cpu = cpu;
	}
	init_idle(&init_task, 0);
}

NOKPROBE_SYMBOL(preempt_schedule_irq);
