/* SPDX-License-Identifier: MIT */
/* As Linux's include/asm-generic/kprobes.h. */
#ifndef _ASM_GENERIC_KPROBES_H
#define _ASM_GENERIC_KPROBES_H

#include <linux/compiler.h>

#if defined(__KERNEL__) && !defined(__ASSEMBLY__)
/*
 * Blacklist ganerating macro. Specify functions which is not probed
 * by using this macro.
 */
# define __NOKPROBE_SYMBOL(fname)				\
static unsigned long __used					\
	__section("_kprobe_blacklist")				\
	_kbl_addr_##fname = (unsigned long)fname;
# define NOKPROBE_SYMBOL(fname)	__NOKPROBE_SYMBOL(fname)
/*
 * Use __kprobes to forbid a kprobes attach on very low level functions;
 * it is defined in <linux/compiler.h>, to the same section.
 */
# define nokprobe_inline	__always_inline
#endif /* defined(__KERNEL__) && !defined(__ASSEMBLY__) */

#endif /* _ASM_GENERIC_KPROBES_H */
