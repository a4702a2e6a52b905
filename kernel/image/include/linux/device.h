/* SPDX-License-Identifier: MIT */
/*
 * The device model, as include/linux/device.h (the part kpemu's drivers
 * need): a device is a kobject with a parent, a driver and maybe a class;
 * device_add() puts it in sysfs with its attribute groups, read through
 * dev_sysfs_ops (drivers/base/core.c).
 *
 * Where it goes: under its parent's directory, or /sys/devices; a device
 * of a class in a directory of the class's name there, linked from
 * /sys/class/<class>.
 */
#ifndef _LINUX_DEVICE_H
#define _LINUX_DEVICE_H

#include <linux/compiler.h>
#include <linux/types.h>
#include <linux/kobject.h>
#include <linux/printk.h>

struct device;

struct device_driver {
	const char		*name;
};

struct class {
	const char		*name;
	const struct attribute_group **dev_groups;
	struct kobject		*kobj;	/* /sys/class/<name>, once registered */
};

struct device {
	struct kobject		kobj;
	struct device		*parent;
	const char		*init_name;	/* until device_add() */
	const struct device_driver *driver;
	const struct class	*class;
	const struct attribute_group **groups;	/* beside the class's */
	void			*driver_data;
};

/* An attribute of a device (dev_sysfs_ops calls its show). */
struct device_attribute {
	struct attribute	attr;
	ssize_t (*show)(struct device *dev, struct device_attribute *attr,
			char *buf);
	ssize_t (*store)(struct device *dev, struct device_attribute *attr,
			 const char *buf, size_t count);
};

#define DEVICE_ATTR_RO(_name) \
	struct device_attribute dev_attr_##_name = __ATTR_RO(_name)

static inline struct device *kobj_to_dev(struct kobject *kobj)
{
	return container_of(kobj, struct device, kobj);
}

static inline const char *dev_name(const struct device *dev)
{
	/* Use the init name until the kobject becomes available */
	if (dev->init_name)
		return dev->init_name;
	return kobject_name(&dev->kobj);
}

static inline void *dev_get_drvdata(const struct device *dev)
{
	return dev->driver_data;
}

static inline void dev_set_drvdata(struct device *dev, void *data)
{
	dev->driver_data = data;
}

/* drivers/base/ */
extern struct device platform_bus;	/* /sys/devices/platform */
const char *dev_driver_string(const struct device *dev);
__printf(2, 3) int dev_set_name(struct device *dev, const char *name, ...);
void device_initialize(struct device *dev);
int device_add(struct device *dev);
int device_register(struct device *dev);
int class_register(struct class *cls);
void driver_init(void);

/* dev_printk: "<driver> <device>: message", as drivers/base/core.c */
#define dev_printk(level, dev, fmt, ...) \
	printk(level "%s %s: " fmt, dev_driver_string(dev), dev_name(dev), ##__VA_ARGS__)
#define dev_err(dev, fmt, ...)	dev_printk(KERN_ERR, dev, fmt, ##__VA_ARGS__)
#define dev_warn(dev, fmt, ...)	dev_printk(KERN_WARNING, dev, fmt, ##__VA_ARGS__)
#define dev_info(dev, fmt, ...)	dev_printk(KERN_INFO, dev, fmt, ##__VA_ARGS__)

#endif /* _LINUX_DEVICE_H */
