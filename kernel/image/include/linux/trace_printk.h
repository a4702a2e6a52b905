/* SPDX-License-Identifier: MIT */
/*
 * trace_printk(), as include/linux/kernel.h's: a printf into the trace
 * buffer (not the kernel log), shown in tracing/trace as
 * "<caller>: <text>". kpemu's host owns the buffer; the guest formats and
 * hands the text over with HC_TRACE_PRINTK (kernel/trace/trace_printk.c).
 */
#ifndef _LINUX_TRACE_PRINTK_H
#define _LINUX_TRACE_PRINTK_H

#define _THIS_IP_  ({ __label__ __here; __here: (unsigned long)&&__here; })

__attribute__((format(printf, 2, 3)))
int __trace_printk(unsigned long ip, const char *fmt, ...);

#define trace_printk(fmt, ...) __trace_printk(_THIS_IP_, fmt, ##__VA_ARGS__)

#endif /* _LINUX_TRACE_PRINTK_H */
