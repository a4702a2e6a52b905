// SPDX-License-Identifier: MIT
/*
 * Exception-table fixups, as Linux 6.1's arch/arm64/mm/extable.c. A kernel
 * fault that do_page_fault() cannot resolve (a user address outside every
 * VMA, a write to a read-only VMA) is looked up here by the faulting PC;
 * if the instruction is a listed user access, the fault resumes at its
 * fixup instead of oopsing.
 *
 * Linux sorts the table at build time (scripts/sorttable) and binary
 * searches it; the handful of entries here is searched linearly.
 */
#include <linux/kernel.h>
#include <asm/extable.h>
#include <asm/ptrace.h>

extern const struct exception_table_entry __start___ex_table[], __stop___ex_table[];

static unsigned long ex_insn(const struct exception_table_entry *ex)
{
	return (unsigned long)&ex->insn + ex->insn;
}

static unsigned long ex_fixup(const struct exception_table_entry *ex)
{
	return (unsigned long)&ex->fixup + ex->fixup;
}

static void set_reg(struct pt_regs *regs, int reg, unsigned long val)
{
	if (reg != 31)	/* xzr/wzr: nothing to set */
		regs->regs[reg] = val;
}

bool fixup_exception(struct pt_regs *regs)
{
	const struct exception_table_entry *ex;

	for (ex = __start___ex_table; ex < __stop___ex_table; ex++) {
		if (ex_insn(ex) != regs->pc)
			continue;
		switch (ex->type) {
		case EX_TYPE_FIXUP:
			regs->pc = ex_fixup(ex);
			return true;
		case EX_TYPE_UACCESS_ERR_ZERO:
			set_reg(regs, (ex->data >> EX_DATA_REG_ERR_SHIFT) & EX_DATA_REG_MASK,
				(unsigned long)-EFAULT);
			set_reg(regs, (ex->data >> EX_DATA_REG_ZERO_SHIFT) & EX_DATA_REG_MASK, 0);
			regs->pc = ex_fixup(ex);
			return true;
		}
		return false;
	}
	return false;
}
