/*
 * Differential test of the FP/SIMD unit: scalar FP arithmetic, FMA,
 * conversions and comparisons under every rounding mode with and without
 * FZ and DN on values chosen for the edge cases (NaN propagation, signed
 * zeros, denormals, overflow, saturation), then Advanced SIMD integer and
 * FP operations and the SIMD&FP loads and stores. Each line is a hash of
 * the results and of FPSR after every operation, and the OR of the FPSR
 * flags (the cumulative flags) of the group. Build with -DVERBOSE to print
 * every operation instead, to find what differs.
 */
#include "../common/lib.h"

static u64 hash;
static u64 flags;

static void mix(u64 v)
{
	hash ^= v;
	hash *= 0x100000001b3UL;
	hash ^= hash >> 29;
}

static void out(const char *name)
{
	line(name, hash);
	line("  fpsr", flags);
	hash = 0xcbf29ce484222325UL;
	flags = 0;
}

static void set_fpcr(u64 v) { asm volatile("msr fpcr, %0" ::"r"(v)); }
static void clr_fpsr(void) { asm volatile("msr fpsr, xzr"); }
static u64 get_fpsr(void) { u64 v; asm volatile("mrs %0, fpsr" : "=r"(v)); return v; }

static void note(u64 r)
{
	u64 s = get_fpsr();
	mix(r);
	mix(s);
	flags |= s;
#ifdef VERBOSE
	puthex(r);
	puts(" ");
	puthex(s);
	puts("\n");
#endif
}

static const u32 sv[] = {
	0x00000000, 0x80000000, 0x3f800000, 0xbf800000, 0x3fc00000, 0x40400000,
	0x7f7fffff, 0xff7fffff, 0x00800000, 0x00000001, 0x807fffff, 0x00400000,
	0x7f800000, 0xff800000, 0x7fc00001, 0x7f800005, 0xffc00002, 0xff800007,
	0x3eaaaaab, 0x4b000001, 0x33800000, 0x3f800001, 0x5f000000, 0xdf000000,
	0x4f800000, 0x7effffff, 0x3f000000, 0xbfc00000, 0x40a00000, 0x4effffff,
	0xcf000000, 0x3f7fffff,
	/* the estimates' boundaries: 2^-128 and just below, 2^126, 2^-127 */
	0x00200000, 0x001fffff, 0x7e800000, 0x80400000,
};
static const u64 dv[] = {
	0x0000000000000000, 0x8000000000000000, 0x3ff0000000000000, 0xbff0000000000000,
	0x3ff8000000000000, 0x4008000000000000, 0x7fefffffffffffff, 0xffefffffffffffff,
	0x0010000000000000, 0x0000000000000001, 0x800fffffffffffff, 0x0008000000000000,
	0x7ff0000000000000, 0xfff0000000000000, 0x7ff8000000000001, 0x7ff0000000000005,
	0xfff8000000000002, 0xfff0000000000007, 0x3fd5555555555555, 0x4330000000000001,
	0x3ca0000000000000, 0x3ff0000000000001, 0x43e0000000000000, 0xc3e0000000000000,
	0x41f0000000000000, 0x7fdfffffffffffff, 0x3fe0000000000000, 0xbff8000000000000,
	0x4014000000000000, 0x41dfffffffc00000, 0xc1e0000000000000, 0x3fefffffffffffff,
	0x36a0000000000000, 0x47efffffe0000000, 0x3810000000000000, 0x380fffffffffffff,
	/* the estimates' boundaries: 2^-1024 and just below, 2^1022; a
	 * double exactly halfway between two singles, for FCVTXN */
	0x0004000000000000, 0x0003ffffffffffff, 0x7fd0000000000000, 0x3ff0000010000000,
};
#define NS (sizeof(sv) / sizeof(sv[0]))
#define ND (sizeof(dv) / sizeof(dv[0]))

static const u64 configs[] = {
	0,              /* RN */
	1UL << 22,      /* RP */
	2UL << 22,      /* RM */
	3UL << 22,      /* RZ */
	1UL << 24,      /* FZ */
	1UL << 25,      /* DN */
	3UL << 24 | 1UL << 22,
};
#define NCFG (sizeof(configs) / sizeof(configs[0]))

#define BIN(name, insn, R, T, G)                                                        \
	static u64 name(u64 a, u64 b)                                                   \
	{                                                                               \
		u64 r;                                                                  \
		asm volatile("fmov " R "0, %" G "1\n fmov " R "1, %" G "2\n" insn " " R "2, " R "0, " R "1\n fmov %" G "0, " R "2" \
			     : "=r"(r) : "r"(a), "r"(b) : "v0", "v1", "v2");          \
		return r;                                                               \
	}
#define UN(name, insn, RD, RS, GD, GS)                                                   \
	static u64 name(u64 a)                                                          \
	{                                                                               \
		u64 r = 0;                                                              \
		asm volatile("fmov " RS "0, %" GS "1\n" insn " " RD "2, " RS "0\n fmov %" GD "0, " RD "2" \
			     : "+r"(r) : "r"(a) : "v0", "v2");                          \
		return r;                                                               \
	}
/* As UN, moving through the registers FD and FS (half values via S). */
#define UN2(name, insn, RD, RS, FD, FS, GD, GS)                                          \
	static u64 name(u64 a)                                                          \
	{                                                                               \
		u64 r = 0;                                                              \
		asm volatile("fmov " FS "0, %" GS "1\n" insn " " RD "2, " RS "0\n fmov %" GD "0, " FD "2" \
			     : "+r"(r) : "r"(a) : "v0", "v2");                          \
		return r;                                                               \
	}
/* FP to general register. */
#define TOI(name, insn, RS, GS, GD)                                                      \
	static u64 name(u64 a)                                                          \
	{                                                                               \
		u64 r = 0;                                                              \
		asm volatile("fmov " RS "0, %" GS "1\n" insn " %" GD "0, " RS "0"           \
			     : "+r"(r) : "r"(a) : "v0");                                \
		return r;                                                               \
	}
/* General register to FP. */
#define FROMI(name, insn, RD, GS, GD)                                                    \
	static u64 name(u64 a)                                                          \
	{                                                                               \
		u64 r = 0;                                                              \
		asm volatile(insn " " RD "0, %" GS "1\n fmov %" GD "0, " RD "0"             \
			     : "+r"(r) : "r"(a) : "v0");                                \
		return r;                                                               \
	}

#define BINS(n, i) BIN(n##_s, i, "s", u32, "w")
#define BIND(n, i) BIN(n##_d, i, "d", u64, "x")
#define BOTH(n, i) BINS(n, i) BIND(n, i)
BOTH(fadd, "fadd")
BOTH(fsub, "fsub")
BOTH(fmul, "fmul")
BOTH(fdiv, "fdiv")
BOTH(fmax, "fmax")
BOTH(fmin, "fmin")
BOTH(fmaxnm, "fmaxnm")
BOTH(fminnm, "fminnm")
BOTH(fnmul, "fnmul")
BOTH(fabd, "fabd")
BOTH(fmulx, "fmulx")
BOTH(frecps, "frecps")
BOTH(frsqrts, "frsqrts")

typedef u64 (*binfn)(u64, u64);
static const struct { const char *name; binfn s, d; } bins[] = {
	{"fadd", fadd_s, fadd_d}, {"fsub", fsub_s, fsub_d}, {"fmul", fmul_s, fmul_d},
	{"fdiv", fdiv_s, fdiv_d}, {"fmax", fmax_s, fmax_d}, {"fmin", fmin_s, fmin_d},
	{"fmaxnm", fmaxnm_s, fmaxnm_d}, {"fminnm", fminnm_s, fminnm_d},
	{"fnmul", fnmul_s, fnmul_d}, {"fabd", fabd_s, fabd_d}, {"fmulx", fmulx_s, fmulx_d},
	{"frecps", frecps_s, frecps_d}, {"frsqrts", frsqrts_s, frsqrts_d},
};

#define UNS(n, i) UN(n##_s, i, "s", "s", "w", "w")
#define UND(n, i) UN(n##_d, i, "d", "d", "x", "x")
#define UBOTH(n, i) UNS(n, i) UND(n, i)
UBOTH(fsqrt, "fsqrt")
UBOTH(fabs, "fabs")
UBOTH(fneg, "fneg")
UBOTH(fmov, "fmov")
UBOTH(frintn, "frintn")
UBOTH(frintp, "frintp")
UBOTH(frintm, "frintm")
UBOTH(frintz, "frintz")
UBOTH(frinta, "frinta")
UBOTH(frintx, "frintx")
UBOTH(frinti, "frinti")
UN(fcvt_sd, "fcvt", "d", "s", "x", "w")
UN(fcvt_ds, "fcvt", "s", "d", "w", "x")
UN2(fcvt_sh, "fcvt", "h", "s", "s", "s", "w", "w")
UN2(fcvt_dh, "fcvt", "h", "d", "s", "d", "w", "x")
UN2(fcvt_hs, "fcvt", "s", "h", "s", "s", "w", "w")
UN2(fcvt_hd, "fcvt", "d", "h", "d", "s", "x", "w")
/* Scalar Advanced SIMD forms of the conversions and compares with zero. */
UBOTH(fcvtzs_v, "fcvtzs")
UBOTH(fcvtnu_v, "fcvtnu")
UBOTH(scvtf_v, "scvtf")
UBOTH(ucvtf_v, "ucvtf")
/* The estimates, FRECPX and FCVTXN (round to odd; its single inputs are
 * tiny doubles, denormal ones included). */
UBOTH(frecpe, "frecpe")
UBOTH(frsqrte, "frsqrte")
UBOTH(frecpx, "frecpx")
UN(fcvtxn_sd, "fcvtxn", "s", "d", "w", "x")

typedef u64 (*unfn)(u64);
static const struct { const char *name; unfn s, d; } uns[] = {
	{"fsqrt", fsqrt_s, fsqrt_d}, {"fabs", fabs_s, fabs_d}, {"fneg", fneg_s, fneg_d},
	{"fmov", fmov_s, fmov_d}, {"frintn", frintn_s, frintn_d}, {"frintp", frintp_s, frintp_d},
	{"frintm", frintm_s, frintm_d}, {"frintz", frintz_s, frintz_d},
	{"frinta", frinta_s, frinta_d}, {"frintx", frintx_s, frintx_d},
	{"frinti", frinti_s, frinti_d}, {"fcvt-sd/ds", fcvt_sd, fcvt_ds},
	{"fcvt-sh/dh", fcvt_sh, fcvt_dh}, {"fcvtzs-v", fcvtzs_v_s, fcvtzs_v_d},
	{"fcvtnu-v", fcvtnu_v_s, fcvtnu_v_d}, {"scvtf-v", scvtf_v_s, scvtf_v_d},
	{"ucvtf-v", ucvtf_v_s, ucvtf_v_d}, {"frecpe", frecpe_s, frecpe_d},
	{"frsqrte", frsqrte_s, frsqrte_d}, {"frecpx", frecpx_s, frecpx_d},
	{"fcvtxn", fcvtxn_sd, fcvtxn_sd},
};

#define CV(n, i)                                                             \
	TOI(n##_sw, i, "s", "w", "w") TOI(n##_sx, i, "s", "w", "x")             \
	TOI(n##_dw, i, "d", "x", "w") TOI(n##_dx, i, "d", "x", "x")
CV(fcvtzs, "fcvtzs")
CV(fcvtzu, "fcvtzu")
CV(fcvtns, "fcvtns")
CV(fcvtnu, "fcvtnu")
CV(fcvtps, "fcvtps")
CV(fcvtpu, "fcvtpu")
CV(fcvtms, "fcvtms")
CV(fcvtmu, "fcvtmu")
CV(fcvtas, "fcvtas")
CV(fcvtau, "fcvtau")
static u64 fix1(u64 a) { u64 r = 0; asm volatile("fmov s0, %w1\n fcvtzs %w0, s0, #7" : "+r"(r) : "r"(a) : "v0"); return r; }
static u64 fix2(u64 a) { u64 r = 0; asm volatile("fmov d0, %x1\n fcvtzu %x0, d0, #33" : "+r"(r) : "r"(a) : "v0"); return r; }
static u64 fix3(u64 a) { u64 r = 0; asm volatile("fmov d0, %x1\n fcvtzs %w0, d0, #1" : "+r"(r) : "r"(a) : "v0"); return r; }
static u64 fix4(u64 a) { u64 r = 0; asm volatile("fmov s0, %w1\n fcvtzu %x0, s0, #64" : "+r"(r) : "r"(a) : "v0"); return r; }

static const struct { const char *name; unfn sw, sx, dw, dx; } cvs[] = {
	{"fcvtzs", fcvtzs_sw, fcvtzs_sx, fcvtzs_dw, fcvtzs_dx},
	{"fcvtzu", fcvtzu_sw, fcvtzu_sx, fcvtzu_dw, fcvtzu_dx},
	{"fcvtns", fcvtns_sw, fcvtns_sx, fcvtns_dw, fcvtns_dx},
	{"fcvtnu", fcvtnu_sw, fcvtnu_sx, fcvtnu_dw, fcvtnu_dx},
	{"fcvtps", fcvtps_sw, fcvtps_sx, fcvtps_dw, fcvtps_dx},
	{"fcvtpu", fcvtpu_sw, fcvtpu_sx, fcvtpu_dw, fcvtpu_dx},
	{"fcvtms", fcvtms_sw, fcvtms_sx, fcvtms_dw, fcvtms_dx},
	{"fcvtmu", fcvtmu_sw, fcvtmu_sx, fcvtmu_dw, fcvtmu_dx},
	{"fcvtas", fcvtas_sw, fcvtas_sx, fcvtas_dw, fcvtas_dx},
	{"fcvtau", fcvtau_sw, fcvtau_sx, fcvtau_dw, fcvtau_dx},
	{"fixed", fix1, fix2, fix3, fix4},
};

FROMI(scvtf_ws, "scvtf", "s", "w", "w")
FROMI(scvtf_xs, "scvtf", "s", "x", "w")
FROMI(scvtf_wd, "scvtf", "d", "w", "x")
FROMI(scvtf_xd, "scvtf", "d", "x", "x")
FROMI(ucvtf_ws, "ucvtf", "s", "w", "w")
FROMI(ucvtf_xs, "ucvtf", "s", "x", "w")
FROMI(ucvtf_wd, "ucvtf", "d", "w", "x")
FROMI(ucvtf_xd, "ucvtf", "d", "x", "x")
static u64 fixs(u64 a) { u64 r = 0; asm volatile("scvtf s0, %x1, #13\n fmov %w0, s0" : "+r"(r) : "r"(a) : "v0"); return r; }
static u64 fixu(u64 a) { u64 r = 0; asm volatile("ucvtf d0, %w1, #32\n fmov %x0, d0" : "+r"(r) : "r"(a) : "v0"); return r; }
static const struct { const char *name; unfn f; } ints[] = {
	{"scvtf ws", scvtf_ws}, {"scvtf xs", scvtf_xs}, {"scvtf wd", scvtf_wd}, {"scvtf xd", scvtf_xd},
	{"ucvtf ws", ucvtf_ws}, {"ucvtf xs", ucvtf_xs}, {"ucvtf wd", ucvtf_wd}, {"ucvtf xd", ucvtf_xd},
	{"scvtf fix", fixs}, {"ucvtf fix", fixu},
};
static const u64 iv[] = {
	0, 1, 0xffffffffffffffff, 0x7fffffff, 0x80000000, 0xffffffff, 0x1000001, 0x1000003,
	0x7fffffffffffffff, 0x8000000000000000, 0x20000000000001, 0x20000000000003,
	0xfffffffffefffffd, 0x123456789abcdef, 0xfedcba987654321, 0xffffff7fffffff80,
};
#define NI (sizeof(iv) / sizeof(iv[0]))

#define FMA(name, insn, R, G)                                                          \
	static u64 name(u64 a, u64 b, u64 c)                                            \
	{                                                                               \
		u64 r;                                                                  \
		asm volatile("fmov " R "0, %" G "1\n fmov " R "1, %" G "2\n fmov " R "2, %" G "3\n" \
			     insn " " R "3, " R "0, " R "1, " R "2\n fmov %" G "0, " R "3"      \
			     : "=r"(r) : "r"(a), "r"(b), "r"(c) : "v0", "v1", "v2", "v3");  \
		return r;                                                               \
	}
FMA(fmadd_s, "fmadd", "s", "w")
FMA(fmsub_s, "fmsub", "s", "w")
FMA(fnmadd_s, "fnmadd", "s", "w")
FMA(fnmsub_s, "fnmsub", "s", "w")
FMA(fmadd_d, "fmadd", "d", "x")
FMA(fmsub_d, "fmsub", "d", "x")
FMA(fnmadd_d, "fnmadd", "d", "x")
FMA(fnmsub_d, "fnmsub", "d", "x")
typedef u64 (*fmafn)(u64, u64, u64);
static const struct { const char *name; fmafn s, d; } fmas[] = {
	{"fmadd", fmadd_s, fmadd_d}, {"fmsub", fmsub_s, fmsub_d},
	{"fnmadd", fnmadd_s, fnmadd_d}, {"fnmsub", fnmsub_s, fnmsub_d},
};
static const u8 fmaidx[] = {0, 1, 2, 3, 5, 6, 9, 10, 12, 13, 14, 15, 18, 21, 26};
#define NF (sizeof(fmaidx) / sizeof(fmaidx[0]))

static u64 cmp_s(u64 a, u64 b, int e)
{
	u64 r;
	if (e)
		asm volatile("fmov s0, %w1\n fmov s1, %w2\n fcmpe s0, s1\n mrs %0, nzcv" : "=r"(r) : "r"(a), "r"(b) : "v0", "v1", "cc");
	else
		asm volatile("fmov s0, %w1\n fmov s1, %w2\n fcmp s0, s1\n mrs %0, nzcv" : "=r"(r) : "r"(a), "r"(b) : "v0", "v1", "cc");
	return r;
}
static u64 cmp_d(u64 a, u64 b, int e)
{
	u64 r;
	if (e)
		asm volatile("fmov d0, %x1\n fmov d1, %x2\n fcmpe d0, #0.0\n fccmpe d0, d1, #5, ge\n mrs %0, nzcv" : "=r"(r) : "r"(a), "r"(b) : "v0", "v1", "cc");
	else
		asm volatile("fmov d0, %x1\n fmov d1, %x2\n fcmp d0, d1\n fccmp d1, d0, #9, eq\n fcsel d2, d0, d1, mi\n fmov x9, d2\n mrs %0, nzcv\n eor %0, %0, x9" : "=r"(r) : "r"(a), "r"(b) : "v0", "v1", "v2", "x9", "cc");
	return r;
}

static void scalar_tests(void)
{
	char name[32];
	for (unsigned o = 0; o < sizeof(bins) / sizeof(bins[0]); o++) {
		for (unsigned k = 0; k < NCFG; k++) {
			set_fpcr(configs[k]);
			for (unsigned i = 0; i < NS; i++)
				for (unsigned j = 0; j < NS; j++) {
					clr_fpsr();
					note(bins[o].s(sv[i], sv[j]));
				}
			for (unsigned i = 0; i < ND; i++)
				for (unsigned j = 0; j < ND; j++) {
					clr_fpsr();
					note(bins[o].d(dv[i], dv[j]));
				}
			memcpy(name, bins[o].name, 8);
			name[8] = 0;
			puts(name);
			puthex(k);
			out("");
		}
	}
	for (unsigned o = 0; o < sizeof(uns) / sizeof(uns[0]); o++) {
		for (unsigned k = 0; k < NCFG; k++) {
			set_fpcr(configs[k]);
			for (unsigned i = 0; i < NS; i++) {
				clr_fpsr();
				note(uns[o].s(sv[i]));
			}
			for (unsigned i = 0; i < ND; i++) {
				clr_fpsr();
				note(uns[o].d(dv[i]));
			}
			/* half-precision sources: the low 16 bits of each single */
			if (o == 12) {
				for (unsigned i = 0; i < NS; i++) {
					clr_fpsr();
					note(fcvt_hs(sv[i] >> 16));
					clr_fpsr();
					note(fcvt_hd(sv[i] & 0xffff));
				}
			}
			puts(uns[o].name);
			puthex(k);
			out("");
		}
	}
	for (unsigned o = 0; o < sizeof(cvs) / sizeof(cvs[0]); o++) {
		for (unsigned k = 0; k < NCFG; k++) {
			set_fpcr(configs[k]);
			for (unsigned i = 0; i < NS; i++) {
				clr_fpsr();
				note(cvs[o].sw(sv[i]));
				clr_fpsr();
				note(cvs[o].sx(sv[i]));
			}
			for (unsigned i = 0; i < ND; i++) {
				clr_fpsr();
				note(cvs[o].dw(dv[i]));
				clr_fpsr();
				note(cvs[o].dx(dv[i]));
			}
			puts(cvs[o].name);
			puthex(k);
			out("");
		}
	}
	for (unsigned o = 0; o < sizeof(ints) / sizeof(ints[0]); o++) {
		for (unsigned k = 0; k < NCFG; k++) {
			set_fpcr(configs[k]);
			for (unsigned i = 0; i < NI; i++) {
				clr_fpsr();
				note(ints[o].f(iv[i]));
			}
			puts(ints[o].name);
			puthex(k);
			out("");
		}
	}
	for (unsigned o = 0; o < 4; o++) {
		for (unsigned k = 0; k < NCFG; k++) {
			set_fpcr(configs[k]);
			for (unsigned i = 0; i < NF; i++)
				for (unsigned j = 0; j < NF; j++)
					for (unsigned l = 0; l < NF; l++) {
						clr_fpsr();
						note(fmas[o].s(sv[fmaidx[i]], sv[fmaidx[j]], sv[fmaidx[l]]));
						clr_fpsr();
						note(fmas[o].d(dv[fmaidx[i]], dv[fmaidx[j]], dv[fmaidx[l]]));
					}
			/* products that round differently when rounded twice */
			for (unsigned i = 0; i < NS; i++) {
				clr_fpsr();
				note(fmas[o].s(sv[i], 0x3f800001, 0x3f7fffff));
				clr_fpsr();
				note(fmas[o].d(dv[i], 0x3ff0000000000001, 0x3fefffffffffffff));
			}
			puts(fmas[o].name);
			puthex(k);
			out("");
		}
	}
	for (unsigned k = 0; k < NCFG; k += 4) {
		set_fpcr(configs[k]);
		for (int e = 0; e < 2; e++) {
			for (unsigned i = 0; i < NS; i++)
				for (unsigned j = 0; j < NS; j++) {
					clr_fpsr();
					note(cmp_s(sv[i], sv[j], e));
				}
			for (unsigned i = 0; i < ND; i++)
				for (unsigned j = 0; j < ND; j++) {
					clr_fpsr();
					note(cmp_d(dv[i], dv[j], e));
				}
		}
		puts("fcmp");
		puthex(k);
		out("");
	}
	set_fpcr(0);
	/* FMOV immediate and general<->FP, including the top half of V. */
	{
		u64 a, b, c2;
		asm volatile("fmov d0, #-1.25\n fmov s1, #31.0\n fmov x9, d0\n fmov %x0, d0\n fmov %w1, s1\n"
			     "mov x10, #0x1234\n fmov v1.d[1], x10\n fmov %x2, v1.d[1]"
			     : "=r"(a), "=r"(b), "=r"(c2) :: "v0", "v1", "x9", "x10");
		mix(a), mix(b), mix(c2);
		out("fmov-imm");
	}
}

/* Advanced SIMD: each instruction on v0, v1 (and v2 as accumulator) into
 * v2, over vectors from an LCG mixed with FP special values. */
typedef struct { u64 lo, hi; } v128;
static v128 vin[3] __attribute__((aligned(16)));
static v128 vres __attribute__((aligned(16)));
typedef void (*vfn)(void);
#define VOP(name, insn)                                                                  \
	static void name(void)                                                          \
	{                                                                               \
		asm volatile("ldr q0, [%0]\n ldr q1, [%0, #16]\n ldr q2, [%0, #32]\n" insn "\n str q2, [%1]" \
			     ::"r"(vin), "r"(&vres) : "v0", "v1", "v2", "v3", "x9", "x10", "x11", "x12", "memory");     \
	}
#include "vops.h"
#undef VOP
#define VOP(name, insn) {#name, name},
static const struct { const char *name; vfn f; } vops[] = {
#include "vops.h"
};

/* Integer lanes at the saturation boundaries (INT_MIN, INT_MAX, -1, 1
 * in every element size), for the saturating instructions. */
static const u64 edge[] = {
	0x8000000000000000, 0x7fffffffffffffff, 0xffffffffffffffff, 0x0000000000000001,
	0x8000000080000000, 0x7fffffff7fffffff, 0x800000007fffffff, 0x8000800080008000,
	0x7fff7fff7fff7fff, 0x80007fff8000ffff, 0x8080808080808080, 0x7f7f7f7f7f7f7f7f,
	0x00000000ffffffff, 0xffff0000ffff8000, 0x0000800000008000, 0x4000000040000000,
};
static u64 lcg = 0x853c49e6748fea9bUL;
static u64 rnd(void)
{
	lcg = lcg * 6364136223846793005UL + 1442695040888963407UL;
	u64 x = lcg;
	x ^= x >> 33;
	switch (x & 15) {
	case 0: return (u64)sv[(x >> 8) % NS] << 32 | sv[(x >> 16) % NS];
	case 1: return dv[(x >> 8) % ND];
	case 2: return x & 0x8080808080808080UL;
	case 3: return (x >> 4) & 0x00ff00ff00ff00ffUL;
	case 4: return (u64)(u32)(x >> 9) * 0x100000001UL;
	case 5: case 6: case 7: return edge[(x >> 8) % (sizeof(edge) / sizeof(edge[0]))];
	}
	return x * 0x9e3779b97f4a7c15UL;
}

static void simd_tests(void)
{
	for (unsigned o = 0; o < sizeof(vops) / sizeof(vops[0]); o++) {
		for (unsigned k = 0; k < NCFG; k += 3) {
			set_fpcr(configs[k]);
			for (int n = 0; n < 48; n++) {
				for (int i = 0; i < 3; i++) {
					vin[i].lo = rnd();
					vin[i].hi = rnd();
				}
				/* every fourth time, squares: INT_MIN * INT_MIN */
				if (n % 4 == 3)
					vin[1] = vin[0];
				clr_fpsr();
				vops[o].f();
				mix(vres.lo);
				note(vres.hi);
			}
		}
		puts(vops[o].name);
		out("");
	}
	set_fpcr(0);
}

/* Loads and stores. */
static u8 buf[512] __attribute__((aligned(16)));
static u64 regs[16];
static void dump_vregs(void)
{
	asm volatile("stp q0, q1, [%0]\n stp q2, q3, [%0, #32]\n stp q4, q5, [%0, #64]\n stp q6, q7, [%0, #96]"
		     ::"r"(regs) : "memory");
	for (int i = 0; i < 16; i++)
		mix(regs[i]);
	for (int i = 0; i < 512; i += 8)
		mix(*(u64 *)(buf + i));
}
#define LS(name, insn)                                                                   \
	static void name(void)                                                          \
	{                                                                               \
		u64 p = (u64)buf + 64, q = 24;                                          \
		asm volatile("movi v0.16b, #0x11\n movi v1.16b, #0x22\n movi v2.16b, #0x33\n movi v3.16b, #0x44\n" \
			     "movi v4.2d, #0\n movi v5.2d, #0\n movi v6.2d, #0\n movi v7.2d, #0\n" \
			     insn : "+r"(p) : "r"(q) : "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "memory"); \
		mix(p - (u64)buf);                                                      \
		dump_vregs();                                                           \
	}
#include "ls.h"
#undef LS
#define LS(name, insn) {#name, name},
static const struct { const char *name; vfn f; } lss[] = {
#include "ls.h"
};

static void ldst_tests(void)
{
	for (unsigned o = 0; o < sizeof(lss) / sizeof(lss[0]); o++) {
		for (int i = 0; i < 512; i++)
			buf[i] = (u8)(i * 7 + 3);
		lss[o].f();
		puts(lss[o].name);
		out("");
	}
}

/* The FP access trap: FPEN 00 and 10 trap at EL1, 01 and 11 do not. */
static void trap_tests(void)
{
	static const u64 fpen[] = {0, 2, 1, 3};
	for (int i = 0; i < 4; i++) {
		write_sysreg(cpacr_el1, fpen[i] << 20);
		isb();
		asm volatile("fadd s0, s1, s2\n mrs x9, fpcr" ::: "v0", "x9");
		write_sysreg(cpacr_el1, 3UL << 20);
		isb();
		line("fpen", fpen[i]);
	}
}

int main(void)
{
	write_sysreg(cpacr_el1, 3UL << 20);
	isb();
	hash = 0xcbf29ce484222325UL;
	trap_tests();
	scalar_tests();
	simd_tests();
	ldst_tests();
	puts("done\n");
	return 0;
}
