// SPDX-License-Identifier: MIT
/*
 * kill(2), after kernel/signal.c's kill_something_info. The guest has no
 * signal handlers, so a signal whose default action ends a task is the
 * only kind a guest task takes: it is generated here and taken on the
 * task's way back to user space (exit_to_user_mode), as get_signal then
 * do_group_exit would. Signals ignored by default, and the stop signals
 * (the guest has no job control), are generated and dropped.
 *
 * A twin (drivers/char/kpemu_shadow.c) replays the kill(2) of its host
 * process: the host delivers that signal to a host process, so the twin's
 * call signals no task here, even the target's twin, and answers what
 * the host's call answers (the request's errno). Tracing sees the call
 * (sys_enter_kill, sys_exit_kill) and, where the target has a twin, its
 * signal_generate.
 */
#include <linux/kernel.h>
#include <linux/sched.h>
#include <asm/ptrace.h>
#include <trace/events/signal.h>

#define _NSIG		64
#define SI_USER		0
#define SIGCONT		18
#define SIGSTOP		19
#define SIGTSTP		20
#define SIGTTIN		21
#define SIGTTOU		22
#define SIGURG		23
#define SIGWINCH	28

#define TRACE_SIGNAL_IGNORED	1

/* sig_kernel_ignore() and sig_kernel_stop(): no task ends for these. */
static bool sig_ends_task(int sig)
{
	switch (sig) {
	case SIGCHLD: case SIGCONT: case SIGURG: case SIGWINCH:
	case SIGSTOP: case SIGTSTP: case SIGTTIN: case SIGTTOU:
		return false;
	}
	return true;
}

static void generate(int sig, struct task_struct *t, int result)
{
	struct kernel_siginfo info = { .si_signo = sig, .si_code = SI_USER };
	unsigned long flags;

	local_irq_save(flags);
	trace_signal_generate(sig, &info, t, 1, result);
	local_irq_restore(flags);
}

/* send_signal of a native caller's kill: 0 or -ESRCH. */
static int send_sig_native(int sig, pid_t pid)
{
	struct task_struct *t = pid > 0 ? find_task_by_pid_ns(pid) : NULL;

	if (!t || t->exit_state || !t->mm)
		return -ESRCH;
	if (!sig)
		return 0;
	if (t->shadow || !sig_ends_task(sig)) {
		/* a twin's signals are its host process's */
		generate(sig, t, TRACE_SIGNAL_IGNORED);
		return 0;
	}
	generate(sig, t, TRACE_SIGNAL_DELIVERED);
	if (!READ_ONCE(t->pending_sig))
		WRITE_ONCE(t->pending_sig, sig);
	return 0;
}

long __arm64_sys_kill(const struct pt_regs *regs)
{
	pid_t pid = regs->regs[0];
	int sig = regs->regs[1];
	struct task_struct *t;
	int err;

	if (sig < 0 || sig > _NSIG)
		return -EINVAL;
	if (current->shadow) {
		err = -current->shadow_kill_errno;
		t = pid > 0 ? find_task_by_pid_ns(pid) : NULL;
		if (!err && sig && t && t->shadow && !t->exit_state)
			generate(sig, t, TRACE_SIGNAL_DELIVERED);
		return err;
	}
	if (pid == -1) {	/* every process but init and the caller */
		err = -ESRCH;
		list_for_each_entry(t, &init_task.tasks, tasks)
			if (t->pid > 1 && t->tgid != current->tgid && t->mm && !t->exit_state)
				err = send_sig_native(sig, t->pid) ? err : 0;
		return err;
	}
	/* The guest has no process groups: each process is its own. */
	if (pid == 0)
		pid = current->tgid;
	else if (pid < 0)
		pid = -pid;
	return send_sig_native(sig, pid);
}

/* exit_to_user_mode(): the fatal signal that kill(2) left for current. */
void deliver_pending_signal(void)
{
	int sig = READ_ONCE(current->pending_sig);
	struct kernel_siginfo info = { .si_signo = sig, .si_code = SI_USER };
	struct k_sigaction ka = { .sa_handler = 0 };	/* SIG_DFL */
	unsigned long flags;

	local_irq_save(flags);
	trace_signal_deliver(sig, &info, &ka);
	local_irq_restore(flags);
	do_exit(sig);
}
