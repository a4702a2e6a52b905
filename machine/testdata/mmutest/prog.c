/*
 * Differential test: stage-1 translation with the 4 KiB granule. Page,
 * 2 MiB and 1 GiB block mappings through 39- and 48-bit VA spaces, TTBR1
 * high addresses, translation, access flag, permission, address size and
 * walk faults (ESR and FAR printed by the exception handler), AT and
 * PAR_EL1, TLBI after remapping, and ASIDs.
 */
#include "../common/lib.h"

#define PT_TABLE 3UL
#define PT_PAGE 3UL
#define PT_BLOCK 1UL
#define PT_AF (1UL << 10)
#define PT_NG (1UL << 11)
#define PT_SH (3UL << 8)
#define PT_EL0 (1UL << 6)
#define PT_RO (1UL << 7)
#define PT_PXN (1UL << 53)
#define PT_UXN (1UL << 54)
#define PT_DEV (1UL << 2) /* AttrIndx 1 */
#define PT_NC (2UL << 2)  /* AttrIndx 2 */
#define NORMAL (PT_AF | PT_SH)

#define MAIR 0x4400ffUL /* 0: normal WB, 1: Device-nGnRnE, 2: normal NC */
/* T0SZ = T1SZ = 25 (39 bits), TG1 = 4K, IPS = 40 bits, inner/outer WB. */
#define TCR39 (25UL | 25UL << 16 | 2UL << 30 | 2UL << 32 | 1UL << 8 | 1UL << 10 | 3UL << 12 | 1UL << 24 | 1UL << 26 | 3UL << 28)
#define TCR48 (TCR39 & ~0x3f003fUL) | 16UL | 16UL << 16
#define TCR_EPD1 (1UL << 23)
#define TCR_AS (1UL << 36)

#define ALIGNED __attribute__((aligned(4096)))
static u64 l1[512] ALIGNED;     /* TTBR0 root, 39-bit */
static u64 l2_low[512] ALIGNED; /* 0x00000000-0x3fffffff: the UART */
static u64 l2_ram[512] ALIGNED; /* 0x40000000-0x7fffffff: RAM, 2 MiB blocks */
static u64 l2_test[512] ALIGNED; /* 0x80000000-0xbfffffff: test mappings */
static u64 l3_test[512] ALIGNED; /* 0x80000000-0x801fffff */
static u64 l1_hi[512] ALIGNED;  /* TTBR1 root, 39-bit */
static u64 l1_asid2[512] ALIGNED; /* another TTBR0 root, for ASID 2 */
static u64 l2_asid2[512] ALIGNED;
static u64 l3_asid2[512] ALIGNED;
static u64 l0_48[512] ALIGNED; /* 48-bit root */
static u64 l1_48[512] ALIGNED;
static u64 page_a[512] ALIGNED;
static u64 page_b[512] ALIGNED;
static u64 el0_stk[512] ALIGNED;

#define VA_TEST 0x80000000UL
#define VA_EL0_STACK 0x80600000UL

static void tlbi_all(void)
{
	asm volatile("dsb ishst\n tlbi vmalle1is\n dsb ish\n isb" ::: "memory");
}

static void tlbi_va(u64 va)
{
	asm volatile("dsb ishst\n tlbi vae1is, %0\n dsb ish\n isb" ::"r"(va >> 12) : "memory");
}

static u64 rd(u64 va)
{
	u64 v;
	asm volatile("ldr %0, [%1]" : "=r"(v) : "r"(va) : "memory");
	return v;
}

static void wr(u64 va, u64 v)
{
	asm volatile("str %0, [%1]" ::"r"(v), "r"(va) : "memory");
}

static u64 at(int op, u64 va)
{
	switch (op) {
	case 0: asm volatile("at s1e1r, %0" ::"r"(va)); break;
	case 1: asm volatile("at s1e1w, %0" ::"r"(va)); break;
	case 2: asm volatile("at s1e0r, %0" ::"r"(va)); break;
	default: asm volatile("at s1e0w, %0" ::"r"(va)); break;
	}
	isb();
	return read_sysreg(par_el1);
}

/* l3_test slot n maps VA_TEST + n pages. */
static void map3(int n, u64 pa, u64 attrs)
{
	l3_test[n] = pa | attrs | PT_PAGE;
	tlbi_va(VA_TEST + (u64)n * 4096);
}

static void setup_tables(void)
{
	l1[0] = (u64)l2_low | PT_TABLE;
	l1[1] = (u64)l2_ram | PT_TABLE;
	l1[2] = (u64)l2_test | PT_TABLE;
	l1[3] = 0x40000000UL | NORMAL | PT_BLOCK; /* 1 GiB block: 0xc0000000 -> RAM */
	l2_low[0x09000000 >> 21] = 0x09000000UL | PT_AF | PT_DEV | PT_BLOCK | PT_UXN | PT_PXN;
	for (u64 i = 0; i < 64; i++) /* 128 MiB of RAM */
		l2_ram[i] = (0x40000000UL + (i << 21)) | NORMAL | PT_BLOCK;
	l2_test[0] = (u64)l3_test | PT_TABLE;
	l2_test[1] = 0x40000000UL | NORMAL | PT_BLOCK; /* 2 MiB block */
	l2_test[3] = ((u64)el0_stk & ~0x1fffffUL) | NORMAL | PT_EL0 | PT_BLOCK | PT_UXN;
	l1_hi[256] = 0x40000000UL | NORMAL | PT_BLOCK; /* 0xffffffc000000000 -> RAM */
}

static void mmu_on(u64 tcr, u64 ttbr0, u64 ttbr1)
{
	write_sysreg(mair_el1, MAIR);
	write_sysreg(tcr_el1, tcr);
	write_sysreg(ttbr0_el1, ttbr0);
	write_sysreg(ttbr1_el1, ttbr1);
	isb();
	tlbi_all();
	write_sysreg(sctlr_el1, SCTLR_BASE | SCTLR_M);
	isb();
}

static void mmu_off(void)
{
	write_sysreg(sctlr_el1, SCTLR_BASE);
	isb();
	tlbi_all();
}

/* EL0 code: the stack is the EL0-writable block at VA_EL0_STACK. */
static void el0_access(void)
{
	u64 v = 0;
	v += rd(VA_TEST + 0 * 4096); /* EL1 only: permission fault */
	v += rd(VA_TEST + 1 * 4096); /* EL0 read-only: fine */
	wr(VA_TEST + 1 * 4096, v);   /* EL0 read-only: permission fault on write */
	wr(VA_TEST + 2 * 4096, 0x77); /* EL0 read-write */
	asm volatile("svc #0");
}

static void el0_exec(void)
{
	/* Call an EL0 no-execute page: the abort returns to the caller. */
	asm volatile("blr %0" ::"r"(VA_TEST + 3 * 4096) : "x30", "memory");
	asm volatile("svc #0");
}

static void call_va(u64 va)
{
	asm volatile("blr %0" ::"r"(va) : "x30", "memory");
}

static u64 ret_insn(void)
{
	return 0xd65f03c0; /* ret */
}

int main(void)
{
	write_sysreg(sctlr_el1, SCTLR_BASE);
	isb();
	setup_tables();
	page_a[0] = 0xaaaa;
	page_b[0] = 0xbbbb;

	puts("mmu off\n");
	line("at off", at(0, (u64)page_a + 0x123));

	mmu_on(TCR39, (u64)l1, (u64)l1_hi);
	puts("mmu on, 39-bit\n");
	map3(0, (u64)page_a, NORMAL);
	line("page", rd(VA_TEST));
	line("block 2M", rd(VA_TEST + 0x200000 + ((u64)page_b - 0x40000000UL)));
	line("block 1G", rd(0xc0000000UL + ((u64)page_a - 0x40000000UL)));
	line("ttbr1", rd(0xffffffc000000000UL + ((u64)page_b - 0x40000000UL)));

	puts("translation faults\n");
	rd(0x100000000UL);                 /* L1 entry empty */
	rd(VA_TEST + 0x400000);            /* L2 entry empty */
	rd(VA_TEST + 9 * 4096);            /* L3 entry empty */
	rd(0x0000004000000000UL);          /* beyond the 39-bit TTBR0 range */
	rd(0xffff000000000000UL);          /* below the 39-bit TTBR1 range */
	write_sysreg(tcr_el1, TCR39 | TCR_EPD1);
	isb();
	rd(0xffffffc000000000UL);          /* EPD1: no TTBR1 walks */
	write_sysreg(tcr_el1, TCR39);
	isb();

	puts("access flag and permission faults\n");
	map3(4, (u64)page_a, PT_SH);        /* AF = 0 */
	rd(VA_TEST + 4 * 4096);
	map3(5, (u64)page_a, NORMAL | PT_RO);
	line("ro read", rd(VA_TEST + 5 * 4096));
	wr(VA_TEST + 5 * 4096, 1);
	map3(6, (u64)page_a, NORMAL | PT_RO | PT_PXN);
	call_va(VA_TEST + 6 * 4096 + 8); /* PXN */
	map3(7, (u64)page_a, NORMAL | PT_EL0); /* EL0-writable: never EL1-executable */
	call_va(VA_TEST + 7 * 4096 + 16);
	page_b[10] = ret_insn();
	map3(8, (u64)page_b, NORMAL | PT_RO | PT_UXN); /* EL1 may execute */
	call_va(VA_TEST + 8 * 4096 + 80);
	line("exec ok", g_count);

	puts("address size and walk faults\n");
	map3(10, 1UL << 40, NORMAL);        /* beyond IPS (40 bits) */
	rd(VA_TEST + 10 * 4096);
	l2_test[5] = 0x50000000UL | PT_TABLE; /* a table outside RAM */
	tlbi_all();
	rd(VA_TEST + 5 * 0x200000);
	l2_test[6] = (1UL << 41) | PT_TABLE; /* a table beyond IPS */
	tlbi_all();
	rd(VA_TEST + 6 * 0x200000);

	puts("AT\n");
	map3(0, (u64)page_a, NORMAL);
	map3(1, (u64)page_b, NORMAL | PT_EL0 | PT_RO);
	map3(2, (u64)page_b, NORMAL | PT_EL0);
	map3(3, (u64)page_b, NORMAL | PT_EL0 | PT_RO | PT_UXN | PT_NC);
	for (int op = 0; op < 4; op++)
		for (int n = 0; n < 4; n++)
			line("par", at(op, VA_TEST + (u64)n * 4096 + 0x10));
	line("par unmapped", at(0, VA_TEST + 9 * 4096));
	line("par af", at(0, VA_TEST + 4 * 4096));
	line("par walk", at(1, VA_TEST + 5 * 0x200000)); /* an abort, PAR unchanged */
	line("par device", at(0, 0x09000000));

	puts("EL0\n");
	run_el0(el0_access, VA_EL0_STACK + ((u64)el0_stk & 0x1fffffUL) + 4096, 0);
	line("el0 wrote", page_b[0]);
	page_b[0] = 0xbbbb;
	run_el0(el0_exec, VA_EL0_STACK + ((u64)el0_stk & 0x1fffffUL) + 4096, 0);

	puts("TLBI after remap\n");
	map3(0, (u64)page_a, NORMAL);
	line("before", rd(VA_TEST));
	l3_test[0] = (u64)page_b | NORMAL | PT_PAGE;
	tlbi_va(VA_TEST);
	line("after vae1", rd(VA_TEST));
	l3_test[0] = (u64)page_a | NORMAL | PT_PAGE;
	asm volatile("dsb ishst\n tlbi vmalle1\n dsb ish\n isb" ::: "memory");
	line("after vmalle1", rd(VA_TEST));
	l3_test[0] = (u64)page_b | NORMAL | PT_PAGE;
	asm volatile("dsb ishst\n tlbi vaae1is, %0\n dsb ish\n isb" ::"r"(VA_TEST >> 12) : "memory");
	line("after vaae1is", rd(VA_TEST));
	l3_test[0] = 0;
	asm volatile("dsb ishst\n tlbi vale1is, %0\n dsb ish\n isb" ::"r"(VA_TEST >> 12) : "memory");
	rd(VA_TEST);

	puts("ASIDs\n");
	/* ASID 1: the usual tables with VA_TEST -> page_a, non-global. */
	map3(0, (u64)page_a, NORMAL | PT_NG);
	for (int i = 0; i < 4; i++)
		l1_asid2[i] = l1[i];
	l1_asid2[2] = (u64)l2_asid2 | PT_TABLE;
	l2_asid2[0] = (u64)l3_asid2 | PT_TABLE;
	l3_asid2[0] = (u64)page_b | NORMAL | PT_NG | PT_PAGE;
	dsb();
	write_sysreg(ttbr0_el1, (u64)l1 | 1UL << 48);
	isb();
	line("asid 1", rd(VA_TEST));
	write_sysreg(ttbr0_el1, (u64)l1_asid2 | 2UL << 48);
	isb();
	line("asid 2", rd(VA_TEST));
	write_sysreg(ttbr0_el1, (u64)l1 | 1UL << 48);
	isb();
	line("asid 1 again", rd(VA_TEST));
	asm volatile("dsb ishst\n tlbi aside1is, %0\n dsb ish\n isb" ::"r"(2UL << 48) : "memory");
	write_sysreg(ttbr0_el1, (u64)l1);
	isb();

	puts("48-bit\n");
	mmu_off();
	l0_48[0] = (u64)l1_48 | PT_TABLE;
	l0_48[1] = (u64)l1_48 | PT_TABLE; /* 0x0000008000000000 aliases the low 512 GiB */
	for (int i = 0; i < 4; i++)
		l1_48[i] = l1[i];
	mmu_on(TCR48, (u64)l0_48, (u64)l1_hi);
	line("48 low", rd(VA_TEST));
	line("48 alias", rd(0x0000008000000000UL + VA_TEST));
	rd(0x0000010000000000UL);          /* L0 entry empty */
	rd(0xffffffc000000000UL);          /* l1_hi is a level-1 table used as level 0 */
	mmu_off();

	line("exceptions", g_count);
	puts("done\n");
	return 0;
}
