// SPDX-License-Identifier: MIT
/*
 * irq_work, after kernel/irq_work.c: a per-CPU list of work that the
 * IPI_IRQ_WORK self-IPI runs in hard interrupt context (arm64's
 * arch_irq_work_raise). A work is queued once until it ran: PENDING says
 * it is listed, BUSY that it is listed or running, which irq_work_sync()
 * waits out.
 */
#include <linux/kernel.h>
#include <linux/irq_work.h>
#include <linux/spinlock.h>
#include <linux/irqchip/arm-gic.h>
#include <asm/smp.h>
#include <asm/sysreg.h>

static struct irq_work *raised_list[NR_CPUS];

/* Queues @work on this CPU; false if it was queued already. */
bool irq_work_queue(struct irq_work *work)
{
	unsigned long flags;
	unsigned int cpu;

	if (__atomic_fetch_or(&work->flags, IRQ_WORK_PENDING | IRQ_WORK_BUSY,
			      __ATOMIC_ACQ_REL) & IRQ_WORK_PENDING)
		return false;
	local_irq_save(flags);
	cpu = smp_processor_id();
	work->next = raised_list[cpu];
	raised_list[cpu] = work;
	gic_raise_softirq(cpu, IPI_IRQ_WORK);
	local_irq_restore(flags);
	return true;
}

/* The IPI handler's part: runs this CPU's works, oldest first. */
void irq_work_run(void)
{
	unsigned int cpu = smp_processor_id();
	struct irq_work *list = raised_list[cpu], *rev = NULL, *next;

	raised_list[cpu] = NULL;
	for (; list; list = next) {	/* the list is newest first */
		next = list->next;
		list->next = rev;
		rev = list;
	}
	for (; rev; rev = next) {
		next = rev->next;
		__atomic_fetch_and(&rev->flags, ~IRQ_WORK_PENDING, __ATOMIC_ACQ_REL);
		rev->func(rev);
		__atomic_fetch_and(&rev->flags, ~IRQ_WORK_BUSY, __ATOMIC_RELEASE);
	}
}

/* Waits until @work is neither queued nor running. */
void irq_work_sync(struct irq_work *work)
{
	while (__atomic_load_n(&work->flags, __ATOMIC_ACQUIRE) & IRQ_WORK_BUSY)
		asm volatile("yield" : : : "memory");
}
