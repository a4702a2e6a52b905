/* SPDX-License-Identifier: MIT */
/*
 * The sched tracepoints kpemu has, as Linux 6.1's
 * include/trace/events/sched.h: the prototypes, and each event's record
 * (struct trace_event_raw_<class>), laid out as Linux lays it out, so
 * that the offsets and sizes are those the format files show. The host
 * mirrors the layouts (tracing/tracepoint.go); the
 * _Static_asserts in kernel/trace/trace_events_sched.c pin them.
 */
#ifndef _TRACE_EVENTS_SCHED_H
#define _TRACE_EVENTS_SCHED_H

#include <linux/sched.h>
#include <linux/tracepoint.h>

/* sched_process_fork */
struct trace_event_raw_sched_process_fork {
	struct trace_entry	ent;
	char			parent_comm[TASK_COMM_LEN];
	pid_t			parent_pid;
	char			child_comm[TASK_COMM_LEN];
	pid_t			child_pid;
};

/* sched_process_template: sched_process_exit, sched_process_free */
struct trace_event_raw_sched_process_template {
	struct trace_entry	ent;
	char			comm[TASK_COMM_LEN];
	pid_t			pid;
	int			prio;
};

/* sched_wakeup_template: sched_waking, sched_wakeup, sched_wakeup_new */
struct trace_event_raw_sched_wakeup_template {
	struct trace_entry	ent;
	char			comm[TASK_COMM_LEN];
	pid_t			pid;
	int			prio;
	int			target_cpu;
};

/* sched_switch */
struct trace_event_raw_sched_switch {
	struct trace_entry	ent;
	char			prev_comm[TASK_COMM_LEN];
	pid_t			prev_pid;
	int			prev_prio;
	long			prev_state;
	char			next_comm[TASK_COMM_LEN];
	pid_t			next_pid;
	int			next_prio;
};

DECLARE_TRACE(sched_process_fork,
	TP_PROTO(struct task_struct *parent, struct task_struct *child),
	TP_ARGS(parent, child))
DECLARE_TRACE(sched_process_exit,
	TP_PROTO(struct task_struct *p), TP_ARGS(p))
DECLARE_TRACE(sched_process_free,
	TP_PROTO(struct task_struct *p), TP_ARGS(p))
DECLARE_TRACE(sched_switch,
	TP_PROTO(bool preempt, struct task_struct *prev,
		 struct task_struct *next, unsigned int prev_state),
	TP_ARGS(preempt, prev, next, prev_state))
DECLARE_TRACE(sched_waking,
	TP_PROTO(struct task_struct *p), TP_ARGS(p))
DECLARE_TRACE(sched_wakeup,
	TP_PROTO(struct task_struct *p), TP_ARGS(p))
DECLARE_TRACE(sched_wakeup_new,
	TP_PROTO(struct task_struct *p), TP_ARGS(p))

#endif
