/* SPDX-License-Identifier: MIT */
/* Wait queues, as linux/wait.h (kernel/sched/wait.c). */
#ifndef _LINUX_WAIT_H
#define _LINUX_WAIT_H

#include <linux/list.h>
#include <linux/spinlock.h>

struct task_struct;

struct wait_queue_entry {
	struct task_struct	*private;
	struct list_head	entry;
};

struct wait_queue_head {
	spinlock_t		lock;
	struct list_head	head;
};

typedef struct wait_queue_entry wait_queue_entry_t;
typedef struct wait_queue_head wait_queue_head_t;

#define __WAIT_QUEUE_HEAD_INITIALIZER(name) {				\
	.lock	= __RAW_SPIN_LOCK_UNLOCKED(name.lock),			\
	.head	= LIST_HEAD_INIT(name.head) }

#define DECLARE_WAIT_QUEUE_HEAD(name) \
	struct wait_queue_head name = __WAIT_QUEUE_HEAD_INITIALIZER(name)

#define DEFINE_WAIT(name)						\
	struct wait_queue_entry name = {				\
		.private	= current,				\
		.entry		= LIST_HEAD_INIT((name).entry),		\
	}

void init_waitqueue_head(struct wait_queue_head *wq_head);
void prepare_to_wait(struct wait_queue_head *wq_head,
		     struct wait_queue_entry *wq_entry, int state);
void finish_wait(struct wait_queue_head *wq_head,
		 struct wait_queue_entry *wq_entry);
void __wake_up(struct wait_queue_head *wq_head, unsigned int mode, int nr);

#define wake_up(x)		__wake_up(x, TASK_NORMAL, 1)
#define wake_up_all(x)		__wake_up(x, TASK_NORMAL, 0)

/* ___wait_event: sleep in @state until @condition is true, checked after
 * each wake_up() on @wq_head. */
#define ___wait_event(wq_head, condition, state)			\
do {									\
	DEFINE_WAIT(__wq_entry);					\
	for (;;) {							\
		prepare_to_wait(&(wq_head), &__wq_entry, state);	\
		if (condition)						\
			break;						\
		schedule();						\
	}								\
	finish_wait(&(wq_head), &__wq_entry);				\
} while (0)

/* wait_event - sleep (TASK_UNINTERRUPTIBLE) until @condition is true. */
#define wait_event(wq_head, condition)					\
	___wait_event(wq_head, condition, TASK_UNINTERRUPTIBLE)

/*
 * wait_event_interruptible - sleep (TASK_INTERRUPTIBLE) until @condition
 * is true. This kernel delivers no signals to a sleeping task, so it never
 * ends early: it is 0, where Linux's may be -ERESTARTSYS. Sleepers in it
 * show as S in sched_switch's prev_state, where wait_event's show D.
 */
#define wait_event_interruptible(wq_head, condition)			\
({									\
	___wait_event(wq_head, condition, TASK_INTERRUPTIBLE);		\
	0;								\
})

#endif /* _LINUX_WAIT_H */
