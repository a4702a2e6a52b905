/* SPDX-License-Identifier: MIT */
/*
 * The signal tracepoints, as Linux 6.1's include/trace/events/signal.h.
 * kpemu's only signals are the fatal ones a user fault raises
 * (arm64_force_sig_fault), generated and delivered at once.
 */
#ifndef _TRACE_EVENTS_SIGNAL_H
#define _TRACE_EVENTS_SIGNAL_H

#include <linux/sched.h>
#include <linux/tracepoint.h>

/* The part of struct kernel_siginfo the events show. */
struct kernel_siginfo {
	int si_signo;
	int si_errno;
	int si_code;
};

/* The part of struct k_sigaction the events show. */
struct k_sigaction {
	unsigned long sa_handler;	/* 0: SIG_DFL */
	unsigned long sa_flags;
};

/* enum: the result of a signal_generate (TRACE_SIGNAL_*) */
#define TRACE_SIGNAL_DELIVERED	0

struct trace_event_raw_signal_generate {
	struct trace_entry	ent;
	int			sig;
	int			errno;
	int			code;
	char			comm[TASK_COMM_LEN];
	pid_t			pid;
	int			group;
	int			result;
};

struct trace_event_raw_signal_deliver {
	struct trace_entry	ent;
	int			sig;
	int			errno;
	int			code;
	unsigned long		sa_handler;
	unsigned long		sa_flags;
};

DECLARE_TRACE(signal_generate,
	TP_PROTO(int sig, struct kernel_siginfo *info, struct task_struct *task,
		 int group, int result),
	TP_ARGS(sig, info, task, group, result))
DECLARE_TRACE(signal_deliver,
	TP_PROTO(int sig, struct kernel_siginfo *info, struct k_sigaction *ka),
	TP_ARGS(sig, info, ka))

#endif
