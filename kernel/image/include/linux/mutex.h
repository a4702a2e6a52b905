/* SPDX-License-Identifier: MIT */
/*
 * Sleeping locks, after Linux's linux/mutex.h: the owner is the task that
 * holds the mutex (0 when free), and a task that finds it taken sleeps on
 * its wait queue until mutex_unlock() wakes it. Process context only.
 */
#ifndef _LINUX_MUTEX_H
#define _LINUX_MUTEX_H

#include <linux/wait.h>

struct mutex {
	unsigned long owner;		/* the holder's task_struct, 0: free */
	struct wait_queue_head wait;
};

void mutex_init(struct mutex *lock);
void mutex_lock(struct mutex *lock);
int mutex_trylock(struct mutex *lock);
void mutex_unlock(struct mutex *lock);

static inline bool mutex_is_locked(struct mutex *lock)
{
	return READ_ONCE(lock->owner) != 0;
}

#endif /* _LINUX_MUTEX_H */
