/*
 * Differential test: the Armv8.1 atomics (LSE) and LDAPR, each form on
 * each size, on values chosen to hit the signed/unsigned and width
 * corner cases. Each line prints the value returned in the register and
 * the memory after. Built for armv8.1-a+rcpc (testdata/Makefile) and run
 * on QEMU's -cpu max.
 */
#include "../common/lib.h"

static u64 mem[4] __attribute__((aligned(64)));

static const u64 vals[] = {
	0, 1, 0x7f, 0x80, 0xff, 0x7fff, 0x8000, 0xffff, 0x7fffffff, 0x80000000,
	0xffffffff, 0x7fffffffffffffff, 0x8000000000000000, 0xffffffffffffffff,
	0x0123456789abcdef, 0xfedcba9876543210,
};
#define NVALS (sizeof(vals) / sizeof(vals[0]))

/* One LD<op> in all four sizes; "o" is the old value, "m" memory after. */
#define LDOP(name, insn)                                                          \
	static void name(u64 m, u64 s)                                            \
	{                                                                         \
		u64 o;                                                            \
		mem[0] = m;                                                       \
		asm volatile(insn " %x1, %x0, [%2]" : "=&r"(o) : "r"(s), "r"(mem) : "memory"); \
		line(#name " x", o);                                              \
		line("  m", mem[0]);                                              \
		mem[0] = m;                                                       \
		asm volatile(insn "a %w1, %w0, [%2]" : "=&r"(o) : "r"(s), "r"(mem) : "memory"); \
		line(#name " w", o);                                              \
		line("  m", mem[0]);                                              \
		mem[0] = m;                                                       \
		asm volatile(insn "lh %w1, %w0, [%2]" : "=&r"(o) : "r"(s), "r"(mem) : "memory"); \
		line(#name " h", o);                                              \
		line("  m", mem[0]);                                              \
		mem[0] = m;                                                       \
		asm volatile(insn "alb %w1, %w0, [%2]" : "=&r"(o) : "r"(s), "r"(mem) : "memory"); \
		line(#name " b", o);                                              \
		line("  m", mem[0]);                                              \
	}

LDOP(ldadd, "ldadd")
LDOP(ldclr, "ldclr")
LDOP(ldeor, "ldeor")
LDOP(ldset, "ldset")
LDOP(ldsmax, "ldsmax")
LDOP(ldsmin, "ldsmin")
LDOP(ldumax, "ldumax")
LDOP(ldumin, "ldumin")
LDOP(swp, "swp")

static void st_forms(u64 m, u64 s)
{
	mem[0] = m;
	asm volatile("stadd %x0, [%1]" ::"r"(s), "r"(mem) : "memory");
	asm volatile("stclrl %w0, [%1]" ::"r"(s >> 3), "r"(mem) : "memory");
	asm volatile("steorh %w0, [%1]" ::"r"(s >> 5), "r"(mem) : "memory");
	asm volatile("stsetlb %w0, [%1]" ::"r"(s >> 7), "r"(mem) : "memory");
	asm volatile("stsmax %x0, [%1]" ::"r"(s), "r"(mem) : "memory");
	asm volatile("stuminl %w0, [%1]" ::"r"(s), "r"(mem) : "memory");
	line("st* m", mem[0]);
}

static void cas_forms(u64 m, u64 cmp, u64 nv)
{
	u64 r;
	mem[0] = m;
	r = cmp;
	asm volatile("casal %x0, %x1, [%2]" : "+r"(r) : "r"(nv), "r"(mem) : "memory");
	line("casal x", r);
	line("  m", mem[0]);
	mem[0] = m;
	r = cmp;
	asm volatile("casa %w0, %w1, [%2]" : "+r"(r) : "r"(nv), "r"(mem) : "memory");
	line("casa w", r);
	line("  m", mem[0]);
	mem[0] = m;
	r = cmp;
	asm volatile("caslh %w0, %w1, [%2]" : "+r"(r) : "r"(nv), "r"(mem) : "memory");
	line("caslh", r);
	line("  m", mem[0]);
	mem[0] = m;
	r = cmp;
	asm volatile("casb %w0, %w1, [%2]" : "+r"(r) : "r"(nv), "r"(mem) : "memory");
	line("casb", r);
	line("  m", mem[0]);
}

static void casp_forms(u64 m0, u64 m1, u64 c0, u64 c1)
{
	register u64 x0 asm("x0");
	register u64 x1 asm("x1");
	register u64 x2 asm("x2") = 0x1111111122222222;
	register u64 x3 asm("x3") = 0x3333333344444444;
	mem[0] = m0;
	mem[1] = m1;
	x0 = c0;
	x1 = c1;
	asm volatile("caspal x0, x1, x2, x3, [%2]" : "+r"(x0), "+r"(x1) : "r"(mem), "r"(x2), "r"(x3) : "memory");
	line("caspal x0", x0);
	line("  x1", x1);
	line("  m0", mem[0]);
	line("  m1", mem[1]);
	mem[0] = m0;
	mem[1] = m1;
	x0 = c0;
	x1 = c1;
	asm volatile("casp w0, w1, w2, w3, [%2]" : "+r"(x0), "+r"(x1) : "r"(mem), "r"(x2), "r"(x3) : "memory");
	line("casp w0", x0);
	line("  w1", x1);
	line("  m0", mem[0]);
}

static void ldapr_forms(u64 m)
{
	u64 v;
	mem[0] = m;
	asm volatile("ldapr %x0, [%1]" : "=r"(v) : "r"(mem) : "memory");
	line("ldapr x", v);
	asm volatile("ldapr %w0, [%1]" : "=r"(v) : "r"(mem) : "memory");
	line("ldapr w", v);
	asm volatile("ldaprh %w0, [%1]" : "=r"(v) : "r"(mem) : "memory");
	line("ldaprh", v);
	asm volatile("ldaprb %w0, [%1]" : "=r"(v) : "r"(mem) : "memory");
	line("ldaprb", v);
}

int main(void)
{
	u64 isar0;
	asm volatile("mrs %0, id_aa64isar0_el1" : "=r"(isar0));
	line("isar0.atomic", (isar0 >> 20) & 0xf);
	for (unsigned i = 0; i < NVALS; i += 3) {
		for (unsigned j = 0; j < NVALS; j += 2) {
			u64 m = vals[i], s = vals[j];
			ldadd(m, s);
			ldclr(m, s);
			ldeor(m, s);
			ldset(m, s);
			ldsmax(m, s);
			ldsmin(m, s);
			ldumax(m, s);
			ldumin(m, s);
			swp(m, s);
			st_forms(m, s);
			cas_forms(m, s, ~s);
			cas_forms(m, m ^ 0x100000000, s);
		}
		ldapr_forms(vals[i]);
		casp_forms(vals[i], ~vals[i], vals[i], ~vals[i]);
		casp_forms(vals[i], ~vals[i], vals[i], vals[i]);
		casp_forms(vals[i], vals[i] << 32 | 7, vals[i] + 1, 0);
	}
	puts("done\n");
	return 0;
}
