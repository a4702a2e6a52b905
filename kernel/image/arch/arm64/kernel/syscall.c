// SPDX-License-Identifier: MIT
/*
 * System calls, as Linux 6.1 arch/arm64/kernel/syscall.c and sys.c:
 * el0_svc() -> do_el0_svc() -> el0_svc_common() -> invoke_syscall(),
 * which calls sys_call_table[x8](regs), a __arm64_sys_<name> wrapper
 * that takes its arguments from x0..x5, and puts the result in x0.
 * Numbers are arm64's (include/uapi/asm-generic/unistd.h).
 *
 * syscall_counts[nr] counts every call by number (the host reads it);
 * an unknown number returns -ENOSYS and counts nowhere.
 */
#include <linux/kernel.h>
#include <linux/sched.h>
#include <asm/ptrace.h>
#include <asm/unistd.h>

typedef long (*syscall_fn_t)(const struct pt_regs *regs);

#define __SYSCALL(nr, sym)	long sym(const struct pt_regs *);
#include <asm/syscall_table.h>
#undef __SYSCALL

/* kernel/sys_ni.c: what a system call that is not there does */
long sys_ni_syscall(void)
{
	return -ENOSYS;
}

long __arm64_sys_ni_syscall(const struct pt_regs *regs)
{
	return sys_ni_syscall();
}

#define __SYSCALL(nr, sym)	[nr] = sym,
const syscall_fn_t sys_call_table[__NR_syscalls] = {
	[0 ... __NR_syscalls - 1] = __arm64_sys_ni_syscall,
#include <asm/syscall_table.h>
};
#undef __SYSCALL

u64 syscall_counts[__NR_syscalls];

static void invoke_syscall(struct pt_regs *regs, unsigned int scno,
			   unsigned int sc_nr, const syscall_fn_t syscall_table[])
{
	long ret;

	if (scno < sc_nr) {
		__atomic_add_fetch(&syscall_counts[scno], 1, __ATOMIC_RELAXED);
		ret = syscall_table[scno](regs);
	} else {
		ret = __arm64_sys_ni_syscall(regs);
	}
	regs->regs[0] = ret;
}

static void el0_svc_common(struct pt_regs *regs, int scno, int sc_nr,
			   const syscall_fn_t syscall_table[])
{
	regs->orig_x0 = regs->regs[0];
	regs->syscallno = scno;
	invoke_syscall(regs, scno, sc_nr, syscall_table);
}

void do_el0_svc(struct pt_regs *regs)
{
	el0_svc_common(regs, regs->regs[8], __NR_syscalls, sys_call_table);
}

/* kernel/sys.c */
long __arm64_sys_getpid(const struct pt_regs *regs)
{
	return current->tgid;
}

long __arm64_sys_getppid(const struct pt_regs *regs)
{
	return current->real_parent->tgid;
}

/* kernel/sched/core.c: do_sched_yield() */
long __arm64_sys_sched_yield(const struct pt_regs *regs)
{
	schedule();
	return 0;
}
