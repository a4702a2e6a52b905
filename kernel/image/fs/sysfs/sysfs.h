/* SPDX-License-Identifier: MIT */
/* sysfs internals, as fs/sysfs/sysfs.h: the files live in the ramfs tree. */
#ifndef __SYSFS_INTERNAL_H
#define __SYSFS_INTERNAL_H

#include <linux/fs.h>
#include <linux/kobject.h>

/* /sys (Linux: sysfs_root_kn) */
extern struct dentry *sysfs_root_dentry;

struct inode *ramfs_get_dir_inode(void);

/* dir.c */
struct dentry *sysfs_new_dentry(struct dentry *parent, const char *name,
				struct inode *inode);
struct dentry *sysfs_new_dir(struct dentry *parent, const char *name);

/* file.c */
int sysfs_add_file_mode_ns(struct dentry *parent, const struct attribute *attr,
			   umode_t mode, struct kobject *kobj);

#endif /* __SYSFS_INTERNAL_H */
