// SPDX-License-Identifier: MIT
/*
 * trace_printk()'s and trace_puts()' back ends, after kernel/trace/trace.c's
 * __trace_bprintk(), __trace_printk(), __trace_bputs() and __trace_puts():
 * format into a buffer and write a TRACE_PRINT entry. The ring buffer is
 * kpemu's host's, so the entry goes over with HC_TRACE_PRINTK, which the
 * host records while tracing is on (and ignores without a tracer attached,
 * as under QEMU). Linux keeps a bprintk's arguments in binary and formats
 * them when the trace is read; kpemu's host stores text, so every form
 * formats here.
 */
#include <linux/kernel.h>
#include <linux/trace_printk.h>
#include <asm/hostcall.h>

#define TRACE_BUF_SIZE	1024	/* Linux's too */

static int trace_vprintk(unsigned long ip, const char *fmt, va_list args)
{
	char buf[TRACE_BUF_SIZE];
	int len;

	len = vsnprintf(buf, sizeof(buf), fmt, args);
	HOSTCALL2(HC_TRACE_PRINTK, ip, buf);
	return len;
}

int __trace_bprintk(unsigned long ip, const char *fmt, ...)
{
	va_list args;
	int len;

	va_start(args, fmt);
	len = trace_vprintk(ip, fmt, args);
	va_end(args);
	return len;
}

int __trace_printk(unsigned long ip, const char *fmt, ...)
{
	va_list args;
	int len;

	va_start(args, fmt);
	len = trace_vprintk(ip, fmt, args);
	va_end(args);
	return len;
}

int __trace_puts(unsigned long ip, const char *str, int size)
{
	char buf[TRACE_BUF_SIZE];

	if (size < 0)
		return 0;
	if (size > TRACE_BUF_SIZE - 1)
		size = TRACE_BUF_SIZE - 1;
	memcpy(buf, str, size);
	buf[size] = '\0';
	HOSTCALL2(HC_TRACE_PRINTK, ip, buf);
	return size;
}

int __trace_bputs(unsigned long ip, const char *str)
{
	return __trace_puts(ip, str, strlen(str));
}
