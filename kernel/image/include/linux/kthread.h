/* SPDX-License-Identifier: MIT */
/* Kernel threads, as linux/kthread.h. */
#ifndef _LINUX_KTHREAD_H
#define _LINUX_KTHREAD_H

#include <linux/sched.h>

__printf(3, 4)
struct task_struct *kthread_create(int (*threadfn)(void *data), void *data,
				   const char namefmt[], ...);

void kthread_bind(struct task_struct *p, unsigned int cpu);

#define kthread_run(threadfn, data, namefmt, ...)			\
({									\
	struct task_struct *__k						\
		= kthread_create(threadfn, data, namefmt, ## __VA_ARGS__); \
	if (!IS_ERR(__k))						\
		wake_up_new_task(__k);					\
	__k;								\
})

#endif /* _LINUX_KTHREAD_H */
