// SPDX-License-Identifier: MIT
/*
 * Links between kobjects, as fs/sysfs/symlink.c: a symlink in one
 * kobject's directory to another's, its target a path relative to the
 * link (kernfs_get_target_path: "../" up to the lowest directory above
 * both, then down), so /sys/class/rtc/rtc0 reads
 * "../../devices/platform/9010000.pl031/rtc/rtc0" as on Linux.
 */
#include <linux/kernel.h>
#include <linux/fs.h>
#include <linux/slab.h>
#include <linux/kobject.h>
#include "sysfs.h"

/* Whether @a is a strict ancestor of @d. sysfs dentries never move. */
static bool is_ancestor(const struct dentry *a, const struct dentry *d)
{
	while (d != d->d_parent) {
		d = d->d_parent;
		if (d == a)
			return true;
	}
	return false;
}

/* The path from directory @parent to @target, into @buf; its length or -ENAMETOOLONG. */
static int sysfs_get_target_path(const struct dentry *parent,
				 const struct dentry *target, char *buf, int size)
{
	const struct dentry *base = parent, *d;
	int len = 0, n, end;

	/* up to the lowest directory above both */
	while (base != base->d_parent && !is_ancestor(base, target)) {
		if (len + 3 >= size)
			return -ENAMETOOLONG;
		memcpy(buf + len, "../", 3);
		len += 3;
		base = base->d_parent;
	}
	/* then down: the names from base to target, filled in from the end */
	end = len;
	for (d = target; d != base && d != d->d_parent; d = d->d_parent)
		end += strnlen(d->d_name, NAME_MAX + 1) + 1;
	end--;	/* no '/' after the last */
	if (end >= size)
		return -ENAMETOOLONG;
	buf[end] = 0;
	for (d = target, n = end; d != base && d != d->d_parent; d = d->d_parent) {
		int l = strnlen(d->d_name, NAME_MAX + 1);

		n -= l;
		memcpy(buf + n, d->d_name, l);
		if (n > len)
			buf[--n] = '/';
	}
	return end;
}

/*
 * sysfs_create_link(): a link @name in @kobj's directory (/sys without
 * @kobj) to @target's.
 */
int sysfs_create_link(struct kobject *kobj, struct kobject *target, const char *name)
{
	struct dentry *parent = kobj ? kobj->sd : sysfs_root_dentry;
	struct inode *inode;
	struct dentry *d;
	char *path;
	int len;

	if (!parent || !target || !target->sd)
		return -ENOENT;
	path = kmalloc(PATH_MAX, GFP_KERNEL);
	if (!path)
		return -ENOMEM;
	len = sysfs_get_target_path(parent, target->sd, path, PATH_MAX);
	if (len < 0) {
		kfree(path);
		return len;
	}
	inode = ramfs_get_inode(S_IFLNK | 0777, 0);
	if (!inode) {
		kfree(path);
		return -ENOMEM;
	}
	inode->i_private = path;	/* the target, as vfs_symlink keeps it */
	inode->i_size = len;
	d = sysfs_new_dentry(parent, name, inode);
	if (IS_ERR(d)) {
		kfree(path);
		kfree(inode);
		return PTR_ERR(d);
	}
	return 0;
}
