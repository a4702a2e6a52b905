/* SPDX-License-Identifier: MIT */
/*
 * Work run in hard interrupt context, soon, on this CPU, as Linux's
 * include/linux/irq_work.h: irq_work_queue() lists the work and raises a
 * self-IPI (arm64's IPI_IRQ_WORK); the IPI handler runs it.
 */
#ifndef _LINUX_IRQ_WORK_H
#define _LINUX_IRQ_WORK_H

#include <linux/types.h>

#define IRQ_WORK_PENDING	0x1	/* queued, not run yet */
#define IRQ_WORK_BUSY		0x2	/* queued or running */

struct irq_work {
	struct irq_work	*next;
	u32		flags;
	void		(*func)(struct irq_work *);
};

static inline void init_irq_work(struct irq_work *work, void (*func)(struct irq_work *))
{
	work->next = NULL;
	work->flags = 0;
	work->func = func;
}

bool irq_work_queue(struct irq_work *work);
void irq_work_run(void);
void irq_work_sync(struct irq_work *work);

#endif /* _LINUX_IRQ_WORK_H */
