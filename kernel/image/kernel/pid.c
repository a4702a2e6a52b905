// SPDX-License-Identifier: MIT
/*
 * Process ids, after kernel/pid.c: allocated cyclically from last_pid + 1,
 * wrapping to RESERVED_PIDS past pid_max, skipping ids still in use, or
 * the one id that clone3()'s set_tid asks for (which, as Linux's
 * idr_alloc() of one id, leaves the cycle where it was).
 *
 * When kpemu mirrors host processes here (their twins take the host's
 * pids through set_tid: drivers/char/kpemu_shadow.c), this kernel's own
 * tasks keep out of the host's pids, so that no host process finds its
 * pid taken: pid_leave_to_host().
 */
#include <linux/kernel.h>
#include <linux/sched.h>

int pid_max = PID_MAX_DEFAULT;
static pid_t last_pid;
static pid_t pid_wrap = RESERVED_PIDS;	/* where the cycle starts again past pid_max */

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
			nr = pid_wrap;
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

/*
 * The host's processes take the pids below host_pid_max (the host's
 * pid_max). Every one of them may need a twin, so pid_max goes to the
 * 64-bit limit, as a systemd box sets it; and this kernel's own tasks,
 * from now on, cycle above the host's pids, where the host never reaches.
 * A host that already uses (nearly) the whole range leaves no room above:
 * its pids and these share it, as before, and a twin finds its pid taken
 * only if the cycles meet (the guest's goes round 4 million pids).
 */
void pid_leave_to_host(int host_pid_max)
{
	pid_max = PID_MAX_LIMIT;
	if (host_pid_max < RESERVED_PIDS || host_pid_max > PID_MAX_LIMIT - PID_MAX_DEFAULT)
		return;
	pid_wrap = host_pid_max;
	if (last_pid < host_pid_max - 1)
		last_pid = host_pid_max - 1;
}
