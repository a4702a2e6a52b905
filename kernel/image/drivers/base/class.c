// SPDX-License-Identifier: MIT
/*
 * Device classes, as drivers/base/class.c: /sys/class/<name> for each
 * registered class; the class's devices are made in it (see device_add).
 */
#include <linux/kernel.h>
#include <linux/device.h>

static struct kobject *class_kobj;	/* /sys/class (Linux: class_kset) */

int class_register(struct class *cls)
{
	struct kobject *kobj;

	if (!class_kobj)
		return -ENODEV;
	kobj = kobject_create_and_add(cls->name, class_kobj);
	if (!kobj)
		return -ENOMEM;
	cls->kobj = kobj;
	return 0;
}

int classes_init(void)
{
	class_kobj = kobject_create_and_add("class", NULL);
	if (!class_kobj)
		return -ENOMEM;
	return 0;
}
