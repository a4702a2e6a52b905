/* SPDX-License-Identifier: MIT */
/*
 * kpemu's shadow requests: the system calls of host processes that kpemu
 * shadows (kpemu run --shadow-socket), which this kernel replays before the
 * host's call goes on, so that probes see them (drivers/char/kpemu_shadow.c).
 * The host fills the ring at head with every vCPU stopped and rings the
 * doorbell; /dev/kpemu-shadow's reader takes requests at tail. Mirrored by
 * kernel/shadow.go and usr/shadowd.c: change them together.
 */
#ifndef _LINUX_KPEMU_SHADOW_H
#define _LINUX_KPEMU_SHADOW_H

#include <linux/types.h>

/*
 * Each host process has a twin here, a task with the host process's pid
 * (clone3's set_tid) that replays the process's calls: pid names the twin
 * that takes a request. Where there is no such twin (the pid was taken
 * here, which pid_leave_to_host() makes rare), the first reader,
 * /bin/shadowd itself, takes it and replays it under the host process's
 * comm.
 */
#define SHADOW_OP_FORK		1	/* clone3() with set_tid = child: child's twin */
#define SHADOW_OP_OPEN		2	/* openat(AT_FDCWD, path, flags, mode), then close */
#define SHADOW_OP_SYMLINK	3	/* symlink(target, path) */
#define SHADOW_OP_MKDIR		4	/* mkdir(path, mode) */
#define SHADOW_OP_UNLINK	5	/* unlinkat(AT_FDCWD, path, flags) */
#define SHADOW_OP_ADOPT	6	/* a twin for child, a process kpemu began to shadow */
#define SHADOW_OP_EXIT		7	/* the twin exits, flags its wait status */
#define SHADOW_OP_KILL		8	/* kill(child, flags), answering -mode: the host's errno */

#define SHADOW_RING_SIZE	16
#define SHADOW_PATH_MAX		256
#define SHADOW_COMM_LEN		16

struct shadow_req {
	u64	seq;			/* the host's number, written back when done */
	u32	op;
	u32	flags;
	u32	mode;
	s32	pid;			/* the host process: its twin replays */
	s32	child;			/* FORK, ADOPT: the new twin's pid, or 0 */
	u32	reserved;
	char	comm[SHADOW_COMM_LEN];	/* the host process's comm */
	char	path[SHADOW_PATH_MAX];
	char	target[SHADOW_PATH_MAX];
};

struct shadow_ring {
	u64			head;	/* written by the host */
	u64			tail;	/* written by the guest */
	struct shadow_req	req[SHADOW_RING_SIZE];
};

struct task_struct;

extern struct shadow_ring shadow_requests;
void kpemu_shadow_init(void);
void kpemu_shadow_exit(struct task_struct *tsk);

#endif /* _LINUX_KPEMU_SHADOW_H */
