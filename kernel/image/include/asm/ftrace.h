/* SPDX-License-Identifier: MIT */
/*
 * The function tracer's arch side, as Linux 6.1's
 * arch/arm64/include/asm/ftrace.h with CONFIG_DYNAMIC_FTRACE_WITH_REGS.
 *
 * Every traceable function starts with the two NOPs of
 * -fpatchable-function-entry=2, recorded in __patchable_function_entries
 * (between __start_mcount_loc and __stop_mcount_loc). The host (kpemu's
 * kernel/ftrace.go) does what ftrace_init() and ftrace_init_nop() do at
 * boot: the first NOP becomes MOV X9, LR. A record's ip is the second
 * instruction (ftrace_call_adjust), which the host switches between NOP
 * and BL ftrace_caller (or ftrace_regs_caller) with every CPU stopped:
 *
 *	| Compiled | Disabled   | Enabled            |
 *	| NOP      | MOV X9, LR | MOV X9, LR         |
 *	| NOP      | NOP        | BL ftrace_caller   |
 */
#ifndef __ASM_FTRACE_H
#define __ASM_FTRACE_H

#define AARCH64_INSN_SIZE	4

/* The BL at the callsite's adjusted rec->ip */
#define MCOUNT_INSN_SIZE	AARCH64_INSN_SIZE

#ifndef __ASSEMBLY__
#include <asm/ptrace.h>

struct ftrace_ops;

/*
 * ftrace_regs is what the callbacks get; with DYNAMIC_FTRACE_WITH_REGS it
 * is the pt_regs that ftrace_caller built (Linux 6.1).
 */
struct ftrace_regs {
	struct pt_regs		regs;
};

/* entry-ftrace.S */
extern void ftrace_caller(void);
extern void ftrace_regs_caller(void);
extern void ftrace_call(void);
extern void ftrace_stub(void);
extern void return_to_handler(void);

/* kernel/trace/ftrace.c: return_to_handler's gate to the host's fgraph */
unsigned long ftrace_return_to_handler(unsigned long frame_pointer);

/* kernel/trace/ftrace.c: what ftrace_call calls while any tracer is on */
void arch_ftrace_ops_list_func(unsigned long ip, unsigned long parent_ip,
			       struct ftrace_ops *op, struct ftrace_regs *fregs);
extern struct ftrace_ops *function_trace_op;

static inline unsigned long ftrace_call_adjust(unsigned long addr)
{
	/* Adjust addr to point at the BL in the callsite. */
	return addr + AARCH64_INSN_SIZE;
}
#endif /* !__ASSEMBLY__ */

#endif /* __ASM_FTRACE_H */
