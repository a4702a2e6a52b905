// SPDX-License-Identifier: MIT
/*
 * sysfs_init(), as fs/sysfs/mount.c. kpemu has one tree and no mounts:
 * sysfs is the directory /sys of the ramfs tree, made at boot, and the
 * kobjects' directories and attribute files are made in it.
 */
#include <linux/kernel.h>
#include <linux/fs.h>
#include <linux/sysfs.h>
#include "sysfs.h"

struct dentry *sysfs_root_dentry;

void sysfs_init(void)
{
	struct dentry *d = vfs_mkdir_p("/sys");

	if (IS_ERR(d))
		panic("sysfs: cannot make /sys");
	sysfs_root_dentry = d;
}
