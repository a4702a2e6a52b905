/* SPDX-License-Identifier: MIT */
/*
 * Kernel objects, as include/linux/kobject.h: a named node of the /sys
 * tree with a parent and a type whose sysfs_ops read its attributes.
 * kpemu's kobjects are never freed and never leave sysfs (its ramfs
 * keeps every dentry), so there is no reference count, kset or uevent.
 */
#ifndef _LINUX_KOBJECT_H
#define _LINUX_KOBJECT_H

#include <linux/compiler.h>
#include <linux/types.h>
#include <linux/sysfs.h>

struct dentry;

struct kobject {
	const char		*name;
	struct kobject		*parent;
	const struct kobj_type	*ktype;
	struct dentry		*sd;		/* its directory (Linux: kernfs_node) */
	unsigned int		state_initialized:1;
	unsigned int		state_in_sysfs:1;
};

struct kobj_type {
	const struct sysfs_ops	*sysfs_ops;
	const struct attribute_group **default_groups;
};

/* An attribute of a plain kobject (kobj_sysfs_ops calls its show). */
struct kobj_attribute {
	struct attribute attr;
	ssize_t (*show)(struct kobject *kobj, struct kobj_attribute *attr,
			char *buf);
	ssize_t (*store)(struct kobject *kobj, struct kobj_attribute *attr,
			 const char *buf, size_t count);
};

extern const struct sysfs_ops kobj_sysfs_ops;
extern const struct kobj_type dynamic_kobj_ktype;

/* /sys/kernel (kernel/ksysfs.c) */
extern struct kobject *kernel_kobj;

static inline const char *kobject_name(const struct kobject *kobj)
{
	return kobj->name;
}

__printf(2, 3) int kobject_set_name(struct kobject *kobj, const char *fmt, ...);
int kobject_set_name_vargs(struct kobject *kobj, const char *fmt, va_list vargs);
void kobject_init(struct kobject *kobj, const struct kobj_type *ktype);
__printf(3, 4) int kobject_add(struct kobject *kobj, struct kobject *parent,
			       const char *fmt, ...);
__printf(4, 5) int kobject_init_and_add(struct kobject *kobj,
					const struct kobj_type *ktype,
					struct kobject *parent, const char *fmt, ...);
struct kobject *kobject_create_and_add(const char *name, struct kobject *parent);

#endif /* _LINUX_KOBJECT_H */
