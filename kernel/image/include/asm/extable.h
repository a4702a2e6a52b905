/* SPDX-License-Identifier: MIT */
/* The exception table, as Linux 6.1's arch/arm64/include/asm/extable.h. */
#ifndef _ASM_EXTABLE_H
#define _ASM_EXTABLE_H

#include <linux/types.h>
#include <asm/asm-extable.h>

struct pt_regs;

struct exception_table_entry {
	int insn, fixup;
	short type, data;
};

bool fixup_exception(struct pt_regs *regs);

#endif /* _ASM_EXTABLE_H */
