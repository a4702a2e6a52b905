// SPDX-License-Identifier: MIT
/*
 * /sys/kernel, as kernel/ksysfs.c: the kobject that holds the kernel's
 * own directories (irq/). Linux's attributes of /sys/kernel itself are
 * left out.
 */
#include <linux/kernel.h>
#include <linux/kobject.h>

struct kobject *kernel_kobj;

int ksysfs_init(void)
{
	kernel_kobj = kobject_create_and_add("kernel", NULL);
	if (!kernel_kobj)
		return -ENOMEM;
	return 0;
}
