/* SPDX-License-Identifier: MIT */
/*
 * Stage-1 translation tables, 4 KiB granule, 39-bit VAs (T0SZ = 25, walks
 * start at level 1), after arch/arm64/include/asm/pgtable-hwdef.h.
 *
 * kpemu's split is 32-bit-Linux-like for now: TTBR0 holds both the user
 * half (0..TASK_SIZE) and the kernel's identity map (RAM from 0x40000000,
 * EL1-only, global), so every kernel VA equals its PA, which is what the
 * host half reads and writes. TTBR1 is unused (TCR.EPD1 = 1).
 */
#ifndef __ASM_PGTABLE_H
#define __ASM_PGTABLE_H

#include <linux/types.h>

#define PTRS_PER_TABLE		512
#define PMD_SHIFT		21		/* level 2: 2 MiB */
#define PUD_SHIFT		30		/* level 1: 1 GiB */
#define PMD_SIZE		(1UL << PMD_SHIFT)
#define PUD_SIZE		(1UL << PUD_SHIFT)

/* Descriptor bits (pgtable-hwdef.h) */
#define PTE_VALID		(1UL << 0)
#define PTE_TABLE_BIT		(1UL << 1)	/* table (L1/L2) or page (L3) */
#define PTE_TYPE_BLOCK		PTE_VALID
#define PTE_TYPE_TABLE		(PTE_VALID | PTE_TABLE_BIT)
#define PTE_TYPE_PAGE		(PTE_VALID | PTE_TABLE_BIT)
#define PTE_ATTRINDX(t)		((unsigned long)(t) << 2)
#define PTE_USER		(1UL << 6)	/* AP[1]: EL0 access */
#define PTE_RDONLY		(1UL << 7)	/* AP[2] */
#define PTE_SHARED		(3UL << 8)	/* SH[1:0]: inner shareable */
#define PTE_AF			(1UL << 10)
#define PTE_NG			(1UL << 11)
#define PTE_PXN			(1UL << 53)
#define PTE_UXN			(1UL << 54)
#define PTE_ADDR_MASK		0x0000fffffffff000UL

/* MAIR_EL1 attribute indices, as Linux 6.1 (asm/memory.h) */
#define MT_NORMAL		0
#define MT_NORMAL_TAGGED	1
#define MT_NORMAL_NC		2
#define MT_DEVICE_nGnRnE	3
#define MT_DEVICE_nGnRE		4

#define MAIR_ATTR_DEVICE_nGnRnE	0x00UL
#define MAIR_ATTR_DEVICE_nGnRE	0x04UL
#define MAIR_ATTR_NORMAL_NC	0x44UL
#define MAIR_ATTR_NORMAL	0xffUL
#define MAIR_ATTRIDX(attr, idx)	((attr) << ((idx) * 8))
#define MAIR_EL1_SET							\
	(MAIR_ATTRIDX(MAIR_ATTR_DEVICE_nGnRnE, MT_DEVICE_nGnRnE) |	\
	 MAIR_ATTRIDX(MAIR_ATTR_DEVICE_nGnRE, MT_DEVICE_nGnRE) |	\
	 MAIR_ATTRIDX(MAIR_ATTR_NORMAL_NC, MT_NORMAL_NC) |		\
	 MAIR_ATTRIDX(MAIR_ATTR_NORMAL, MT_NORMAL) |			\
	 MAIR_ATTRIDX(MAIR_ATTR_NORMAL, MT_NORMAL_TAGGED))

/* TCR_EL1 (pgtable-hwdef.h), as proc.S sets it for 4K pages */
#define VA_BITS			39
#define TCR_T0SZ(x)		((64UL - (x)) << 0)
#define TCR_T1SZ(x)		((64UL - (x)) << 16)
#define TCR_IRGN0_WBWA		(1UL << 8)
#define TCR_ORGN0_WBWA		(1UL << 10)
#define TCR_SH0_INNER		(3UL << 12)
#define TCR_TG0_4K		(0UL << 14)
#define TCR_EPD1		(1UL << 23)
#define TCR_IRGN1_WBWA		(1UL << 24)
#define TCR_ORGN1_WBWA		(1UL << 26)
#define TCR_SH1_INNER		(3UL << 28)
#define TCR_TG1_4K		(2UL << 30)
#define TCR_IPS_40BIT		(2UL << 32)
#define TCR_ASID16		(1UL << 36)

#define SCTLR_ELx_M		(1UL << 0)
#define SCTLR_ELx_C		(1UL << 2)
#define SCTLR_ELx_I		(1UL << 12)

/*
 * Kernel mappings: RWX at EL1, nothing at EL0 (AP = 00, UXN), global.
 * Device mappings are never executable.
 */
#define PROT_SECT_KERNEL	(PTE_TYPE_BLOCK | PTE_ATTRINDX(MT_NORMAL) | \
				 PTE_SHARED | PTE_AF | PTE_UXN)
#define PROT_SECT_DEVICE	(PTE_TYPE_BLOCK | PTE_ATTRINDX(MT_DEVICE_nGnRE) | \
				 PTE_AF | PTE_PXN | PTE_UXN)
/* User pages: EL0-accessible, never executable at EL1, per-ASID (nG). */
#define PROT_USER_BASE		(PTE_TYPE_PAGE | PTE_ATTRINDX(MT_NORMAL) | \
				 PTE_SHARED | PTE_AF | PTE_NG | PTE_USER | PTE_PXN)

/* The memory map that the kernel's identity map covers. */
#define PHYS_RAM_START		0x40000000UL	/* one 1 GiB block, level 1 entry 1 */
#define DEVICE_START		0x08000000UL	/* GIC, UART, RTC, virtio-mmio... */
#define DEVICE_END		0x0c000000UL	/* 2 MiB blocks in level 2 */

typedef u64 pteval_t;

static inline unsigned long pud_index(unsigned long va) { return (va >> PUD_SHIFT) & 511; }
static inline unsigned long pmd_index(unsigned long va) { return (va >> PMD_SHIFT) & 511; }
static inline unsigned long pte_index(unsigned long va) { return (va >> 12) & 511; }

#endif /* __ASM_PGTABLE_H */
