/* SPDX-License-Identifier: MIT */
/*
 * Low-level CPU initialisation, as arch/arm64/kernel/head.S.
 *
 * kpemu's machine (and QEMU's virt board with -kernel on an ELF) enters at
 * _start with the MMU off (VA == PA), at EL1h, DAIF masked, x0 = the device
 * tree's physical address (0 under QEMU, which passes no tree to an ELF). The image
 * starts with an arm64 Image header (Documentation/arm64/booting.rst) so the
 * first bytes read like Linux's; the header's second word branches to
 * primary_entry.
 */
#include <linux/linkage.h>
#include <asm/asm-offsets.h>

	.section ".head.text","ax"

/*
 * _start / _head: the arm64 Image header. code0 is a NOP (Linux puts the
 * EFI "MZ" signature here when it is an EFI stub), code1 branches to the
 * real entry.
 */
SYM_CODE_START(_start)
	nop					// code0
	b	primary_entry			// code1
	.quad	0x80000				// Image load offset (TEXT_OFFSET), LE
	.quad	_kernel_size_le			// Effective Image size, LE
	.quad	0xa				// flags: LE, 4K pages, anywhere in RAM
	.quad	0				// reserved
	.quad	0				// reserved
	.quad	0				// reserved
	.ascii	"ARM\x64"			// Magic number
	.long	0				// reserved (PE/COFF header offset)
SYM_CODE_END(_start)

/*
 * primary_entry: SP_EL1 onto init_stack, VBAR_EL1 onto the vectors, clear
 * .bss, then start_kernel() with a zero frame record (fp = lr = 0) so that
 * unwinding stops there. start_kernel() never returns.
 */
SYM_CODE_START(primary_entry)
	mov	x21, x0				// preserve_boot_args: the FDT pointer
	msr	daifset, #0xf
	msr	spsel, #1			// use SP_EL1 (EL1h)

	adrp	x8, vectors
	add	x8, x8, :lo12:vectors
	msr	vbar_el1, x8
	isb

	adrp	x0, __bss_start			// clear .bss (it holds init_stack)
	add	x0, x0, :lo12:__bss_start
	adrp	x1, __bss_stop
	add	x1, x1, :lo12:__bss_stop
1:	cmp	x0, x1
	b.hs	2f
	stp	xzr, xzr, [x0], #16
	b	1b
2:
	adrp	x5, __fdt_pointer		// after .bss is clear, as __primary_switched
	str	x21, [x5, :lo12:__fdt_pointer]
	adrp	x0, init_stack
	add	x0, x0, :lo12:init_stack
	add	sp, x0, #THREAD_SIZE
	adrp	x0, init_task			// current = init_task (swapper/0)
	add	x0, x0, :lo12:init_task
	msr	sp_el0, x0
	mov	x29, xzr
	mov	x30, xzr
	bl	start_kernel
3:	wfi					// start_kernel() does not return
	b	3b
SYM_CODE_END(primary_entry)

/*
 * secondary_entry: where PSCI CPU_ON starts a secondary CPU (smp.c's
 * __cpu_up), at EL1h with the MMU off and DAIF masked, x0 = the context
 * argument: the CPU's idle task. SP_EL1 onto the idle task's stack,
 * sp_el0 (current) onto the task, VBAR_EL1 onto the vectors, then
 * secondary_start_kernel(), which does not return.
 */
SYM_CODE_START(secondary_entry)
	msr	daifset, #0xf
	msr	spsel, #1

	adrp	x8, vectors
	add	x8, x8, :lo12:vectors
	msr	vbar_el1, x8
	isb

	ldr	x1, [x0, #TSK_STACK]
	add	sp, x1, #THREAD_SIZE
	msr	sp_el0, x0
	mov	x29, xzr
	mov	x30, xzr
	bl	secondary_start_kernel
1:	wfi
	b	1b
SYM_CODE_END(secondary_entry)
