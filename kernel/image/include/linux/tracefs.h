/* SPDX-License-Identifier: MIT */
/*
 * tracefs, as include/linux/tracefs.h: the directories of the tracing tree
 * (fs/tracefs/inode.c), and the queue through which kpemu's host keeps
 * them in step with the tree it serves (kernel/trace/trace_events.c).
 */
#ifndef _LINUX_TRACEFS_H
#define _LINUX_TRACEFS_H

#include <linux/types.h>

struct dentry;

struct dentry *tracefs_create_dir(const char *name, struct dentry *parent);
void tracefs_remove(struct dentry *dentry);
struct dentry *tracefs_lookup(const char *path);
void tracefs_init(void);

/*
 * The host's requests: a ring that the host fills (with every vCPU
 * stopped) at head and the workload drains at tail, reporting the new
 * tail with HC_TRACEFS_DONE. Mirrored by kernel/tracefs.go.
 */
#define TRACEFS_REQ_MKDIR	1	/* path: a new directory */
#define TRACEFS_REQ_REMOVE	2	/* path: a directory and all below it */
#define TRACEFS_RING_SIZE	64
#define TRACEFS_PATH_MAX	160	/* "events/" GROUP "/" EVENT, each <= 64 */

struct tracefs_req {
	u64	op;
	char	path[TRACEFS_PATH_MAX];	/* relative to the tracefs root */
};

struct tracefs_ring {
	u64			head;	/* written by the host */
	u64			tail;	/* written by the guest */
	struct tracefs_req	req[TRACEFS_RING_SIZE];
};

extern struct tracefs_ring tracefs_requests;
void trace_mirror_poll(void);
void event_trace_init(void);

#endif /* _LINUX_TRACEFS_H */
