/*
 * Differential test: exception levels. EL0 round trips (SVC, ERET to EL0),
 * EL0 faults and traps, every vector group, alignment faults. Each
 * exception prints its vector offset, ESR, FAR and ELR (see lib.h).
 */
#include "../common/lib.h"

static u64 data[8] __attribute__((aligned(64))); /* one DC ZVA block */

#define EL0_DONE() asm volatile("svc #0")

static void el0_basic(void)
{
	asm volatile("svc #5");
	asm volatile("brk #3");
	asm volatile("mrs x0, sctlr_el1" ::: "x0"); /* undefined at EL0 */
	asm volatile("hvc #1");                      /* undefined at EL0 */
	asm volatile("msr spsel, #0");               /* undefined at EL0 */
	asm volatile("eret");                        /* undefined at EL0 */
	asm volatile("tlbi vmalle1");                /* undefined at EL0 */
	EL0_DONE();
}

/* Trapped unless SCTLR_EL1 enables them; g_quiet is off so every trap
 * prints. x9 holds a data address for DC. */
static void el0_traps(void)
{
	u64 v;
	asm volatile("mrs %0, ctr_el0" : "=r"(v));
	asm volatile("mov x9, %0\n dc zva, x9" ::"r"(data) : "x9", "memory");
	asm volatile("mrs %0, daif" : "=r"(v));
	/* MSR DAIFSet/DAIFClr are left out: QEMU 7.2 reports their trap
	 * with op1 and op2 swapped in the ISS. */
	asm volatile("mov x9, %0\n dc cvau, x9" ::"r"(data) : "x9", "memory");
	asm volatile("mov x9, %0\n ic ivau, x9" ::"r"(data) : "x9", "memory");
	asm volatile("mrs %0, dczid_el0" : "=r"(v));
	data[3] = v & 0x10; /* DZP */
	EL0_DONE();
}

static void el0_wfi(void)
{
	asm volatile("wfi");
	EL0_DONE();
}

static void el0_after_pc(void)
{
	EL0_DONE();
}

static void el0_faults(void)
{
	u64 v;
	/* A load from unassigned physical space (the MMU is off). */
	asm volatile("mov x9, #0x50000000\n ldr %0, [x9]" : "=r"(v)::"x9");
	asm volatile("mov x9, #0x50000000\n str %0, [x9, #8]" ::"r"(v) : "x9");
	/* PC alignment: resume at el0_after_pc. */
	g_resume = (u64)el0_after_pc;
	asm volatile("mov x9, %0\n add x9, x9, #2\n br x9" ::"r"(el0_after_pc) : "x9");
	EL0_DONE();
}

static void el0_unaligned(void)
{
	u64 v;
	asm volatile("ldr %0, [%1]" : "=r"(v) : "r"((u64)data + 1));
	asm volatile("str %w0, [%1]" ::"r"(v), "r"((u64)data + 2) : "memory");
	asm volatile("ldrh %w0, [%1]" : "=r"(v) : "r"((u64)data + 2));
	data[2] = v;
	EL0_DONE();
}

static void el1_alignment(void)
{
	u64 v = 0;
	puts("el1 alignment, SCTLR.A=0\n");
	asm volatile("ldxr %0, [%1]" : "=r"(v) : "r"((u64)data + 4) : "memory");
	asm volatile("ldar %w0, [%1]" : "=r"(v) : "r"((u64)data + 2) : "memory");
	asm volatile("stlr %0, [%1]" ::"r"(v), "r"((u64)data + 1) : "memory");
	asm volatile("ldr %0, [%1]" : "=r"(v) : "r"((u64)data + 3));
	line("unaligned ldr", v);
	puts("el1 alignment, SCTLR.A=1\n");
	write_sysreg(sctlr_el1, SCTLR_BASE | SCTLR_A);
	isb();
	asm volatile("ldr %0, [%1]" : "=r"(v) : "r"((u64)data + 3));
	asm volatile("str %w0, [%1]" ::"r"(v), "r"((u64)data + 6) : "memory");
	{
		u64 w;
		asm volatile("ldp %0, %1, [%2]" : "=r"(v), "=r"(w) : "r"((u64)data + 4));
	}
	asm volatile("ldr %0, [%1]" : "=r"(v) : "r"((u64)data + 8));
	line("aligned ldr", v);
	write_sysreg(sctlr_el1, SCTLR_BASE);
	isb();
}

static u64 sp0_stack[256] __attribute__((aligned(16)));

int main(void)
{
	write_sysreg(sctlr_el1, SCTLR_BASE);
	isb();
	data[0] = 0x0706050403020100UL;
	data[1] = 0x0f0e0d0c0b0a0908UL;

	puts("vector groups\n");
	asm volatile("brk #1");
	write_sysreg(sp_el0, (u64)&sp0_stack[256]);
	asm volatile("msr spsel, #0\n brk #2\n msr spsel, #1" ::: "memory");
	asm volatile(".word 0"); /* udf */

	puts("el0 basic\n");
	run_el0(el0_basic, EL0_SP, 0);
	puts("el0 traps, SCTLR enables clear\n");
	run_el0(el0_traps, EL0_SP, 0);
	line("dzp", data[3]);
	run_el0(el0_wfi, EL0_SP, 0x3c0);
	puts("el0 traps, SCTLR enables set\n");
	write_sysreg(sctlr_el1, SCTLR_BASE | SCTLR_UCT | SCTLR_DZE | SCTLR_UMA | SCTLR_UCI);
	isb();
	data[3] = 1;
	run_el0(el0_traps, EL0_SP, 0x3c0);
	line("dzp", data[3]);
	line("zeroed", data[0] | data[1]);
	data[0] = 0x0706050403020100UL;
	data[1] = 0x0f0e0d0c0b0a0908UL;
	write_sysreg(sctlr_el1, SCTLR_BASE);
	isb();

	puts("el0 faults\n");
	run_el0(el0_faults, EL0_SP, 0);
	puts("el0 unaligned, SCTLR.A=0\n");
	run_el0(el0_unaligned, EL0_SP, 0);
	line("ldrh", data[2]);
	puts("el0 unaligned, SCTLR.A=1\n");
	write_sysreg(sctlr_el1, SCTLR_BASE | SCTLR_A);
	isb();
	run_el0(el0_unaligned, EL0_SP, 0);
	write_sysreg(sctlr_el1, SCTLR_BASE);
	isb();

	el1_alignment();

	puts("illegal return\n");
	{
		u64 target;
		asm volatile("adr %0, 1f\n"
			     "msr elr_el1, %0\n"
			     "mov x9, #0x9\n" /* EL2h: not implemented */
			     "msr spsr_el1, x9\n"
			     "eret\n"
			     "1: nop\n"
			     "nop\n"
			     : "=&r"(target)::"x9", "memory");
	}
	line("exceptions", g_count);
	puts("done\n");
	return 0;
}
