// SPDX-License-Identifier: MIT
/*
 * The tracing tree's directories, after kernel/trace/trace_events.c:
 * events/ at boot (event_trace_init), then events/GROUP/ and
 * events/GROUP/EVENT/ as events come and go (event_create_dir,
 * remove_event_file_dir). Events are made by kpemu's host, which serves
 * tracefs; it queues each change in tracefs_requests, and the workload
 * applies them in order (trace_mirror_poll, once per iteration), calling
 * tracefs_create_dir()/tracefs_remove() as Linux's writer of kprobe_events
 * does, then tells the host with HC_TRACEFS_DONE how far it got: the host
 * refills the ring from its backlog then, and a read of trace or
 * kprobe_profile waits for the calls of the writes before it.
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

/* The static events (TRACE_EVENT), by system: kernel/trace/tracepoints.c. */
extern const struct trace_event_name {
	const char *system, *name;
} trace_event_names[];
extern const unsigned int nr_trace_event_names;

/*
 * event_trace_init: events/, and events/SYSTEM/EVENT/ for every static
 * event, as Linux makes them at boot; the host serves their files and
 * queues only the dynamic events' directories.
 */
void event_trace_init(void)
{
	struct dentry *events, *sys, *d;
	char path[TRACEFS_PATH_MAX];
	unsigned int i;

	tracefs_init();
	events = tracefs_create_dir("events", NULL);
	if (!events)
		panic("tracefs: cannot make events/");
	for (i = 0; i < nr_trace_event_names; i++) {
		const struct trace_event_name *e = &trace_event_names[i];

		/* a lookup's dentry is referenced; tracefs_create_dir's is not */
		snprintf(path, sizeof(path), "events/%s", e->system);
		sys = tracefs_lookup(path);
		d = sys ? tracefs_create_dir(e->name, sys) : NULL;
		dput(sys);
		if (!sys) {
			sys = tracefs_create_dir(e->system, events);
			d = sys ? tracefs_create_dir(e->name, sys) : NULL;
		}
		if (!d)
			panic("tracefs: cannot make events/%s/%s", e->system, e->name);
	}
}
