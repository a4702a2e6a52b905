/* SPDX-License-Identifier: MIT */
#ifndef _LINUX_CONSOLE_H
#define _LINUX_CONSOLE_H

void pl011_early_write(const char *s, unsigned int n);

/* kernel/printk/printk.c: the console's lock; its release prints the log */
int console_trylock(void);
void console_unlock(void);

#endif /* _LINUX_CONSOLE_H */
