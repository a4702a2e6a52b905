/* SPDX-License-Identifier: MIT */
/*
 * memset, as Linux 6.1's arch/arm64/lib/memset.S does it (not its code):
 * sixteen bytes per store pair instead of C's byte loop, overlapping
 * unaligned stores for the ends, and DC ZVA for long runs of zeros, the
 * block size read from DCZID_EL0. Allocating pages and slab objects clears
 * them with memset, so this is where much of the kernel's time went.
 *
 * Callers run with the MMU on (normal memory: unaligned stores and DC ZVA
 * are allowed); head.S clears .bss with its own loop before that.
 *
 * In: x0 = s, w1 = c, x2 = n. Out: x0 = s.
 */
#include <linux/linkage.h>

SYM_FUNC_START(memset)
	and	x1, x1, #0xff
	mov	x9, #0x0101010101010101
	mul	x1, x1, x9		/* c in every byte */
	add	x10, x0, x2		/* end */
	cmp	x2, #16
	b.lo	.Lsmall

	/* the first and last 16 bytes, then aligned pairs in between */
	stp	x1, x1, [x0]
	stp	x1, x1, [x10, #-16]
	add	x8, x0, #16
	and	x8, x8, #~15		/* first aligned address past the head */
	and	x10, x10, #~15		/* last aligned address before the tail */

	cbnz	x1, .Lfill64
	sub	x9, x10, x8
	cmp	x9, #256		/* DC ZVA pays off only on long runs */
	b.lt	.Lfill64
	mrs	x11, dczid_el0
	tbnz	w11, #4, .Lfill64	/* DZP: DC ZVA prohibited */
	and	w11, w11, #15
	mov	x12, #4
	lsl	x12, x12, x11		/* block size in bytes */
	cmp	x12, #16
	b.lo	.Lfill64
	sub	x13, x12, #1
	add	x14, x8, x13
	bic	x14, x14, x13		/* first block boundary */
	bic	x15, x10, x13		/* last block boundary */
	cmp	x14, x15
	b.hs	.Lfill64
1:	cmp	x8, x14			/* store pairs up to the first */
	b.hs	2f
	stp	x1, x1, [x8], #16
	b	1b
2:	dc	zva, x8			/* whole blocks up to the last */
	add	x8, x8, x12
	cmp	x8, x15
	b.lo	2b

.Lfill64:
	sub	x9, x10, x8		/* negative when n < 32 */
	cmp	x9, #64
	b.lt	.Lfill16
	stp	x1, x1, [x8]
	stp	x1, x1, [x8, #16]
	stp	x1, x1, [x8, #32]
	stp	x1, x1, [x8, #48]
	add	x8, x8, #64
	b	.Lfill64
.Lfill16:
	cmp	x8, x10
	b.hs	3f
	stp	x1, x1, [x8], #16
	b	.Lfill16
3:	ret

	/* n < 16: two stores that overlap in the middle */
.Lsmall:
	tbz	x2, #3, 4f
	str	x1, [x0]
	stur	x1, [x10, #-8]
	ret
4:	tbz	x2, #2, 5f
	str	w1, [x0]
	stur	w1, [x10, #-4]
	ret
5:	cbz	x2, 6f
	strb	w1, [x0]
	tbz	x2, #1, 6f
	sturh	w1, [x10, #-2]
6:	ret
SYM_FUNC_END(memset)
