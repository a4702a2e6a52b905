/* SPDX-License-Identifier: MIT */
/*
 * __arch_copy_from_user and __arch_copy_to_user, after Linux 6.1's
 * arch/arm64/lib/copy_{from,to}_user.S: copy n bytes and return how many
 * were NOT copied (0 on success).
 *
 * Every access to the user side is listed in the exception table, so a
 * fault on a page not yet mapped is demand paging (do_page_fault maps it
 * and the instruction runs again) and a fault on a bad address resumes at
 * the fixup, which returns what is left. Linux uses LDTR/STTR here; kpemu's
 * kernel threads pass kernel buffers to the same helpers (Linux 6.1 has no
 * set_fs() for that either), so plain loads and stores are used.
 *
 * In: x0 = to, x1 = from, x2 = n. Out: x0 = bytes left.
 */
#include <linux/linkage.h>
#include <asm/asm-extable.h>

/*
 * One loop, 8 bytes at a time then bytes; x3 walks the destination so that
 * x0 can return the count. The fixup: x2 still counts the bytes of the
 * access that faulted.
 */
SYM_FUNC_START(__arch_copy_from_user)
	mov	x3, x0
1:	cmp	x2, #8
	b.lo	2f
USER(9f, ldr	x4, [x1], #8)
	str	x4, [x3], #8
	sub	x2, x2, #8
	b	1b
2:	cbz	x2, 3f
USER(9f, ldrb	w4, [x1], #1)
	strb	w4, [x3], #1
	sub	x2, x2, #1
	b	2b
3:	mov	x0, #0
	ret
9:	mov	x0, x2
	ret
SYM_FUNC_END(__arch_copy_from_user)

SYM_FUNC_START(__arch_copy_to_user)
	mov	x3, x0
1:	cmp	x2, #8
	b.lo	2f
	ldr	x4, [x1], #8
USER(9f, str	x4, [x3], #8)
	sub	x2, x2, #8
	b	1b
2:	cbz	x2, 3f
	ldrb	w4, [x1], #1
USER(9f, strb	w4, [x3], #1)
	sub	x2, x2, #1
	b	2b
3:	mov	x0, #0
	ret
9:	mov	x0, x2
	ret
SYM_FUNC_END(__arch_copy_to_user)
