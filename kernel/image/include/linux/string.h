/* SPDX-License-Identifier: MIT */
#ifndef _LINUX_STRING_H
#define _LINUX_STRING_H

#include <linux/types.h>

void *memset(void *s, int c, size_t count);
void *memcpy(void *dest, const void *src, size_t count);
void *memmove(void *dest, const void *src, size_t count);
int memcmp(const void *cs, const void *ct, size_t count);
size_t strlen(const char *s);
size_t strnlen(const char *s, size_t count);
size_t strscpy(char *dest, const char *src, size_t count);
int strcmp(const char *cs, const char *ct);
char *strrchr(const char *s, int c);

#endif /* _LINUX_STRING_H */
