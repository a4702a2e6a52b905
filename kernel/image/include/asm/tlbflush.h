/* SPDX-License-Identifier: MIT */
/* TLB maintenance, after arch/arm64/include/asm/tlbflush.h (inner shareable). */
#ifndef __ASM_TLBFLUSH_H
#define __ASM_TLBFLUSH_H

#include <asm/sysreg.h>

static inline void flush_tlb_asid(unsigned long asid)
{
	dsb(ishst);
	asm volatile("tlbi aside1is, %0" : : "r" (asid << 48) : "memory");
	dsb(ish);
	isb();
}

static inline void flush_tlb_page_asid(unsigned long asid, unsigned long va)
{
	dsb(ishst);
	asm volatile("tlbi vae1is, %0" : : "r" ((asid << 48) | ((va >> 12) & 0xfffffffffffUL)) : "memory");
	dsb(ish);
	isb();
}

static inline void flush_tlb_all(void)
{
	dsb(ishst);
	asm volatile("tlbi vmalle1is" : : : "memory");
	dsb(ish);
	isb();
}

#endif /* __ASM_TLBFLUSH_H */
