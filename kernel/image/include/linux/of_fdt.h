/* SPDX-License-Identifier: MIT */
/*
 * The flattened device tree the firmware (kpemu's host, or QEMU) hands
 * over, as linux/of_fdt.h: just enough to find a device by its
 * "compatible" string.
 */
#ifndef _LINUX_OF_FDT_H
#define _LINUX_OF_FDT_H

#include <linux/types.h>
#include <linux/errno.h>

#ifndef ENODEV
#define ENODEV		19	/* Linux's value; linux/errno.h may grow it */
#endif

struct of_device_res {
	u64		base;	/* first "reg" entry (#address-cells = #size-cells = 2) */
	u64		size;
	unsigned int	irq;	/* INTID of the first "interrupts" specifier, 0 if none */
	char		name[32];	/* the node's name without its unit address ("pl031") */
};

/* The blob (through the linear map), or NULL when there is none (QEMU passes none). */
extern u64 __fdt_pointer;	/* the boot x0, kept by head.S */
const void *of_get_fdt(void);
/* 0 and *res filled for the first node compatible with @compat, else -ENODEV. */
int of_find_compatible_device(const char *compat, struct of_device_res *res);

#endif /* _LINUX_OF_FDT_H */
