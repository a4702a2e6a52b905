// SPDX-License-Identifier: MIT
/*
 * The core of the device model, as drivers/base/core.c (and the parts of
 * init.c and platform.c that make /sys/devices and /sys/devices/platform):
 * device_add() names a device and puts its kobject in sysfs with its
 * class's and its own attribute groups, which dev_sysfs_ops reads through
 * each device_attribute's show(). A device of a class goes in a directory
 * of the class's name under its parent (Linux's "glue" directory:
 * /sys/devices/platform/9010000.pl031/rtc/rtc0) and is linked from
 * /sys/class/<class>, with "subsystem" and "device" links in it.
 */
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/device.h>

static struct kobject *devices_kobj;	/* /sys/devices (Linux: devices_kset) */

/* A class's directory under a parent device (Linux: struct class_dir). */
struct class_dir {
	struct kobject		kobj;
	const struct class	*class;
	struct device		*parent;
	struct class_dir	*next;
};
static struct class_dir *class_dirs;
static DEFINE_RAW_SPINLOCK(gdp_lock);	/* class_dirs (Linux: gdp_mutex) */

/* /sys/devices/platform, the parent of the board's devices */
struct device platform_bus = {
	.init_name	= "platform",
};

int classes_init(void);

/*
 * dev_driver_string(): the name of the driver bound to @dev, else of its
 * class (kpemu has no buses), else "".
 */
const char *dev_driver_string(const struct device *dev)
{
	const struct device_driver *drv = READ_ONCE(dev->driver);

	if (drv)
		return drv->name;
	return dev->class ? dev->class->name : "";
}

static ssize_t dev_attr_show(struct kobject *kobj, struct attribute *attr,
			     char *buf)
{
	struct device_attribute *dev_attr = container_of(attr, struct device_attribute, attr);
	struct device *dev = kobj_to_dev(kobj);
	ssize_t ret = -EIO;

	if (dev_attr->show)
		ret = dev_attr->show(dev, dev_attr, buf);
	if (ret >= (ssize_t)PAGE_SIZE)
		printk("dev_attr_show: %pS returned bad count\n", dev_attr->show);
	return ret;
}

static ssize_t dev_attr_store(struct kobject *kobj, struct attribute *attr,
			      const char *buf, size_t count)
{
	struct device_attribute *dev_attr = container_of(attr, struct device_attribute, attr);
	struct device *dev = kobj_to_dev(kobj);
	ssize_t ret = -EIO;

	if (dev_attr->store)
		ret = dev_attr->store(dev, dev_attr, buf, count);
	return ret;
}

static const struct sysfs_ops dev_sysfs_ops = {
	.show	= dev_attr_show,
	.store	= dev_attr_store,
};

static const struct kobj_type device_ktype = {
	.sysfs_ops	= &dev_sysfs_ops,
};

int dev_set_name(struct device *dev, const char *fmt, ...)
{
	va_list vargs;
	int err;

	va_start(vargs, fmt);
	err = kobject_set_name_vargs(&dev->kobj, fmt, vargs);
	va_end(vargs);
	return err;
}

void device_initialize(struct device *dev)
{
	kobject_init(&dev->kobj, &device_ktype);
}

/*
 * get_device_parent(): where @dev's directory goes: for a device of a
 * class, the class's directory under @parent, made by the first such
 * device; else @parent's, or /sys/devices. (kpemu's class devices all
 * have a parent; Linux puts those without one in /sys/devices/virtual.)
 */
static struct kobject *get_device_parent(struct device *dev, struct device *parent)
{
	struct class_dir *dir;
	unsigned long flags;

	if (!dev->class)
		return parent ? &parent->kobj : devices_kobj;
	if (!parent)
		return ERR_PTR(-EINVAL);
	raw_spin_lock_irqsave(&gdp_lock, flags);
	for (dir = class_dirs; dir; dir = dir->next)
		if (dir->class == dev->class && dir->parent == parent)
			goto out;
	dir = kzalloc(sizeof(*dir), GFP_KERNEL);
	if (!dir) {
		dir = ERR_PTR(-ENOMEM);
		goto out;
	}
	dir->class = dev->class;
	dir->parent = parent;
	kobject_init(&dir->kobj, &dynamic_kobj_ktype);
	if (kobject_add(&dir->kobj, &parent->kobj, "%s", dev->class->name)) {
		kfree(dir);
		dir = ERR_PTR(-ENOMEM);
		goto out;
	}
	dir->next = class_dirs;
	class_dirs = dir;
out:
	raw_spin_unlock_irqrestore(&gdp_lock, flags);
	return IS_ERR(dir) ? ERR_CAST(dir) : &dir->kobj;
}

/* device_add_class_symlinks(): subsystem, device, and the class's link to @dev */
static int device_add_class_symlinks(struct device *dev)
{
	int error;

	if (!dev->class)
		return 0;
	error = sysfs_create_link(&dev->kobj, dev->class->kobj, "subsystem");
	if (!error && dev->parent)
		error = sysfs_create_link(&dev->kobj, &dev->parent->kobj, "device");
	if (!error)
		error = sysfs_create_link(dev->class->kobj, &dev->kobj, dev_name(dev));
	return error;
}

/*
 * device_add(): name @dev (its init_name, if set) and put it in sysfs
 * with its attributes and, for a class device, the links.
 */
int device_add(struct device *dev)
{
	struct kobject *parent;
	int error;

	if (!dev)
		return -EINVAL;
	if (dev->init_name) {
		error = dev_set_name(dev, "%s", dev->init_name);
		dev->init_name = NULL;
		if (error)
			return error;
	}
	if (!dev_name(dev))
		return -EINVAL;
	if (dev->class && !dev->class->kobj)
		return -ENODEV;
	parent = get_device_parent(dev, dev->parent);
	if (IS_ERR(parent))
		return PTR_ERR(parent);
	if (!parent)
		return -ENODEV;
	/* the name is set: kobject_add() keeps it */
	error = kobject_add(&dev->kobj, parent, NULL);
	if (error)
		return error;
	error = device_add_class_symlinks(dev);
	if (!error && dev->class)
		error = sysfs_create_groups(&dev->kobj, dev->class->dev_groups);
	if (!error)
		error = sysfs_create_groups(&dev->kobj, dev->groups);
	return error;
}

int device_register(struct device *dev)
{
	device_initialize(dev);
	return device_add(dev);
}

/* driver_init(), as drivers/base/init.c: /sys/devices, /sys/class, /sys/devices/platform */
void driver_init(void)
{
	devices_kobj = kobject_create_and_add("devices", NULL);
	if (!devices_kobj)
		panic("devices_init: cannot make /sys/devices");
	if (classes_init())
		panic("classes_init: cannot make /sys/class");
	if (device_register(&platform_bus))
		panic("platform_bus_init: cannot register the platform bus");
}
