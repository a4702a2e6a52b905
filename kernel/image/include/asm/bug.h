/* SPDX-License-Identifier: MIT */
/*
 * BUG(), as arch/arm64/include/asm/bug.h + asm-bug.h: a "brk #0x800" plus a
 * __bug_table entry naming the file and line, which bug_handler reports.
 */
#ifndef __ASM_BUG_H
#define __ASM_BUG_H

#include <linux/compiler.h>
#include <asm/brk-imm.h>

#ifndef __ASSEMBLY__

struct bug_entry {
	int		bug_addr_disp;	/* relative to the entry */
	int		file_disp;	/* relative to the entry */
	unsigned short	line;
	unsigned short	flags;
};

#define __BUG_FLAGS(flags)						\
	asm volatile(							\
		"14470:	brk	%[imm]\n"				\
		"	.pushsection __bug_table,\"aw\"\n"		\
		"	.align	2\n"					\
		"14471:	.long	14470b - .\n"				\
		"	.pushsection .rodata.str,\"aMS\",@progbits,1\n"	\
		"14472:	.string	" __stringify(__FILE__) "\n"		\
		"	.popsection\n"					\
		"	.long	14472b - .\n"				\
		"	.short	" __stringify(__LINE__) ", " __stringify(flags) "\n" \
		"	.popsection\n"					\
		: : [imm] "i" (BUG_BRK_IMM))

#define BUG() do {		\
	__BUG_FLAGS(0);		\
	unreachable();		\
} while (0)

#define BUG_ON(condition) do { if (unlikely(condition)) BUG(); } while (0)

#endif /* !__ASSEMBLY__ */
#endif /* __ASM_BUG_H */
