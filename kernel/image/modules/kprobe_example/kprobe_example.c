// SPDX-License-Identifier: MIT
/*
 * kprobe_example, after Linux's samples/kprobes/kprobe_example.c: a kprobe
 * on kernel_clone() with a pre and a post handler. It counts instead of
 * printing at every hit, so that the log stays quiet; the host reads the
 * counters by symbol (kprobe_example:kpe_pre_hits, ...).
 */
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <asm/ptrace.h>

#define MAX_SYMBOL_LEN	64
static char symbol[MAX_SYMBOL_LEN] = "kernel_clone";

/* For each probe you need to allocate a kprobe structure */
static struct kprobe kp = {
	.symbol_name	= symbol,
};

u64 kpe_pre_hits;
u64 kpe_post_hits;
unsigned long kpe_last_pc;
unsigned long kpe_last_pstate;

/* kprobe pre_handler: called just before the probed instruction is executed */
static int __kprobes handler_pre(struct kprobe *p, struct pt_regs *regs)
{
	kpe_pre_hits++;
	kpe_last_pc = regs->pc;
	kpe_last_pstate = regs->pstate;
	/* A dump_stack() here will give a stack backtrace */
	return 0;
}

/* kprobe post_handler: called after the probed instruction is executed */
static void __kprobes handler_post(struct kprobe *p, struct pt_regs *regs,
				unsigned long flags)
{
	kpe_post_hits++;
}

static int __init kprobe_init(void)
{
	int ret;

	kp.pre_handler = handler_pre;
	kp.post_handler = handler_post;

	ret = register_kprobe(&kp);
	if (ret < 0) {
		pr_err("register_kprobe failed, returned %d\n", ret);
		return ret;
	}
	pr_info("Planted kprobe at %p\n", kp.addr);
	return 0;
}

static void __exit kprobe_exit(void)
{
	unregister_kprobe(&kp);
	pr_info("kprobe at %p unregistered\n", kp.addr);
}

module_init(kprobe_init)
module_exit(kprobe_exit)
MODULE_LICENSE("GPL");
