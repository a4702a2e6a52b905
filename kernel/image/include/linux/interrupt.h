/* SPDX-License-Identifier: MIT */
/*
 * Interrupt handlers, as linux/interrupt.h and linux/irqreturn.h: a driver
 * asks for an interrupt line with request_irq() and gives it back with
 * free_irq(); the GIC driver's gic_handle_irq() runs the handler through
 * generic_handle_irq() (kernel/irq/).
 */
#ifndef _LINUX_INTERRUPT_H
#define _LINUX_INTERRUPT_H

#include <linux/types.h>

typedef enum irqreturn {
	IRQ_NONE		= (0 << 0),
	IRQ_HANDLED		= (1 << 0),
	IRQ_WAKE_THREAD		= (1 << 1),
} irqreturn_t;

typedef irqreturn_t (*irq_handler_t)(int irq, void *dev_id);

#define IRQF_SHARED		0x00000080
#define IRQF_TRIGGER_HIGH	0x00000004

/* INTIDs the table covers: SGIs, PPIs and the first 96 SPIs. */
#define NR_IRQS			128

int request_irq(unsigned int irq, irq_handler_t handler, unsigned long flags,
		const char *name, void *dev_id);
const void *free_irq(unsigned int irq, void *dev_id);
void synchronize_irq(unsigned int irq);
int generic_handle_irq(unsigned int irq);

/* Per-INTID counts of handled interrupts (/proc/interrupts), u64[NR_IRQS]. */
extern u64 kstat_irqs[NR_IRQS];

#endif /* _LINUX_INTERRUPT_H */
