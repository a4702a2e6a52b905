/* SPDX-License-Identifier: MIT */
/*
 * trace_printk() and trace_puts(), as include/linux/kernel.h's: a printf
 * into the trace buffer (not the kernel log), shown in tracing/trace as
 * "<caller>: <text>". A call whose format is a constant keeps a pointer to
 * it in the __trace_printk_fmt section, which tracing/printk_formats lists
 * (the kernel's between __start___trace_bprintk_fmt and
 * __stop___trace_bprintk_fmt, a module's from its own section), and goes
 * to __trace_bprintk() or __trace_bputs(); others to __trace_printk() or
 * __trace_puts(). kpemu's host owns the buffer; the guest formats and
 * hands the text over with HC_TRACE_PRINTK (kernel/trace/trace_printk.c).
 */
#ifndef _LINUX_TRACE_PRINTK_H
#define _LINUX_TRACE_PRINTK_H

#include <linux/string.h>

#define _THIS_IP_  ({ __label__ __here; __here: (unsigned long)&&__here; })

#define __trace_printk_stringify_1(x...)	#x
#define __trace_printk_stringify(x...)	__trace_printk_stringify_1(x)

__attribute__((format(printf, 2, 3)))
int __trace_bprintk(unsigned long ip, const char *fmt, ...);
__attribute__((format(printf, 2, 3)))
int __trace_printk(unsigned long ip, const char *fmt, ...);
int __trace_bputs(unsigned long ip, const char *str);
int __trace_puts(unsigned long ip, const char *str, int size);

static inline __attribute__((format(printf, 1, 2)))
void ____trace_printk_check_format(const char *fmt, ...)
{
}
#define __trace_printk_check_format(fmt, args...)			\
do {									\
	if (0)								\
		____trace_printk_check_format(fmt, ##args);		\
} while (0)

#define trace_printk(fmt, ...)						\
do {									\
	char _______STR[] = __trace_printk_stringify((__VA_ARGS__));	\
	if (sizeof(_______STR) > 3)					\
		do_trace_printk(fmt, ##__VA_ARGS__);			\
	else								\
		trace_puts(fmt);					\
} while (0)

#define do_trace_printk(fmt, args...)					\
do {									\
	static const char *trace_printk_fmt __attribute__((used))	\
		__attribute__((section("__trace_printk_fmt"))) =	\
		__builtin_constant_p(fmt) ? fmt : NULL;			\
									\
	__trace_printk_check_format(fmt, ##args);			\
									\
	if (__builtin_constant_p(fmt))					\
		__trace_bprintk(_THIS_IP_, trace_printk_fmt, ##args);	\
	else								\
		__trace_printk(_THIS_IP_, fmt, ##args);			\
} while (0)

#define trace_puts(str) ({						\
	static const char *trace_printk_fmt __attribute__((used))	\
		__attribute__((section("__trace_printk_fmt"))) =	\
		__builtin_constant_p(str) ? str : NULL;			\
									\
	if (__builtin_constant_p(str))					\
		__trace_bputs(_THIS_IP_, trace_printk_fmt);		\
	else								\
		__trace_puts(_THIS_IP_, str, strlen(str));		\
})

#endif /* _LINUX_TRACE_PRINTK_H */
