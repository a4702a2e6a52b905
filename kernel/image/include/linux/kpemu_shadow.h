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

#define SHADOW_OP_FORK		1	/* fork(), the child exits at once */
#define SHADOW_OP_OPEN		2	/* openat(AT_FDCWD, path, flags, mode), then close */
#define SHADOW_OP_SYMLINK	3	/* symlink(target, path) */
#define SHADOW_OP_MKDIR		4	/* mkdir(path, mode) */
#define SHADOW_OP_UNLINK	5	/* unlinkat(AT_FDCWD, path, flags) */

#define SHADOW_RING_SIZE	16
#define SHADOW_PATH_MAX		256
#define SHADOW_COMM_LEN		16

struct shadow_req {
	u64	seq;			/* the host's number, written back when done */
	u32	op;
	u32	flags;
	u32	mode;
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

extern struct shadow_ring shadow_requests;
void kpemu_shadow_init(void);

#endif /* _LINUX_KPEMU_SHADOW_H */
