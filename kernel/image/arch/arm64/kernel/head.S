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
#include <asm/pgtable.h>

	.section ".head.text","ax"

/*
 * _start / _head: the arm64 Image header. code0 is a NOP (Linux puts the
 * EFI "MZ" signature here when it is an EFI stub), code1 branches to the
 * real entry.
 */
SYM_CODE_START(_start)
	nop					// code0
	b	primary_entry			// code1
	.quad	0				// Image load offset (text_offset), LE
	.quad	_kernel_size_le			// Effective Image size, LE
	.quad	0xa				// flags: LE, 4K pages, anywhere in RAM
	.quad	0				// reserved
	.quad	0				// reserved
	.quad	0				// reserved
	.ascii	"ARM\x64"			// Magic number
	.long	0				// reserved (PE/COFF header offset)
SYM_CODE_END(_start)

/*
 * primary_entry: with the MMU off, clear .bss, record kimage_voffset and
 * the FDT pointer, build the boot page tables, turn the MMU on and jump
 * to the kernel's link address (__primary_switched), as Linux's
 * primary_entry -> __create_page_tables -> __cpu_setup ->
 * __primary_switch. Until the jump everything is PC-relative (adrp), so
 * it works at the physical address the image was loaded at.
 */
SYM_CODE_START(primary_entry)
	mov	x21, x0				// preserve_boot_args: the FDT pointer
	msr	daifset, #0xf
	msr	spsel, #1			// use SP_EL1 (EL1h)

	adrp	x0, __bss_start			// clear .bss (init_stack, the tables)
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
	adrp	x0, _text			// where we run ...
	ldr	x1, =_text			// ... and where we are linked
	sub	x1, x1, x0
	adrp	x5, kimage_voffset
	str	x1, [x5, :lo12:kimage_voffset]

	bl	__create_page_tables
	bl	__cpu_setup
	bl	__enable_mmu
	ldr	x8, =__primary_switched		// from the idmap to the kernel's VA
	br	x8
SYM_CODE_END(primary_entry)

/*
 * map_blocks: x0 = a level 2 table (PA), x1 = first VA, x2 = first PA,
 * x3 = number of 2 MiB blocks (> 0), x4 = block attributes. The range
 * stays within the table's 1 GiB. Clobbers x1-x3, x5-x6.
 */
SYM_FUNC_START_LOCAL(map_blocks)
	ubfx	x5, x1, #PMD_SHIFT, #9
1:	orr	x6, x2, x4
	str	x6, [x0, x5, lsl #3]
	add	x5, x5, #1
	add	x2, x2, #PMD_SIZE
	subs	x3, x3, #1
	b.ne	1b
	ret
SYM_FUNC_END(map_blocks)

/*
 * __create_page_tables (MMU off): the tables that head.S and every CPU
 * boot on (arch/arm64/mm/mmu.c describes them):
 *
 *   init_idmap_pg_dir (TTBR0, level 1): the 1 GiB around the image, VA ==
 *     PA, for the instructions that turn the MMU on.
 *   swapper_pg_dir (TTBR1, level 0) -> swapper_pud_lm: the linear map
 *     of RAM from PHYS_OFFSET, in 1 GiB blocks; -> swapper_pud_k ->
 *     swapper_pmd_k: the modules area, the image and the device window,
 *     in 2 MiB blocks.
 */
SYM_FUNC_START_LOCAL(__create_page_tables)
	mov	x28, x30
	adrp	x7, _text			// PA of the image (2 MiB aligned)

	adrp	x0, init_idmap_pg_dir
	ubfx	x5, x7, #PUD_SHIFT, #9
	and	x6, x7, #~(PUD_SIZE - 1)
	ldr	x4, =PROT_SECT_KERNEL
	orr	x6, x6, x4
	str	x6, [x0, x5, lsl #3]

	adrp	x0, swapper_pg_dir
	adrp	x1, swapper_pud_lm
	orr	x1, x1, #PTE_TYPE_TABLE
	str	x1, [x0, #8 * ((PAGE_OFFSET >> 39) & 511)]
	adrp	x1, swapper_pud_k
	orr	x1, x1, #PTE_TYPE_TABLE
	str	x1, [x0, #8 * ((KIMAGE_VADDR >> 39) & 511)]

	/*
	 * The linear map: 1 GiB blocks from PHYS_OFFSET up to the one that
	 * holds the FDT, which kpemu and QEMU place at the top of RAM (at
	 * least 1 GiB; an FDT pointer outside RAM maps just that).
	 */
	adrp	x0, swapper_pud_lm
	ldr	x6, =PHYS_OFFSET | PROT_SECT_NORMAL
	mov	x5, #((PAGE_OFFSET >> PUD_SHIFT) & 511)
	ldr	x2, =PHYS_OFFSET
	subs	x3, x21, x2
	csel	x3, xzr, x3, lo
	lsr	x3, x3, #PUD_SHIFT
	cmp	x3, #64
	csel	x3, xzr, x3, hs
	ldr	x2, =PUD_SIZE
3:	str	x6, [x0, x5, lsl #3]
	add	x6, x6, x2
	add	x5, x5, #1
	subs	x3, x3, #1
	b.pl	3b
	adrp	x0, swapper_pud_k
	adrp	x1, swapper_pmd_k
	orr	x1, x1, #PTE_TYPE_TABLE
	str	x1, [x0, #8 * ((KIMAGE_VADDR >> PUD_SHIFT) & 511)]

	adrp	x0, swapper_pmd_k
	ldr	x1, =MODULES_VADDR
	ldr	x2, =MODULES_PHYS
	mov	x3, #MODULES_VSIZE / PMD_SIZE
	ldr	x4, =PROT_SECT_KERNEL
	bl	map_blocks

	ldr	x1, =_text
	mov	x2, x7
	ldr	x3, =_end + PMD_SIZE - 1
	sub	x3, x3, x1
	lsr	x3, x3, #PMD_SHIFT
	bl	map_blocks

	ldr	x1, =IOREMAP_VADDR
	ldr	x2, =DEVICE_START
	mov	x3, #(DEVICE_END - DEVICE_START) / PMD_SIZE
	ldr	x4, =PROT_SECT_DEVICE
	bl	map_blocks

	dsb	ishst				// the tables before the walker
	ret	x28
SYM_FUNC_END(__create_page_tables)

/*
 * __cpu_setup (proc.S): MAIR_EL1 and TCR_EL1 for 4K pages, a 39-bit
 * user half and a 48-bit kernel half, 8-bit ASIDs taken from TTBR0.
 */
SYM_FUNC_START_LOCAL(__cpu_setup)
	tlbi	vmalle1				// nothing stale from firmware
	dsb	nsh
	ldr	x0, =MAIR_EL1_SET
	msr	mair_el1, x0
	ldr	x0, =TCR_T0SZ(USER_VA_BITS) | TCR_T1SZ(VA_BITS) | TCR_IRGN0_WBWA | TCR_ORGN0_WBWA | TCR_SH0_INNER | TCR_TG0_4K | TCR_IRGN1_WBWA | TCR_ORGN1_WBWA | TCR_SH1_INNER | TCR_TG1_4K | TCR_IPS_40BIT
	msr	tcr_el1, x0
	ret
SYM_FUNC_END(__cpu_setup)

/*
 * __enable_mmu: TTBR0 = the idmap, TTBR1 = swapper_pg_dir, then
 * SCTLR_EL1.{M,C,I}. Runs from the idmap, so the next fetch finds itself.
 */
SYM_FUNC_START_LOCAL(__enable_mmu)
	adrp	x1, init_idmap_pg_dir
	msr	ttbr0_el1, x1
	adrp	x1, swapper_pg_dir
	msr	ttbr1_el1, x1
	isb
	mrs	x0, sctlr_el1
	ldr	x1, =SCTLR_ELx_M | SCTLR_ELx_C | SCTLR_ELx_I
	orr	x0, x0, x1
	msr	sctlr_el1, x0
	isb
	ic	iallu				// no stale PA-tagged fetches
	dsb	nsh
	isb
	ret
SYM_FUNC_END(__enable_mmu)

/*
 * __primary_switched: at the kernel's VA now. SP_EL1 onto init_stack,
 * VBAR_EL1 onto the vectors, current = init_task, then start_kernel()
 * with a zero frame record (fp = lr = 0) so that unwinding stops there.
 * start_kernel() never returns.
 */
SYM_FUNC_START_LOCAL(__primary_switched)
	adrp	x8, vectors
	add	x8, x8, :lo12:vectors
	msr	vbar_el1, x8
	isb
	adrp	x0, init_thread_union
	add	x0, x0, :lo12:init_thread_union
	add	sp, x0, #THREAD_ALIGN		// the top of init_stack
	adrp	x0, init_task			// current = init_task (swapper/0)
	add	x0, x0, :lo12:init_task
	msr	sp_el0, x0
	mov	x29, xzr
	mov	x30, xzr
	bl	start_kernel
3:	wfi					// start_kernel() does not return
	b	3b
SYM_FUNC_END(__primary_switched)

/*
 * secondary_entry: where PSCI CPU_ON starts a secondary CPU (smp.c's
 * __cpu_up passes its physical address), at EL1h with the MMU off and
 * DAIF masked, x0 = the context argument: the CPU's idle task (a kernel
 * VA, used once the MMU is on). The boot tables are already built.
 */
SYM_CODE_START(secondary_entry)
	msr	daifset, #0xf
	msr	spsel, #1
	mov	x20, x0
	bl	__cpu_setup
	bl	__enable_mmu
	ldr	x8, =__secondary_switched
	br	x8
SYM_CODE_END(secondary_entry)

/*
 * __secondary_switched: SP_EL1 onto the idle task's stack, sp_el0
 * (current) onto the task, VBAR_EL1 onto the vectors, then
 * secondary_start_kernel(), which does not return.
 */
SYM_FUNC_START_LOCAL(__secondary_switched)
	adrp	x8, vectors
	add	x8, x8, :lo12:vectors
	msr	vbar_el1, x8
	isb
	ldr	x1, [x20, #TSK_STACK]
	add	sp, x1, #THREAD_SIZE
	msr	sp_el0, x20
	mov	x29, xzr
	mov	x30, xzr
	bl	secondary_start_kernel
1:	wfi
	b	1b
SYM_FUNC_END(__secondary_switched)

	.ltorg

/*
 * The boot page tables, in .bss (cleared above before they are filled).
 * reserved_pg_dir stays empty: TTBR0 holds it while a kernel thread runs,
 * so that no stale user mapping is reachable (cpu_set_reserved_ttbr0).
 */
	.section ".bss..page_aligned","aw",%nobits
	.balign	4096
SYM_DATA_START(init_idmap_pg_dir)
	.skip	4096
SYM_DATA_END(init_idmap_pg_dir)
SYM_DATA_START(swapper_pg_dir)
	.skip	4096
SYM_DATA_END(swapper_pg_dir)
SYM_DATA_START(swapper_pud_lm)
	.skip	4096
SYM_DATA_END(swapper_pud_lm)
SYM_DATA_START(swapper_pud_k)
	.skip	4096
SYM_DATA_END(swapper_pud_k)
SYM_DATA_START(swapper_pmd_k)
	.skip	4096
SYM_DATA_END(swapper_pmd_k)
SYM_DATA_START(reserved_pg_dir)
	.skip	4096
SYM_DATA_END(reserved_pg_dir)
