/* SPDX-License-Identifier: MIT */
/*
 * sysfs, as include/linux/sysfs.h: attributes are files of a kobject's
 * directory under /sys; reading one calls the kobject's sysfs_ops->show()
 * with a page-sized buffer (fs/sysfs/). Read-only: there is no store path.
 */
#ifndef _LINUX_SYSFS_H
#define _LINUX_SYSFS_H

#include <linux/compiler.h>
#include <linux/types.h>

struct kobject;

struct attribute {
	const char		*name;
	umode_t			mode;
};

/*
 * A set of attributes made together; with a name, in a subdirectory of
 * that name (sysfs_create_group).
 */
struct attribute_group {
	const char		*name;
	struct attribute	**attrs;
};

#define __ATTR(_name, _mode, _show, _store) {				\
	.attr = { .name = __stringify(_name), .mode = (_mode) },	\
	.show	= _show,						\
	.store	= _store,						\
}

#define __ATTR_RO_MODE(_name, _mode) {					\
	.attr	= { .name = __stringify(_name), .mode = (_mode) },	\
	.show	= _name##_show,						\
}

#define __ATTR_RO(_name)	__ATTR_RO_MODE(_name, 0444)

#define __ATTRIBUTE_GROUPS(_name)					\
static const struct attribute_group *_name##_groups[] = {		\
	&_name##_group,							\
	NULL,								\
}

#define ATTRIBUTE_GROUPS(_name)						\
static const struct attribute_group _name##_group = {			\
	.attrs = _name##_attrs,						\
};									\
__ATTRIBUTE_GROUPS(_name)

/* How a kobject's attributes are read and written (its ktype's). */
struct sysfs_ops {
	ssize_t	(*show)(struct kobject *kobj, struct attribute *attr, char *buf);
	ssize_t	(*store)(struct kobject *kobj, struct attribute *attr,
			 const char *buf, size_t count);
};

/* fs/sysfs/ */
int sysfs_create_dir_ns(struct kobject *kobj, const void *ns);
int sysfs_create_file(struct kobject *kobj, const struct attribute *attr);
int sysfs_create_files(struct kobject *kobj, const struct attribute * const *attr);
int sysfs_create_group(struct kobject *kobj, const struct attribute_group *grp);
int sysfs_create_groups(struct kobject *kobj, const struct attribute_group **groups);
int sysfs_create_link(struct kobject *kobj, struct kobject *target, const char *name);
void sysfs_init(void);

/* Every show() call that sysfs made (u64; the host reads it by symbol). */
extern u64 nr_sysfs_shows;

#endif /* _LINUX_SYSFS_H */
