// SPDX-License-Identifier: MIT
/*
 * Interrupt lines for drivers, after kernel/irq/manage.c and irqdesc.c:
 * request_irq() installs a handler for an INTID and unmasks it at the GIC;
 * free_irq() masks it, waits until no CPU runs the handler any more
 * (synchronize_irq), and removes it, so that a module may free its code
 * afterwards. gic_handle_irq() calls generic_handle_irq() for every
 * interrupt it does not handle itself (SGIs, the tick).
 *
 * One handler per line (no IRQF_SHARED chains). The table is changed only
 * with the line masked and under irq_desc_lock; the handler runs with
 * in_progress raised, which free_irq() waits on.
 */
#include <linux/kernel.h>
#include <linux/errno.h>
#include <linux/interrupt.h>
#include <linux/spinlock.h>
#include <linux/irqchip/arm-gic.h>

struct irq_desc {
	irq_handler_t	handler;
	void		*dev_id;
	const char	*name;
	u32		in_progress;	/* CPUs inside the handler now */
};

static struct irq_desc irq_desc[NR_IRQS];
static DEFINE_SPINLOCK(irq_desc_lock);

u64 kstat_irqs[NR_IRQS];
u64 nr_spurious_irqs;		/* interrupts with no handler installed */

int request_irq(unsigned int irq, irq_handler_t handler, unsigned long flags,
		const char *name, void *dev_id)
{
	struct irq_desc *desc;
	unsigned long f;

	/* SGIs and the tick are the GIC driver's own */
	if (irq < 32 || irq >= NR_IRQS || !handler)
		return -EINVAL;
	desc = &irq_desc[irq];
	spin_lock_irqsave(&irq_desc_lock, f);
	if (desc->handler) {
		spin_unlock_irqrestore(&irq_desc_lock, f);
		return -EBUSY;
	}
	desc->dev_id = dev_id;
	desc->name = name;
	WRITE_ONCE(desc->handler, handler);
	spin_unlock_irqrestore(&irq_desc_lock, f);
	gic_irq_unmask(irq);
	return 0;
}

void synchronize_irq(unsigned int irq)
{
	if (irq >= NR_IRQS)
		return;
	while (__atomic_load_n(&irq_desc[irq].in_progress, __ATOMIC_ACQUIRE))
		asm volatile("yield" : : : "memory");
}

/* Returns the name the line was requested with, as Linux's devname. */
const void *free_irq(unsigned int irq, void *dev_id)
{
	struct irq_desc *desc;
	const char *name;
	unsigned long f;

	if (irq < 32 || irq >= NR_IRQS)
		return NULL;
	desc = &irq_desc[irq];
	spin_lock_irqsave(&irq_desc_lock, f);
	if (!desc->handler || desc->dev_id != dev_id) {
		spin_unlock_irqrestore(&irq_desc_lock, f);
		pr_warn("Trying to free already-free IRQ %u\n", irq);
		return NULL;
	}
	gic_irq_mask(irq);
	WRITE_ONCE(desc->handler, NULL);
	name = desc->name;
	desc->dev_id = NULL;
	desc->name = NULL;
	spin_unlock_irqrestore(&irq_desc_lock, f);
	/* a CPU that took the interrupt before the mask may still be inside */
	synchronize_irq(irq);
	return name;
}

int generic_handle_irq(unsigned int irq)
{
	struct irq_desc *desc;
	irq_handler_t handler;
	irqreturn_t ret;

	if (irq >= NR_IRQS)
		return -EINVAL;
	desc = &irq_desc[irq];
	__atomic_fetch_add(&desc->in_progress, 1, __ATOMIC_ACQUIRE);
	handler = READ_ONCE(desc->handler);
	if (!handler) {
		__atomic_fetch_sub(&desc->in_progress, 1, __ATOMIC_RELEASE);
		nr_spurious_irqs++;
		return -EINVAL;
	}
	ret = handler(irq, READ_ONCE(desc->dev_id));
	__atomic_fetch_sub(&desc->in_progress, 1, __ATOMIC_RELEASE);
	if (ret != IRQ_NONE)
		kstat_irqs[irq]++;
	return 0;
}
