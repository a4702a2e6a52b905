/* SPDX-License-Identifier: MIT */
/*
 * The GICv2 driver (drivers/irqchip/irq-gic.c), as linux/irqchip/arm-gic.h:
 * QEMU virt's (and kpemu's) distributor at 0x08000000, CPU interface at
 * 0x08010000 (physical; the driver reaches them through ioremap()).
 */
#ifndef __LINUX_IRQCHIP_ARM_GIC_H
#define __LINUX_IRQCHIP_ARM_GIC_H

#define GIC_DIST_BASE		0x08000000UL
#define GIC_CPU_BASE		0x08010000UL

#define GIC_CPU_CTRL			0x00
#define GIC_CPU_PRIMASK			0x04
#define GIC_CPU_BINPOINT		0x08
#define GIC_CPU_INTACK			0x0c
#define GIC_CPU_EOI			0x10

#define GIC_DIST_CTRL			0x000
#define GIC_DIST_CTR			0x004
#define GIC_DIST_IGROUP			0x080
#define GIC_DIST_ENABLE_SET		0x100
#define GIC_DIST_ENABLE_CLEAR		0x180
#define GIC_DIST_PENDING_CLEAR		0x280
#define GIC_DIST_ACTIVE_CLEAR		0x380
#define GIC_DIST_PRI			0x400
#define GIC_DIST_TARGET			0x800
#define GIC_DIST_CONFIG			0xc00
#define GIC_DIST_SOFTINT		0xf00

#define GICD_ENABLE			0x1
#define GICC_ENABLE			0x1
#define GICC_INT_PRI_THRESHOLD		0xf0
#define GICC_IAR_INT_ID_MASK		0x3ff
#define GICD_INT_DEF_PRI		0xa0

/* Interrupt ids (SGIs 0..15, PPIs 16..31). */
#define IPI_RESCHEDULE		0
#define IPI_CALL_FUNC		1
#define IPI_IRQ_WORK		5	/* as arm64's enum ipi_msg_type */
#define ARCH_TIMER_VIRT_PPI	27
#define ARCH_TIMER_PHYS_PPI	30

#ifndef __ASSEMBLY__
struct pt_regs;
struct irq_chip;
/* the chip of the SPIs that drivers request (kernel/irq/manage.c) */
extern const struct irq_chip gic_chip;
void gic_init(void);
void gic_cpu_init(void);
void gic_enable_ppi(unsigned int irq);
void gic_irq_unmask(unsigned int irq);
void gic_irq_mask(unsigned int irq);
void gic_raise_softirq(unsigned int cpu, unsigned int irq);
void gic_handle_irq(struct pt_regs *regs);

/* drivers/clocksource/arm_arch_timer.c */
void arch_timer_starting_cpu(void);
void arch_timer_handler_virt(void);
#endif

#endif /* __LINUX_IRQCHIP_ARM_GIC_H */
