// SPDX-License-Identifier: MIT
/*
 * The GICv2 driver, after drivers/irqchip/irq-gic.c: the distributor is
 * set up once by the boot CPU (gic_init), each CPU's banked interface and
 * its SGIs/PPIs by that CPU (gic_cpu_init). All interrupts are group 0,
 * signalled as IRQ (no Security Extensions on QEMU virt or kpemu).
 *
 * gic_handle_irq is __irq_entry (Linux: __exception_irq_entry), so kprobes
 * blacklists it with the rest of the irq entry text.
 */
#include <linux/kernel.h>
#include <linux/irqchip/arm-gic.h>
#include <asm/ptrace.h>
#include <linux/interrupt.h>
#include <linux/irq.h>
#include <asm/smp.h>
#include <asm/memory.h>

static inline u32 readl_relaxed(unsigned long addr)
{
	return *(volatile u32 *)addr;
}

static inline void writel_relaxed(u32 val, unsigned long addr)
{
	*(volatile u32 *)addr = val;
}

/* the registers through the device window (ioremap of a constant folds) */
#define dist(off)	((unsigned long)ioremap(GIC_DIST_BASE, 0x10000) + (off))
#define cpui(off)	((unsigned long)ioremap(GIC_CPU_BASE, 0x10000) + (off))

/* Number of interrupt lines (GICD_TYPER.ITLinesNumber). */
static unsigned int gic_irqs;

static void gic_dist_config(unsigned int irqs)
{
	unsigned int i;

	/* SPIs level-sensitive, default priority, inactive and disabled */
	for (i = 32; i < irqs; i += 16)
		writel_relaxed(0, dist(GIC_DIST_CONFIG + i / 4));
	for (i = 32; i < irqs; i += 4)
		writel_relaxed(0xa0a0a0a0, dist(GIC_DIST_PRI + i));
	for (i = 32; i < irqs; i += 32) {
		writel_relaxed(0xffffffff, dist(GIC_DIST_ACTIVE_CLEAR + i / 8));
		writel_relaxed(0xffffffff, dist(GIC_DIST_ENABLE_CLEAR + i / 8));
	}
}

void gic_init(void)
{
	unsigned int i;

	writel_relaxed(0, dist(GIC_DIST_CTRL));
	gic_irqs = ((readl_relaxed(dist(GIC_DIST_CTR)) & 0x1f) + 1) * 32;
	if (gic_irqs > 1020)
		gic_irqs = 1020;
	/* every SPI to CPU 0 (drivers take them with request_irq()) */
	for (i = 32; i < gic_irqs; i += 4)
		writel_relaxed(0x01010101, dist(GIC_DIST_TARGET + i));
	gic_dist_config(gic_irqs);
	writel_relaxed(GICD_ENABLE, dist(GIC_DIST_CTRL));
	pr_info("GIC: GICv2 at 0x%08lx, %u irqs\n", GIC_DIST_BASE, gic_irqs);
}

/* This CPU's banked SGIs and PPIs and its CPU interface (gic_cpu_init). */
void gic_cpu_init(void)
{
	unsigned int i;

	writel_relaxed(0xffff0000, dist(GIC_DIST_ENABLE_CLEAR));	/* PPIs off */
	writel_relaxed(0x0000ffff, dist(GIC_DIST_ENABLE_SET));		/* SGIs on */
	writel_relaxed(0xffffffff, dist(GIC_DIST_ACTIVE_CLEAR));
	for (i = 0; i < 32; i += 4)
		writel_relaxed(0xa0a0a0a0, dist(GIC_DIST_PRI + i));
	writel_relaxed(GICC_INT_PRI_THRESHOLD, cpui(GIC_CPU_PRIMASK));
	writel_relaxed(0, cpui(GIC_CPU_BINPOINT));
	writel_relaxed(GICC_ENABLE, cpui(GIC_CPU_CTRL));
}

void gic_enable_ppi(unsigned int irq)
{
	writel_relaxed(1U << (irq % 32), dist(GIC_DIST_ENABLE_SET + (irq / 32) * 4));
}

/* gic_mask_irq/gic_unmask_irq: an SPI's enable bit, for request_irq/free_irq. */
void gic_irq_unmask(unsigned int irq)
{
	writel_relaxed(1U << (irq % 32), dist(GIC_DIST_ENABLE_SET + (irq / 32) * 4));
}

void gic_irq_mask(unsigned int irq)
{
	writel_relaxed(1U << (irq % 32), dist(GIC_DIST_ENABLE_CLEAR + (irq / 32) * 4));
}

static void gic_mask_irq(struct irq_data *d)
{
	gic_irq_mask(d->hwirq);
}

static void gic_unmask_irq(struct irq_data *d)
{
	gic_irq_unmask(d->hwirq);
}

/*
 * The chip of the requested lines. Linux 6.1 names only gic_chip_mode1
 * ("GICv2": split EOI and deactivation, with a hypervisor's help); this
 * driver, like Linux's when booted at EL1, EOIs in mode 0 with gic_chip,
 * which has no name (/proc/interrupts says "GIC-0" through
 * irq_print_chip), so /sys/kernel/irq/<irq>/chip_name is empty.
 */
const struct irq_chip gic_chip = {
	.irq_mask	= gic_mask_irq,
	.irq_unmask	= gic_unmask_irq,
};

/* gic_ipi_send_mask for one CPU: GICD_SGIR, TargetListFilter 0. */
void gic_raise_softirq(unsigned int cpu, unsigned int irq)
{
	asm volatile("dsb ishst" : : : "memory");
	writel_relaxed((1U << (16 + cpu)) | irq, dist(GIC_DIST_SOFTINT));
}

void __irq_entry gic_handle_irq(struct pt_regs *regs)
{
	u32 irqstat, irqnr;

	do {
		irqstat = readl_relaxed(cpui(GIC_CPU_INTACK));
		irqnr = irqstat & GICC_IAR_INT_ID_MASK;
		if (irqnr >= 1020)
			break;
		if (irqnr < 16) {
			/* SGIs: EOI first, as Linux does, then handle. */
			writel_relaxed(irqstat, cpui(GIC_CPU_EOI));
			handle_IPI(irqnr);
			continue;
		}
		if (irqnr == ARCH_TIMER_VIRT_PPI)
			arch_timer_handler_virt();
		else
			generic_handle_irq(irqnr);	/* drivers' request_irq() lines */
		writel_relaxed(irqstat, cpui(GIC_CPU_EOI));
	} while (1);
}
