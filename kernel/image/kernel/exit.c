// SPDX-License-Identifier: MIT
/*
 * Task exit and reaping, after kernel/exit.c: do_exit() releases the
 * address space and the files, hands the task's children to pid 1
 * (forget_original_parent), makes the task a zombie and switches away
 * for good (do_task_dead); the switch's finish_task_switch() then wakes
 * the parent, which reaps the zombie with release_task() once it is off
 * its CPU: the workload's kernel thread directly, a user process in
 * wait4(2).
 */
#include <linux/kernel.h>
#include <linux/fs.h>
#include <linux/kprobes.h>
#include <linux/kpemu_shadow.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <trace/events/sched.h>
#include <asm/bug.h>
#include <asm/ptrace.h>

#define WNOHANG		0x00000001

void free_task_struct(struct task_struct *tsk);
void switch_mm(struct mm_struct *next);

u64 nr_exits;

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

/* exit_mm(): off the process's tables first, then free them. */
static void exit_mm(struct task_struct *tsk)
{
	struct mm_struct *mm = tsk->mm;

	if (!mm)
		return;
	tsk->mm = NULL;
	switch_mm(NULL);
	mmput(mm);
}

static void exit_files(struct task_struct *tsk)
{
	struct files_struct *files = tsk->files;

	if (!files)
		return;
	tsk->files = NULL;
	put_files_struct(files);
}

/* Orphans go to pid 1, which reaps the zombies among them. */
static void forget_original_parent(struct task_struct *father)
{
	struct task_struct *reaper, *p, *n;
	unsigned long flags;
	bool zombies = false;

	/* the task list is walked under its lock: tasks leave it on any CPU */
	raw_spin_lock_irqsave(&tasklist_lock, flags);
	reaper = find_task_by_pid_ns(1);
	if (!reaper || reaper == father) {
		raw_spin_unlock_irqrestore(&tasklist_lock, flags);
		return;
	}
	list_for_each_entry_safe(p, n, &father->children, sibling) {
		list_del(&p->sibling);
		p->real_parent = p->parent = reaper;
		list_add_tail(&p->sibling, &reaper->children);
		zombies |= READ_ONCE(p->exit_state) == EXIT_ZOMBIE;
	}
	raw_spin_unlock_irqrestore(&tasklist_lock, flags);
	if (zombies)
		wake_up(&reaper->wait_chldexit);
}

__noreturn void do_exit(long code)
{
	struct task_struct *tsk = current;

	preempt_disable();
	__atomic_add_fetch(&nr_exits, 1, __ATOMIC_RELAXED);
	exit_mm(tsk);
	trace_sched_process_exit(tsk);
	exit_files(tsk);
	forget_original_parent(tsk);
	exit_notify(tsk, code);
	kpemu_shadow_exit(tsk);
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
	unsigned long flags;

	p->exit_state = EXIT_DEAD;
	/* Linux: delayed_put_task_struct(), the RCU callback after release_task() */
	trace_sched_process_free(p);
	/* Linux does this in finish_task_switch() once a dead task is off the CPU. */
	kprobe_flush_task(p);
	raw_spin_lock_irqsave(&tasklist_lock, flags);
	list_del(&p->tasks);
	list_del(&p->sibling);
	nr_threads--;
	free_pid(p->pid);
	free_task_struct(p);
	raw_spin_unlock_irqrestore(&tasklist_lock, flags);
}

long __arm64_sys_exit(const struct pt_regs *regs)
{
	do_exit((regs->regs[0] & 0xff) << 8);
}

long __arm64_sys_exit_group(const struct pt_regs *regs)
{
	do_exit((regs->regs[0] & 0xff) << 8);
}

/*
 * kernel_wait4(): wait for a child (pid > 0: that one; -1: any) to be
 * reapable, reap it and return its pid and wait status (exit code << 8,
 * or the number of the signal that killed it).
 */
static long kernel_wait4(pid_t upid, int *stat_addr, int options)
{
	struct task_struct *p, *target;
	unsigned long flags;
	bool have_child;
	long ret;
	int status;
	DEFINE_WAIT(wait);

	for (;;) {
		prepare_to_wait(&current->wait_chldexit, &wait, TASK_INTERRUPTIBLE);
		target = NULL;
		have_child = false;
		raw_spin_lock_irqsave(&tasklist_lock, flags);
		list_for_each_entry(p, &current->children, sibling) {
			if (upid > 0 && p->pid != upid)
				continue;
			have_child = true;
			if (task_reapable(p)) {
				target = p;
				break;
			}
		}
		raw_spin_unlock_irqrestore(&tasklist_lock, flags);
		if (target || !have_child || (options & WNOHANG))
			break;
		schedule();
	}
	finish_wait(&current->wait_chldexit, &wait);
	if (!target)
		return have_child ? 0 : -ECHILD;
	ret = target->pid;
	status = target->exit_code;
	release_task(target);
	/* as Linux: the child is reaped even if the status cannot be stored */
	if (stat_addr && copy_to_user(stat_addr, &status, sizeof(status)))
		return -EFAULT;
	return ret;
}

long __arm64_sys_wait4(const struct pt_regs *regs)
{
	return kernel_wait4(regs->regs[0], (int *)regs->regs[1], regs->regs[2]);
}
