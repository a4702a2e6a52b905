// Bare-metal entry for machine's device differential programs: QEMU virt
// (-kernel ELF) and machine both enter _start on CPU 0 at EL1 with the MMU
// off; secondaries enter secondary_start through PSCI CPU_ON with their
// index as context id in x0.

	.section .text.boot, "ax"
	.globl	_start
_start:
	mov	x0, #0
	b	common_start
	.globl	secondary_start
secondary_start:
	// x0: CPU index (the CPU_ON context id)
common_start:
	adr	x1, vectors
	msr	vbar_el1, x1
	ldr	x1, =__stacks
	add	x2, x0, #1
	lsl	x2, x2, #12
	add	sp, x1, x2
	isb
	cbnz	x0, 2f
	ldr	x1, =__bss_start
	ldr	x2, =__bss_end
1:	cmp	x1, x2
	b.hs	2f
	str	xzr, [x1], #8
	b	1b
2:	bl	cpu_main
	// PSCI SYSTEM_OFF
	mov	x0, #0x0008
	movk	x0, #0x8400, lsl #16
	hvc	#0
3:	b	3b

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
	ventry	bad_vector	// current EL, SPx: sync
	ventry	irq_entry	// IRQ
	ventry	bad_vector	// FIQ
	ventry	bad_vector
	ventry	bad_vector	// lower EL
	ventry	bad_vector
	ventry	bad_vector
	ventry	bad_vector
	ventry	bad_vector
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

// IRQ: save the caller-saved registers, call irq_handler (C), return.
irq_entry:
	sub	sp, sp, #192
	stp	x0, x1, [sp, #0]
	stp	x2, x3, [sp, #16]
	stp	x4, x5, [sp, #32]
	stp	x6, x7, [sp, #48]
	stp	x8, x9, [sp, #64]
	stp	x10, x11, [sp, #80]
	stp	x12, x13, [sp, #96]
	stp	x14, x15, [sp, #112]
	stp	x16, x17, [sp, #128]
	stp	x18, x29, [sp, #144]
	mrs	x0, elr_el1
	mrs	x1, spsr_el1
	stp	x30, x0, [sp, #160]
	str	x1, [sp, #176]
	bl	irq_handler
	ldr	x1, [sp, #176]
	ldp	x30, x0, [sp, #160]
	msr	spsr_el1, x1
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
	ldp	x18, x29, [sp, #144]
	add	sp, sp, #192
	eret

// u64 psci(u64 fid, u64 a1, u64 a2, u64 a3)
	.text
	.globl	psci
psci:
	hvc	#0
	ret
