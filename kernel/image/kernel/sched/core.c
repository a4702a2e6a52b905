// SPDX-License-Identifier: MIT
/*
 * The run queue of the one CPU, after kernel/sched/core.c. There is no
 * preemption and no context switch: the workload runs as pid 1 and moves
 * new tasks from TASK_NEW to the run queue and, when they are reaped, off it.
 */
#include <linux/kernel.h>
#include <linux/sched.h>

struct rq runqueue = {
	.queue = LIST_HEAD_INIT(runqueue.queue),
};

static void enqueue_task(struct rq *rq, struct task_struct *p)
{
	list_add_tail(&p->run_list, &rq->queue);
	p->on_rq = 1;
	rq->nr_running++;
}

void dequeue_task(struct rq *rq, struct task_struct *p)
{
	if (!p->on_rq)
		return;
	list_del_init(&p->run_list);
	p->on_rq = 0;
	rq->nr_running--;
}

/* sched_fork(): a new task starts in TASK_NEW, off any run queue. */
int sched_fork(unsigned long clone_flags, struct task_struct *p)
{
	p->__state = TASK_NEW;
	p->on_rq = 0;
	p->prio = current->prio;
	p->nvcsw = p->nivcsw = 0;
	INIT_LIST_HEAD(&p->run_list);
	return 0;
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
	struct rq *rq = &runqueue;

	WRITE_ONCE(p->__state, TASK_RUNNING);
	enqueue_task(rq, p);
	rq->nr_switches++;
}

void sched_init(void)
{
	INIT_LIST_HEAD(&runqueue.queue);
	runqueue.nr_running = 0;
}
