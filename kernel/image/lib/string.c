// SPDX-License-Identifier: MIT
/*
 * String and memory routines, as lib/string.c. memcpy, memmove and memset
 * are in arch/arm64/lib/, as Linux's are (the compiler also calls them for
 * structure copies and clears).
 */
#include <linux/kernel.h>

int memcmp(const void *cs, const void *ct, size_t count)
{
	const unsigned char *su1, *su2;
	int res = 0;

	for (su1 = cs, su2 = ct; 0 < count; ++su1, ++su2, count--)
		if ((res = *su1 - *su2) != 0)
			break;
	return res;
}

size_t strlen(const char *s)
{
	const char *sc;

	for (sc = s; *sc != '\0'; ++sc)
		/* nothing */;
	return sc - s;
}

size_t strnlen(const char *s, size_t count)
{
	const char *sc;

	for (sc = s; count-- && *sc != '\0'; ++sc)
		/* nothing */;
	return sc - s;
}

int strcmp(const char *cs, const char *ct)
{
	unsigned char c1, c2;

	while (1) {
		c1 = *cs++;
		c2 = *ct++;
		if (c1 != c2)
			return c1 < c2 ? -1 : 1;
		if (!c1)
			break;
	}
	return 0;
}

/* Returns the length copied, or -E2BIG (as size_t) if truncated. */
size_t strscpy(char *dest, const char *src, size_t count)
{
	size_t res = 0;

	if (count == 0)
		return -7;
	while (count) {
		char c = src[res];

		dest[res] = c;
		if (!c)
			return res;
		res++;
		count--;
	}
	if (res)
		dest[res - 1] = '\0';
	return -7;
}

char *strrchr(const char *s, int c)
{
	const char *last = NULL;

	do {
		if (*s == (char)c)
			last = s;
	} while (*s++);
	return (char *)last;
}
