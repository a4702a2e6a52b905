/*
 * A compute-bound benchmark in the spirit of CoreMark (written for kpemu,
 * not derived from CoreMark's sources): each iteration rebuilds the same
 * data and runs four kernels over it, the kinds of work compiled C spends
 * its time on:
 *
 *   - a linked list: find by key, reverse, merge sort (pointer chasing,
 *     unpredictable branches);
 *   - a small integer matrix multiply-add with extracted bit fields
 *     (multiply-accumulate, nested loops);
 *   - a state machine scanning a text of numeric tokens (byte loads, a
 *     switch, character classes);
 *   - CRC-16 over each kernel's results (shifts, xor, data-dependent
 *     branches).
 *
 * Every iteration starts from the same state, so every iteration yields
 * the same CRC: the program checks that they agree and prints that CRC
 * (independent of the iteration count) and a chain CRC over all of them
 * (which depends on it). The host may patch `iterations` before boot
 * (machine's BenchmarkCoreMark does, one iteration per benchmark op).
 * Nothing here depends on time or on the CPU model, so QEMU and kpemu
 * retire the same instructions and print the same lines.
 */
#include "../common/lib.h"

typedef short s16;

/* Iterations of the whole workload; about 200 thousand instructions each.
 * In .data (not const) so that the host can patch it in the image. */
volatile u32 iterations = 1500;

#define noinline __attribute__((noinline))

/* ---- CRC-16 (CCITT polynomial 0x1021, MSB first), bitwise ---- */

static noinline u16 crc16_byte(u16 crc, u8 b)
{
	crc ^= (u16)b << 8;
	for (int i = 0; i < 8; i++)
		crc = (crc & 0x8000) ? (u16)((crc << 1) ^ 0x1021) : (u16)(crc << 1);
	return crc;
}

static u16 crc16_u16(u16 crc, u16 v)
{
	crc = crc16_byte(crc, (u8)v);
	return crc16_byte(crc, (u8)(v >> 8));
}

static u16 crc16_u32(u16 crc, u32 v)
{
	crc = crc16_u16(crc, (u16)v);
	return crc16_u16(crc, (u16)(v >> 16));
}

/* A 32-bit LCG (Numerical Recipes constants) for the data. */
static u32 lcg(u32 *s)
{
	*s = *s * 1664525u + 1013904223u;
	return *s >> 8;
}

/* ---- linked list ---- */

#define NODES 160

struct node {
	struct node *next;
	u16 key; /* position in the original order */
	s16 val;
};

static struct node pool[NODES];

static noinline struct node *list_init(u32 seed)
{
	struct node *head = 0;
	/* Built back to front, so the list runs in key order. */
	for (int i = NODES - 1; i >= 0; i--) {
		struct node *n = &pool[i];
		n->key = (u16)i;
		n->val = (s16)(lcg(&seed) & 0x7fff) - 0x4000;
		n->next = head;
		head = n;
	}
	return head;
}

/* list_find returns the position of the first node with the key, or -1. */
static noinline int list_find(const struct node *n, u16 key)
{
	for (int pos = 0; n; n = n->next, pos++)
		if (n->key == key)
			return pos;
	return -1;
}

static noinline struct node *list_reverse(struct node *n)
{
	struct node *prev = 0;
	while (n) {
		struct node *next = n->next;
		n->next = prev;
		prev = n;
		n = next;
	}
	return prev;
}

typedef int (*cmp_fn)(const struct node *a, const struct node *b);

static noinline int cmp_val(const struct node *a, const struct node *b)
{
	if (a->val != b->val)
		return a->val < b->val ? -1 : 1;
	return (int)a->key - (int)b->key;
}

static noinline int cmp_key(const struct node *a, const struct node *b)
{
	return (int)a->key - (int)b->key;
}

/* list_sort is a bottom-up merge sort (stable, no recursion, no extra
 * memory): runs of width 1, 2, 4, ... merged pairwise. */
static noinline struct node *list_sort(struct node *list, cmp_fn cmp)
{
	for (int width = 1;; width *= 2) {
		struct node *p = list, *tail = 0;
		int merges = 0;
		list = 0;
		while (p) {
			struct node *q = p;
			int psize = 0, qsize = width;
			merges++;
			for (int i = 0; i < width && q; i++) {
				psize++;
				q = q->next;
			}
			while (psize > 0 || (qsize > 0 && q)) {
				struct node *e;
				if (psize == 0) {
					e = q, q = q->next, qsize--;
				} else if (qsize == 0 || !q || cmp(p, q) <= 0) {
					e = p, p = p->next, psize--;
				} else {
					e = q, q = q->next, qsize--;
				}
				if (tail)
					tail->next = e;
				else
					list = e;
				tail = e;
			}
			p = q;
		}
		tail->next = 0;
		if (merges <= 1)
			return list;
	}
}

static noinline u16 bench_list(u16 crc)
{
	struct node *head = list_init(0x1234u);
	u32 s = 77;
	for (int i = 0; i < 24; i++) {
		int pos = list_find(head, (u16)(lcg(&s) % (NODES + 8)));
		crc = crc16_u16(crc, (u16)pos);
		if (i % 6 == 5)
			head = list_reverse(head);
	}
	head = list_sort(head, cmp_val);
	/* Sum of values weighted by sorted position, and the keys of the
	 * first few nodes, show the order. */
	u32 acc = 0;
	int pos = 0;
	for (struct node *n = head; n; n = n->next, pos++) {
		acc += (u32)(n->val * (pos + 1));
		if (pos < 8)
			crc = crc16_u16(crc, n->key);
	}
	crc = crc16_u32(crc, acc);
	head = list_sort(head, cmp_key);
	for (int i = 0; i < 8; i++)
		crc = crc16_u16(crc, (u16)list_find(head, (u16)(i * 19)));
	head = list_reverse(head);
	return crc16_u16(crc, head->key);
}

/* ---- matrix ---- */

#define N 12

static s16 ma[N][N], mb[N][N];
static int mc[N][N];

static noinline void matrix_init(u32 seed)
{
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++) {
			ma[i][j] = (s16)((lcg(&seed) & 0xff) - 0x80);
			mb[i][j] = (s16)((lcg(&seed) & 0xff) - 0x80);
			mc[i][j] = 0;
		}
}

/* matrix_add_const adds a constant to every element of A. */
static noinline void matrix_add_const(s16 k)
{
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++)
			ma[i][j] = (s16)(ma[i][j] + k);
}

/* matrix_mul_add computes C += A * B. */
static noinline void matrix_mul_add(void)
{
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++) {
			int sum = mc[i][j];
			for (int k = 0; k < N; k++)
				sum += ma[i][k] * mb[k][j];
			mc[i][j] = sum;
		}
}

/* matrix_mul_bits computes C = A * (bits 2..5 of B), with a sign flip of
 * odd rows: extraction and conditional work in the inner loop. */
static noinline void matrix_mul_bits(void)
{
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++) {
			int sum = 0;
			for (int k = 0; k < N; k++)
				sum += ma[i][k] * ((mb[k][j] >> 2) & 0xf);
			mc[i][j] = (i & 1) ? -sum : sum;
		}
}

/* matrix_sum folds C into a value that depends on every element and on
 * how many cross a running limit. */
static noinline u32 matrix_sum(int limit)
{
	u32 acc = 0;
	int run = 0;
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++) {
			run += mc[i][j];
			if (run > limit) {
				acc += 10;
				run = 0;
			} else {
				acc += (u32)(run > mc[i][j] ? 1 : 0);
			}
			acc ^= (u32)mc[i][j] << (j & 7);
		}
	return acc;
}

static noinline u16 bench_matrix(u16 crc)
{
	matrix_init(0xbeefu);
	for (int r = 0; r < 3; r++) {
		matrix_add_const((s16)(r + 3));
		matrix_mul_add();
		crc = crc16_u32(crc, matrix_sum(50000));
	}
	matrix_mul_bits();
	return crc16_u32(crc, matrix_sum(2000));
}

/* ---- state machine ---- */

enum state { S_START, S_INT, S_HEX, S_FRAC, S_EXP, S_EXPSIGN, S_EXPNUM, S_WORD, S_BAD, NSTATES };

static const char *const tokens[] = {
	"42", "-17", "0x1f", "3.25", "-0.5e3", "6e-2", "abc", "12a", "0x",
	"+", "7.", "1e", "99999", "-x", "0xbeef", ".5", "2.5e+10", "zz9",
};
#define NTOK (sizeof(tokens) / sizeof(tokens[0]))

static char text[640];

static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f'); }
static int is_alpha(char c) { return c >= 'a' && c <= 'z'; }

static noinline int text_init(u32 seed)
{
	int n = 0;
	while (n < (int)sizeof(text) - 12) {
		const char *t = tokens[lcg(&seed) % NTOK];
		while (*t)
			text[n++] = *t++;
		text[n++] = (lcg(&seed) & 3) ? ',' : ' ';
	}
	text[n] = 0;
	return n;
}

/* next_state is one transition; its switch compiles to a jump table or a
 * compare chain. */
static noinline enum state next_state(enum state s, char c)
{
	switch (s) {
	case S_START:
		if (is_digit(c))
			return S_INT;
		if (c == '-' || c == '+')
			return S_INT;
		if (c == '.')
			return S_FRAC;
		return is_alpha(c) ? S_WORD : S_BAD;
	case S_INT:
		if (is_digit(c))
			return S_INT;
		if (c == 'x')
			return S_HEX;
		if (c == '.')
			return S_FRAC;
		if (c == 'e')
			return S_EXP;
		return S_BAD;
	case S_HEX:
		return is_hex(c) ? S_HEX : S_BAD;
	case S_FRAC:
		if (is_digit(c))
			return S_FRAC;
		return c == 'e' ? S_EXP : S_BAD;
	case S_EXP:
		if (c == '-' || c == '+')
			return S_EXPSIGN;
		return is_digit(c) ? S_EXPNUM : S_BAD;
	case S_EXPSIGN:
	case S_EXPNUM:
		return is_digit(c) ? S_EXPNUM : S_BAD;
	case S_WORD:
		return (is_alpha(c) || is_digit(c)) ? S_WORD : S_BAD;
	default:
		return S_BAD;
	}
}

/* scan counts the tokens of text by final state and the transitions into
 * each state. */
static noinline void scan(const char *p, u32 final[NSTATES], u32 trans[NSTATES])
{
	while (*p) {
		enum state s = S_START;
		while (*p && *p != ',' && *p != ' ') {
			enum state t = next_state(s, *p++);
			if (t != s)
				trans[t]++;
			s = t;
		}
		final[s]++;
		if (*p)
			p++;
	}
}

static noinline u16 bench_state(u16 crc)
{
	u32 final[NSTATES], trans[NSTATES];
	int n = text_init(0xc0deu);
	for (int pass = 0; pass < 3; pass++) {
		for (int i = 0; i < NSTATES; i++)
			final[i] = trans[i] = 0;
		scan(text, final, trans);
		for (int i = 0; i < NSTATES; i++) {
			crc = crc16_u32(crc, final[i]);
			crc = crc16_u32(crc, trans[i]);
		}
		/* Corrupt every 37th character (starting at a different place
		 * each pass) so the next pass takes other paths. */
		for (int i = pass * 5; i < n; i += 37)
			if (text[i] != ',' && text[i] != ' ')
				text[i] = (char)('a' + (text[i] & 7));
	}
	return crc;
}

/* ---- driver ---- */

static void putdec(u64 v)
{
	char buf[24];
	int i = 0;
	do {
		buf[i++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (i)
		putc(buf[--i]);
}

static void puthex16(u16 v)
{
	static const char digits[] = "0123456789abcdef";
	for (int i = 12; i >= 0; i -= 4)
		putc(digits[(v >> i) & 15]);
}

static noinline u16 iteration(void)
{
	u16 crc = 0xffff;
	crc = bench_list(crc);
	crc = bench_matrix(crc);
	crc = bench_state(crc);
	return crc;
}

int main(void)
{
	u32 iters = iterations;
	u16 first = 0, chain = 0;
	u32 errors = 0;
	for (u32 i = 0; i < iters; i++) {
		u16 crc = iteration();
		if (i == 0)
			first = crc;
		else if (crc != first)
			errors++;
		chain = crc16_u16(chain, crc);
	}
	puts("coremark iterations ");
	putdec(iters);
	puts(" crc 0x");
	puthex16(first);
	puts(" chain 0x");
	puthex16(chain);
	puts(" errors ");
	putdec(errors);
	puts("\ndone\n");
	return 0;
}
