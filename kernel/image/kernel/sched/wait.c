// SPDX-License-Identifier: MIT
/* Wait queues, after kernel/sched/wait.c. */
#include <linux/kernel.h>
#include <linux/sched.h>
#include <linux/wait.h>

void init_waitqueue_head(struct wait_queue_head *wq_head)
{
	spin_lock_init(&wq_head->lock);
	INIT_LIST_HEAD(&wq_head->head);
}

/*
 * Note: we use "set_current_state()" _after_ the wait-queue add, because we
 * need a memory barrier there on SMP, so that any wake-function that tests
 * for the wait-queue being active will be guaranteed to see waitqueue
 * addition _or_ subsequent tests in this thread will see the wakeup having
 * taken place.
 */
void prepare_to_wait(struct wait_queue_head *wq_head,
		     struct wait_queue_entry *wq_entry, int state)
{
	unsigned long flags;

	spin_lock_irqsave(&wq_head->lock, flags);
	if (list_empty(&wq_entry->entry))
		list_add_tail(&wq_entry->entry, &wq_head->head);
	set_current_state(state);
	spin_unlock_irqrestore(&wq_head->lock, flags);
}

void finish_wait(struct wait_queue_head *wq_head,
		 struct wait_queue_entry *wq_entry)
{
	unsigned long flags;

	__set_current_state(TASK_RUNNING);
	if (!list_empty(&wq_entry->entry)) {
		spin_lock_irqsave(&wq_head->lock, flags);
		list_del_init(&wq_entry->entry);
		spin_unlock_irqrestore(&wq_head->lock, flags);
	}
}

/* __wake_up - wake up threads blocked on a waitqueue; nr 0: all. */
void __wake_up(struct wait_queue_head *wq_head, unsigned int mode, int nr)
{
	struct wait_queue_entry *curr, *next;
	unsigned long flags;

	spin_lock_irqsave(&wq_head->lock, flags);
	list_for_each_entry_safe(curr, next, &wq_head->head, entry) {
		if (try_to_wake_up(curr->private, mode, 0) && nr && !--nr)
			break;
	}
	spin_unlock_irqrestore(&wq_head->lock, flags);
}
