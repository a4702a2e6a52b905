// SPDX-License-Identifier: MIT
/*
 * kretprobe_example, after Linux's samples/kprobes/kretprobe_example.c: a
 * kretprobe on kernel_clone() whose entry handler stamps the time in the
 * instance's private data (data_size) and whose return handler measures
 * the call and records the return value. It counts instead of printing;
 * the host reads kretprobe_example:kre_* by symbol.
 */
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <asm/ptrace.h>

static char func_name[64] = "kernel_clone";

/* per-instance private data */
struct my_data {
	u64 entry_stamp;
};

u64 kre_entries;
u64 kre_returns;
long kre_last_retval;
u64 kre_last_delta;
unsigned long kre_last_ret_addr;

static u64 ktime_get(void)
{
	u64 t;

	asm volatile("isb; mrs %0, cntvct_el0" : "=r" (t));
	return t;
}

/* Here we use the entry_handler to timestamp function entry */
static int entry_handler(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct my_data *data = (struct my_data *)ri->data;

	kre_entries++;
	data->entry_stamp = ktime_get();
	return 0;
}

/*
 * Return-probe handler: Log the return value and duration. Duration may turn
 * out to be zero consistently, depending upon the granularity of time
 * accounting on the platform.
 */
static int ret_handler(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct my_data *data = (struct my_data *)ri->data;

	kre_returns++;
	kre_last_retval = regs_return_value(regs);
	kre_last_delta = ktime_get() - data->entry_stamp;
	kre_last_ret_addr = (unsigned long)ri->ret_addr;
	return 0;
}

static struct kretprobe my_kretprobe = {
	.handler		= ret_handler,
	.entry_handler		= entry_handler,
	.data_size		= sizeof(struct my_data),
	/* Probe up to 20 instances concurrently. */
	.maxactive		= 20,
};

static int __init kretprobe_init(void)
{
	int ret;

	my_kretprobe.kp.symbol_name = func_name;
	ret = register_kretprobe(&my_kretprobe);
	if (ret < 0) {
		pr_err("register_kretprobe failed, returned %d\n", ret);
		return ret;
	}
	pr_info("Planted return probe at %s: %p\n",
			my_kretprobe.kp.symbol_name, my_kretprobe.kp.addr);
	return 0;
}

static void __exit kretprobe_exit(void)
{
	unregister_kretprobe(&my_kretprobe);
	pr_info("kretprobe at %p unregistered\n", my_kretprobe.kp.addr);

	/* nmissed > 0 suggests that maxactive was set too low. */
	pr_info("Missed probing %d instances of %s\n",
		my_kretprobe.nmissed, my_kretprobe.kp.symbol_name);
}

module_init(kretprobe_init)
module_exit(kretprobe_exit)
MODULE_LICENSE("GPL");
