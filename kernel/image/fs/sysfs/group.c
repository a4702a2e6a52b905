// SPDX-License-Identifier: MIT
/*
 * Attribute groups, as fs/sysfs/group.c: a group's files go in the
 * kobject's directory, or in a subdirectory of the group's name.
 */
#include <linux/kernel.h>
#include <linux/fs.h>
#include <linux/kobject.h>
#include "sysfs.h"

static int create_files(struct dentry *parent, struct kobject *kobj,
			const struct attribute_group *grp)
{
	struct attribute *const *attr;
	int error = 0;

	for (attr = grp->attrs; attr && *attr && !error; attr++)
		error = sysfs_add_file_mode_ns(parent, *attr, (*attr)->mode, kobj);
	return error;
}

/* sysfs_create_group(): @grp's files for @kobj, which is in sysfs. */
int sysfs_create_group(struct kobject *kobj, const struct attribute_group *grp)
{
	struct dentry *dir;

	if (!kobj || !kobj->sd || !grp)
		return -EINVAL;
	dir = kobj->sd;
	if (grp->name) {
		dir = sysfs_new_dir(kobj->sd, grp->name);
		if (IS_ERR(dir))
			return PTR_ERR(dir);
	}
	return create_files(dir, kobj, grp);
}

/* sysfs_create_groups(): each group of the NULL-terminated @groups, until one fails. */
int sysfs_create_groups(struct kobject *kobj, const struct attribute_group **groups)
{
	int error = 0;
	int i;

	if (!groups)
		return 0;
	for (i = 0; groups[i]; i++) {
		error = sysfs_create_group(kobj, groups[i]);
		if (error)
			break;
	}
	return error;
}
