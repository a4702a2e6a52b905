// SPDX-License-Identifier: MIT
/*
 * The initial task, as init/init_task.c: pid 0, "swapper/0", the boot
 * CPU's idle task; head.S puts it in sp_el0 (current) and its stack is
 * init_stack.
 */
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
	.stack		= init_stack,
	.on_cpu		= 1,
	.wait_chldexit	= __WAIT_QUEUE_HEAD_INITIALIZER(init_task.wait_chldexit),
};
