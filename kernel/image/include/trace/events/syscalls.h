/* SPDX-License-Identifier: MIT */
/*
 * The raw system call tracepoints, as Linux 6.1's
 * include/trace/events/syscalls.h (raw_syscalls:sys_enter and sys_exit).
 * The syscalls:sys_enter_<name> and sys_exit_<name> events are made from
 * them by the host, as Linux's trace_syscalls.c probes them.
 */
#ifndef _TRACE_EVENTS_SYSCALLS_H
#define _TRACE_EVENTS_SYSCALLS_H

#include <linux/tracepoint.h>

struct pt_regs;

struct trace_event_raw_sys_enter {
	struct trace_entry	ent;
	long			id;
	unsigned long		args[6];
};

struct trace_event_raw_sys_exit {
	struct trace_entry	ent;
	long			id;
	long			ret;
};

DECLARE_TRACE(sys_enter,
	TP_PROTO(struct pt_regs *regs, long id),
	TP_ARGS(regs, id))
DECLARE_TRACE(sys_exit,
	TP_PROTO(struct pt_regs *regs, long ret),
	TP_ARGS(regs, ret))

#endif
