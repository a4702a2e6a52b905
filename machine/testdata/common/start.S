// The bare-metal runtime of machine's differential test programs (the
// directories next to this one; lib.h is its C half). QEMU virt (-kernel
// ELF) and machine both enter _start on CPU 0 at EL1 with the MMU off;
// secondaries, started with PSCI CPU_ON at secondary_start, enter with
// their index as the context id in x0. CPU 0 clears the BSS and calls
// main(), secondaries call secondary_main(index); when either returns, the
// machine powers off.

// Each CPU's stack: STACK_SIZE bytes below __stack_top, CPU 0's highest.
// A single-CPU program's CPU 0 may use all of the area (link.ld).
#define STACK_SIZE	0x2000

	.section .text.boot, "ax"
	.globl	_start
_start:
	mov	x0, #0
	.globl	secondary_start
secondary_start:
	ldr	x1, =__stack_top
	mov	x2, #STACK_SIZE
	msub	x1, x0, x2, x1
	mov	sp, x1
	adr	x1, vectors
	msr	vbar_el1, x1
	isb
	cbnz	x0, 3f
	ldr	x1, =__bss_start
	ldr	x2, =__bss_end
1:	cmp	x1, x2
	b.hs	2f
	str	xzr, [x1], #8
	b	1b
2:	bl	main
	b	poweroff
3:	bl	secondary_main
	.globl	poweroff
poweroff:
	mov	x0, #0x0008		// PSCI SYSTEM_OFF
	movk	x0, #0x8400, lsl #16
	hvc	#0
4:	b	4b

// A program that starts no secondaries need not define secondary_main.
	.weak	secondary_main
secondary_main:
	b	poweroff

// Every vector saves x0/x1, passes its offset from VBAR in x1 and joins
// exc_common, which builds the frame and calls exc_handler(frame, offset).
	.macro	ventry, off
	.balign	0x80
	sub	sp, sp, #272
	stp	x0, x1, [sp, #0]
	mov	x1, #\off
	b	exc_common
	.endm

	.balign	0x800
	.globl	vectors
vectors:
	ventry	0x000
	ventry	0x080
	ventry	0x100
	ventry	0x180
	ventry	0x200
	ventry	0x280
	ventry	0x300
	ventry	0x380
	ventry	0x400
	ventry	0x480
	ventry	0x500
	ventry	0x580
	ventry	0x600
	ventry	0x680
	ventry	0x700
	ventry	0x780

// Frame: x0..x30 at 0..240, ELR at 248, SPSR at 256; 272 bytes.
exc_common:
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
	bl	exc_handler
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

// run_el0(entry, sp_el0, spsr): drop to EL0 at entry with the given SPSR
// (0 for EL0t with interrupts unmasked). The EL0 code ends with SVC #0,
// whose handler (exc_handler) resumes EL1 at el0_return; the callee-saved
// registers are restored from the EL1 stack.
	.text
	.globl	run_el0
run_el0:
	stp	x29, x30, [sp, #-96]!
	stp	x19, x20, [sp, #16]
	stp	x21, x22, [sp, #32]
	stp	x23, x24, [sp, #48]
	stp	x25, x26, [sp, #64]
	stp	x27, x28, [sp, #80]
	msr	sp_el0, x1
	msr	elr_el1, x0
	msr	spsr_el1, x2
	adr	x3, el0_return
	ldr	x4, =el0_resume
	str	x3, [x4]
	mov	x3, sp
	ldr	x4, =el0_sp
	str	x3, [x4]
	eret
	.globl	el0_return
el0_return:
	ldr	x4, =el0_sp
	ldr	x3, [x4]
	mov	sp, x3
	ldp	x19, x20, [sp, #16]
	ldp	x21, x22, [sp, #32]
	ldp	x23, x24, [sp, #48]
	ldp	x25, x26, [sp, #64]
	ldp	x27, x28, [sp, #80]
	ldp	x29, x30, [sp], #96
	ret

// u64 psci(u64 fid, u64 a1, u64 a2, u64 a3): a PSCI call over HVC.
	.globl	psci
psci:
	hvc	#0
	ret

	.bss
	.balign	8
	.globl	el0_resume
el0_resume:
	.skip	8
el0_sp:
	.skip	8
