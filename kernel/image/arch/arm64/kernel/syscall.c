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
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <asm/ptrace.h>
#include <asm/unistd.h>
#include <trace/events/syscalls.h>

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

/*
 * arch/arm64/kernel/ptrace.c's syscall_trace_enter() and
 * syscall_trace_exit(), for their tracepoints alone (Linux calls them
 * when the task has TIF_SYSCALL_TRACEPOINT; here the tracepoints' static
 * keys decide). exit and exit_group never get to the exit.
 */
static void syscall_trace_enter(struct pt_regs *regs)
{
	trace_sys_enter(regs, regs->syscallno);
}

static void syscall_trace_exit(struct pt_regs *regs)
{
	trace_sys_exit(regs, regs->regs[0]);
}

static void el0_svc_common(struct pt_regs *regs, int scno, int sc_nr,
			   const syscall_fn_t syscall_table[])
{
	regs->orig_x0 = regs->regs[0];
	regs->syscallno = scno;
	syscall_trace_enter(regs);
	invoke_syscall(regs, scno, sc_nr, syscall_table);
	syscall_trace_exit(regs);
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

/* kernel/sys.c: prctl(), PR_SET_NAME and PR_GET_NAME only */
#define PR_SET_NAME	15
#define PR_GET_NAME	16

long __arm64_sys_prctl(const struct pt_regs *regs)
{
	char comm[TASK_COMM_LEN];

	switch (regs->regs[0]) {
	case PR_SET_NAME:
		comm[sizeof(comm) - 1] = 0;
		if (strncpy_from_user(comm, (const char *)regs->regs[1], sizeof(comm) - 1) < 0)
			return -EFAULT;
		__set_task_comm(current, comm, false);
		return 0;
	case PR_GET_NAME:
		memcpy(comm, current->comm, sizeof(comm));
		if (copy_to_user((char *)regs->regs[1], comm, sizeof(comm)))
			return -EFAULT;
		return 0;
	}
	return -EINVAL;
}

/*
 * kernel/sched/core.c: sched_setscheduler(pid, policy, param), which sets
 * the priority only: SCHED_FIFO and SCHED_RR (priority 1..99) make a
 * real-time task, SCHED_NORMAL (priority 0) an ordinary one.
 */
long __arm64_sys_sched_setscheduler(const struct pt_regs *regs)
{
	pid_t pid = regs->regs[0];
	int policy = regs->regs[1], prio;
	struct task_struct *p = pid ? find_task_by_pid_ns(pid) : current;

	if (pid < 0 || !regs->regs[2])
		return -EINVAL;
	if (!p)
		return -ESRCH;
	if (copy_from_user(&prio, (const void *)regs->regs[2], sizeof(prio)))
		return -EFAULT;
	switch (policy) {
	case SCHED_FIFO:
	case SCHED_RR:
		if (prio < 1 || prio > MAX_RT_PRIO - 1)
			return -EINVAL;
		WRITE_ONCE(p->prio, MAX_RT_PRIO - 1 - prio);
		return 0;
	case SCHED_NORMAL:
		if (prio)
			return -EINVAL;
		WRITE_ONCE(p->prio, DEFAULT_PRIO);
		return 0;
	}
	return -EINVAL;
}

/* kernel/sched/core.c: do_sched_yield() */
long __arm64_sys_sched_yield(const struct pt_regs *regs)
{
	schedule();
	return 0;
}
