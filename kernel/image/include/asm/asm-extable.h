/* SPDX-License-Identifier: MIT */
/*
 * Exception table entries, as Linux 6.1's arch/arm64/include/asm/asm-extable.h:
 * { int insn, fixup (both relative to the field); short type, data }.
 * An instruction listed here may fault on a user address; the fault
 * handler then resumes at its fixup instead of oopsing.
 */
#ifndef _ASM_ASM_EXTABLE_H
#define _ASM_ASM_EXTABLE_H

#define EX_TYPE_NONE			0
#define EX_TYPE_FIXUP			1
#define EX_TYPE_BPF			2
#define EX_TYPE_UACCESS_ERR_ZERO	3

/* data of EX_TYPE_UACCESS_ERR_ZERO: the register to get -EFAULT, the one to zero */
#define EX_DATA_REG_ERR_SHIFT	0
#define EX_DATA_REG_ZERO_SHIFT	5
#define EX_DATA_REG_MASK	0x1f

#ifdef __ASSEMBLY__

	.macro	__asm_extable, insn, fixup, type, data
	.pushsection	__ex_table, "a"
	.balign		4
	.long		((\insn) - .)
	.long		((\fixup) - .)
	.short		(\type)
	.short		(\data)
	.popsection
	.endm

	.macro	_asm_extable, insn, fixup
	__asm_extable	\insn, \fixup, EX_TYPE_FIXUP, 0
	.endm

/* USER(fixup, insn): insn touches user memory; a fault goes to fixup. */
#define USER(l, x...)				\
9999:	x;					\
	_asm_extable	9999b, l

#endif /* __ASSEMBLY__ */
#endif /* _ASM_ASM_EXTABLE_H */
