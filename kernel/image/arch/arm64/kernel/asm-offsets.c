// SPDX-License-Identifier: MIT
/*
 * Linux generates asm-offsets.h from this file; kpemu writes the header by
 * hand (include/asm/asm-offsets.h) and checks it here at compile time.
 */
#include <linux/compiler.h>
#include <asm/asm-offsets.h>
#include <asm/ptrace.h>
#include <linux/sched.h>

_Static_assert(offsetof(struct pt_regs, regs[0]) == S_X0, "S_X0");
_Static_assert(offsetof(struct pt_regs, regs[2]) == S_X2, "S_X2");
_Static_assert(offsetof(struct pt_regs, regs[28]) == S_X28, "S_X28");
_Static_assert(offsetof(struct pt_regs, regs[29]) == S_FP, "S_FP");
_Static_assert(offsetof(struct pt_regs, regs[30]) == S_LR, "S_LR");
_Static_assert(offsetof(struct pt_regs, sp) == S_SP, "S_SP");
_Static_assert(offsetof(struct pt_regs, pc) == S_PC, "S_PC");
_Static_assert(offsetof(struct pt_regs, pstate) == S_PSTATE, "S_PSTATE");
_Static_assert(offsetof(struct pt_regs, orig_x0) == S_ORIG_X0, "S_ORIG_X0");
_Static_assert(offsetof(struct pt_regs, syscallno) == S_SYSCALLNO, "S_SYSCALLNO");
_Static_assert(offsetof(struct pt_regs, sdei_ttbr1) == S_SDEI_TTBR1, "S_SDEI_TTBR1");
_Static_assert(offsetof(struct pt_regs, pmr_save) == S_PMR_SAVE, "S_PMR_SAVE");
_Static_assert(offsetof(struct pt_regs, stackframe) == S_STACKFRAME, "S_STACKFRAME");
_Static_assert(offsetof(struct pt_regs, lockdep_hardirqs) == 320, "lockdep_hardirqs");
_Static_assert(offsetof(struct pt_regs, exit_rcu) == 328, "exit_rcu");
_Static_assert(sizeof(struct pt_regs) == PT_REGS_SIZE, "PT_REGS_SIZE");
_Static_assert(PT_REGS_SIZE % 16 == 0, "PT_REGS_SIZE must keep sp 16-byte aligned");

_Static_assert(offsetof(struct task_struct, thread_info.flags) == TSK_TI_FLAGS, "TSK_TI_FLAGS");
_Static_assert(offsetof(struct task_struct, thread_info.preempt_count) == TSK_TI_PREEMPT, "TSK_TI_PREEMPT");
_Static_assert(offsetof(struct task_struct, thread_info.cpu) == TSK_TI_CPU, "TSK_TI_CPU");
_Static_assert(offsetof(struct task_struct, thread.cpu_context) == THREAD_CPU_CONTEXT, "THREAD_CPU_CONTEXT");
_Static_assert(offsetof(struct task_struct, stack) == TSK_STACK, "TSK_STACK");
