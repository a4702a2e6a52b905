// SPDX-License-Identifier: MIT
/*
 * Process creation, as kernel/fork.c: kernel_clone() -> copy_process()
 * (dup_task_struct(), a new pid, the task and children lists, the new
 * task's first context) -> wake_up_new_task(); do_fork() is the pre-5.10
 * entry point with its old argument list.
 *
 * Task structs and their kernel stacks come from a fixed pool of NR_TASKS
 * (task i has stack i), lowest free slot first. User processes fork and
 * exit on every CPU, so tasklist_lock guards the pool, pids and the task
 * and children lists.
 *
 * A user fork (no fn, current has an mm) copies the address space
 * (copy_mm -> dup_mm: every page, no copy-on-write yet) and the fd table,
 * and the child returns to user space with the parent's registers and
 * x0 = 0. A fork by a kernel thread (the workload's do_fork) makes a
 * child that exits at once, as before user space existed.
 */
#include <linux/kernel.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/uprobes.h>
#include <linux/sched.h>
#include <trace/events/sched.h>
#include <linux/slab.h>
#include <asm/asm-offsets.h>
#include <asm/ptrace.h>
#include <asm/sysreg.h>

int sched_fork(unsigned long clone_flags, struct task_struct *p);

#define NR_TASKS	64	/* the bits of task_pool_used */

static struct task_struct task_struct_pool[NR_TASKS];
static struct thread_stack thread_stack_pool[NR_TASKS] __stack;
static u64 task_pool_used;	/* bit i: task_struct_pool[i] is allocated */

int nr_threads;			/* The idle threads do not count.. */
unsigned long total_forks;	/* Handle normal Linux uptimes. */
u64 nr_forks;			/* kernel_clone() calls that made a task */
DEFINE_RAW_SPINLOCK(tasklist_lock);

static struct task_struct *alloc_task_struct_node(int node)
{
	unsigned long flags;
	int i;

	raw_spin_lock_irqsave(&tasklist_lock, flags);
	for (i = 0; i < NR_TASKS; i++)
		if (!(task_pool_used & (1ULL << i))) {
			task_pool_used |= 1ULL << i;
			raw_spin_unlock_irqrestore(&tasklist_lock, flags);
			return &task_struct_pool[i];
		}
	raw_spin_unlock_irqrestore(&tasklist_lock, flags);
	return NULL;
}

/* Called with tasklist_lock held, or before the task was ever listed. */
void free_task_struct(struct task_struct *tsk)
{
	__atomic_and_fetch(&task_pool_used, ~(1ULL << (tsk - task_struct_pool)),
			   __ATOMIC_RELAXED);
}

static noinline struct task_struct *dup_task_struct(struct task_struct *orig, int node)
{
	struct task_struct *tsk;

	tsk = alloc_task_struct_node(node);
	if (!tsk)
		return NULL;

	*tsk = *orig;
	tsk->stack = thread_stack_pool[tsk - task_struct_pool].stack;
	return tsk;
}

void __set_task_comm(struct task_struct *tsk, const char *buf, bool exec)
{
	strscpy(tsk->comm, buf, sizeof(tsk->comm));
}

/*
 * copy_thread(): the new task's first switch to it lands in ret_from_fork
 * (entry.S) on its own stack, which calls x19(x20) for a thread or exits
 * for a forked child (x19 = 0).
 */
/* What a kernel thread's fork child runs: nothing; it exits with 0. */
static int fork_child_exits(void *unused)
{
	return 0;
}

/* ret_from_fork: a kernel thread's function returned. */
void ret_from_kernel_thread(long ret)
{
	if (current->mm)
		return;		/* it exec'd: on to user space */
	do_exit(ret);
}

static void copy_thread(struct task_struct *p, const struct kernel_clone_args *args)
{
	struct pt_regs *childregs = task_pt_regs(p);

	memset(&p->thread.cpu_context, 0, sizeof(p->thread.cpu_context));
	if (!args->fn && current->mm) {
		*childregs = *current_pt_regs();
		childregs->regs[0] = 0;
		if (args->stack)
			childregs->sp = args->stack;
	} else {
		memset(childregs, 0, sizeof(*childregs));
		p->thread.cpu_context.x19 = (unsigned long)(args->fn ? args->fn : fork_child_exits);
		p->thread.cpu_context.x20 = (unsigned long)args->fn_arg;
	}
	p->thread.cpu_context.pc = (unsigned long)ret_from_fork;
	p->thread.cpu_context.sp = (unsigned long)childregs;
}

static int copy_mm(u64 clone_flags, struct task_struct *p)
{
	struct mm_struct *oldmm = current->mm;

	p->mm = NULL;
	if (!oldmm || p->flags & PF_KTHREAD)
		return 0;
	if (clone_flags & CLONE_VM)
		return -EINVAL;		/* no user threads yet */
	p->mm = dup_mm(oldmm);
	if (!p->mm)
		return -ENOMEM;
	uprobe_copy_process(p, oldmm);
	return 0;
}

static int copy_files(u64 clone_flags, struct task_struct *p)
{
	p->files = NULL;
	if (!current->files || p->flags & PF_KTHREAD)
		return 0;
	p->files = dup_fd(current->files);
	return p->files ? 0 : -ENOMEM;
}

static noinline struct task_struct *copy_process(int node, struct kernel_clone_args *args)
{
	u64 clone_flags = args->flags;
	struct task_struct *p;
	unsigned long flags;
	pid_t pid;

	if ((clone_flags & (CLONE_THREAD | CLONE_SIGHAND)) == CLONE_THREAD)
		return ERR_PTR(-EINVAL);
	if ((clone_flags & (CLONE_SIGHAND | CLONE_VM)) == CLONE_SIGHAND)
		return ERR_PTR(-EINVAL);
	/* one pid namespace: set_tid names at most the pid in it */
	if (args->set_tid_size > 1)
		return ERR_PTR(-EINVAL);

	p = dup_task_struct(current, node);
	if (!p)
		return ERR_PTR(-ENOMEM);

	p->flags &= ~(PF_KTHREAD | PF_NO_SETAFFINITY);
	if (args->kthread)
		p->flags |= PF_KTHREAD;
	p->set_child_tid = (clone_flags & CLONE_CHILD_SETTID) ? args->child_tid : NULL;
	p->clear_child_tid = (clone_flags & CLONE_CHILD_CLEARTID) ? args->child_tid : NULL;
	memset(&p->ioac, 0, sizeof(p->ioac));
	p->start_time = read_sysreg(cntvct_el0);
	p->exit_state = 0;
	p->exit_code = 0;
	p->pending_sig = 0;	/* a signal pending for the parent is its own */
	p->kretprobe_instances = 0;	/* Linux: kretprobe_instances.first = NULL */
	INIT_LIST_HEAD(&p->children);
	INIT_LIST_HEAD(&p->sibling);
	init_waitqueue_head(&p->wait_chldexit);

	sched_fork(clone_flags, p);
	if (copy_mm(clone_flags, p)) {
		free_task_struct(p);
		return ERR_PTR(-ENOMEM);
	}
	if (copy_files(clone_flags, p)) {
		mmput(p->mm);
		free_task_struct(p);
		return ERR_PTR(-ENOMEM);
	}
	copy_thread(p, args);

	raw_spin_lock_irqsave(&tasklist_lock, flags);
	pid = alloc_pid(args->set_tid_size ? args->set_tid[0] : 0);
	if (pid < 0) {
		raw_spin_unlock_irqrestore(&tasklist_lock, flags);
		if (p->files)
			put_files_struct(p->files);
		mmput(p->mm);
		free_task_struct(p);
		return ERR_PTR(pid);
	}
	p->pid = pid;

	/* CLONE_PARENT re-uses the old parent */
	if (clone_flags & (CLONE_PARENT | CLONE_THREAD)) {
		p->real_parent = current->real_parent;
		p->exit_signal = current->real_parent->exit_signal;
	} else {
		p->real_parent = current;
		p->exit_signal = args->exit_signal;
	}
	p->parent = p->real_parent;
	if (clone_flags & CLONE_THREAD)
		p->tgid = current->tgid;
	else
		p->tgid = p->pid;

	list_add_tail(&p->sibling, &p->real_parent->children);
	list_add_tail(&p->tasks, &init_task.tasks);
	nr_threads++;
	total_forks++;
	raw_spin_unlock_irqrestore(&tasklist_lock, flags);

	return p;
}

/*
 *  Ok, this is the main fork-routine.
 *
 * It copies the process, and if successful kick-starts
 * it and waits for it to finish using the VM if required.
 *
 * args->exit_signal is expected to be checked for sanity by the caller.
 */
noinline pid_t kernel_clone(struct kernel_clone_args *args)
{
	u64 clone_flags = args->flags;
	struct task_struct *p;
	pid_t nr;

	p = copy_process(-1, args);
	if (IS_ERR(p))
		return PTR_ERR(p);

	/*
	 * Do this prior waking up the new thread - the thread pointer
	 * might get invalid after that point, if the thread exits quickly.
	 */
	trace_sched_process_fork(current, p);

	nr = p->pid;

	/* put_user(): a bad pointer is ignored, as Linux ignores it */
	if (clone_flags & CLONE_PARENT_SETTID)
		copy_to_user(args->parent_tid, &nr, sizeof(nr));

	wake_up_new_task(p);
	__atomic_add_fetch(&nr_forks, 1, __ATOMIC_RELAXED);

	return nr;
}

/* Create a user mode thread (init/main.c uses it for pid 1). */
pid_t user_mode_thread(int (*fn)(void *), void *arg, unsigned long flags)
{
	struct kernel_clone_args args = {
		.flags		= ((flags | CLONE_VM | CLONE_UNTRACED) & ~CSIGNAL),
		.exit_signal	= (flags & CSIGNAL),
		.fn		= fn,
		.fn_arg		= arg,
	};

	return kernel_clone(&args);
}

static bool legacy_clone_args_valid(const struct kernel_clone_args *kargs)
{
	/* clone(CLONE_PIDFD) uses parent_tidptr to return a pidfd */
	if ((kargs->flags & CLONE_PIDFD) &&
	    (kargs->flags & CLONE_PARENT_SETTID))
		return false;

	return true;
}

/*
 * The old entry point (Linux <= 5.9), kept: it builds the clone arguments
 * from its register-sized parameters and calls kernel_clone().
 */
long do_fork(unsigned long clone_flags,
	     unsigned long stack_start,
	     unsigned long stack_size,
	     int *parent_tidptr,
	     int *child_tidptr)
{
	struct kernel_clone_args args = {
		.flags		= (clone_flags & ~CSIGNAL),
		.pidfd		= parent_tidptr,
		.child_tid	= child_tidptr,
		.parent_tid	= parent_tidptr,
		.exit_signal	= (clone_flags & CSIGNAL),
		.stack		= stack_start,
		.stack_size	= stack_size,
	};

	if (!legacy_clone_args_valid(&args))
		return -EINVAL;

	return kernel_clone(&args);
}

/*
 * clone(2), arm64's argument order (CONFIG_CLONE_BACKWARDS): flags, newsp,
 * parent_tidptr, tls, child_tidptr.
 */
long __arm64_sys_clone(const struct pt_regs *regs)
{
	struct kernel_clone_args args = {
		.flags		= (regs->regs[0] & ~CSIGNAL),
		.pidfd		= (int *)regs->regs[2],
		.child_tid	= (int *)regs->regs[4],
		.parent_tid	= (int *)regs->regs[2],
		.exit_signal	= (regs->regs[0] & CSIGNAL),
		.stack		= regs->regs[1],
		.tls		= regs->regs[3],
	};

	if (!legacy_clone_args_valid(&args))
		return -EINVAL;
	if (args.flags & (CLONE_PARENT_SETTID | CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID))
		return -EINVAL;	/* no user tid pointers yet */
	return kernel_clone(&args);
}

/* include/uapi/linux/sched.h */
struct clone_args {
	u64 flags;
	u64 pidfd;
	u64 child_tid;
	u64 parent_tid;
	u64 exit_signal;
	u64 stack;
	u64 stack_size;
	u64 tls;
	u64 set_tid;
	u64 set_tid_size;
	u64 cgroup;
};

#define CLONE_ARGS_SIZE_VER0	64	/* sizeof first published struct */
#define MAX_PID_NS_LEVEL	32
#define CLONE_NEWTIME		0x00000080
#define CLONE_DETACHED		0x00400000
#define CLONE_LEGACY_FLAGS	0xffffffffULL
#define CLONE_CLEAR_SIGHAND	0x100000000ULL
#define CLONE_INTO_CGROUP	0x200000000ULL

/*
 * clone3(2), after Linux's copy_clone_args_from_user() and
 * clone3_args_valid(): the checks Linux makes, then what this kernel has
 * (as clone(2): no user tid pointers, no pidfd, no cgroups). set_tid is
 * how /bin/shadowd gives a host process's twin the host's pid.
 */
long __arm64_sys_clone3(const struct pt_regs *regs)
{
	const char *uargs = (const char *)regs->regs[0];
	size_t usize = regs->regs[1], i;
	struct clone_args args = {0};
	pid_t set_tid[1];
	char c;
	struct kernel_clone_args kargs = {0};

	if (usize > PAGE_SIZE)
		return -E2BIG;
	if (usize < CLONE_ARGS_SIZE_VER0)
		return -EINVAL;
	/* copy_struct_from_user(): what this kernel does not know must be 0 */
	for (i = sizeof(args); i < usize; i++) {
		if (copy_from_user(&c, uargs + i, 1))
			return -EFAULT;
		if (c)
			return -E2BIG;
	}
	if (copy_from_user(&args, uargs, usize < sizeof(args) ? usize : sizeof(args)))
		return -EFAULT;
	if (args.set_tid_size > MAX_PID_NS_LEVEL)
		return -EINVAL;
	if (!args.set_tid != !args.set_tid_size)
		return -EINVAL;
	if (args.exit_signal & ~((u64)CSIGNAL))
		return -EINVAL;
	if ((args.flags & CLONE_INTO_CGROUP) && (args.cgroup > 0x7fffffff || usize < 88))
		return -EINVAL;
	/* clone3_args_valid() */
	if (args.flags & ~(CLONE_LEGACY_FLAGS | CLONE_CLEAR_SIGHAND | CLONE_INTO_CGROUP))
		return -EINVAL;
	if (args.flags & (CLONE_DETACHED | (CSIGNAL & ~CLONE_NEWTIME)))
		return -EINVAL;
	if ((args.flags & (CLONE_SIGHAND | CLONE_CLEAR_SIGHAND)) == (CLONE_SIGHAND | CLONE_CLEAR_SIGHAND))
		return -EINVAL;
	if ((args.flags & (CLONE_THREAD | CLONE_PARENT)) && args.exit_signal)
		return -EINVAL;
	if (args.stack ? !args.stack_size : args.stack_size)
		return -EINVAL;
	if (args.flags & (CLONE_PIDFD | CLONE_PARENT_SETTID | CLONE_CHILD_SETTID |
			  CLONE_CHILD_CLEARTID | CLONE_INTO_CGROUP))
		return -EINVAL;	/* not in this kernel */
	if (args.set_tid_size > 1)
		return -EINVAL;	/* one pid namespace */
	if (args.set_tid_size &&
	    copy_from_user(set_tid, (const void *)args.set_tid, sizeof(set_tid)))
		return -EFAULT;

	kargs.flags = args.flags;
	kargs.exit_signal = args.exit_signal;
	/* clone3_stack_valid(): arm64's stack grows down from stack + size */
	kargs.stack = args.stack ? args.stack + args.stack_size : 0;
	kargs.stack_size = args.stack_size;
	kargs.tls = args.tls;
	kargs.set_tid = set_tid;
	kargs.set_tid_size = args.set_tid_size;
	return kernel_clone(&kargs);
}

/* kthread_create()'s half of kernel_clone(): the task, not yet woken. */
struct task_struct *copy_kthread(struct kernel_clone_args *args)
{
	return copy_process(-1, args);
}

void fork_init(void)
{
	init_waitqueue_head(&init_task.wait_chldexit);
}
