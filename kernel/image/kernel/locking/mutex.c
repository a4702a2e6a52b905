// SPDX-License-Identifier: MIT
/*
 * Mutexes, after kernel/locking/mutex.c: mutex_trylock() claims a free
 * mutex for current with one compare-and-swap of its owner (Linux's
 * __mutex_trylock_fast); mutex_lock() that fails sleeps on the mutex's
 * wait queue and tries again each time mutex_unlock() wakes a waiter.
 */
#include <linux/kernel.h>
#include <linux/mutex.h>
#include <linux/sched.h>

void mutex_init(struct mutex *lock)
{
	lock->owner = 0;
	init_waitqueue_head(&lock->wait);
}

int mutex_trylock(struct mutex *lock)
{
	unsigned long zero = 0;

	return __atomic_compare_exchange_n(&lock->owner, &zero,
					   (unsigned long)current, false,
					   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

void mutex_lock(struct mutex *lock)
{
	if (mutex_trylock(lock))
		return;
	wait_event(lock->wait, mutex_trylock(lock));
}

void mutex_unlock(struct mutex *lock)
{
	__atomic_store_n(&lock->owner, 0, __ATOMIC_RELEASE);
	wake_up(&lock->wait);
}
