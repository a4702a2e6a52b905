// SPDX-License-Identifier: MIT
/*
 * tracefs, after fs/tracefs/inode.c: the directories of the tracing tree,
 * at /sys/kernel/tracing in the guest's VFS (and, as Linux automounts it,
 * /sys/kernel/debug/tracing). kpemu serves the tracing files themselves
 * from the host; the guest holds the hierarchy, made and removed through
 * tracefs_create_dir() and tracefs_remove() exactly when Linux's
 * trace_events.c calls them, so a probe on these functions sees the calls
 * a real kernel makes (kernel/trace/trace_events.c drives them).
 */
#include <linux/kernel.h>
#include <linux/fs.h>
#include <linux/slab.h>
#include <linux/tracefs.h>

#define TRACEFS_ROOT	"/sys/kernel/tracing"

struct inode *ramfs_get_dir_inode(void);

static struct dentry *tracefs_root;

/*
 * tracefs_create_dir - make the directory @name in @parent (the tracefs
 * root when NULL). Returns its dentry, which the tree holds, or NULL.
 */
struct dentry *tracefs_create_dir(const char *name, struct dentry *parent)
{
	struct inode *inode;
	struct dentry *d;

	if (!parent)
		parent = tracefs_root;
	if (!parent)
		return NULL;
	inode = ramfs_get_dir_inode();
	if (!inode)
		return NULL;
	d = d_create(parent, name, inode);
	if (IS_ERR(d)) {
		kfree(inode);
		return NULL;
	}
	dput(d);	/* the tree keeps it */
	return d;
}

/* tracefs_remove - remove @dentry and everything below it. */
void tracefs_remove(struct dentry *dentry)
{
	if (dentry && dentry != tracefs_root)
		d_remove_tree(dentry);
}

/* The dentry of @path below the root, referenced, or NULL. */
struct dentry *tracefs_lookup(const char *path)
{
	char full[sizeof(TRACEFS_ROOT) + TRACEFS_PATH_MAX + 1];
	struct dentry *d;

	if (snprintf(full, sizeof(full), TRACEFS_ROOT "/%s", path) >= (int)sizeof(full))
		return NULL;
	d = path_lookup(full, 0, NULL, NULL);
	return IS_ERR(d) ? NULL : d;
}

void tracefs_init(void)
{
	struct dentry *d = vfs_mkdir_p(TRACEFS_ROOT);

	if (IS_ERR(d) || IS_ERR(vfs_create_symlink("/sys/kernel/debug/tracing", "../tracing")))
		panic("tracefs: cannot make " TRACEFS_ROOT);
	tracefs_root = d;
}
