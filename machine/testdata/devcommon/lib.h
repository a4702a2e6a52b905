/* Shared helpers of the device differential programs: MMIO, UART output,
 * PSCI, GIC and timer registers. Output must not depend on timing. */
typedef unsigned char u8;
typedef unsigned int u32;
typedef unsigned long u64;
typedef long s64;

#define REG(a) (*(volatile u32 *)(a))
#define UART 0x09000000UL
#define GICD 0x08000000UL
#define GICC 0x08010000UL
#define RTC 0x09010000UL

#define GICD_CTLR 0x000
#define GICD_TYPER 0x004
#define GICD_ISENABLER 0x100
#define GICD_ISPENDR 0x200
#define GICD_ISACTIVER 0x300
#define GICD_IPRIORITYR 0x400
#define GICD_ITARGETSR 0x800
#define GICD_SGIR 0xf00
#define GICC_CTLR 0x00
#define GICC_PMR 0x04
#define GICC_IAR 0x0c
#define GICC_EOIR 0x10
#define GICC_RPR 0x14
#define GICC_HPPIR 0x18

u64 psci(u64 fid, u64 a1, u64 a2, u64 a3);

#define barrier() __asm__ volatile("dsb sy" ::: "memory")
#define irq_enable() __asm__ volatile("msr daifclr, #2" ::: "memory")
#define irq_disable() __asm__ volatile("msr daifset, #2" ::: "memory")
#define wfi() __asm__ volatile("dsb sy; wfi" ::: "memory")
#define sysreg_write(r, v) __asm__ volatile("msr " #r ", %0; isb" ::"r"((u64)(v)) : "memory")
#define sysreg_read(r) ({ u64 __v; __asm__ volatile("mrs %0, " #r : "=r"(__v)::"memory"); __v; })

/*
 * wait_irq sleeps until the handler moved *count past before. Called with
 * IRQs masked: WFI wakes on a pending interrupt even so, and the interrupt
 * is taken only in the unmasked window, so none is lost between the check
 * and the WFI.
 */
#define wait_irq(before) do {                                                 \
	while (nirq == (before)) {                                            \
		wfi();                                                        \
		__asm__ volatile("msr daifclr, #2; isb; msr daifset, #2" ::: "memory"); \
	}                                                                     \
	irq_enable();                                                         \
} while (0)

static void putc(char c)
{
	while (REG(UART + 0x18) & (1 << 5))
		;
	REG(UART) = (u32)c;
}

static void puts(const char *s)
{
	while (*s)
		putc(*s++);
}

static void puthex(u64 v)
{
	static const char digits[] = "0123456789abcdef";
	int started = 0;
	for (int i = 60; i >= 0; i -= 4) {
		int d = (v >> i) & 15;
		if (d || started || i == 0) {
			putc(digits[d]);
			started = 1;
		}
	}
}

static void line(const char *name, u64 v)
{
	puts(name);
	puts(" ");
	puthex(v);
	puts("\n");
}

/* The CPU interface of the calling CPU: enabled, every priority unmasked. */
static void gicc_init(void)
{
	REG(GICC + GICC_PMR) = 0xff;
	REG(GICC + GICC_CTLR) = 1;
}
