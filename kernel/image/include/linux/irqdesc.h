/* SPDX-License-Identifier: MIT */
/*
 * Interrupt descriptors, as include/linux/irqdesc.h: one per line (the
 * GIC INTID is the irq number), with the requested action, the counts per
 * CPU and a kobject: a line's /sys/kernel/irq/<irq> directory is made
 * when a driver first requests it (kernel/irq/irqdesc.c) and stays, as
 * Linux's stays while the descriptor lives.
 */
#ifndef _LINUX_IRQDESC_H
#define _LINUX_IRQDESC_H

#include <linux/types.h>
#include <linux/irq.h>
#include <linux/interrupt.h>
#include <linux/kobject.h>
#include <linux/spinlock.h>
#include <asm/smp.h>

/* What request_irq() installs (linux/interrupt.h); one per line in kpemu. */
struct irqaction {
	irq_handler_t		handler;
	void			*dev_id;
	struct irqaction	*next;	/* always NULL: no IRQF_SHARED chains */
	unsigned int		irq;
	unsigned int		flags;
	const char		*name;
};

struct irq_desc {
	struct irq_data		irq_data;
	unsigned int		kstat_irqs[NR_CPUS];	/* deliveries per CPU */
	struct irqaction	*action;	/* NULL: nobody has the line */
	unsigned int		istate;		/* IRQS_*, under sparse_irq_lock */
	u32			in_progress;	/* CPUs inside the handler now */
	raw_spinlock_t		lock;
	const char		*name;	/* the flow handler's: none in kpemu */
	struct kobject		kobj;
};

/* istate bits (kernel/irq/internals.h) */
enum {
	IRQS_ALLOCATED		= 0x00000001,	/* kpemu: requested at least once */
	IRQS_SYSFS		= 0x00004000,
};

#define for_each_action_of_desc(desc, act)			\
	for (act = (desc)->action; act; act = act->next)

struct irq_desc *irq_to_desc(unsigned int irq);
void irq_sysfs_add(int irq, struct irq_desc *desc);
int irq_sysfs_init(void);

#endif /* _LINUX_IRQDESC_H */
