// SPDX-License-Identifier: MIT
/* The initial task, as init/init_task.c: pid 0, "swapper/0". */
#include <linux/sched.h>

struct task_struct init_task = {
	.__state	= TASK_RUNNING,
	.flags		= PF_KTHREAD,
	.prio		= 120,
	.exit_signal	= 0,
	.pid		= 0,
	.tgid		= 0,
	.real_parent	= &init_task,
	.parent		= &init_task,
	.children	= LIST_HEAD_INIT(init_task.children),
	.sibling	= LIST_HEAD_INIT(init_task.sibling),
	.tasks		= LIST_HEAD_INIT(init_task.tasks),
	.run_list	= LIST_HEAD_INIT(init_task.run_list),
	.comm		= "swapper/0",
};

/* The task running on the one CPU (Linux: the per-CPU current_task). */
struct task_struct *current_task = &init_task;
