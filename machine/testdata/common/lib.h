/*
 * The C half of the runtime of machine's differential test programs
 * (start.S is the other): UART output, system register access, PSCI, the
 * GIC, and the exception handler. Each program is one C file that
 * includes this header once and defines main() (and secondary_main(cpu)
 * if it starts other CPUs).
 *
 * Every exception prints one line, "exc VEC ESR FAR ELR", with FAR only
 * where the architecture defines it (aborts, PC alignment, watchpoints;
 * 0 otherwise), then resumes: SVC #0 from EL0 returns to run_el0's
 * caller; otherwise, if it set g_hook and the hook returns nonzero,
 * wherever the hook left the frame; if the program set g_resume, there;
 * after an instruction abort or PC alignment fault, at x30 (the code
 * branched there with BLR); else past the faulting instruction. An IRQ
 * goes to g_irq instead, if the program set it, and prints nothing: the
 * device programs' output must not depend on when interrupts come.
 */
typedef unsigned char u8;
typedef signed char s8;
typedef unsigned short u16;
typedef short s16;
typedef unsigned int u32;
typedef int s32;
typedef unsigned long u64;
typedef long s64;

#define UART ((volatile u32 *)0x09000000)

void *memcpy(void *d, const void *s, unsigned long n)
{
	u8 *dp = d;
	const u8 *sp = s;
	while (n--)
		*dp++ = *sp++;
	return d;
}

void *memset(void *d, int c, unsigned long n)
{
	u8 *dp = d;
	while (n--)
		*dp++ = (u8)c;
	return d;
}

static void putc(char c)
{
	while (UART[0x18 / 4] & (1 << 5))
		; /* TXFF */
	UART[0] = (u32)c;
}

static void puts(const char *s)
{
	while (*s)
		putc(*s++);
}

static void puthex(u64 v)
{
	static const char digits[] = "0123456789abcdef";
	for (int i = 60; i >= 0; i -= 4)
		putc(digits[(v >> i) & 15]);
}

static void line(const char *name, u64 v)
{
	puts(name);
	puts(" ");
	puthex(v);
	puts("\n");
}

#define read_sysreg(r) ({ u64 __v; asm volatile("mrs %0, " #r : "=r"(__v)); __v; })
#define write_sysreg(r, v) asm volatile("msr " #r ", %0" ::"r"((u64)(v)) : "memory")
#define isb() asm volatile("isb" ::: "memory")
#define dsb() asm volatile("dsb sy" ::: "memory")
#define wfi() asm volatile("dsb sy; wfi" ::: "memory")
#define irq_enable() asm volatile("msr daifclr, #2" ::: "memory")
#define irq_disable() asm volatile("msr daifset, #2" ::: "memory")

/*
 * wait_irq sleeps until an interrupt handler moved count past before.
 * Called with IRQs masked: WFI wakes on a pending interrupt even so, and
 * the interrupt is taken only in the unmasked window, so none is lost
 * between the check and the WFI. Returns with IRQs unmasked.
 */
#define wait_irq(count, before) do {                                          \
	while ((count) == (before)) {                                         \
		wfi();                                                        \
		asm volatile("msr daifclr, #2; isb; msr daifset, #2" ::: "memory"); \
	}                                                                     \
	irq_enable();                                                         \
} while (0)

/* u64 psci(function id, arguments): a PSCI call (start.S). */
u64 psci(u64 fid, u64 a1, u64 a2, u64 a3);

/* Devices of the virt board besides the UART: the GICv2 and the PL031. */
#define REG(a) (*(volatile u32 *)(a))
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

/* The CPU interface of the calling CPU: enabled, every priority unmasked. */
static inline void gicc_init(void)
{
	REG(GICC + GICC_PMR) = 0xff;
	REG(GICC + GICC_CTLR) = 1;
}

/* SCTLR_EL1: the Armv8.0 RES1 bits (SPAN set, so PSTATE.PAN stays clear
 * on QEMU's -cpu max), caches on, no alignment checks. */
#define SCTLR_BASE 0x30d01804UL
#define SCTLR_M (1UL << 0)
#define SCTLR_A (1UL << 1)
#define SCTLR_UMA (1UL << 9)
#define SCTLR_DZE (1UL << 14)
#define SCTLR_UCT (1UL << 15)
#define SCTLR_NTWI (1UL << 16)
#define SCTLR_UCI (1UL << 26)

struct frame {
	u64 x[31];
	u64 elr;
	u64 spsr;
	u64 pad;
};

void run_el0(void (*entry)(void), u64 sp_el0, u64 spsr);
extern u64 el0_resume;
void poweroff(void);
void secondary_start(void); /* the entry point to give PSCI CPU_ON */
void secondary_main(u64 cpu);

static volatile u64 g_resume;
static int (*volatile g_hook)(struct frame *f, u64 vec, u64 esr);
static void (*volatile g_irq)(void);
static volatile u64 g_count; /* exceptions seen */
static volatile int g_quiet;  /* when set, exceptions are not printed */

static int far_valid(u64 ec)
{
	switch (ec) {
	case 0x20: case 0x21: case 0x22: case 0x24: case 0x25: case 0x34: case 0x35:
		return 1;
	}
	return 0;
}

void exc_handler(struct frame *f, u64 vec)
{
	if ((vec & 0x180) == 0x080 && g_irq) {
		g_irq();
		return;
	}
	u64 esr = read_sysreg(esr_el1);
	u64 ec = esr >> 26;
	g_count++;
	if (!g_quiet) {
		puts("exc ");
		puthex(vec);
		puts(" ");
		puthex(esr);
		puts(" ");
		puthex(far_valid(ec) ? read_sysreg(far_el1) : 0);
		puts(" ");
		puthex(f->elr);
		puts("\n");
	}
	if (vec == 0x400 && ec == 0x15 && (esr & 0xffff) == 0) {
		f->elr = el0_resume;
		f->spsr = 0x3c5;
		return;
	}
	if (g_hook && g_hook(f, vec, esr))
		return;
	if (g_resume) {
		f->elr = g_resume;
		g_resume = 0;
		return;
	}
	if ((vec & 0x180) != 0) /* IRQ, FIQ, SError: return as is */
		return;
	if (ec == 0x0e) { /* illegal execution state: clear PSTATE.IL, retry */
		f->spsr &= ~(1UL << 20);
		return;
	}
	switch (ec) {
	case 0x15: case 0x16: case 0x32: case 0x33: /* ELR is already past it */
		return;
	case 0x20: case 0x21: case 0x22:
		f->elr = f->x[30];
		return;
	}
	f->elr += 4;
}

static u64 el0_stack[512] __attribute__((aligned(16)));
#define EL0_SP ((u64)&el0_stack[512])
