/* SPDX-License-Identifier: MIT */
/*
 * The kmem tracepoints kpemu's slab has, as Linux 6.1's
 * include/trace/events/kmem.h: kmalloc (6.1's, with node) and kfree.
 */
#ifndef _TRACE_EVENTS_KMEM_H
#define _TRACE_EVENTS_KMEM_H

#include <linux/tracepoint.h>

#define NUMA_NO_NODE	(-1)

struct trace_event_raw_kmalloc {
	struct trace_entry	ent;
	unsigned long		call_site;
	const void		*ptr;
	size_t			bytes_req;
	size_t			bytes_alloc;
	unsigned long		gfp_flags;
	int			node;
};

struct trace_event_raw_kfree {
	struct trace_entry	ent;
	unsigned long		call_site;
	const void		*ptr;
};

DECLARE_TRACE(kmalloc,
	TP_PROTO(unsigned long call_site, const void *ptr, size_t bytes_req,
		 size_t bytes_alloc, gfp_t gfp_flags, int node),
	TP_ARGS(call_site, ptr, bytes_req, bytes_alloc, gfp_flags, node))
DECLARE_TRACE(kfree,
	TP_PROTO(unsigned long call_site, const void *ptr),
	TP_ARGS(call_site, ptr))

#endif
