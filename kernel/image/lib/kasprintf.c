// SPDX-License-Identifier: MIT
/* kvasprintf() and kasprintf(), as lib/kasprintf.c: a kmalloc'ed formatted string. */
#include <linux/kernel.h>
#include <linux/slab.h>

char *kvasprintf(gfp_t gfp, const char *fmt, va_list ap)
{
	unsigned int first, second;
	char *p;
	va_list aq;

	va_copy(aq, ap);
	first = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);

	p = kmalloc(first + 1, gfp);
	if (!p)
		return NULL;

	second = vsnprintf(p, first + 1, fmt, ap);
	if (first != second)
		pr_warn("different return values (%u and %u) from vsnprintf(\"%s\", ...)\n",
			first, second, fmt);
	return p;
}

char *kasprintf(gfp_t gfp, const char *fmt, ...)
{
	va_list ap;
	char *p;

	va_start(ap, fmt);
	p = kvasprintf(gfp, fmt, ap);
	va_end(ap);
	return p;
}
