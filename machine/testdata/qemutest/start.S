// Bare-metal entry for the differential test program: QEMU virt (-kernel
// ELF) and machine both enter here at EL1 with the MMU off.

	.section .text.boot, "ax"
	.globl	_start
_start:
	ldr	x0, =__stack_top
	mov	sp, x0
	adr	x0, vectors
	msr	vbar_el1, x0
	isb
	ldr	x0, =__bss_start
	ldr	x1, =__bss_end
1:	cmp	x0, x1
	b.hs	2f
	str	xzr, [x0], #8
	b	1b
2:	bl	main
	// PSCI SYSTEM_OFF
	mov	x0, #0x0008
	movk	x0, #0x8400, lsl #16
	hvc	#0
3:	b	3b

// The vector table: synchronous exceptions from the current EL with SP_ELx
// and from EL0 go to C; anything else powers off with a marker.
	.macro	ventry, target
	.balign	0x80
	b	\target
	.endm

	.balign	0x800
vectors:
	ventry	bad_vector	// current EL, SP0
	ventry	bad_vector
	ventry	bad_vector
	ventry	bad_vector
	ventry	sync_entry	// current EL, SPx
	ventry	bad_vector
	ventry	bad_vector
	ventry	bad_vector
	ventry	sync_entry	// lower EL, AArch64
	ventry	bad_vector
	ventry	bad_vector
	ventry	bad_vector
	ventry	bad_vector	// lower EL, AArch32
	ventry	bad_vector
	ventry	bad_vector
	ventry	bad_vector

bad_vector:
	mov	x1, #0x09000000
	mov	w0, #'!'
	strb	w0, [x1]
	mov	x0, #0x0008
	movk	x0, #0x8400, lsl #16
	hvc	#0
	b	bad_vector

// Frame: x0..x30 at 0..240, ELR at 248, SPSR at 256; 272 bytes.
sync_entry:
	sub	sp, sp, #272
	stp	x0, x1, [sp, #0]
	stp	x2, x3, [sp, #16]
	stp	x4, x5, [sp, #32]
	stp	x6, x7, [sp, #48]
	stp	x8, x9, [sp, #64]
	stp	x10, x11, [sp, #80]
	stp	x12, x13, [sp, #96]
	stp	x14, x15, [sp, #112]
	stp	x16, x17, [sp, #128]
	stp	x18, x19, [sp, #144]
	stp	x20, x21, [sp, #160]
	stp	x22, x23, [sp, #176]
	stp	x24, x25, [sp, #192]
	stp	x26, x27, [sp, #208]
	stp	x28, x29, [sp, #224]
	mrs	x0, elr_el1
	stp	x30, x0, [sp, #240]
	mrs	x0, spsr_el1
	str	x0, [sp, #256]
	mov	x0, sp
	bl	sync_handler
	ldr	x0, [sp, #256]
	msr	spsr_el1, x0
	ldp	x30, x0, [sp, #240]
	msr	elr_el1, x0
	ldp	x0, x1, [sp, #0]
	ldp	x2, x3, [sp, #16]
	ldp	x4, x5, [sp, #32]
	ldp	x6, x7, [sp, #48]
	ldp	x8, x9, [sp, #64]
	ldp	x10, x11, [sp, #80]
	ldp	x12, x13, [sp, #96]
	ldp	x14, x15, [sp, #112]
	ldp	x16, x17, [sp, #128]
	ldp	x18, x19, [sp, #144]
	ldp	x20, x21, [sp, #160]
	ldp	x22, x23, [sp, #176]
	ldp	x24, x25, [sp, #192]
	ldp	x26, x27, [sp, #208]
	ldp	x28, x29, [sp, #224]
	add	sp, sp, #272
	eret

// run_el0(entry, sp_el0): drop to EL0t at entry; the EL0 code ends with
// SVC, whose handler resumes EL1 at el0_return.
	.text
	.globl	run_el0
run_el0:
	stp	x29, x30, [sp, #-16]!
	msr	sp_el0, x1
	msr	elr_el1, x0
	mov	x2, #0x3c0
	msr	spsr_el1, x2
	adr	x2, el0_return
	ldr	x3, =el0_resume
	str	x2, [x3]
	eret
el0_return:
	ldp	x29, x30, [sp], #16
	ret

// EL0 code: computes with the argument registers and its own stack,
// tries a privileged read (undefined at EL0), then returns via SVC.
	.globl	el0_code
el0_code:
	mov	x0, sp
	sub	sp, sp, #16
	str	x0, [sp]
	ldr	x1, [sp]
	add	sp, sp, #16
	mrs	x2, tpidr_el0
	add	x2, x2, #1
	msr	tpidr_el0, x2
	mrs	x3, sctlr_el1
	svc	#0x10
1:	b	1b
