// SPDX-License-Identifier: MIT
/*
 * Task exit and reaping, after kernel/exit.c: do_exit() makes the task a
 * zombie and switches away for good (do_task_dead); the switch's
 * finish_task_switch() then wakes the parent, which reaps the zombie with
 * release_task() once it is off its CPU.
 */
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/sched.h>
#include <asm/bug.h>

void free_task_struct(struct task_struct *tsk);

void exit_notify(struct task_struct *tsk, int code)
{
	tsk->flags |= PF_EXITING;
	tsk->exit_code = code;
	WRITE_ONCE(tsk->exit_state, EXIT_ZOMBIE);
}

/* Called with preemption disabled: a preemption now would leave a dead
 * task on the run queue, which its parent could reap and reuse. */
static __noreturn void do_task_dead(void)
{
	/* Causes final put_task_struct in finish_task_switch(): */
	set_current_state(TASK_DEAD);
	schedule();
	BUG();
	for (;;)
		;
}

__noreturn void do_exit(long code)
{
	preempt_disable();
	exit_notify(current, code);
	do_task_dead();
}

/* Whether a child can be reaped: dead, and switched off its CPU for good. */
bool task_reapable(struct task_struct *p)
{
	return READ_ONCE(p->exit_state) == EXIT_ZOMBIE &&
	       READ_ONCE(p->__state) == TASK_DEAD &&
	       !__atomic_load_n(&p->on_cpu, __ATOMIC_ACQUIRE);
}

void release_task(struct task_struct *p)
{
	p->exit_state = EXIT_DEAD;
	/* Linux does this in finish_task_switch() once a dead task is off the CPU. */
	kprobe_flush_task(p);
	list_del(&p->tasks);
	list_del(&p->sibling);
	nr_threads--;
	free_pid(p->pid);
	free_task_struct(p);
}
