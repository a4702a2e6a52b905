// SPDX-License-Identifier: MIT
/*
 * The tracepoints' guest half (Linux: the TRACE_EVENT expansions that
 * CREATE_TRACE_POINTS makes in kernel/sched/core.c and kernel/signal.c,
 * and kernel/tracepoint.c).
 *
 * Each tracepoint is a struct tracepoint in __tracepoints whose static
 * key the host turns on while an event on it is enabled or armed
 * (kernel/jumplabel.go). trace_<name>() then calls __traceiter_<name>,
 * which does what the event's TP_fast_assign does, into a record on its
 * stack laid out as Linux's trace_event_raw_<class>, and passes it to
 * the host with HC_TRACEPOINT (x0 = the tracepoint, x1 = the record,
 * x2 = its size). The host fills the record's struct trace_entry and
 * does the rest (tracing/tracepoint.go).
 *
 * This file is built without call sites (kernel/trace/, as in Linux).
 */
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/string.h>
#include <asm/hostcall.h>
#include <trace/events/sched.h>
#include <trace/events/signal.h>
#include <trace/events/syscalls.h>
#include <trace/events/kmem.h>
#include <asm/ptrace.h>

DEFINE_TRACE(sched_process_fork);
DEFINE_TRACE(sched_process_exit);
DEFINE_TRACE(sched_process_free);
DEFINE_TRACE(sched_switch);
DEFINE_TRACE(sched_waking);
DEFINE_TRACE(sched_wakeup);
DEFINE_TRACE(sched_wakeup_new);
DEFINE_TRACE(signal_generate);
DEFINE_TRACE(signal_deliver);
DEFINE_TRACE(sys_enter);
DEFINE_TRACE(sys_exit);
DEFINE_TRACE(kmalloc);
DEFINE_TRACE(kfree);

/* Their events' systems, for the directories event_trace_init makes. */
const struct trace_event_name {
	const char *system, *name;
} trace_event_names[] = {
	{ "raw_syscalls", "sys_exit" },
	{ "raw_syscalls", "sys_enter" },
	{ "kmem", "kfree" },
	{ "kmem", "kmalloc" },
	{ "signal", "signal_generate" },
	{ "signal", "signal_deliver" },
	{ "sched", "sched_process_fork" },
	{ "sched", "sched_process_exit" },
	{ "sched", "sched_process_free" },
	{ "sched", "sched_switch" },
	{ "sched", "sched_waking" },
	{ "sched", "sched_wakeup" },
	{ "sched", "sched_wakeup_new" },
};
const unsigned int nr_trace_event_names = ARRAY_SIZE(trace_event_names);

/* The layouts the format files show (Linux 6.1 arm64). */
#define OFF(s, f) __builtin_offsetof(struct trace_event_raw_##s, f)
_Static_assert(OFF(sched_process_fork, child_pid) == 44 &&
	       sizeof(struct trace_event_raw_sched_process_fork) == 48, "sched_process_fork");
_Static_assert(OFF(sched_process_template, prio) == 28 &&
	       sizeof(struct trace_event_raw_sched_process_template) == 32, "sched_process_template");
_Static_assert(OFF(sched_wakeup_template, target_cpu) == 32 &&
	       sizeof(struct trace_event_raw_sched_wakeup_template) == 36, "sched_wakeup_template");
_Static_assert(OFF(sched_switch, prev_state) == 32 && OFF(sched_switch, next_prio) == 60 &&
	       sizeof(struct trace_event_raw_sched_switch) == 64, "sched_switch");
_Static_assert(OFF(signal_generate, result) == 44 &&
	       sizeof(struct trace_event_raw_signal_generate) == 48, "signal_generate");
_Static_assert(OFF(sys_enter, args) == 16 &&
	       sizeof(struct trace_event_raw_sys_enter) == 64, "sys_enter");
_Static_assert(OFF(sys_exit, ret) == 16 &&
	       sizeof(struct trace_event_raw_sys_exit) == 24, "sys_exit");
_Static_assert(OFF(kmalloc, node) == 48 &&
	       sizeof(struct trace_event_raw_kmalloc) == 56, "kmalloc");
_Static_assert(OFF(kfree, ptr) == 16 &&
	       sizeof(struct trace_event_raw_kfree) == 24, "kfree");
_Static_assert(OFF(signal_deliver, sa_handler) == 24 &&
	       sizeof(struct trace_event_raw_signal_deliver) == 40, "signal_deliver");

void trace_event_hostcall(struct tracepoint *tp, void *entry, unsigned long size)
{
	register unsigned long x0 asm("x0") = (unsigned long)tp;
	register unsigned long x1 asm("x1") = (unsigned long)entry;
	register unsigned long x2 asm("x2") = size;

	asm volatile("hvc #" hostcall_str(HC_TRACEPOINT)
		     : "+r"(x0) : "r"(x1), "r"(x2) : "memory");
}
NOKPROBE_SYMBOL(trace_event_hostcall);

#define EMIT(name, e)	trace_event_hostcall(&__tracepoint_##name, &(e), sizeof(e))

void __traceiter_sched_process_fork(struct task_struct *parent, struct task_struct *child)
{
	struct trace_event_raw_sched_process_fork e = {};

	memcpy(e.parent_comm, parent->comm, TASK_COMM_LEN);
	e.parent_pid = parent->pid;
	memcpy(e.child_comm, child->comm, TASK_COMM_LEN);
	e.child_pid = child->pid;
	EMIT(sched_process_fork, e);
}

static void sched_process_template(struct tracepoint *tp, struct task_struct *p)
{
	struct trace_event_raw_sched_process_template e = {};

	memcpy(e.comm, p->comm, TASK_COMM_LEN);
	e.pid = p->pid;
	e.prio = p->prio;
	trace_event_hostcall(tp, &e, sizeof(e));
}

void __traceiter_sched_process_exit(struct task_struct *p)
{
	sched_process_template(&__tracepoint_sched_process_exit, p);
}

void __traceiter_sched_process_free(struct task_struct *p)
{
	sched_process_template(&__tracepoint_sched_process_free, p);
}

static void sched_wakeup_template(struct tracepoint *tp, struct task_struct *p)
{
	struct trace_event_raw_sched_wakeup_template e = {};

	memcpy(e.comm, p->comm, TASK_COMM_LEN);
	e.pid = p->pid;
	e.prio = p->prio;
	e.target_cpu = task_cpu(p);
	trace_event_hostcall(tp, &e, sizeof(e));
}

void __traceiter_sched_waking(struct task_struct *p)
{
	sched_wakeup_template(&__tracepoint_sched_waking, p);
}

void __traceiter_sched_wakeup(struct task_struct *p)
{
	sched_wakeup_template(&__tracepoint_sched_wakeup, p);
}

void __traceiter_sched_wakeup_new(struct task_struct *p)
{
	sched_wakeup_template(&__tracepoint_sched_wakeup_new, p);
}

/* Linux's TASK_REPORT, and what __task_state_index() folds into it. */
#define __TASK_STOPPED		0x00000004
#define __TASK_TRACED		0x00000008
#define TASK_PARKED		0x00000040
#define TASK_REPORT		0x0000007f
#define TASK_REPORT_IDLE	(TASK_REPORT + 1)
#define TASK_REPORT_MAX		(TASK_REPORT_IDLE << 1)

static unsigned int fls(unsigned int x)
{
	return x ? 32 - __builtin_clz(x) : 0;
}

/* __trace_sched_switch_state(): a preempted task is R+, else its state bit. */
static long __trace_sched_switch_state(bool preempt, unsigned int prev_state,
				       struct task_struct *p)
{
	unsigned int state;

	if (preempt)
		return TASK_REPORT_MAX;
	state = fls((prev_state | p->exit_state) & TASK_REPORT);
	return state ? (1 << (state - 1)) : state;
}

void __traceiter_sched_switch(bool preempt, struct task_struct *prev,
			      struct task_struct *next, unsigned int prev_state)
{
	struct trace_event_raw_sched_switch e = {};

	memcpy(e.prev_comm, prev->comm, TASK_COMM_LEN);
	e.prev_pid = prev->pid;
	e.prev_prio = prev->prio;
	e.prev_state = __trace_sched_switch_state(preempt, prev_state, prev);
	memcpy(e.next_comm, next->comm, TASK_COMM_LEN);
	e.next_pid = next->pid;
	e.next_prio = next->prio;
	EMIT(sched_switch, e);
}

void __traceiter_signal_generate(int sig, struct kernel_siginfo *info,
				 struct task_struct *task, int group, int result)
{
	struct trace_event_raw_signal_generate e = {};

	e.sig = sig;
	e.errno = info->si_errno;
	e.code = info->si_code;
	memcpy(e.comm, task->comm, TASK_COMM_LEN);
	e.pid = task->pid;
	e.group = group;
	e.result = result;
	EMIT(signal_generate, e);
}

void __traceiter_signal_deliver(int sig, struct kernel_siginfo *info,
				struct k_sigaction *ka)
{
	struct trace_event_raw_signal_deliver e = {};

	e.sig = sig;
	e.errno = info->si_errno;
	e.code = info->si_code;
	e.sa_handler = ka->sa_handler;
	e.sa_flags = ka->sa_flags;
	EMIT(signal_deliver, e);
}

/* syscall_get_arguments() on arm64: the first argument is orig_x0. */
void __traceiter_sys_enter(struct pt_regs *regs, long id)
{
	struct trace_event_raw_sys_enter e = {};
	int i;

	e.id = id;
	e.args[0] = regs->orig_x0;
	for (i = 1; i < 6; i++)
		e.args[i] = regs->regs[i];
	EMIT(sys_enter, e);
}

void __traceiter_sys_exit(struct pt_regs *regs, long ret)
{
	struct trace_event_raw_sys_exit e = {};

	e.id = regs->syscallno;	/* syscall_get_nr() */
	e.ret = ret;
	EMIT(sys_exit, e);
}

void __traceiter_kmalloc(unsigned long call_site, const void *ptr, size_t bytes_req,
			 size_t bytes_alloc, gfp_t gfp_flags, int node)
{
	struct trace_event_raw_kmalloc e = {};

	e.call_site = call_site;
	e.ptr = ptr;
	e.bytes_req = bytes_req;
	e.bytes_alloc = bytes_alloc;
	e.gfp_flags = gfp_flags;
	e.node = node;
	EMIT(kmalloc, e);
}

void __traceiter_kfree(unsigned long call_site, const void *ptr)
{
	struct trace_event_raw_kfree e = {};

	e.call_site = call_site;
	e.ptr = ptr;
	EMIT(kfree, e);
}
