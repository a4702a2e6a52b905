// SPDX-License-Identifier: MIT
/*
 * Task exit and reaping, after kernel/exit.c: exit_notify() turns a task
 * into a zombie and takes it off the run queue; release_task() unlinks a
 * zombie and frees its task_struct.
 */
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/sched.h>

struct rq;
extern struct rq runqueue;
void dequeue_task(struct rq *rq, struct task_struct *p);
void free_task_struct(struct task_struct *tsk);

void exit_notify(struct task_struct *tsk, int code)
{
	tsk->flags |= PF_EXITING;
	tsk->exit_code = code;
	dequeue_task(&runqueue, tsk);
	tsk->exit_state = EXIT_ZOMBIE;
	tsk->__state = TASK_DEAD;
}

void release_task(struct task_struct *p)
{
	p->exit_state = EXIT_DEAD;
	/* Linux does this in finish_task_switch() once a dead task is off the CPU. */
	kprobe_flush_task(p);
	dequeue_task(&runqueue, p);
	list_del(&p->tasks);
	list_del(&p->sibling);
	nr_threads--;
	free_pid(p->pid);
	free_task_struct(p);
}
