// SPDX-License-Identifier: MIT
/*
 * jprobe_example, after Linux 4.14's samples/kprobes/jprobe_example.c: a
 * jprobe on do_fork() whose handler has do_fork's prototype, sees its
 * arguments, and ends with jprobe_return(). (The kernel keeps a built-in
 * copy, samples/kprobes/jprobe_example.c, for kpemu's Go tests and
 * --probe j:do_fork:jdo_fork.) It counts; the host reads jpe_* by symbol.
 */
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/module.h>

u64 jpe_calls;
unsigned long jpe_last_flags;
unsigned long jpe_last_stack_size;

/* Proxy routine having the same arguments as actual do_fork() routine */
static long jdo_fork(unsigned long clone_flags, unsigned long stack_start,
		     unsigned long stack_size, int *parent_tidptr,
		     int *child_tidptr)
{
	jpe_calls++;
	jpe_last_flags = clone_flags;
	jpe_last_stack_size = stack_size;

	/* Always end with a call to jprobe_return(). */
	jprobe_return();
	return 0;
}

static struct jprobe my_jprobe = {
	.entry			= jdo_fork,
	.kp = {
		.symbol_name	= "do_fork",
	},
};

static int __init jprobe_init(void)
{
	int ret;

	ret = register_jprobe(&my_jprobe);
	if (ret < 0) {
		pr_err("register_jprobe failed, returned %d\n", ret);
		return -1;
	}
	pr_info("Planted jprobe at %p, handler addr %p\n",
	       my_jprobe.kp.addr, my_jprobe.entry);
	return 0;
}

static void __exit jprobe_exit(void)
{
	unregister_jprobe(&my_jprobe);
	pr_info("jprobe at %p unregistered\n", my_jprobe.kp.addr);
}

module_init(jprobe_init)
module_exit(jprobe_exit)
MODULE_LICENSE("GPL");
