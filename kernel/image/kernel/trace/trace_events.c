// SPDX-License-Identifier: MIT
/*
 * The tracing tree's directories, after kernel/trace/trace_events.c:
 * events/ at boot (event_trace_init), then events/GROUP/ and
 * events/GROUP/EVENT/ as events come and go (event_create_dir,
 * remove_event_file_dir). Events are made by kpemu's host, which serves
 * tracefs; it queues each change in tracefs_requests, and the workload
 * applies them in order (trace_mirror_poll, once per iteration), calling
 * tracefs_create_dir()/tracefs_remove() as Linux's writer of kprobe_events
 * does, then tells the host with HC_TRACEFS_DONE how far it got, so that
 * the host's write returns only after the guest made the call.
 */
#include <linux/kernel.h>
#include <linux/fs.h>
#include <linux/string.h>
#include <linux/tracefs.h>
#include <asm/hostcall.h>

struct tracefs_ring tracefs_requests;

static void apply(const struct tracefs_req *req)
{
	char path[TRACEFS_PATH_MAX];
	struct dentry *parent, *d;
	char *slash, *name;

	memcpy(path, req->path, sizeof(path));
	path[sizeof(path) - 1] = 0;
	switch (req->op) {
	case TRACEFS_REQ_MKDIR:
		slash = strrchr(path, '/');
		if (slash) {
			*slash = 0;
			name = slash + 1;
			parent = tracefs_lookup(path);
			if (!parent)
				return;
		} else {
			name = path;
			parent = NULL;
		}
		tracefs_create_dir(name, parent);
		dput(parent);
		break;
	case TRACEFS_REQ_REMOVE:
		d = tracefs_lookup(path);
		tracefs_remove(d);
		dput(d);
		break;
	}
}

void trace_mirror_poll(void)
{
	u64 tail = tracefs_requests.tail, head = READ_ONCE(tracefs_requests.head);

	if (likely(tail == head))
		return;
	asm volatile("dmb ishld" : : : "memory");	/* the requests before head */
	for (; tail != head; tail++)
		apply(&tracefs_requests.req[tail % TRACEFS_RING_SIZE]);
	asm volatile("dmb ish" : : : "memory");
	WRITE_ONCE(tracefs_requests.tail, tail);
	HOSTCALL2(HC_TRACEFS_DONE, tail, 0);
}

void event_trace_init(void)
{
	tracefs_init();
	if (!tracefs_create_dir("events", NULL))
		panic("tracefs: cannot make events/");
}
