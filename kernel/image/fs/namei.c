// SPDX-License-Identifier: MIT
/*
 * The directory tree and path lookup, after fs/dcache.c and fs/namei.c.
 * ramfs keeps every dentry for ever, so a lookup walks the dentry tree
 * from root_dentry one component at a time; "." and ".." work, a trailing
 * "/" is ignored, and there are no mount points, links or permissions.
 * Entries are only ever added (and under dcache_lock), so lookups by
 * other CPUs need no lock: a new dentry is complete before it is linked.
 */
#include <linux/kernel.h>
#include <linux/fs.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

struct dentry *root_dentry;
static DEFINE_RAW_SPINLOCK(dcache_lock);

struct inode *ramfs_get_dir_inode(void);

struct dentry *d_alloc_name(struct dentry *parent, const char *name, int len,
			    struct inode *inode)
{
	struct dentry *d;
	unsigned long flags;

	if (len > NAME_MAX)
		return ERR_PTR(-ENAMETOOLONG);
	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return ERR_PTR(-ENOMEM);
	memcpy(d->d_name, name, len);
	d->d_name[len] = 0;
	d->d_inode = inode;
	d->d_parent = parent ? parent : d;
	INIT_LIST_HEAD(&d->d_subdirs);
	INIT_LIST_HEAD(&d->d_child);
	if (S_ISDIR(inode->i_mode))
		inode->i_dentry = d;
	if (parent) {
		raw_spin_lock_irqsave(&dcache_lock, flags);
		list_add_tail(&d->d_child, &parent->d_subdirs);
		raw_spin_unlock_irqrestore(&dcache_lock, flags);
	}
	return d;
}

static struct dentry *d_lookup(struct dentry *dir, const char *name, int len)
{
	struct dentry *d;

	if (len == 1 && name[0] == '.')
		return dir;
	if (len == 2 && name[0] == '.' && name[1] == '.')
		return dir->d_parent;
	list_for_each_entry(d, &dir->d_subdirs, d_child)
		if ((int)strnlen(d->d_name, NAME_MAX + 1) == len &&
		    !memcmp(d->d_name, name, len))
			return d;
	return NULL;
}

/*
 * d_lookup_path(): the dentry of an absolute path, or NULL. With parent
 * and last, also the directory that holds (or would hold) the last
 * component and where that component starts, for creating it.
 */
struct dentry *d_lookup_path(const char *path, struct dentry **parent,
			     const char **last)
{
	struct dentry *d = root_dentry;
	const char *p = path, *name;
	int len;

	if (parent)
		*parent = NULL;
	while (*p == '/')
		p++;
	while (*p) {
		name = p;
		while (*p && *p != '/')
			p++;
		len = p - name;
		while (*p == '/')
			p++;
		if (!S_ISDIR(d->d_inode->i_mode))
			return NULL;
		if (!*p && parent) {
			*parent = d;
			*last = name;
		}
		d = d_lookup(d, name, len);
		if (!d)
			return NULL;
	}
	return d;
}

/* mkdir -p for the boot-time tree. */
struct dentry *vfs_mkdir_p(const char *path)
{
	struct dentry *d = root_dentry, *next;
	const char *p = path, *name;
	int len;

	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		name = p;
		while (*p && *p != '/')
			p++;
		len = p - name;
		next = d_lookup(d, name, len);
		if (!next) {
			struct inode *inode = ramfs_get_dir_inode();

			if (!inode)
				return ERR_PTR(-ENOMEM);
			next = d_alloc_name(d, name, len, inode);
			if (IS_ERR(next))
				return next;
		}
		d = next;
	}
	return d;
}

/* Links inode in at path, making the directories above it. */
struct dentry *vfs_create_file(const char *path, struct inode *inode)
{
	const char *slash = path, *p;
	struct dentry *dir;
	char buf[PATH_MAX];
	int n;

	for (p = path; *p; p++)
		if (*p == '/')
			slash = p;
	n = slash - path;
	if (n >= PATH_MAX)
		return ERR_PTR(-ENAMETOOLONG);
	memcpy(buf, path, n);
	buf[n] = 0;
	dir = vfs_mkdir_p(buf);
	if (IS_ERR(dir))
		return dir;
	if (*slash == '/')
		slash++;
	return d_alloc_name(dir, slash, strlen(slash), inode);
}

void vfs_caches_init(void)
{
	struct inode *inode = ramfs_get_dir_inode();

	if (!inode)
		panic("VFS: cannot make the root directory");
	root_dentry = d_alloc_name(NULL, "/", 1, inode);
	if (IS_ERR(root_dentry))
		panic("VFS: cannot make the root dentry");
}

/*
 * getname - copy the user path @filename into a new struct filename
 * (Linux: from names_cache, PATH_MAX bytes). -ENOENT for "", -EFAULT for
 * a bad pointer, -ENAMETOOLONG for a path of PATH_MAX bytes or more.
 */
struct filename *getname(const char *filename)
{
	struct filename *result = kmalloc(sizeof(*result) + PATH_MAX, GFP_KERNEL);
	long len;

	if (!result)
		return ERR_PTR(-ENOMEM);
	len = strncpy_from_user(result->iname, filename, PATH_MAX);
	if (len < 0 || len == 0 || len == PATH_MAX) {
		kfree(result);
		return ERR_PTR(len < 0 ? len : len ? -ENAMETOOLONG : -ENOENT);
	}
	result->name = result->iname;
	result->uptr = filename;
	result->refcnt = 1;
	return result;
}

void putname(struct filename *name)
{
	if (name && !IS_ERR(name) && --name->refcnt <= 0)
		kfree(name);
}
