/*
 * Differential test: the self-hosted debug architecture. Software step at
 * EL1 (KDE, PSTATE.D) and into EL0 (ERET with SPSR.SS, active-pending,
 * the EX bit for exclusives, SVC completing a step), hardware breakpoints
 * and watchpoints with their EL, MDE and KDE gating.
 */
#include "../common/lib.h"

#define MDSCR_SS (1UL << 0)
#define MDSCR_KDE (1UL << 13)
#define MDSCR_MDE (1UL << 15)
#define SPSR_SS (1UL << 21)
#define BCR_ALL (1UL | 3UL << 1 | 0xfUL << 5) /* E, EL0 and EL1, BAS 0b1111 */
#define BCR_EL0 (1UL | 2UL << 1 | 0xfUL << 5)

static volatile u64 steps;
static volatile int rearm;
static volatile u64 data[4] __attribute__((aligned(64)));

static void clear_bps(void)
{
	write_sysreg(dbgbcr0_el1, 0);
	write_sysreg(dbgbcr1_el1, 0);
	write_sysreg(dbgwcr0_el1, 0);
	write_sysreg(dbgwcr1_el1, 0);
	isb();
}

static int debug_hook(struct frame *f, u64 vec, u64 esr)
{
	u64 ec = esr >> 26;
	(void)vec;
	switch (ec) {
	case 0x30: case 0x31: /* breakpoint: disable, re-execute */
		clear_bps();
		return 1;
	case 0x32: case 0x33:
		steps++;
		if (rearm)
			f->spsr |= SPSR_SS;
		else /* one step only */
			write_sysreg(mdscr_el1, read_sysreg(mdscr_el1) & ~MDSCR_SS);
		return 1;
	}
	return 0;
}

__attribute__((noinline)) static u64 target_fn(u64 x)
{
	asm volatile("" ::: "memory");
	return x * 3 + 1;
}

/* Step a counted loop at EL1: ERET into it with SPSR.SS set and PSTATE.D
 * clear; the handler re-arms SS after each step. */
static void el1_step(u64 mdscr_after)
{
	asm volatile("adr x9, 1f\n"
		     "msr elr_el1, x9\n"
		     "mov x9, #0x1c5\n"      /* EL1h, D clear, A I F masked */
		     "orr x9, x9, #0x200000\n" /* SS */
		     "msr spsr_el1, x9\n"
		     "eret\n"
		     "1: mov x0, #10\n"
		     "2: subs x0, x0, #1\n"
		     "b.ne 2b\n"
		     "msr mdscr_el1, %0\n"
		     "msr daifset, #8\n" ::"r"(mdscr_after)
		     : "x0", "x9", "memory", "cc");
}

static void el0_loop(void)
{
	asm volatile("mov x0, #3\n"
		     "1: subs x0, x0, #1\n"
		     "b.ne 1b\n"
		     "svc #0\n" ::: "x0", "cc");
}

static void el0_ldxr(void)
{
	u64 v;
	asm volatile("ldxr %0, [%1]\n"
		     "clrex\n"
		     "svc #0\n" : "=&r"(v) : "r"(data) : "memory");
}

static void el0_svc(void)
{
	asm volatile("svc #7\n"
		     "nop\n"
		     "svc #0\n");
}

static void el0_call(void)
{
	data[2] = target_fn(5);
	asm volatile("svc #0");
}

static void el0_store(void)
{
	data[1] = 0x1234;
	data[0] = 0x99;
	asm volatile("svc #0");
}

int main(void)
{
	write_sysreg(sctlr_el1, SCTLR_BASE);
	write_sysreg(oslar_el1, 0); /* unlock the OS lock */
	isb();
	g_hook = debug_hook;

	puts("step el1, KDE=1\n");
	write_sysreg(mdscr_el1, MDSCR_SS | MDSCR_KDE);
	isb();
	rearm = 1;
	g_quiet = 1;
	el1_step(MDSCR_KDE);
	g_quiet = 0;
	line("steps", steps);

	puts("step el1, KDE=0\n");
	steps = 0;
	write_sysreg(mdscr_el1, MDSCR_SS);
	isb();
	el1_step(0);
	line("steps", steps);

	puts("step into el0\n");
	steps = 0;
	rearm = 0;
	write_sysreg(mdscr_el1, MDSCR_SS);
	isb();
	run_el0(el0_loop, EL0_SP, SPSR_SS); /* one step, then MDSCR.SS cleared */
	line("steps", steps);
	write_sysreg(mdscr_el1, MDSCR_SS);
	isb();
	run_el0(el0_loop, EL0_SP, 0); /* active-pending at once: no syndrome */
	write_sysreg(mdscr_el1, MDSCR_SS);
	isb();
	steps = 0;
	rearm = 1;
	run_el0(el0_loop, EL0_SP, SPSR_SS);
	line("steps", steps);
	rearm = 1;
	run_el0(el0_ldxr, EL0_SP, SPSR_SS);
	run_el0(el0_svc, EL0_SP, SPSR_SS);
	rearm = 0;
	write_sysreg(mdscr_el1, 0);
	isb();

	puts("breakpoints\n");
	write_sysreg(dbgbvr0_el1, (u64)target_fn);
	write_sysreg(dbgbcr0_el1, BCR_ALL);
	write_sysreg(mdscr_el1, MDSCR_MDE | MDSCR_KDE);
	isb();
	line("masked by D", target_fn(1));
	asm volatile("msr daifclr, #8");
	line("hit at el1", target_fn(2));
	write_sysreg(dbgbcr0_el1, BCR_EL0);
	isb();
	line("el0-only at el1", target_fn(3));
	run_el0(el0_call, EL0_SP, 0);
	asm volatile("msr daifclr, #8"); /* the return from EL0 masked D */
	line("el0 result", data[2]);
	write_sysreg(mdscr_el1, MDSCR_KDE); /* MDE clear */
	write_sysreg(dbgbcr0_el1, BCR_ALL);
	isb();
	line("mde clear", target_fn(4));
	write_sysreg(mdscr_el1, MDSCR_MDE); /* KDE clear */
	isb();
	line("kde clear", target_fn(5));
	run_el0(el0_call, EL0_SP, 0);
	asm volatile("msr daifclr, #8");
	line("el0 with kde clear", data[2]);
	clear_bps();

	puts("watchpoints\n");
	write_sysreg(mdscr_el1, MDSCR_MDE | MDSCR_KDE);
	write_sysreg(dbgwvr0_el1, (u64)&data[1]);
	write_sysreg(dbgwcr0_el1, 1UL | 3UL << 1 | 2UL << 3 | 0xffUL << 5); /* stores */
	isb();
	data[0] = 1; /* not watched */
	data[1] = 2; /* watched: skipped by the handler */
	line("data1", data[1]);
	line("load ok", data[1]);
	write_sysreg(dbgwcr0_el1, 1UL | 3UL << 1 | 1UL << 3 | 0xf0UL << 5); /* loads of bytes 4..7 */
	isb();
	{
		u64 lo, hi;
		asm volatile("ldr %w0, [%1]" : "=r"(lo) : "r"(&data[1]) : "memory");
		asm volatile("ldr %w0, [%1, #4]" : "=r"(hi) : "r"(&data[1]) : "memory");
		asm volatile("ldrb %w0, [%1, #6]" : "=r"(hi) : "r"(&data[1]) : "memory");
		(void)hi;
		asm volatile("ldr %0, [%1]" : "=r"(lo) : "r"((u64)&data[1] - 4) : "memory");
		(void)lo;
	}
	write_sysreg(dbgwcr0_el1, 1UL | 2UL << 1 | 3UL << 3 | 0xffUL << 5); /* EL0 only */
	isb();
	data[1] = 3; /* EL1: not watched */
	run_el0(el0_store, EL0_SP, 0);
	asm volatile("msr daifclr, #8");
	line("data0", data[0]);
	line("data1", data[1]);
	asm volatile("msr daifset, #8");
	write_sysreg(dbgwcr0_el1, 1UL | 3UL << 1 | 3UL << 3 | 0xffUL << 5);
	isb();
	data[1] = 4; /* D masked at EL1 */
	line("masked", data[1]);
	clear_bps();
	write_sysreg(mdscr_el1, 0);
	isb();

	line("exceptions", g_count);
	puts("done\n");
	return 0;
}
