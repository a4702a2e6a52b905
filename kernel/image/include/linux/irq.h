/* SPDX-License-Identifier: MIT */
/*
 * Interrupt lines as the core sees them, as include/linux/irq.h: a line's
 * irq_data (its number, the controller's number for it, its chip and
 * state) and the chip that masks and unmasks it.
 */
#ifndef _LINUX_IRQ_H
#define _LINUX_IRQ_H

#include <linux/types.h>

struct irq_data;

struct irq_chip {
	const char	*name;
	void		(*irq_mask)(struct irq_data *data);
	void		(*irq_unmask)(struct irq_data *data);
};

struct irq_data {
	unsigned int		irq;
	unsigned long		hwirq;	/* kpemu: the GIC INTID, as irq */
	const struct irq_chip	*chip;
	u32			state_use_accessors;	/* IRQD_* */
};

/* irq_data state bits (Linux's values) */
enum {
	IRQD_LEVEL		= (1 << 13),
	IRQD_WAKEUP_STATE	= (1 << 14),
};

static inline bool irqd_is_level_type(struct irq_data *d)
{
	return d->state_use_accessors & IRQD_LEVEL;
}

static inline bool irqd_is_wakeup_set(struct irq_data *d)
{
	return d->state_use_accessors & IRQD_WAKEUP_STATE;
}

#endif /* _LINUX_IRQ_H */
