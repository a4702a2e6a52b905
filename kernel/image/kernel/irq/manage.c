// SPDX-License-Identifier: MIT
/*
 * Interrupt lines for drivers, after kernel/irq/manage.c and irqdesc.c:
 * request_irq() installs a handler for an INTID and unmasks it at the GIC;
 * free_irq() masks it, waits until no CPU runs the handler any more
 * (synchronize_irq), and removes it, so that a module may free its code
 * afterwards. gic_handle_irq() calls generic_handle_irq() for every
 * interrupt it does not handle itself (SGIs, the tick).
 *
 * One action per line (no IRQF_SHARED chains), kmalloc'ed as Linux's. A
 * descriptor (kernel/irq/irqdesc.c) changes only with the line masked and
 * under its lock; the handler runs with in_progress raised, which
 * free_irq() waits on. A line's first request gives it its sysfs
 * directory, /sys/kernel/irq/<irq>.
 */
#include <linux/kernel.h>
#include <linux/errno.h>
#include <linux/interrupt.h>
#include <linux/irqdesc.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/irqchip/arm-gic.h>
#include <asm/smp.h>

u64 kstat_irqs[NR_IRQS];
u64 nr_spurious_irqs;		/* interrupts with no handler installed */

int request_irq(unsigned int irq, irq_handler_t handler, unsigned long flags,
		const char *name, void *dev_id)
{
	struct irqaction *action;
	struct irq_desc *desc;
	unsigned long f;

	/* SGIs and the tick are the GIC driver's own */
	if (irq < 32 || irq >= NR_IRQS || !handler)
		return -EINVAL;
	desc = irq_to_desc(irq);
	action = kzalloc(sizeof(*action), GFP_KERNEL);
	if (!action)
		return -ENOMEM;
	action->handler = handler;
	action->flags = flags;
	action->name = name;
	action->dev_id = dev_id;
	action->irq = irq;

	raw_spin_lock_irqsave(&desc->lock, f);
	if (desc->action) {
		raw_spin_unlock_irqrestore(&desc->lock, f);
		kfree(action);
		return -EBUSY;
	}
	/*
	 * An SPI of the GIC, which gic_dist_config() made level-sensitive
	 * (Linux maps the line when it parses the device tree:
	 * gic_irq_domain_map, with the specifier's trigger).
	 */
	desc->irq_data.irq = irq;
	desc->irq_data.hwirq = irq;
	desc->irq_data.chip = &gic_chip;
	desc->irq_data.state_use_accessors |= IRQD_LEVEL;
	WRITE_ONCE(desc->action, action);
	raw_spin_unlock_irqrestore(&desc->lock, f);
	irq_sysfs_add(irq, desc);
	desc->irq_data.chip->irq_unmask(&desc->irq_data);
	return 0;
}

void synchronize_irq(unsigned int irq)
{
	struct irq_desc *desc = irq_to_desc(irq);

	if (!desc)
		return;
	while (__atomic_load_n(&desc->in_progress, __ATOMIC_ACQUIRE))
		asm volatile("yield" : : : "memory");
}

/* Returns the name the line was requested with, as Linux's devname. */
const void *free_irq(unsigned int irq, void *dev_id)
{
	struct irqaction *action;
	struct irq_desc *desc;
	const char *name;
	unsigned long f;

	if (irq < 32 || irq >= NR_IRQS)
		return NULL;
	desc = irq_to_desc(irq);
	raw_spin_lock_irqsave(&desc->lock, f);
	action = desc->action;
	if (!action || action->dev_id != dev_id) {
		raw_spin_unlock_irqrestore(&desc->lock, f);
		pr_warn("Trying to free already-free IRQ %u\n", irq);
		return NULL;
	}
	desc->irq_data.chip->irq_mask(&desc->irq_data);
	WRITE_ONCE(desc->action, NULL);
	raw_spin_unlock_irqrestore(&desc->lock, f);
	/* a CPU that took the interrupt before the mask may still be inside */
	synchronize_irq(irq);
	name = action->name;
	kfree(action);
	return name;
}

int generic_handle_irq(unsigned int irq)
{
	struct irqaction *action;
	struct irq_desc *desc;
	irqreturn_t ret;

	if (irq >= NR_IRQS)
		return -EINVAL;
	desc = irq_to_desc(irq);
	/* kstat_incr_irqs_this_cpu(): every delivery counts, handled or not */
	desc->kstat_irqs[smp_processor_id()]++;
	__atomic_fetch_add(&desc->in_progress, 1, __ATOMIC_ACQUIRE);
	action = READ_ONCE(desc->action);
	if (!action) {
		__atomic_fetch_sub(&desc->in_progress, 1, __ATOMIC_RELEASE);
		nr_spurious_irqs++;
		return -EINVAL;
	}
	ret = action->handler(irq, action->dev_id);
	__atomic_fetch_sub(&desc->in_progress, 1, __ATOMIC_RELEASE);
	if (ret != IRQ_NONE)
		kstat_irqs[irq]++;
	return 0;
}
