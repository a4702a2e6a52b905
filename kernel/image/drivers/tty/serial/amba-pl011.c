// SPDX-License-Identifier: MIT
/*
 * The console: a PL011 UART at 0x09000000 (QEMU virt's and kpemu's), driven
 * by polling like Linux's earlycon (drivers/tty/serial/amba-pl011.c),
 * through the device window that head.S maps before the first printk.
 */
#include <linux/compiler.h>
#include <linux/types.h>
#include <linux/console.h>
#include <asm/memory.h>

#define UART01x_BASE	0x09000000UL
#define UART01x_DR	0x00	/* Data read or written from the interface. */
#define UART01x_FR	0x18	/* Flag register (Read only). */
#define UART01x_FR_TXFF	0x020

static inline u32 pl011_read(unsigned int reg)
{
	return *(volatile u32 *)(ioremap(UART01x_BASE, 0x1000) + reg);
}

static inline void pl011_write(u32 val, unsigned int reg)
{
	*(volatile u32 *)(ioremap(UART01x_BASE, 0x1000) + reg) = val;
}

static void pl011_putc(char c)
{
	while (pl011_read(UART01x_FR) & UART01x_FR_TXFF)
		;
	pl011_write((unsigned char)c, UART01x_DR);
}

/* uart_console_write(): LF goes out as CR LF. */
void pl011_early_write(const char *s, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (s[i] == '\n')
			pl011_putc('\r');
		pl011_putc(s[i]);
	}
}
