/* SPDX-License-Identifier: MIT */
/* System register access, as arch/arm64/include/asm/sysreg.h. */
#ifndef __ASM_SYSREG_H
#define __ASM_SYSREG_H

#ifndef __ASSEMBLY__

#define read_sysreg(r) ({					\
	unsigned long __val;					\
	asm volatile("mrs %0, " __stringify(r) : "=r" (__val));	\
	__val;							\
})

#define write_sysreg(v, r) do {					\
	unsigned long __val = (unsigned long)(v);		\
	asm volatile("msr " __stringify(r) ", %x0"		\
		     : : "rZ" (__val));				\
} while (0)

#define isb()		asm volatile("isb" : : : "memory")
#define dsb(opt)	asm volatile("dsb " #opt : : : "memory")
#define wfi()		asm volatile("wfi" : : : "memory")

static inline void local_daif_mask(void)
{
	asm volatile("msr daifset, #0xf" : : : "memory");
}

#endif /* !__ASSEMBLY__ */
#endif /* __ASM_SYSREG_H */
