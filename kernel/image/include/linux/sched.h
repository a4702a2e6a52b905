/* SPDX-License-Identifier: MIT */
/* Tasks, as include/linux/sched.h (the part kpemu's workload needs). */
#ifndef _LINUX_SCHED_H
#define _LINUX_SCHED_H

#include <linux/types.h>
#include <linux/list.h>
#include <linux/wait.h>
#include <asm/smp.h>
#include <asm/asm-offsets.h>

/*
 * A kernel stack and its guard below it; see THREAD_ALIGN. __stack puts
 * one in .bss..stack, which head.S does not clear (kpemu.lds).
 */
#define __stack		__section(".bss..stack")
struct thread_stack {
	unsigned long guard[THREAD_SIZE / sizeof(unsigned long)];
	unsigned long stack[THREAD_SIZE / sizeof(unsigned long)];
} __aligned(THREAD_ALIGN);

/* The boot stack, swapper/0's (init/main.c). */
extern struct thread_stack init_thread_union;
#define init_stack	(init_thread_union.stack)

#define TASK_COMM_LEN		16

/*
 * Scheduling policies (include/uapi/linux/sched.h) and priorities
 * (include/linux/sched/prio.h): prio below MAX_RT_PRIO is a real-time
 * task's, which runs before every other and is not time-sliced.
 */
#define SCHED_NORMAL		0
#define SCHED_FIFO		1
#define SCHED_RR		2
#define MAX_RT_PRIO		100
#define DEFAULT_PRIO		120
#define rt_prio(prio)		((prio) < MAX_RT_PRIO)
#define rt_task(p)		rt_prio((p)->prio)

/* Used in tsk->__state: */
#define TASK_RUNNING		0x00000000
#define TASK_INTERRUPTIBLE	0x00000001
#define TASK_UNINTERRUPTIBLE	0x00000002
#define EXIT_DEAD		0x00000010
#define EXIT_ZOMBIE		0x00000020
#define TASK_DEAD		0x00000080
#define TASK_NEW		0x00000800
#define TASK_NORMAL		(TASK_INTERRUPTIBLE | TASK_UNINTERRUPTIBLE)

/* Clone flags, include/uapi/linux/sched.h */
#define CSIGNAL			0x000000ff
#define CLONE_VM		0x00000100
#define CLONE_FS		0x00000200
#define CLONE_FILES		0x00000400
#define CLONE_SIGHAND		0x00000800
#define CLONE_PIDFD		0x00001000
#define CLONE_VFORK		0x00004000
#define CLONE_PARENT		0x00008000
#define CLONE_THREAD		0x00010000
#define CLONE_PARENT_SETTID	0x00100000
#define CLONE_CHILD_CLEARTID	0x00200000
#define CLONE_CHILD_SETTID	0x01000000
#define CLONE_UNTRACED		0x00800000

#define PF_KTHREAD		0x00200000
#define PF_EXITING		0x00000004
#define PF_NO_SETAFFINITY	0x04000000	/* kthread_bind(): stays on its CPU */

#define PID_MAX_DEFAULT		0x8000
#define PID_MAX_LIMIT		(4 * 1024 * 1024)	/* threads.h, 64-bit */
#define RESERVED_PIDS		300

struct task_io_accounting {
	u64 rchar;	/* bytes read */
	u64 wchar;	/* bytes written */
	u64 syscr;	/* read syscalls */
	u64 syscw;	/* write syscalls */
};

/* thread_info flags (asm/thread_info.h) */
#define TIF_NEED_RESCHED	1
#define TIF_SINGLESTEP		21	/* step the task's next EL0 instruction (uprobes) */
#define _TIF_NEED_RESCHED	(1UL << TIF_NEED_RESCHED)
#define _TIF_SINGLESTEP		(1UL << TIF_SINGLESTEP)

/*
 * As arm64 with CONFIG_THREAD_INFO_IN_TASK: thread_info first in the
 * task, and sp_el0 holds current while the kernel runs (on SP_EL1).
 */
struct thread_info {
	unsigned long		flags;		/* low level flags */
	int			preempt_count;	/* 0 => preemptible */
	int			cpu;		/* the CPU whose run queue holds the task */
};

/* The callee-saved registers cpu_switch_to() keeps (asm/processor.h). */
struct cpu_context {
	unsigned long x19;
	unsigned long x20;
	unsigned long x21;
	unsigned long x22;
	unsigned long x23;
	unsigned long x24;
	unsigned long x25;
	unsigned long x26;
	unsigned long x27;
	unsigned long x28;
	unsigned long fp;
	unsigned long sp;
	unsigned long pc;
};

struct thread_struct {
	struct cpu_context	cpu_context;
};

struct task_struct {
	struct thread_info		thread_info;
	struct thread_struct		thread;		/* TSK_THREAD_CPU_CONTEXT */
	void				*stack;		/* kernel stack, THREAD_SIZE bytes */
	int				on_cpu;		/* running, or switching away */
	unsigned int			__state;
	unsigned int			flags;
	int				prio;
	int				exit_state;
	int				exit_code;
	int				exit_signal;
	pid_t				pid;
	pid_t				tgid;
	struct task_struct		*real_parent;
	struct task_struct		*parent;
	struct list_head		children;	/* my children */
	struct list_head		sibling;	/* linkage in my parent's children list */
	struct list_head		tasks;		/* all tasks, from init_task */
	struct list_head		run_list;	/* runqueue linkage */
	int				on_rq;
	u64				start_time;
	u64				nvcsw, nivcsw;
	wait_queue_head_t		wait_chldexit;	/* for wait(): a child exited */
	int				*set_child_tid;
	int				*clear_child_tid;
	struct task_io_accounting	ioac;
	struct mm_struct		*mm;		/* user address space; NULL for kernel threads */
	struct files_struct		*files;		/* open files; NULL for kernel threads */
	char				comm[TASK_COMM_LEN];
	/* drivers/char/kpemu_shadow.c: a /bin/shadowd task, the replayer or a
	 * host process's twin (inherited by fork), and the seq of the exit
	 * request that this twin answers once it is gone */
	int				shadow;
	u64				shadow_exit_seq;
	/* a twin's kill(2): the errno that the host's call answers */
	int				shadow_kill_errno;
	/* kernel/signal.c: a fatal signal sent to this task, taken on its
	 * way back to user space (0: none) */
	int				pending_sig;
	/* Linux: struct llist_head kretprobe_instances, the returns this
	 * task owes its kretprobes. The host keeps the instances; it keeps
	 * here how many (kprobes/kretprobe.go), so that kprobe_flush_task
	 * traps to it only for a task that has some. */
	unsigned long			kretprobe_instances;
};

struct mm_struct;
struct files_struct;
struct pt_regs;

/* The user registers of a task: the frame at the top of its kernel stack. */
#define task_pt_regs(p)	\
	((struct pt_regs *)((unsigned long)(p)->stack + THREAD_SIZE) - 1)
#define current_pt_regs()	task_pt_regs(current)

/* Per-CPU current, for the entry from EL0 (Linux: __entry_task). */
extern struct task_struct *__entry_task[NR_CPUS];

extern u64 nr_execs;		/* successful execve()s */
extern u64 nr_exits;		/* do_exit() calls */
extern u64 nr_segv_kills;	/* user tasks killed by a fault (SIGSEGV) */

struct kernel_clone_args {
	u64 flags;
	int *pidfd;
	int *child_tid;
	int *parent_tid;
	int exit_signal;
	unsigned long stack;
	unsigned long stack_size;
	unsigned long tls;
	pid_t *set_tid;
	size_t set_tid_size;
	int kthread;
	int idle;
	int (*fn)(void *);
	void *fn_arg;
};

/*
 * struct rq: a CPU's run queue (kernel/sched/sched.h). queue holds the
 * runnable tasks other than curr, in round-robin order; the idle task is
 * never on it. nr_running counts runnable tasks, curr included.
 */
struct rq {
	raw_spinlock_t lock;
	unsigned int nr_running;
	int cpu;
	u64 nr_switches;
	struct task_struct *curr;
	struct task_struct *idle;
	struct list_head queue;
};

/*
 * The run queue lock, as kernel/sched/sched.h: out of line in core.c
 * (raw_spin_rq_lock_nested, raw_spin_rq_unlock), IRQs masked around it
 * by the inline _irqsave forms.
 */
void raw_spin_rq_lock_nested(struct rq *rq, int subclass);
void raw_spin_rq_unlock(struct rq *rq);

static inline void raw_spin_rq_lock(struct rq *rq)
{
	raw_spin_rq_lock_nested(rq, 0);
}

static inline unsigned long _raw_spin_rq_lock_irqsave(struct rq *rq)
{
	unsigned long flags;

	local_irq_save(flags);
	raw_spin_rq_lock(rq);
	return flags;
}

static inline void raw_spin_rq_unlock_irqrestore(struct rq *rq, unsigned long flags)
{
	raw_spin_rq_unlock(rq);
	local_irq_restore(flags);
}

#define raw_spin_rq_lock_irqsave(rq, flags)	\
	do {					\
		flags = _raw_spin_rq_lock_irqsave(rq);	\
	} while (0)

extern struct rq runqueues[NR_CPUS];
#define cpu_rq(cpu)		(&runqueues[(cpu)])

extern struct task_struct init_task;

/* current is in sp_el0 (arch/arm64/include/asm/current.h). */
static __always_inline struct task_struct *get_current(void)
{
	unsigned long sp_el0;

	asm ("mrs %0, sp_el0" : "=r" (sp_el0));
	return (struct task_struct *)sp_el0;
}
#define current get_current()

#define task_thread_info(t)	(&(t)->thread_info)
#define current_thread_info()	task_thread_info(current)
/* atomic, as another CPU may set TIF_NEED_RESCHED meanwhile */
#define set_ti_thread_flag(ti, f)	__atomic_fetch_or(&(ti)->flags, 1UL << (f), __ATOMIC_RELAXED)
#define clear_ti_thread_flag(ti, f)	__atomic_fetch_and(&(ti)->flags, ~(1UL << (f)), __ATOMIC_RELAXED)
#define test_thread_flag(f)		((READ_ONCE(current_thread_info()->flags) >> (f)) & 1)
#define task_cpu(p)		((p)->thread_info.cpu)
#define preempt_count()		(READ_ONCE(current_thread_info()->preempt_count))

static inline int test_tsk_need_resched(struct task_struct *tsk)
{
	return (READ_ONCE(tsk->thread_info.flags) & _TIF_NEED_RESCHED) != 0;
}
static inline void set_tsk_need_resched(struct task_struct *tsk)
{
	WRITE_ONCE(tsk->thread_info.flags, tsk->thread_info.flags | _TIF_NEED_RESCHED);
}
static inline void clear_tsk_need_resched(struct task_struct *tsk)
{
	WRITE_ONCE(tsk->thread_info.flags, tsk->thread_info.flags & ~_TIF_NEED_RESCHED);
}
#define need_resched()		test_tsk_need_resched(current)

#define __set_current_state(state_value)				\
	WRITE_ONCE(current->__state, (state_value))
#define set_current_state(state_value)					\
	do {								\
		WRITE_ONCE(current->__state, (state_value));		\
		asm volatile("dmb ish" : : : "memory");			\
	} while (0)

/* Per-CPU scheduler statistics the host reads by symbol, u64 [NR_CPUS]. */
extern u64 nr_context_switches[NR_CPUS];
extern u64 sched_ticks[NR_CPUS];
extern u64 sched_busy_ticks[NR_CPUS];

extern int nr_threads;
extern unsigned long total_forks;
extern u64 nr_forks;

void fork_init(void);
void sched_init(void);
void pid_init(void);
pid_t alloc_pid(pid_t set_tid);
void pid_leave_to_host(int host_pid_max);
void free_pid(pid_t nr);
struct task_struct *find_task_by_pid_ns(pid_t nr);
pid_t kernel_clone(struct kernel_clone_args *args);
long do_fork(unsigned long clone_flags, unsigned long stack_start,
	     unsigned long stack_size, int *parent_tidptr, int *child_tidptr);
pid_t user_mode_thread(int (*fn)(void *), void *arg, unsigned long flags);
void wake_up_new_task(struct task_struct *p);
void release_task(struct task_struct *p);
void __set_task_comm(struct task_struct *tsk, const char *from, bool exec);
void exit_notify(struct task_struct *tsk, int code);
void schedule_tail(struct task_struct *prev);

asmlinkage void schedule(void);
asmlinkage void preempt_schedule_irq(void);
void scheduler_tick(void);
int wake_up_process(struct task_struct *p);
int try_to_wake_up(struct task_struct *p, unsigned int state, int wake_flags);
void resched_curr(struct rq *rq);
void init_idle(struct task_struct *idle, int cpu);
__noreturn void cpu_startup_entry(void);
__noreturn void do_exit(long code);
void deliver_pending_signal(void);	/* kernel/signal.c */
pid_t kernel_thread(int (*fn)(void *), void *arg, const char *name,
		    unsigned long flags);
struct task_struct *cpu_switch_to(struct task_struct *prev,
				  struct task_struct *next);
void ret_from_fork(void);
bool task_reapable(struct task_struct *p);
extern raw_spinlock_t tasklist_lock;
int kernel_execve(const char *filename, const char *const *argv);
void exit_to_user_mode(struct pt_regs *regs);

#endif /* _LINUX_SCHED_H */
