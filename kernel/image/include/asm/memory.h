/* SPDX-License-Identifier: MIT */
/*
 * The kernel's virtual memory layout, as arch/arm64/include/asm/memory.h
 * with VA_BITS = 48, 4K pages and no KASLR. The kernel lives in the TTBR1
 * half; TTBR0 holds only user space (or, for kernel threads, nothing).
 *
 *   0xffff000000000000  PAGE_OFFSET: the linear map of RAM (PHYS_OFFSET
 *                       upwards). Pages, slab objects, task structs,
 *                       kernel stacks and page tables live here.
 *   0xffff800001000000  MODULES_VADDR: 16 MiB for modules, 2 MiB blocks
 *                       onto MODULES_PHYS (the host loads modules there).
 *                       Within 128 MiB of all kernel text (CALL26),
 *                       where Linux's module_alloc_base (_etext - 128 MiB)
 *                       puts them.
 *   0xffff800008000000  KIMAGE_VADDR: the image, _text first, 2 MiB
 *                       blocks onto where it was loaded (KERNEL_PHYS).
 *   0xffff800010000000  IOREMAP_VADDR: the board's devices, 2 MiB
 *                       Device-nGnRE blocks onto 0x08000000..0x0c000000;
 *                       ioremap() hands out addresses in it.
 *
 * The host half of kpemu (kernel/abi.go) mirrors these constants and
 * translates kernel VAs to physical addresses the same way.
 */
#ifndef __ASM_MEMORY_H
#define __ASM_MEMORY_H

/* constants usable from C and assembly (Linux's linux/const.h) */
#ifdef __ASSEMBLY__
#define UL(x)			x
#else
#define UL(x)			x##UL
#endif

#define VA_BITS			48
#define PAGE_OFFSET		UL(0xffff000000000000)
#define PHYS_OFFSET		UL(0x40000000)	/* memstart_addr: QEMU virt's RAM */
#define MODULES_VADDR		UL(0xffff800001000000)
#define MODULES_VSIZE		UL(0x01000000)	/* 16 MiB */
#define MODULES_END		(MODULES_VADDR + MODULES_VSIZE)
#define MODULES_PHYS		UL(0x41000000)
#define KIMAGE_VADDR		UL(0xffff800008000000)
#define KERNEL_PHYS		UL(0x40200000)	/* the ELF's load address */
#define IOREMAP_VADDR		UL(0xffff800010000000)
#define DEVICE_START		UL(0x08000000)	/* GIC, UART, RTC, virtio-mmio... */
#define DEVICE_END		UL(0x0c000000)

#ifndef __ASSEMBLY__
#include <linux/types.h>

/* VA - PA of the image, written by head.S from where it really runs. */
extern u64 kimage_voffset;

#define __is_lm_address(a)	((u64)(a) - PAGE_OFFSET < (1UL << (VA_BITS - 1)))
#define __lm_to_phys(a)		((u64)(a) - PAGE_OFFSET + PHYS_OFFSET)
#define __kimg_to_phys(a)	((u64)(a) - kimage_voffset)
#define __pa(a)			(__is_lm_address(a) ? __lm_to_phys(a) : __kimg_to_phys(a))
#define __pa_symbol(a)		__kimg_to_phys((u64)(a))
#define __va(pa)		((void *)((u64)(pa) - PHYS_OFFSET + PAGE_OFFSET))
#define virt_to_phys(a)		__pa(a)
#define phys_to_virt(pa)	__va(pa)
/* the linear-map alias of an image object (a .bss arena, say) */
#define lm_alias(a)		__va(__pa_symbol(a))

/* ioremap: the fixed device window; NULL for anything outside it. */
static inline void *ioremap(u64 pa, u64 size)
{
	if (pa < DEVICE_START || pa + size > DEVICE_END || pa + size < pa)
		return NULL;
	return (void *)(IOREMAP_VADDR + (pa - DEVICE_START));
}
#endif

#endif /* __ASM_MEMORY_H */
