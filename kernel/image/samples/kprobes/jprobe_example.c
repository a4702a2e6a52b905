// SPDX-License-Identifier: MIT
/*
 * A jprobe handler for do_fork, after Linux's samples/kprobes/
 * jprobe_example.c (a module there; built in here until kpemu loads
 * modules). The host registers it with a jprobe on do_fork; it runs with
 * do_fork's arguments, records them, and must end with jprobe_return().
 *
 * It keeps counters instead of printing, so that the log stays quiet.
 */
#include <linux/kernel.h>
#include <linux/kprobes.h>

u64 jdo_fork_calls;
unsigned long jdo_fork_last_flags;
unsigned long jdo_fork_last_stack_size;

/*
 * Called from the handler: a probe here is hit while a jprobe's handler
 * runs on the CPU, which kprobes must skip and count as missed.
 */
noinline void jprobe_example_note(unsigned long clone_flags)
{
	jdo_fork_last_flags = clone_flags;
}

/* Proxy routine having the same arguments as actual do_fork() routine */
long jdo_fork(unsigned long clone_flags, unsigned long stack_start,
	      unsigned long stack_size, int *parent_tidptr, int *child_tidptr)
{
	jdo_fork_calls++;
	jprobe_example_note(clone_flags);
	jdo_fork_last_stack_size = stack_size;

	/* Always end with a call to jprobe_return(). */
	jprobe_return();
	return 0;
}
