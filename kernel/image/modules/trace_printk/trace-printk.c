// SPDX-License-Identifier: MIT
/*
 * trace_printk: the module behind Linux's samples/trace_printk (the one
 * the kselftests kprobe_module and trace_printk load as "trace-printk"):
 * at init it writes to the trace buffer with trace_printk(), from process
 * context and, via an irq_work, from hard interrupt context
 * (trace_printk_irq_work, which the selftest probes), and waits for the
 * latter before returning. Each context writes the four forms: a constant
 * string (trace_bputs), a string that is not one (trace_puts), a constant
 * format (trace_bprintk) and a format that is not one (trace_printk); the
 * constants' pointers go into the module's __trace_printk_fmt section.
 */
#include <linux/kernel.h>
#include <linux/irq_work.h>
#include <linux/module.h>
#include <linux/trace_printk.h>

static struct irq_work irqwork;

/* Not static, so that the compiler cannot take them for constants. */
char *trace_printk_test_global_str =
	"This is a dynamic string that will use trace_puts\n";

char *trace_printk_test_global_str_irq =
	"(irq) This is a dynamic string that will use trace_puts\n";

char *trace_printk_test_global_str_fmt =
	"%sThis is a %s that will use trace_printk\n";

static noinline void trace_printk_irq_work(struct irq_work *work)
{
	trace_printk("(irq) This is a static string that will use trace_bputs\n");
	trace_printk(trace_printk_test_global_str_irq);
	trace_printk("(irq) This is a %s that will use trace_bprintk()\n", "static string");
	trace_printk(trace_printk_test_global_str_fmt, "(irq) ", "dynamic string");
}

static int __init trace_printk_init(void)
{
	init_irq_work(&irqwork, trace_printk_irq_work);

	trace_printk("This is a static string that will use trace_bputs\n");
	trace_printk(trace_printk_test_global_str);

	/* Kick off printing in irq context */
	irq_work_queue(&irqwork);
	irq_work_sync(&irqwork);

	trace_printk("This is a %s that will use trace_bprintk()\n", "static string");
	trace_printk(trace_printk_test_global_str_fmt, "", "dynamic string");
	return 0;
}

static void __exit trace_printk_exit(void)
{
}

module_init(trace_printk_init);
module_exit(trace_printk_exit);
MODULE_DESCRIPTION("trace_printk() from process and interrupt context");
MODULE_LICENSE("MIT");
