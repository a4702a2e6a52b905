/*
 * Differential test program: exercises the A64 integer instruction groups
 * and the exception model, printing results to the PL011 UART. machine's
 * test requires the output to match QEMU's byte for byte.
 */
#include "../common/lib.h"

/* A checksum that is sensitive to order. */
static u64 mix(u64 h, u64 v)
{
	h ^= v;
	h *= 0x100000001b3UL;
	h ^= h >> 29;
	return h;
}

static const u64 tricky[] = {
	0, 1, 2, 0x7f, 0x80, 0xff, 0x7fff, 0x8000, 0xffff,
	0x7fffffff, 0x80000000, 0xffffffff, 0x100000000UL,
	0x7fffffffffffffffUL, 0x8000000000000000UL, 0xffffffffffffffffUL,
	0xfffffffffffffffeUL, 0x123456789abcdef0UL, 0xdeadbeefcafef00dUL,
	0x00000000fffffffeUL, 0x8000000000000001UL,
};
#define NTRICKY (sizeof(tricky) / sizeof(tricky[0]))

/* Flag-setting arithmetic through inline asm: result and NZCV. */
#define FLAGOP(fn, insn, reg)                                                  \
	static u64 fn(u64 a, u64 b, u64 cin, u64 *fl)                          \
	{                                                                      \
		u64 r, f;                                                      \
		asm volatile("msr nzcv, %[cin]\n\t" insn " %" reg "[r], %" reg \
			     "[a], %" reg "[b]\n\t"                            \
			     "mrs %[f], nzcv"                                  \
			     : [r] "=&r"(r), [f] "=&r"(f)                      \
			     : [a] "r"(a), [b] "r"(b), [cin] "r"(cin)          \
			     : "cc");                                          \
		*fl = f;                                                       \
		return r;                                                      \
	}

FLAGOP(adds_x, "adds", "x")
FLAGOP(adds_w, "adds", "w")
FLAGOP(subs_x, "subs", "x")
FLAGOP(subs_w, "subs", "w")
FLAGOP(adcs_x, "adcs", "x")
FLAGOP(adcs_w, "adcs", "w")
FLAGOP(sbcs_x, "sbcs", "x")
FLAGOP(sbcs_w, "sbcs", "w")
FLAGOP(ands_x, "ands", "x")
FLAGOP(bics_w, "bics", "w")

static u64 ccmp_x(u64 a, u64 b, u64 cin)
{
	u64 f;
	asm volatile("msr nzcv, %[cin]\n\tccmp %[a], %[b], #5, ne\n\tmrs %[f], nzcv"
		     : [f] "=r"(f)
		     : [a] "r"(a), [b] "r"(b), [cin] "r"(cin)
		     : "cc");
	return f;
}

static u64 ccmn_w(u64 a, u64 b, u64 cin)
{
	u64 f;
	asm volatile("msr nzcv, %[cin]\n\tccmn %w[a], %w[b], #10, ge\n\tmrs %[f], nzcv"
		     : [f] "=r"(f)
		     : [a] "r"(a), [b] "r"(b), [cin] "r"(cin)
		     : "cc");
	return f;
}

static u64 ccmp_imm(u64 a, u64 cin)
{
	u64 f;
	asm volatile("msr nzcv, %[cin]\n\tccmp %[a], #17, #2, hi\n\tmrs %[f], nzcv"
		     : [f] "=r"(f)
		     : [a] "r"(a), [cin] "r"(cin)
		     : "cc");
	return f;
}

static void test_flags(void)
{
	u64 (*ops[])(u64, u64, u64, u64 *) = {
		adds_x, adds_w, subs_x, subs_w, adcs_x,
		adcs_w, sbcs_x, sbcs_w, ands_x, bics_w,
	};
	static const char *names[] = {
		"adds.x", "adds.w", "subs.x", "subs.w", "adcs.x",
		"adcs.w", "sbcs.x", "sbcs.w", "ands.x", "bics.w",
	};
	for (unsigned op = 0; op < sizeof(ops) / sizeof(ops[0]); op++) {
		u64 h = 0;
		for (unsigned i = 0; i < NTRICKY; i++)
			for (unsigned j = 0; j < NTRICKY; j++)
				for (u64 c = 0; c < 2; c++) {
					u64 fl;
					u64 r = ops[op](tricky[i], tricky[j], c << 29, &fl);
					h = mix(h, r);
					h = mix(h, fl);
				}
		line(names[op], h);
	}
	u64 h1 = 0, h2 = 0, h3 = 0;
	for (unsigned i = 0; i < NTRICKY; i++)
		for (unsigned j = 0; j < NTRICKY; j++)
			for (u64 f = 0; f < 16; f++) {
				h1 = mix(h1, ccmp_x(tricky[i], tricky[j], f << 28));
				h2 = mix(h2, ccmn_w(tricky[i], tricky[j], f << 28));
			}
	for (unsigned i = 0; i < NTRICKY; i++)
		for (u64 f = 0; f < 16; f++)
			h3 = mix(h3, ccmp_imm(tricky[i], f << 28));
	line("ccmp", h1);
	line("ccmn", h2);
	line("ccmp.imm", h3);
}

/* Every condition code under every NZCV value, through CSET/CSINV/CSNEG. */
#define COND(cc)                                                               \
	do {                                                                   \
		u64 r;                                                         \
		asm volatile("msr nzcv, %[f]\n\tcset %[r], " #cc               \
			     : [r] "=r"(r)                                     \
			     : [f] "r"(f << 28)                                \
			     : "cc");                                          \
		m = m << 1 | r;                                                \
	} while (0)

static void test_conditions(void)
{
	u64 h = 0;
	for (u64 f = 0; f < 16; f++) {
		u64 m = 0;
		COND(eq); COND(ne); COND(cs); COND(cc); COND(mi); COND(pl);
		COND(vs); COND(vc); COND(hi); COND(ls); COND(ge); COND(lt);
		COND(gt); COND(le);
		h = mix(h, m);
	}
	line("conds", h);
	volatile u64 a = 5, b = 7;
	u64 x = a, y = b, r = 0;
	asm("cmp %[x], %[y]\n\tcsinv %[r], %[x], %[y], gt\n\t" : [r] "=r"(r) : [x] "r"(x), [y] "r"(y) : "cc");
	h = mix(0, r);
	asm("cmp %[x], %[y]\n\tcsneg %w[r], %w[x], %w[y], ge\n\t" : [r] "=r"(r) : [x] "r"(x), [y] "r"(y) : "cc");
	h = mix(h, r);
	asm("cmp %[x], %[y]\n\tcsinc %[r], %[x], %[y], lo\n\t" : [r] "=r"(r) : [x] "r"(x), [y] "r"(y) : "cc");
	h = mix(h, r);
	line("csel", h);
}

static u64 bitops(u64 x)
{
	u64 h = 0;
	h = mix(h, (x >> 7) & 0x3f);                       /* ubfx */
	h = mix(h, (u64)((s64)(x << 20) >> 40));           /* sbfx */
	h = mix(h, (x & ~0xff0UL) | ((x >> 3 & 0xff) << 4)); /* bfi */
	h = mix(h, (u32)x >> 5);
	h = mix(h, (u64)((s32)x >> 9));
	h = mix(h, (u64)(s8)x);
	h = mix(h, (u64)(s16)x);
	h = mix(h, (u64)(s32)x);
	h = mix(h, (u8)x | (u64)(u16)(x >> 8) << 32);
	h = mix(h, x << 13 | x >> 51);                     /* ror / extr */
	h = mix(h, (u32)x << 7 | (u32)x >> 25);
	h = mix(h, __builtin_bitreverse64(x));
	h = mix(h, __builtin_bitreverse32((u32)x));
	h = mix(h, __builtin_bswap64(x));
	h = mix(h, __builtin_bswap32((u32)x));
	h = mix(h, __builtin_bswap16((u16)x));
	h = mix(h, x ? (u64)__builtin_clzl(x) : 64);
	h = mix(h, (u32)x ? (u64)__builtin_clz((u32)x) : 32);
	h = mix(h, (u64)__builtin_clrsbl((s64)x));
	h = mix(h, (u64)__builtin_clrsb((s32)x));
	h = mix(h, x ? (u64)__builtin_ctzl(x) : 64);
	h = mix(h, (u64)__builtin_popcountl(x));
	return h;
}

static u64 extr_asm(u64 a, u64 b)
{
	u64 r, s;
	asm("extr %[r], %[a], %[b], #17\n\textr %w[s], %w[a], %w[b], #9" : [r] "=&r"(r), [s] "=&r"(s) : [a] "r"(a), [b] "r"(b));
	return r ^ (s << 1);
}

static void test_bits(void)
{
	u64 h = 0;
	for (unsigned i = 0; i < NTRICKY; i++) {
		h = mix(h, bitops(tricky[i]));
		for (unsigned j = 0; j < NTRICKY; j++)
			h = mix(h, extr_asm(tricky[i], tricky[j]));
	}
	line("bits", h);
	/* Variable shifts with out-of-range amounts (mod width in hardware). */
	h = 0;
	for (unsigned i = 0; i < NTRICKY; i++)
		for (u64 s = 0; s < 130; s += 3) {
			u64 x = tricky[i], r;
			asm("lsl %[r], %[x], %[s]" : [r] "=r"(r) : [x] "r"(x), [s] "r"(s));
			h = mix(h, r);
			asm("lsr %w[r], %w[x], %w[s]" : [r] "=r"(r) : [x] "r"(x), [s] "r"(s));
			h = mix(h, r);
			asm("asr %[r], %[x], %[s]" : [r] "=r"(r) : [x] "r"(x), [s] "r"(s));
			h = mix(h, r);
			asm("ror %w[r], %w[x], %w[s]" : [r] "=r"(r) : [x] "r"(x), [s] "r"(s));
			h = mix(h, r);
		}
	line("shifts", h);
}

static void test_muldiv(void)
{
	u64 h = 0, hd = 0;
	for (unsigned i = 0; i < NTRICKY; i++)
		for (unsigned j = 0; j < NTRICKY; j++) {
			u64 a = tricky[i], b = tricky[j], r;
			h = mix(h, a * b);
			h = mix(h, (u32)a * (u32)b);
			h = mix(h, (u64)((unsigned __int128)a * b >> 64));
			h = mix(h, (u64)((__int128)(s64)a * (s64)b >> 64));
			h = mix(h, (u64)(s64)(s32)a * (s64)(s32)b);
			h = mix(h, (u64)(u32)a * (u32)b + a);
			h = mix(h, a - (u64)(s32)a * (s32)b);
			h = mix(h, b - a * b);
			asm("udiv %[r], %[a], %[b]" : [r] "=r"(r) : [a] "r"(a), [b] "r"(b));
			hd = mix(hd, r);
			asm("sdiv %[r], %[a], %[b]" : [r] "=r"(r) : [a] "r"(a), [b] "r"(b));
			hd = mix(hd, r);
			asm("udiv %w[r], %w[a], %w[b]" : [r] "=r"(r) : [a] "r"(a), [b] "r"(b));
			hd = mix(hd, r);
			asm("sdiv %w[r], %w[a], %w[b]" : [r] "=r"(r) : [a] "r"(a), [b] "r"(b));
			hd = mix(hd, r);
			if (b != 0) {
				hd = mix(hd, a % b);
				if (!(a == 0x8000000000000000UL && b == ~0UL))
					hd = mix(hd, (u64)((s64)a % (s64)b));
			}
		}
	line("mul", h);
	line("div", hd);
}

static void test_crc(void)
{
	u32 c = 0xffffffff, cc = 0xffffffff;
	for (unsigned i = 0; i < NTRICKY; i++) {
		u64 x = tricky[i];
		c = __builtin_arm_crc32b(c, (u8)x);
		c = __builtin_arm_crc32h(c, (u16)x);
		c = __builtin_arm_crc32w(c, (u32)x);
		c = __builtin_arm_crc32d(c, x);
		cc = __builtin_arm_crc32cb(cc, (u8)x);
		cc = __builtin_arm_crc32ch(cc, (u16)x);
		cc = __builtin_arm_crc32cw(cc, (u32)x);
		cc = __builtin_arm_crc32cd(cc, x);
	}
	line("crc32", c);
	line("crc32c", cc);
}

struct rec {
	s8 b;
	u8 ub;
	s16 h;
	u16 uh;
	s32 w;
	u32 uw;
	s64 d;
	u64 ud;
	char name[13];
};

static struct rec recs[37];
static u8 bytes[1024];

static void test_memory(void)
{
	u64 seed = 0x9e3779b97f4a7c15UL;
	for (unsigned i = 0; i < sizeof(bytes); i++) {
		seed = seed * 6364136223846793005UL + 1442695040888963407UL;
		bytes[i] = (u8)(seed >> 56);
	}
	for (unsigned i = 0; i < 37; i++) {
		const u8 *p = bytes + i * 7;
		struct rec r;
		memcpy(&r, p, sizeof(r));
		recs[i] = r;
		recs[i].name[12] = 0;
	}
	u64 h = 0;
	for (unsigned i = 0; i < 37; i++) {
		struct rec *r = &recs[i];
		h = mix(h, (u64)(s64)r->b);
		h = mix(h, r->ub);
		h = mix(h, (u64)(s64)r->h);
		h = mix(h, r->uh);
		h = mix(h, (u64)(s64)r->w);
		h = mix(h, r->uw);
		h = mix(h, (u64)r->d);
		h = mix(h, r->ud);
		for (const char *s = r->name; *s; s++)
			h = mix(h, (u64)(s64)*s);
	}
	line("structs", h);
	/* Unaligned and mixed-width accesses through pointers. */
	h = 0;
	for (unsigned off = 0; off < 64; off++) {
		const volatile u8 *p = bytes + off;
		h = mix(h, *(const volatile u16 *)p);
		h = mix(h, *(const volatile u32 *)p);
		h = mix(h, *(const volatile u64 *)p);
		h = mix(h, (u64)(s64) * (const volatile s16 *)p);
		h = mix(h, (u64)(s64) * (const volatile s32 *)p);
		*(volatile u32 *)(bytes + 512 + off) = (u32)h;
		*(volatile u16 *)(bytes + 600 + off) = (u16)(h >> 7);
	}
	for (unsigned i = 0; i < sizeof(bytes); i += 8)
		h = mix(h, *(u64 *)(bytes + i));
	line("unaligned", h);
	/* Pairs, pre/post-index through a copy loop. */
	static u64 dst[64];
	u64 *s = (u64 *)bytes, *d = dst;
	for (int i = 0; i < 32; i++) {
		u64 a = *s++, b = *s++;
		*d++ = b;
		*d++ = a;
	}
	h = 0;
	for (int i = 63; i >= 0; i--)
		h = mix(h, dst[i]);
	line("copy", h);
}

static void test_exclusive(void)
{
	static u64 counter;
	static u32 word;
	u64 h = 0;
	for (int i = 0; i < 10; i++) {
		u64 v, st;
		asm volatile("1: ldxr %[v], [%[p]]\n\tadd %[v], %[v], #3\n\tstxr %w[st], %[v], [%[p]]\n\tcbnz %w[st], 1b"
			     : [v] "=&r"(v), [st] "=&r"(st)
			     : [p] "r"(&counter)
			     : "memory");
		u32 w;
		asm volatile("1: ldaxr %w[v], [%[p]]\n\teor %w[v], %w[v], #0x55555555\n\tstlxr %w[st], %w[v], [%[p]]\n\tcbnz %w[st], 1b"
			     : [v] "=&r"(w), [st] "=&r"(st)
			     : [p] "r"(&word)
			     : "memory");
		h = mix(h, v);
		h = mix(h, w);
	}
	u64 st;
	asm volatile("clrex\n\tstxr %w[st], %[v], [%[p]]" : [st] "=&r"(st) : [v] "r"(h), [p] "r"(&counter) : "memory");
	h = mix(h, st);
	line("exclusive", h);
}

/* A small sort and hash over pseudo-random data. */
static u32 data[500];

static void quicksort(u32 *a, int lo, int hi)
{
	while (lo < hi) {
		u32 p = a[(lo + hi) / 2];
		int i = lo, j = hi;
		while (i <= j) {
			while (a[i] < p)
				i++;
			while (a[j] > p)
				j--;
			if (i <= j) {
				u32 t = a[i];
				a[i] = a[j];
				a[j] = t;
				i++;
				j--;
			}
		}
		if (j - lo < hi - i) {
			quicksort(a, lo, j);
			lo = i;
		} else {
			quicksort(a, i, hi);
			hi = j;
		}
	}
}

static u32 murmur32(const u8 *p, unsigned n, u32 seed)
{
	u32 h = seed;
	for (unsigned i = 0; i + 4 <= n; i += 4) {
		u32 k = p[i] | p[i + 1] << 8 | p[i + 2] << 16 | (u32)p[i + 3] << 24;
		k *= 0xcc9e2d51;
		k = k << 15 | k >> 17;
		k *= 0x1b873593;
		h ^= k;
		h = h << 13 | h >> 19;
		h = h * 5 + 0xe6546b64;
	}
	h ^= n;
	h ^= h >> 16;
	h *= 0x85ebca6b;
	h ^= h >> 13;
	h *= 0xc2b2ae35;
	h ^= h >> 16;
	return h;
}

static void test_sort(void)
{
	u32 x = 2463534242u;
	for (unsigned i = 0; i < 500; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		data[i] = x % 100000;
	}
	quicksort(data, 0, 499);
	int ok = 1;
	for (unsigned i = 1; i < 500; i++)
		ok &= data[i - 1] <= data[i];
	line("sorted", (u64)ok);
	line("murmur", murmur32((const u8 *)data, sizeof(data), 0x1234));
	u64 fnv = 0xcbf29ce484222325UL;
	for (unsigned i = 0; i < sizeof(data); i++) {
		fnv ^= ((const u8 *)data)[i];
		fnv *= 0x100000001b3UL;
	}
	line("fnv", fnv);
}

/* Exceptions: the runtime prints nothing (g_quiet: machine and QEMU
 * differ in how they report FP with FP absent), the hook records what it
 * saw. */
static volatile u64 seen_esr, seen_elr, seen_far, seen_spsr, seen_x0, seen_x3, nexc;

static int record_exception(struct frame *f, u64 vec, u64 esr)
{
	(void)vec;
	u64 far = read_sysreg(far_el1);
	nexc++;
	seen_esr = esr;
	seen_elr = f->elr;
	seen_spsr = f->spsr;
	u64 ec = esr >> 26;
	if (ec == 0x24 || ec == 0x25)
		seen_far = far;
	if (ec == 0x15 && (f->spsr & 0xf) == 0) {
		/* SVC from EL0: back to EL1h at run_el0's continuation. */
		seen_x0 = f->x[0] ^ f->x[1];
		seen_x3 = f->x[3];
		f->elr = el0_resume;
		f->spsr = 0x3c5;
		return 1;
	}
	if (ec != 0x15)
		f->elr += 4; /* skip the faulting instruction */
	return 1;
}

/* EL0 code: computes with the argument registers and its own stack,
 * tries a privileged read (undefined at EL0), then returns via SVC. */
void el0_code(void);
asm(".text\n"
    ".globl el0_code\n"
    "el0_code:\n"
    "	mov	x0, sp\n"
    "	sub	sp, sp, #16\n"
    "	str	x0, [sp]\n"
    "	ldr	x1, [sp]\n"
    "	add	sp, sp, #16\n"
    "	mrs	x2, tpidr_el0\n"
    "	add	x2, x2, #1\n"
    "	msr	tpidr_el0, x2\n"
    "	mrs	x3, sctlr_el1\n"
    "	svc	#0x10\n"
    "1:	b	1b\n");

static void report(const char *what)
{
	puts(what);
	puts(": ec ");
	puthex(seen_esr >> 26);
	puts(" iss ");
	puthex(seen_esr & 0x1ffffff);
	puts(" elr-off ");
	puthex(seen_elr - (u64)&report);
	puts(" spsr ");
	puthex(seen_spsr & 0xf03003ff);
	puts("\n");
}

static void report_abort(const char *what)
{
	puts(what);
	puts(": ec ");
	puthex(seen_esr >> 26);
	puts(" dfsc ");
	puthex(seen_esr & 0x3f);
	puts(" wnr ");
	puthex(seen_esr >> 6 & 1);
	puts(" far ");
	puthex(seen_far);
	puts("\n");
}

static void test_exceptions(void)
{
	asm volatile("msr nzcv, %0\n\tbrk #0x77" : : "r"(0x60000000UL) : "cc");
	report("brk");
	asm volatile("svc #0x42");
	report("svc");
	asm volatile(".inst 0x00000000"); /* udf #0 */
	report("udf");
	asm volatile(".inst 0x1e222820"); /* fadd s0, s1, s2 with FP trapped or absent */
	puts("fp: ec ");
	puthex(seen_esr >> 26 == 0 || seen_esr >> 26 == 7); /* machine: undefined; QEMU: CPACR trap */
	puts("\n");
	/* Nothing is mapped at 0x0b000000 on virt: synchronous external aborts. */
	u64 v;
	asm volatile("ldr %0, [%1, #8]" : "=r"(v) : "r"(0x0b000000UL) : "memory");
	report_abort("dabt.ld");
	asm volatile("strh %w0, [%1, #6]" : : "r"(v), "r"(0x0b000000UL) : "memory");
	report_abort("dabt.st");
	asm volatile("mov x0, #5\n\tmov x1, #3\n\tmsr tpidr_el0, x1" ::: "x0", "x1");
	run_el0(el0_code, EL0_SP, 0x3c0); /* EL0t, DAIF masked */
	report("el0");
	u64 tp;
	asm volatile("mrs %0, tpidr_el0" : "=r"(tp));
	line("el0 tpidr", tp);
	line("el0 sp^x1", seen_x0);
	line("exceptions", nexc);
	u64 daif, el, spsel;
	asm volatile("mrs %0, daif" : "=r"(daif));
	asm volatile("mrs %0, currentel" : "=r"(el));
	asm volatile("mrs %0, spsel" : "=r"(spsel));
	line("daif/el/spsel", daif | el << 16 | spsel << 32);
}

static void test_sysregs(void)
{
	u64 v;
	asm volatile("mrs %0, midr_el1" : "=r"(v));
	line("midr", v);
	asm volatile("mrs %0, mpidr_el1" : "=r"(v));
	line("mpidr", v);
	asm volatile("mrs %0, ctr_el0" : "=r"(v));
	line("ctr", v);
	asm volatile("mrs %0, dczid_el0" : "=r"(v));
	line("dczid", v);
	asm volatile("mrs %0, id_aa64isar0_el1" : "=r"(v));
	line("isar0.crc", (v >> 16) & 0xf);
	static u8 zbuf[256] __attribute__((aligned(64)));
	memset(zbuf, 0xa5, sizeof(zbuf));
	asm volatile("dc zva, %0" : : "r"(zbuf + 64 + 5) : "memory");
	u64 h = 0;
	for (unsigned i = 0; i < sizeof(zbuf); i++)
		h = mix(h, zbuf[i]);
	line("dc zva", h);
	asm volatile("msr tpidr_el1, %0\n\tmrs %0, tpidr_el1" : "+r"(h));
	line("tpidr_el1", h);
}

int main(void)
{
	g_quiet = 1;
	g_hook = record_exception;
	puts("kpemu machine differential test\n");
	test_flags();
	test_conditions();
	test_bits();
	test_muldiv();
	test_crc();
	test_memory();
	test_exclusive();
	test_sort();
	test_exceptions();
	test_sysregs();
	puts("done\n");
	return 0;
}
