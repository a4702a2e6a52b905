/* SPDX-License-Identifier: MIT */
#ifndef _LINUX_CONSOLE_H
#define _LINUX_CONSOLE_H

void pl011_early_write(const char *s, unsigned int n);

#endif /* _LINUX_CONSOLE_H */
