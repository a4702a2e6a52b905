// SPDX-License-Identifier: MIT
/*
 * Process ids, after kernel/pid.c: allocated cyclically from last_pid + 1,
 * wrapping to RESERVED_PIDS past pid_max, skipping ids still in use, or
 * the one id that clone3()'s set_tid asks for (which, as Linux's
 * idr_alloc() of one id, leaves the cycle where it was).
 */
#include <linux/kernel.h>
#include <linux/sched.h>

int pid_max = PID_MAX_DEFAULT;
static pid_t last_pid;

struct task_struct *find_task_by_pid_ns(pid_t nr)
{
	struct task_struct *p;

	if (nr == 0)
		return &init_task;
	list_for_each_entry(p, &init_task.tasks, tasks)
		if (p->pid == nr)
			return p;
	return NULL;
}

pid_t alloc_pid(pid_t set_tid)
{
	pid_t nr = last_pid;
	int tries;

	if (set_tid) {
		if (set_tid < 1 || set_tid >= pid_max)
			return -EINVAL;
		return find_task_by_pid_ns(set_tid) ? -EEXIST : set_tid;
	}

	for (tries = 0; tries < pid_max; tries++) {
		nr++;
		if (nr >= pid_max)
			nr = RESERVED_PIDS;
		if (!find_task_by_pid_ns(nr)) {
			last_pid = nr;
			return nr;
		}
	}
	return -EAGAIN;
}

void free_pid(pid_t nr)
{
	/* pids are found by walking the task list: nothing to release */
}
