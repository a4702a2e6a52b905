/*
 * Template of the random-instruction differential test (machine's
 * randdiff_test.go). The test patches rand_code (NSLOT slots of NINSN
 * instruction words, NOPs here), rand_seed and rand_fpcr in a copy of
 * this ELF, runs it on the machine and on QEMU and compares the output.
 *
 * For each slot, main fills the register file and the scratch buffer
 * from the slot's seed (xorshift), sets FPCR, and run_slot enters the
 * slot with every register loaded. The slot's first instruction points
 * x28 at the middle of the scratch buffer (generated code never writes
 * x28 or SP), its last branches to slot_save, which stores the register
 * file and returns to main; main prints it with a hash of each 256-byte
 * chunk of the scratch buffer. Exceptions print a line (lib.h) and resume
 * after the instruction.
 */
#include "../common/lib.h"

#define NSLOT 32
#define NINSN 64
#define SCRATCH 4096

struct state {
	u64 x[31];
	u64 sp, nzcv, fpsr;
	u64 v[32][2];
};

/* Patched by the test; nonzero so that they are in .data. */
u64 rand_seed[NSLOT] = {[0 ... NSLOT - 1] = 1};
u64 rand_fpcr[NSLOT] = {[0 ... NSLOT - 1] = 1};

/* scratch, then the saved state: slot_save addresses both from x28. */
struct {
	u8 scratch[SCRATCH];
	struct state out;
} area __attribute__((aligned(4096)));
struct state in;
u64 saved_sp;

void run_slot(struct state *s, u64 entry);

/* Each slot: LDR x28, =&area.scratch[SCRATCH/2]; NINSN words; B slot_save. */
asm(
	"	.text\n"
	"	.balign	16\n"
	"	.globl	rand_code\n"
	"rand_code:\n"
	"	.rept	32\n"
	"	ldr	x28, scratch_mid\n"
	"	.rept	64\n"
	"	nop\n"
	"	.endr\n"
	"	b	slot_save\n"
	"	.endr\n"
	"	.balign	8\n"
	"scratch_mid:\n"
	"	.quad	area + 2048\n"
	/* run_slot(state *s, u64 entry) */
	"	.globl	run_slot\n"
	"run_slot:\n"
	"	stp	x29, x30, [sp, #-160]!\n"
	"	stp	x19, x20, [sp, #16]\n"
	"	stp	x21, x22, [sp, #32]\n"
	"	stp	x23, x24, [sp, #48]\n"
	"	stp	x25, x26, [sp, #64]\n"
	"	stp	x27, x28, [sp, #80]\n"
	"	stp	d8, d9, [sp, #96]\n"
	"	stp	d10, d11, [sp, #112]\n"
	"	stp	d12, d13, [sp, #128]\n"
	"	stp	d14, d15, [sp, #144]\n"
	"	mov	x2, sp\n"
	"	adrp	x3, saved_sp\n"
	"	str	x2, [x3, :lo12:saved_sp]\n"
	"	mov	x28, x1\n"
	"	add	x1, x0, #272\n"
	"	ldp	q0, q1, [x1], #32\n"
	"	ldp	q2, q3, [x1], #32\n"
	"	ldp	q4, q5, [x1], #32\n"
	"	ldp	q6, q7, [x1], #32\n"
	"	ldp	q8, q9, [x1], #32\n"
	"	ldp	q10, q11, [x1], #32\n"
	"	ldp	q12, q13, [x1], #32\n"
	"	ldp	q14, q15, [x1], #32\n"
	"	ldp	q16, q17, [x1], #32\n"
	"	ldp	q18, q19, [x1], #32\n"
	"	ldp	q20, q21, [x1], #32\n"
	"	ldp	q22, q23, [x1], #32\n"
	"	ldp	q24, q25, [x1], #32\n"
	"	ldp	q26, q27, [x1], #32\n"
	"	ldp	q28, q29, [x1], #32\n"
	"	ldp	q30, q31, [x1], #32\n"
	"	ldr	x1, [x0, #256]\n"
	"	msr	nzcv, x1\n"
	"	ldr	x1, [x0, #264]\n"
	"	msr	fpsr, x1\n"
	"	ldp	x1, x2, [x0, #8]\n"
	"	ldp	x3, x4, [x0, #24]\n"
	"	ldp	x5, x6, [x0, #40]\n"
	"	ldp	x7, x8, [x0, #56]\n"
	"	ldp	x9, x10, [x0, #72]\n"
	"	ldp	x11, x12, [x0, #88]\n"
	"	ldp	x13, x14, [x0, #104]\n"
	"	ldp	x15, x16, [x0, #120]\n"
	"	ldp	x17, x18, [x0, #136]\n"
	"	ldp	x19, x20, [x0, #152]\n"
	"	ldp	x21, x22, [x0, #168]\n"
	"	ldp	x23, x24, [x0, #184]\n"
	"	ldp	x25, x26, [x0, #200]\n"
	"	ldr	x27, [x0, #216]\n"
	"	ldp	x29, x30, [x0, #232]\n"
	"	ldr	x0, [x0, #0]\n"
	"	br	x28\n"
	"slot_save:\n"
	"	str	x0, [x28, #2048]\n"
	"	add	x0, x28, #2048\n"
	"	stp	x1, x2, [x0, #8]\n"
	"	stp	x3, x4, [x0, #24]\n"
	"	stp	x5, x6, [x0, #40]\n"
	"	stp	x7, x8, [x0, #56]\n"
	"	stp	x9, x10, [x0, #72]\n"
	"	stp	x11, x12, [x0, #88]\n"
	"	stp	x13, x14, [x0, #104]\n"
	"	stp	x15, x16, [x0, #120]\n"
	"	stp	x17, x18, [x0, #136]\n"
	"	stp	x19, x20, [x0, #152]\n"
	"	stp	x21, x22, [x0, #168]\n"
	"	stp	x23, x24, [x0, #184]\n"
	"	stp	x25, x26, [x0, #200]\n"
	"	stp	x27, x28, [x0, #216]\n"
	"	stp	x29, x30, [x0, #232]\n"
	"	mov	x1, sp\n"
	"	mrs	x2, nzcv\n"
	"	stp	x1, x2, [x0, #248]\n"
	"	mrs	x1, fpsr\n"
	"	str	x1, [x0, #264]\n"
	"	add	x1, x0, #272\n"
	"	stp	q0, q1, [x1], #32\n"
	"	stp	q2, q3, [x1], #32\n"
	"	stp	q4, q5, [x1], #32\n"
	"	stp	q6, q7, [x1], #32\n"
	"	stp	q8, q9, [x1], #32\n"
	"	stp	q10, q11, [x1], #32\n"
	"	stp	q12, q13, [x1], #32\n"
	"	stp	q14, q15, [x1], #32\n"
	"	stp	q16, q17, [x1], #32\n"
	"	stp	q18, q19, [x1], #32\n"
	"	stp	q20, q21, [x1], #32\n"
	"	stp	q22, q23, [x1], #32\n"
	"	stp	q24, q25, [x1], #32\n"
	"	stp	q26, q27, [x1], #32\n"
	"	stp	q28, q29, [x1], #32\n"
	"	stp	q30, q31, [x1], #32\n"
	"	adrp	x3, saved_sp\n"
	"	ldr	x2, [x3, :lo12:saved_sp]\n"
	"	mov	sp, x2\n"
	"	ldp	x19, x20, [sp, #16]\n"
	"	ldp	x21, x22, [sp, #32]\n"
	"	ldp	x23, x24, [sp, #48]\n"
	"	ldp	x25, x26, [sp, #64]\n"
	"	ldp	x27, x28, [sp, #80]\n"
	"	ldp	d8, d9, [sp, #96]\n"
	"	ldp	d10, d11, [sp, #112]\n"
	"	ldp	d12, d13, [sp, #128]\n"
	"	ldp	d14, d15, [sp, #144]\n"
	"	ldp	x29, x30, [sp], #160\n"
	"	ret\n");

extern u32 rand_code[];

static u64 rs;

static u64 rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

/* Integer values at the edges of the arithmetic. */
static const u64 xv[] = {
	0, 1, 2, 0xffffffffffffffff, 0x7fffffffffffffff, 0x8000000000000000,
	0x7fffffff, 0x80000000, 0xffffffff, 0x100000000, 0xffffffff80000000,
	0x8000, 0xffff, 0x7f, 0x80, 0xff,
};

/* FP values: signed zeros, denormals, infinities, NaNs, edges. */
static const u32 sv[] = {
	0x00000000, 0x80000000, 0x3f800000, 0xbf800000, 0x7f7fffff, 0x00800000,
	0x00000001, 0x807fffff, 0x7f800000, 0xff800000, 0x7fc00001, 0x7f800005,
	0x4b000001, 0x3f000000, 0x4f000000, 0xcf000001,
};
static const u64 dv[] = {
	0x0000000000000000, 0x8000000000000000, 0x3ff0000000000000, 0xbff0000000000000,
	0x7fefffffffffffff, 0x0010000000000000, 0x0000000000000001, 0x800fffffffffffff,
	0x7ff0000000000000, 0xfff0000000000000, 0x7ff8000000000001, 0x7ff0000000000005,
	0x4330000000000001, 0x3fe0000000000000, 0x43e0000000000000, 0xc3e0000000000001,
};

static u64 xval(void)
{
	u64 r = rnd();
	switch (r & 3) {
	case 0: return xv[(r >> 8) % 16];
	case 1: return (r >> 8) & 0xff;
	default: return rnd();
	}
}

/* One 64-bit half of a vector register. */
static u64 vval(void)
{
	u64 r = rnd();
	switch (r & 7) {
	case 0: return dv[(r >> 8) % 16];
	case 1: return (u64)sv[(r >> 8) % 16] | (u64)sv[(r >> 16) % 16] << 32;
	case 2: return (r >> 24) ^ 0x3ff0000000000000UL;
	case 3: return ((r >> 24) & 0x007fffff007fffffUL) | 0x3f8000003f800000UL;
	case 4: return xval();
	default: return rnd();
	}
}

static u64 hash(const u8 *p, int n)
{
	u64 h = 0xcbf29ce484222325UL;
	for (int i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3UL;
	}
	return h;
}

static const char hexd[] = "0123456789abcdef";

static void reg(char c, int i, u64 v)
{
	char name[4] = {c, hexd[i / 10], hexd[i % 10], 0};
	line(name, v);
}

int main(void)
{
	write_sysreg(cpacr_el1, 3UL << 20);
	isb();
	for (int s = 0; s < NSLOT; s++) {
		rs = rand_seed[s] | 1;
		for (int i = 0; i < 31; i++)
			in.x[i] = xval();
		in.nzcv = rnd() & 0xf0000000UL;
		in.fpsr = 0;
		for (int i = 0; i < 32; i++) {
			in.v[i][0] = vval();
			in.v[i][1] = vval();
		}
		for (int i = 0; i < SCRATCH; i += 8) {
			u64 v = (i & 8) ? vval() : xval();
			memcpy(&area.scratch[i], &v, 8);
		}
		memset(&area.out, 0, sizeof(area.out));
		write_sysreg(fpcr, rand_fpcr[s]);
		run_slot(&in, (u64)&rand_code[s * (NINSN + 2)]);
		write_sysreg(fpcr, 0);
		puts("slot ");
		puthex(s);
		puts("\n");
		for (int i = 0; i < 31; i++)
			reg('x', i, area.out.x[i]);
		line("sp", area.out.sp);
		line("nzcv", area.out.nzcv);
		line("fpsr", area.out.fpsr);
		for (int i = 0; i < 32; i++) {
			reg('v', i, area.out.v[i][1]);
			reg('v', i, area.out.v[i][0]);
		}
		for (int i = 0; i < SCRATCH; i += 256)
			reg('m', i / 256, hash(&area.scratch[i], 256));
	}
	puts("done\n");
	return 0;
}
