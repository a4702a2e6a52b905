/* SPDX-License-Identifier: MIT */
/* Tasks, as include/linux/sched.h (the part kpemu's workload needs). */
#ifndef _LINUX_SCHED_H
#define _LINUX_SCHED_H

#include <linux/types.h>
#include <linux/list.h>

#define TASK_COMM_LEN		16

/* Used in tsk->__state: */
#define TASK_RUNNING		0x00000000
#define TASK_INTERRUPTIBLE	0x00000001
#define TASK_UNINTERRUPTIBLE	0x00000002
#define EXIT_DEAD		0x00000010
#define EXIT_ZOMBIE		0x00000020
#define TASK_DEAD		0x00000080
#define TASK_NEW		0x00000800

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

#define PID_MAX_DEFAULT		0x8000
#define RESERVED_PIDS		300

struct task_io_accounting {
	u64 rchar;	/* bytes read */
	u64 wchar;	/* bytes written */
	u64 syscr;	/* read syscalls */
	u64 syscw;	/* write syscalls */
};

struct task_struct {
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
	unsigned long			stack;		/* as clone's stack_start */
	int				*set_child_tid;
	int				*clear_child_tid;
	struct task_io_accounting	ioac;
	char				comm[TASK_COMM_LEN];
};

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

/* struct rq: the one runqueue of the one CPU (kernel/sched/sched.h). */
struct rq {
	unsigned int nr_running;
	u64 nr_switches;
	struct list_head queue;
};

extern struct task_struct init_task;
extern struct task_struct *current_task;
#define current (current_task)

extern int nr_threads;
extern unsigned long total_forks;
extern u64 nr_forks;

void fork_init(void);
void sched_init(void);
void pid_init(void);
pid_t alloc_pid(void);
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

#endif /* _LINUX_SCHED_H */
