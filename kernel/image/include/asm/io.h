/* SPDX-License-Identifier: MIT */
/*
 * MMIO accessors, as arch/arm64/include/asm/io.h: one 32-bit access each
 * (inline asm, so the compiler cannot split or merge them); readl() is
 * ordered before later memory reads and writel() after earlier memory
 * writes, with the barriers Linux uses (dmb oshld / dmb oshst).
 */
#ifndef __ASM_IO_H
#define __ASM_IO_H

#include <linux/types.h>

static inline u32 readl_relaxed(const volatile void *addr)
{
	u32 val;

	asm volatile("ldr %w0, [%1]" : "=r" (val) : "r" (addr));
	return val;
}

static inline void writel_relaxed(u32 val, volatile void *addr)
{
	asm volatile("str %w0, [%1]" : : "rZ" (val), "r" (addr));
}

static inline u32 readl(const volatile void *addr)
{
	u32 val = readl_relaxed(addr);

	asm volatile("dmb oshld" : : : "memory");
	return val;
}

static inline void writel(u32 val, volatile void *addr)
{
	asm volatile("dmb oshst" : : : "memory");
	writel_relaxed(val, addr);
}

#endif /* __ASM_IO_H */
