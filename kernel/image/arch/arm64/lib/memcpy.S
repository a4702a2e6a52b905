/* SPDX-License-Identifier: MIT */
/*
 * memcpy and memmove, as Linux 6.1's arch/arm64/lib/memcpy.S does them
 * (not its code): 64 bytes per iteration in four load and four store
 * pairs, and overlapping unaligned accesses for the ends so that no byte
 * loop is needed. Fork copies every page of the parent with memcpy.
 *
 * memcpy copies forwards and loads the last 16 bytes before storing
 * anything, so it is also a correct memmove whenever dst is below src or
 * the two do not overlap; memmove copies backwards otherwise. Callers run
 * with the MMU on (normal memory, unaligned accesses allowed).
 *
 * In: x0 = dst, x1 = src, x2 = n. Out: x0 = dst.
 */
#include <linux/linkage.h>

SYM_FUNC_START(memcpy)
	add	x4, x1, x2		/* src end */
	add	x5, x0, x2		/* dst end */
	cmp	x2, #16
	b.lo	.Lsmall

	ldp	x6, x7, [x4, #-16]	/* the last 16 bytes, stored last */
	mov	x3, x0
	sub	x2, x2, #16		/* bytes before them */
.Lfwd64:
	cmp	x2, #64
	b.lo	.Lfwd16
	ldp	x8, x9, [x1]
	ldp	x10, x11, [x1, #16]
	ldp	x12, x13, [x1, #32]
	ldp	x14, x15, [x1, #48]
	stp	x8, x9, [x3]
	stp	x10, x11, [x3, #16]
	stp	x12, x13, [x3, #32]
	stp	x14, x15, [x3, #48]
	add	x1, x1, #64
	add	x3, x3, #64
	sub	x2, x2, #64
	b	.Lfwd64
.Lfwd16:
	cbz	x2, 2f
1:	ldp	x8, x9, [x1], #16	/* the last one may run into the tail: */
	stp	x8, x9, [x3], #16	/* it is rewritten below */
	subs	x2, x2, #16
	b.gt	1b
2:	stp	x6, x7, [x5, #-16]
	ret

	/* n < 16: load both ends, then store them (overlap in the middle) */
.Lsmall:
	tbz	x2, #3, 3f
	ldr	x6, [x1]
	ldur	x7, [x4, #-8]
	str	x6, [x0]
	stur	x7, [x5, #-8]
	ret
3:	tbz	x2, #2, 4f
	ldr	w6, [x1]
	ldur	w7, [x4, #-4]
	str	w6, [x0]
	stur	w7, [x5, #-4]
	ret
4:	cbz	x2, 5f			/* 1 to 3 bytes: first, middle, last */
	lsr	x8, x2, #1
	ldrb	w6, [x1]
	ldrb	w7, [x1, x8]
	ldurb	w9, [x4, #-1]
	strb	w6, [x0]
	strb	w7, [x0, x8]
	sturb	w9, [x5, #-1]
5:	ret
SYM_FUNC_END(memcpy)

SYM_FUNC_START(memmove)
	sub	x9, x0, x1
	cmp	x9, x2
	b.hs	memcpy			/* dst below src, or no overlap */
	cmp	x2, #16
	b.lo	memcpy			/* loads everything before storing */

	/* src < dst < src + n: copy backwards */
	add	x4, x1, x2
	add	x5, x0, x2
	ldp	x6, x7, [x1]		/* the first 16 bytes, stored last */
	sub	x2, x2, #16
.Lbwd64:
	cmp	x2, #64
	b.lo	.Lbwd16
	ldp	x8, x9, [x4, #-16]
	ldp	x10, x11, [x4, #-32]
	ldp	x12, x13, [x4, #-48]
	ldp	x14, x15, [x4, #-64]
	stp	x8, x9, [x5, #-16]
	stp	x10, x11, [x5, #-32]
	stp	x12, x13, [x5, #-48]
	stp	x14, x15, [x5, #-64]
	sub	x4, x4, #64
	sub	x5, x5, #64
	sub	x2, x2, #64
	b	.Lbwd64
.Lbwd16:
	cbz	x2, 2f
1:	ldp	x8, x9, [x4, #-16]!
	stp	x8, x9, [x5, #-16]!
	subs	x2, x2, #16
	b.gt	1b
2:	stp	x6, x7, [x0]
	ret
SYM_FUNC_END(memmove)
