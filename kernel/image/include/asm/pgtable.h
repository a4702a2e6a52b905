/* SPDX-License-Identifier: MIT */
/*
 * Stage-1 translation tables, 4 KiB granule, after
 * arch/arm64/include/asm/pgtable-hwdef.h. The kernel half (TTBR1) has
 * 48-bit VAs (T1SZ = 16, walks start at level 0; asm/memory.h has the
 * layout); the user half (TTBR0) has 39-bit VAs (T0SZ = 25, walks start at
 * level 1), enough for kpemu's small processes, which live below
 * TASK_SIZE (1 GiB) and need only one level 2 table each. Usable from
 * assembly (head.S builds the boot tables).
 */
#ifndef __ASM_PGTABLE_H
#define __ASM_PGTABLE_H

#include <asm/memory.h>

#ifndef __ASSEMBLY__
#include <linux/types.h>
#endif

#define PTRS_PER_TABLE		512
#define PMD_SHIFT		21		/* level 2: 2 MiB */
#define PUD_SHIFT		30		/* level 1: 1 GiB */
#define PMD_SIZE		(UL(1) << PMD_SHIFT)
#define PUD_SIZE		(UL(1) << PUD_SHIFT)

/* Descriptor bits (pgtable-hwdef.h) */
#define PTE_VALID		(UL(1) << 0)
#define PTE_TABLE_BIT		(UL(1) << 1)	/* table (L1/L2) or page (L3) */
#define PTE_TYPE_BLOCK		PTE_VALID
#define PTE_TYPE_TABLE		(PTE_VALID | PTE_TABLE_BIT)
#define PTE_TYPE_PAGE		(PTE_VALID | PTE_TABLE_BIT)
#define PTE_ATTRINDX(t)		((t) << 2)
#define PTE_USER		(UL(1) << 6)	/* AP[1]: EL0 access */
#define PTE_RDONLY		(UL(1) << 7)	/* AP[2] */
#define PTE_SHARED		(UL(3) << 8)	/* SH[1:0]: inner shareable */
#define PTE_AF			(UL(1) << 10)
#define PTE_NG			(UL(1) << 11)
#define PTE_PXN			(UL(1) << 53)
#define PTE_UXN			(UL(1) << 54)
/* software: a page the mapping does not own (a file's shared text),
 * which unmapping leaves and fork shares, as Linux's pte_special() */
#define PTE_SPECIAL		(UL(1) << 56)
#define PTE_ADDR_MASK		UL(0x0000fffffffff000)

/* MAIR_EL1 attribute indices, as Linux 6.1 (asm/memory.h) */
#define MT_NORMAL		0
#define MT_NORMAL_TAGGED	1
#define MT_NORMAL_NC		2
#define MT_DEVICE_nGnRnE	3
#define MT_DEVICE_nGnRE		4

#define MAIR_ATTR_DEVICE_nGnRnE	UL(0x00)
#define MAIR_ATTR_DEVICE_nGnRE	UL(0x04)
#define MAIR_ATTR_NORMAL_NC	UL(0x44)
#define MAIR_ATTR_NORMAL	UL(0xff)
#define MAIR_ATTRIDX(attr, idx)	((attr) << ((idx) * 8))
#define MAIR_EL1_SET							\
	(MAIR_ATTRIDX(MAIR_ATTR_DEVICE_nGnRnE, MT_DEVICE_nGnRnE) |	\
	 MAIR_ATTRIDX(MAIR_ATTR_DEVICE_nGnRE, MT_DEVICE_nGnRE) |	\
	 MAIR_ATTRIDX(MAIR_ATTR_NORMAL_NC, MT_NORMAL_NC) |		\
	 MAIR_ATTRIDX(MAIR_ATTR_NORMAL, MT_NORMAL) |			\
	 MAIR_ATTRIDX(MAIR_ATTR_NORMAL, MT_NORMAL_TAGGED))

/* TCR_EL1 (pgtable-hwdef.h), as proc.S sets it for 4K pages */
#define USER_VA_BITS		39
#define TCR_T0SZ(x)		((64 - (x)) << 0)
#define TCR_T1SZ(x)		((64 - (x)) << 16)
#define TCR_IRGN0_WBWA		(UL(1) << 8)
#define TCR_ORGN0_WBWA		(UL(1) << 10)
#define TCR_SH0_INNER		(UL(3) << 12)
#define TCR_TG0_4K		(UL(0) << 14)
#define TCR_EPD1		(UL(1) << 23)
#define TCR_IRGN1_WBWA		(UL(1) << 24)
#define TCR_ORGN1_WBWA		(UL(1) << 26)
#define TCR_SH1_INNER		(UL(3) << 28)
#define TCR_TG1_4K		(UL(2) << 30)
#define TCR_IPS_40BIT		(UL(2) << 32)
#define TCR_ASID16		(UL(1) << 36)

#define SCTLR_ELx_M		(UL(1) << 0)
#define SCTLR_ELx_C		(UL(1) << 2)
#define SCTLR_ELx_I		(UL(1) << 12)

/*
 * Kernel mappings: the image and modules RWX at EL1, the linear map RW,
 * nothing at EL0 (AP = 00, UXN), global. Device mappings are never
 * executable.
 */
#define PROT_SECT_KERNEL	(PTE_TYPE_BLOCK | PTE_ATTRINDX(MT_NORMAL) | \
				 PTE_SHARED | PTE_AF | PTE_UXN)
#define PROT_SECT_NORMAL	(PROT_SECT_KERNEL | PTE_PXN)
#define PROT_SECT_DEVICE	(PTE_TYPE_BLOCK | PTE_ATTRINDX(MT_DEVICE_nGnRE) | \
				 PTE_AF | PTE_PXN | PTE_UXN)
/* User pages: EL0-accessible, never executable at EL1, per-ASID (nG). */
#define PROT_USER_BASE		(PTE_TYPE_PAGE | PTE_ATTRINDX(MT_NORMAL) | \
				 PTE_SHARED | PTE_AF | PTE_NG | PTE_USER | PTE_PXN)

#ifndef __ASSEMBLY__
typedef u64 pteval_t;

static inline unsigned long pud_index(unsigned long va) { return (va >> PUD_SHIFT) & 511; }
static inline unsigned long pmd_index(unsigned long va) { return (va >> PMD_SHIFT) & 511; }
static inline unsigned long pte_index(unsigned long va) { return (va >> 12) & 511; }
#endif

#endif /* __ASM_PGTABLE_H */
