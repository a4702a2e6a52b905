/* SPDX-License-Identifier: MIT */
/*
 * Tracepoints, as include/linux/tracepoint.h: trace_<name>(args) is a
 * static branch on the tracepoint's key (linux/jump_label.h), off until
 * an event on it is enabled (or armed by a trigger), and when on a call
 * of __traceiter_<name>(args) (kernel/trace/trace_events_sched.c and
 * friends). Linux there calls the probes registered on the tracepoint,
 * which for a TRACE_EVENT fill the event's record in the ring buffer
 * (TP_fast_assign). kpemu's tracing is in the host, so the iterator
 * fills the record on its stack, as TP_fast_assign would, and hands
 * it to the host with HC_TRACEPOINT (trace_event_hostcall); the host
 * filters it, runs the triggers and writes it to the ring buffer.
 *
 * A tracepoint is found by the host by its symbol, __tracepoint_<name>
 * in section __tracepoints, and its key by the __jump_table entries that
 * point into it.
 */
#ifndef _LINUX_TRACEPOINT_H
#define _LINUX_TRACEPOINT_H

#include <linux/jump_label.h>

struct tracepoint {
	const char *name;
	struct static_key key;
};

/* The common head of every record (struct trace_entry): the host fills it. */
struct trace_entry {
	unsigned short	type;
	unsigned char	flags;
	unsigned char	preempt_count;
	int		pid;
};

#define PARAMS(args...)	args
#define TP_PROTO(args...)	args
#define TP_ARGS(args...)	args

#define DECLARE_TRACE(name, proto, args)				\
	extern struct tracepoint __tracepoint_##name;			\
	void __traceiter_##name(proto);					\
	static __always_inline void trace_##name(proto)			\
	{								\
		if (static_branch_unlikely(&__tracepoint_##name.key))	\
			__traceiter_##name(args);			\
	}

#define DEFINE_TRACE(tp)						\
	struct tracepoint __tracepoint_##tp				\
		__attribute__((__section__("__tracepoints"), __used__)) = \
		{ .name = #tp }

/* Hands a filled record (its struct trace_entry first) to the host. */
void trace_event_hostcall(struct tracepoint *tp, void *entry, unsigned long size);

#endif
