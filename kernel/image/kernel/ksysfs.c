// SPDX-License-Identifier: MIT
/*
 * /sys/kernel, as kernel/ksysfs.c: the kobject that holds the kernel's
 * own directories (irq/). Linux's attributes of /sys/kernel itself are
 * left out.
 */
#include <linux/kernel.h>
#include <linux/kobject.h>
#include <linux/sysfs.h>

struct kobject *kernel_kobj;

extern u32 workload_no_forks;	/* init/workload.c */

/*
 * kpemu's own: whether the workload forks (the host's
 * kpemu/workload_forks), which /bin/sh reads to fork its cats or not.
 */
static ssize_t workload_forks_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	return sprintf(buf, "%d\n", !READ_ONCE(workload_no_forks));
}
static struct kobj_attribute workload_forks_attr = __ATTR_RO(workload_forks);

int ksysfs_init(void)
{
	kernel_kobj = kobject_create_and_add("kernel", NULL);
	if (!kernel_kobj)
		return -ENOMEM;
	return sysfs_create_file(kernel_kobj, &workload_forks_attr.attr);
}
