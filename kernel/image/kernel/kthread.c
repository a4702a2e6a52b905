// SPDX-License-Identifier: MIT
/*
 * Kernel threads, after kernel/kthread.c. Linux asks kthreadd to fork
 * them; here the caller forks directly with CLONE_PARENT so that, as
 * under kthreadd, they are not the caller's children (pid 1 reaps only
 * its own). kthread_create() returns the task stopped in TASK_NEW;
 * kthread_run() (linux/kthread.h) also wakes it.
 */
#include <linux/kernel.h>
#include <linux/kthread.h>
#include <linux/sched.h>

pid_t kernel_clone(struct kernel_clone_args *args);
struct task_struct *copy_kthread(struct kernel_clone_args *args);

struct task_struct *kthread_create(int (*threadfn)(void *data), void *data,
				   const char namefmt[], ...)
{
	struct kernel_clone_args args = {
		.flags		= CLONE_FS | CLONE_FILES | CLONE_VM |
				  CLONE_UNTRACED | CLONE_PARENT,
		.kthread	= 1,
		.fn		= threadfn,
		.fn_arg		= data,
	};
	struct task_struct *p;
	va_list ap;

	p = copy_kthread(&args);
	if (IS_ERR(p))
		return p;
	va_start(ap, namefmt);
	vsnprintf(p->comm, sizeof(p->comm), namefmt, ap);
	va_end(ap);
	return p;
}

/* kthread_bind(): p, not yet woken, runs on cpu only. */
void kthread_bind(struct task_struct *p, unsigned int cpu)
{
	p->thread_info.cpu = cpu;
	p->flags |= PF_NO_SETAFFINITY;
}
