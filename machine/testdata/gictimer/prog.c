/*
 * Differential program: the GICv2 and the generic timer on one CPU.
 * Timer interrupts are counted, never timed, so the output is the same on
 * QEMU (host-time counter) and on machine (instruction counter).
 */
#include "../common/lib.h"

static volatile u32 irqs[16];
static volatile u32 nirq;

static void irq_handler(void)
{
	u32 iar = REG(GICC + GICC_IAR);
	u32 id = iar & 0x3ff;
	if (id == 27) {
		write_sysreg(cntv_ctl_el0, 0);
		isb();
	}
	if (id == 30) {
		write_sysreg(cntp_ctl_el0, 0);
		isb();
	}
	if (nirq < 16)
		irqs[nirq] = iar;
	nirq++;
	REG(GICC + GICC_EOIR) = iar;
}

static void show_irqs(const char *what)
{
	puts(what);
	for (u32 i = 0; i < nirq && i < 16; i++) {
		puts(" ");
		puthex(irqs[i]);
	}
	puts("\n");
	nirq = 0;
}

static void timer_test(int virt)
{
	for (int i = 0; i < 3; i++) {
		u32 before = nirq;
		irq_disable();
		if (virt) {
			write_sysreg(cntv_tval_el0, 2000);
			isb();
			write_sysreg(cntv_ctl_el0, 1);
			isb();
		} else {
			write_sysreg(cntp_tval_el0, 2000);
			isb();
			write_sysreg(cntp_ctl_el0, 1);
			isb();
		}
		wait_irq(nirq, before);
	}
	show_irqs(virt ? "cntv irqs" : "cntp irqs");
}

int main(void)
{
	g_irq = irq_handler;
	u32 typer = REG(GICD + GICD_TYPER);
	line("itlines", typer & 0x1f);
	line("cpus", (typer >> 5) & 7);
	line("pidr2", REG(GICD + 0xfe8));
	line("cidr", REG(GICD + 0xff0) | REG(GICD + 0xff4) << 8 | REG(GICD + 0xff8) << 16 | REG(GICD + 0xffc) << 24);
	line("sgi cfg", REG(GICD + 0xc00));
	line("sgi enabled", REG(GICD + GICD_ISENABLER) & 0xffff);
	line("iar idle", REG(GICC + GICC_IAR));

	REG(GICD + GICD_CTLR) = 1;
	gicc_init();
	line("pmr", REG(GICC + GICC_PMR));
	REG(GICD + GICD_ISENABLER) = 1u << 27 | 1u << 30;
	line("enabled", REG(GICD + GICD_ISENABLER));
	irq_enable();

	timer_test(1);
	timer_test(0);

	/* ISTATUS with the interrupt masked: condition met, no interrupt. */
	write_sysreg(cntv_cval_el0, 0);
	isb();
	write_sysreg(cntv_ctl_el0, 3);
	isb();
	line("cntv_ctl masked", read_sysreg(cntv_ctl_el0));
	line("irqs while masked", nirq);
	write_sysreg(cntv_ctl_el0, 0);
	isb();
	line("cntv_ctl off", read_sysreg(cntv_ctl_el0));
	line("cntfrq", read_sysreg(cntfrq_el0));

	/* SGIs to self, taken through the handler. */
	REG(GICD + GICD_SGIR) = 2u << 24 | 4;
	REG(GICD + GICD_SGIR) = 0x10000u << 0 | 9; /* target list: CPU 0 */
	/* Taken "in finite time": wait rather than assume at once. */
	while (nirq < 2)
		dsb();
	show_irqs("sgi irqs");

	/* Priority order with IRQs masked: the higher priority first. */
	irq_disable();
	((volatile u8 *)(GICD + GICD_IPRIORITYR))[1] = 0x80;
	((volatile u8 *)(GICD + GICD_IPRIORITYR))[2] = 0x40;
	line("prio byte", ((volatile u8 *)(GICD + GICD_IPRIORITYR))[2]);
	REG(GICD + GICD_SGIR) = 2u << 24 | 1;
	REG(GICD + GICD_SGIR) = 2u << 24 | 2;
	line("hppir", REG(GICC + GICC_HPPIR));
	u32 a = REG(GICC + GICC_IAR);
	line("iar first", a);
	line("rpr", REG(GICC + GICC_RPR));
	line("iar nested", REG(GICC + GICC_IAR)); /* lower priority: spurious */
	REG(GICC + GICC_EOIR) = a;
	u32 b = REG(GICC + GICC_IAR);
	line("iar second", b);
	line("active", REG(GICD + GICD_ISACTIVER) & 0xffff);
	REG(GICC + GICC_EOIR) = b;
	line("active after eoi", REG(GICD + GICD_ISACTIVER) & 0xffff);

	/* The priority mask hides a pending interrupt from IAR. */
	((volatile u8 *)(GICD + GICD_IPRIORITYR))[3] = 0x80;
	REG(GICC + GICC_PMR) = 0x40;
	REG(GICD + GICD_SGIR) = 2u << 24 | 3;
	line("iar masked", REG(GICC + GICC_IAR));
	line("hppir masked", REG(GICC + GICC_HPPIR));
	REG(GICC + GICC_PMR) = 0xff;
	a = REG(GICC + GICC_IAR);
	line("iar unmasked", a);
	REG(GICC + GICC_EOIR) = a;

	/* A software-pended SPI, edge-configured. */
	REG(GICD + 0xc00 + 4 * 2) = 2u << 16; /* ICFGR2: INTID 40 edge */
	((volatile u8 *)(GICD + GICD_ITARGETSR))[40] = 1;
	REG(GICD + GICD_ISENABLER + 4) = 1u << 8;
	REG(GICD + GICD_ISPENDR + 4) = 1u << 8;
	line("spi pending", REG(GICD + GICD_ISPENDR + 4));
	a = REG(GICC + GICC_IAR);
	line("iar spi", a);
	line("spi active", REG(GICD + GICD_ISACTIVER + 4));
	REG(GICC + GICC_EOIR) = a;
	line("iar none", REG(GICC + GICC_IAR));

	/* The PL031's identification. */
	line("rtc id", REG(RTC + 0xfe0) | REG(RTC + 0xfe4) << 8 | REG(RTC + 0xfe8) << 16 | REG(RTC + 0xfec) << 24);
	line("rtc cr", REG(RTC + 0x0c));
	puts("done\n");
	return 0;
}
