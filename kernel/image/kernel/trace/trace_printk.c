// SPDX-License-Identifier: MIT
/*
 * trace_printk()'s back end, after kernel/trace/trace.c's
 * trace_vprintk(): format into a buffer and write a TRACE_PRINT entry.
 * The ring buffer is kpemu's host's, so the entry goes over with
 * HC_TRACE_PRINTK, which the host records while tracing is on (and ignores
 * without a tracer attached, as under QEMU).
 */
#include <linux/kernel.h>
#include <linux/trace_printk.h>
#include <asm/hostcall.h>

#define TRACE_BUF_SIZE	1024	/* Linux's too */

int __trace_printk(unsigned long ip, const char *fmt, ...)
{
	char buf[TRACE_BUF_SIZE];
	va_list args;
	int len;

	va_start(args, fmt);
	len = vsnprintf(buf, sizeof(buf), fmt, args);
	va_end(args);
	HOSTCALL2(HC_TRACE_PRINTK, ip, buf);
	return len;
}
