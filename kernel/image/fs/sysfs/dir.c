// SPDX-License-Identifier: MIT
/*
 * A kobject's directory, as fs/sysfs/dir.c: made under its parent's (or
 * /sys for a kobject without a parent) when the kobject is added. Adding
 * a name that is there already fails with -EEXIST and Linux's warning
 * (d_alloc_name checks and links under the tree's lock). sysfs never
 * removes what it made.
 */
#include <linux/kernel.h>
#include <linux/fs.h>
#include <linux/slab.h>
#include <linux/kobject.h>
#include "sysfs.h"

/* sysfs_warn_dup(): the path from /sys, as Linux prints it */
static void sysfs_warn_dup(struct dentry *parent, const char *name)
{
	char path[PATH_MAX];
	int pos = sizeof(path) - 1, n;
	struct dentry *d;

	path[pos] = 0;
	for (d = parent; d != sysfs_root_dentry && d != d->d_parent; d = d->d_parent) {
		n = strnlen(d->d_name, NAME_MAX + 1);
		if (pos < n + 1)
			break;
		pos -= n;
		memcpy(path + pos, d->d_name, n);
		path[--pos] = '/';
	}
	pr_warn("sysfs: cannot create duplicate filename '%s/%s'\n", path + pos, name);
}

/* Links @inode as @name in @parent; the tree holds it. */
struct dentry *sysfs_new_dentry(struct dentry *parent, const char *name,
				struct inode *inode)
{
	struct dentry *d = d_alloc_name(parent, name, strlen(name), inode);

	if (PTR_ERR(d) == -EEXIST)
		sysfs_warn_dup(parent, name);
	return d;
}

struct dentry *sysfs_new_dir(struct dentry *parent, const char *name)
{
	struct inode *inode = ramfs_get_dir_inode();
	struct dentry *d;

	if (!inode)
		return ERR_PTR(-ENOMEM);
	d = sysfs_new_dentry(parent, name, inode);
	if (IS_ERR(d))
		kfree(inode);
	return d;
}

/* sysfs_create_dir_ns(): @kobj's directory, in its parent's or /sys (@ns: kpemu has none). */
int sysfs_create_dir_ns(struct kobject *kobj, const void *ns)
{
	struct dentry *parent, *d;

	if (!kobj || !kobject_name(kobj))
		return -EINVAL;
	parent = kobj->parent ? kobj->parent->sd : sysfs_root_dentry;
	if (!parent)
		return -ENOENT;
	d = sysfs_new_dir(parent, kobject_name(kobj));
	if (IS_ERR(d))
		return PTR_ERR(d);
	kobj->sd = d;
	return 0;
}
