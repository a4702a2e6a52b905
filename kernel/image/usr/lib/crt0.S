/* SPDX-License-Identifier: MIT */
/*
 * _start: the kernel leaves argc at [sp], argv at sp + 8, envp after
 * argv's NULL (fs/exec.c: setup_arg_pages). A zero frame record ends
 * backtraces; main's return value goes to exit_group.
 */
	.section .text.start,"ax"
	.globl	_start
_start:
	mov	x29, xzr
	mov	x30, xzr
	ldr	x0, [sp]
	add	x1, sp, #8
	add	x2, x1, x0, lsl #3
	add	x2, x2, #8
	bl	main
	bl	exit
1:	b	1b
