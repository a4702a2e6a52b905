// SPDX-License-Identifier: MIT
/*
 * The directory tree and path lookup, after fs/dcache.c and fs/namei.c.
 * ramfs keeps its dentries in memory, so a lookup walks the dentry tree
 * from root_dentry one component at a time; "." and ".." work, a trailing
 * "/" is ignored, symlinks are followed (in the last component only with
 * LOOKUP_FOLLOW, at most MAXSYMLINKS deep: -ELOOP), and there are no mount
 * points or permissions.
 *
 * A directory's entries are found through dentry_hashtable, keyed by the
 * parent and the name (fs/dcache.c's d_hash), so a lookup in a directory
 * of 10,000 events costs what one in a directory of ten does; d_subdirs
 * keeps creation order for readdir.
 *
 * dcache_lock guards the tree's lists and every d_count; a walk holds it
 * from start to end, so it never meets a half-removed entry. A dentry is
 * referenced by the tree while linked (and holds a reference to its
 * parent), by every struct file open on it and by whoever a lookup returned
 * it to; unlink/rmdir take it out of the tree and the last dput() frees it
 * and its inode, so an open file outlives its name, as on Linux.
 */
#include <linux/kernel.h>
#include <linux/fs.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/stringhash.h>
#include <asm/ptrace.h>

#define D_HASH_SHIFT	12

struct dentry *root_dentry;
struct user_namespace init_user_ns;
static DEFINE_RAW_SPINLOCK(dcache_lock);
static struct hlist_head dentry_hashtable[1 << D_HASH_SHIFT];

static struct hlist_head *d_hash(const struct dentry *parent, const char *name, int len)
{
	return &dentry_hashtable[hash_64(full_name_hash(parent, name, len), D_HASH_SHIFT)];
}

struct inode *ramfs_get_dir_inode(void);

struct dentry *dget(struct dentry *dentry)
{
	unsigned long flags;

	if (dentry) {
		raw_spin_lock_irqsave(&dcache_lock, flags);
		dentry->d_count++;
		raw_spin_unlock_irqrestore(&dcache_lock, flags);
	}
	return dentry;
}

/* The inode goes with its only dentry (ramfs has no hard links). */
static void iput_final(struct inode *inode)
{
	if (!inode)
		return;
	if (inode->i_capacity || S_ISLNK(inode->i_mode))
		kfree(inode->i_private);	/* writable data, a link's target */
	kfree(inode);
}

void dput(struct dentry *dentry)
{
	unsigned long flags;

	while (dentry) {
		struct dentry *parent = dentry->d_parent;
		int n;

		raw_spin_lock_irqsave(&dcache_lock, flags);
		n = --dentry->d_count;
		raw_spin_unlock_irqrestore(&dcache_lock, flags);
		if (n)
			return;
		if (!dentry->d_unlinked)
			panic("dput: last reference to a linked dentry %s", dentry->d_name);
		iput_final(dentry->d_inode);
		kfree(dentry);
		if (parent == dentry)
			return;
		dentry = parent;	/* the child's reference to its parent */
	}
}

/* A dentry for @name under @parent, not linked yet; @inode may be NULL. */
static struct dentry *d_alloc(struct dentry *parent, const char *name, int len,
			      struct inode *inode)
{
	struct dentry *d;

	if (len > NAME_MAX)
		return ERR_PTR(-ENAMETOOLONG);
	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return ERR_PTR(-ENOMEM);
	memcpy(d->d_name, name, len);
	d->d_name[len] = 0;
	d->d_inode = inode;
	d->d_parent = parent ? parent : d;
	d->d_unlinked = true;	/* until d_add_locked() */
	INIT_HLIST_NODE(&d->d_hash);
	INIT_LIST_HEAD(&d->d_subdirs);
	INIT_LIST_HEAD(&d->d_child);
	return d;
}

static struct dentry *d_lookup(struct dentry *dir, const char *name, int len)
{
	struct dentry *d;

	if (len == 1 && name[0] == '.')
		return dir;
	if (len == 2 && name[0] == '.' && name[1] == '.')
		return dir->d_parent;
	if (len > NAME_MAX)
		return NULL;
	hlist_for_each_entry(d, d_hash(dir, name, len), d_hash)
		if (d->d_parent == dir && !memcmp(d->d_name, name, len) && !d->d_name[len])
			return d;
	return NULL;
}

/* dcache_lock held: links @d (with @inode) into its parent, or -EEXIST. */
static int d_add_locked(struct dentry *d, struct inode *inode)
{
	struct dentry *parent = d->d_parent;

	if (d_lookup(parent, d->d_name, strnlen(d->d_name, NAME_MAX + 1)))
		return -EEXIST;
	d->d_inode = inode;
	if (S_ISDIR(inode->i_mode))
		inode->i_dentry = d;
	d->d_unlinked = false;
	d->d_count++;		/* the tree's reference */
	parent->d_count++;	/* ours on the parent */
	list_add_tail(&d->d_child, &parent->d_subdirs);
	hlist_add_head(&d->d_hash, d_hash(parent, d->d_name, strnlen(d->d_name, NAME_MAX + 1)));
	return 0;
}

/*
 * d_alloc_name - link a new dentry for @inode as @name under @parent (the
 * root when @parent is NULL). Returns it without a reference of the
 * caller's: the tree holds it.
 */
struct dentry *d_alloc_name(struct dentry *parent, const char *name, int len,
			    struct inode *inode)
{
	struct dentry *d = d_alloc(parent, name, len, inode);
	unsigned long flags;
	int err;

	if (IS_ERR(d))
		return d;
	if (!parent) {
		if (S_ISDIR(inode->i_mode))
			inode->i_dentry = d;
		d->d_unlinked = false;
		d->d_count = 1;
		return d;
	}
	raw_spin_lock_irqsave(&dcache_lock, flags);
	err = d_add_locked(d, inode);
	raw_spin_unlock_irqrestore(&dcache_lock, flags);
	if (err) {
		kfree(d);
		return ERR_PTR(err);
	}
	return d;
}

/*
 * dcache_lock held. Walks @p from @d (from the root if @p is absolute);
 * see path_lookup(). Returns the dentry, without a reference, or an
 * ERR_PTR.
 */
static struct dentry *walk_locked(struct dentry *d, const char *p, unsigned int flags,
				  int *depth, struct dentry **parent, const char **last)
{
	if (*p == '/')
		d = root_dentry;
	while (*p == '/')
		p++;
	while (*p) {
		const char *name = p;
		struct dentry *next;
		int len;

		while (*p && *p != '/')
			p++;
		len = p - name;
		while (*p == '/')
			p++;
		if (!S_ISDIR(d->d_inode->i_mode))
			return ERR_PTR(-ENOTDIR);
		if (!*p && parent) {
			*parent = d;
			*last = name;
		}
		next = d_lookup(d, name, len);
		if (!next)
			return ERR_PTR(-ENOENT);
		if (S_ISLNK(next->d_inode->i_mode) && (*p || (flags & LOOKUP_FOLLOW))) {
			if (++*depth > MAXSYMLINKS)
				return ERR_PTR(-ELOOP);
			next = walk_locked(d, next->d_inode->i_private, LOOKUP_FOLLOW,
					   depth, NULL, NULL);
			if (IS_ERR(next))
				return next;
		}
		d = next;
	}
	return d;
}

/*
 * path_lookup - resolve the absolute @path. Returns its dentry with a
 * reference (dput() it), or an ERR_PTR (-ENOENT, -ENOTDIR, -ELOOP). With
 * @parent, *parent gets the directory that holds (or would hold) the last
 * component, with a reference, and *last where that component starts in
 * @path, or NULL when the walk did not get that far; a create uses them.
 */
struct dentry *path_lookup(const char *path, unsigned int flags,
			   struct dentry **parent, const char **last)
{
	struct dentry *d;
	unsigned long irqflags;
	int depth = 0;

	if (parent)
		*parent = NULL;
	raw_spin_lock_irqsave(&dcache_lock, irqflags);
	d = walk_locked(root_dentry, path, flags, &depth, parent, last);
	if (!IS_ERR(d))
		d->d_count++;
	if (parent && *parent)
		(*parent)->d_count++;
	raw_spin_unlock_irqrestore(&dcache_lock, irqflags);
	return d;
}

/*
 * d_child_at - the @n-th entry of @dir in creation order, for readdir:
 * copies its name, inode number and mode out under the lock. -ENOENT past
 * the end.
 */
struct dentry *d_child_at(struct dentry *dir, loff_t n, char *name,
			  unsigned long *ino, umode_t *mode)
{
	struct dentry *d, *found = ERR_PTR(-ENOENT);
	unsigned long flags;

	raw_spin_lock_irqsave(&dcache_lock, flags);
	list_for_each_entry(d, &dir->d_subdirs, d_child)
		if (n-- == 0) {
			memcpy(name, d->d_name, NAME_MAX + 1);
			*ino = d->d_inode->i_ino;
			*mode = d->d_inode->i_mode;
			found = d;
			break;
		}
	raw_spin_unlock_irqrestore(&dcache_lock, flags);
	return found;
}

/* dcache_lock held: takes @dentry out of the tree; the caller dputs it. */
static void d_delete_locked(struct dentry *dentry)
{
	list_del_init(&dentry->d_child);
	hlist_del_init(&dentry->d_hash);
	dentry->d_unlinked = true;
}

/*
 * vfs_symlink - as Linux 6.1's: @dentry is the new, negative dentry under
 * @dir; it gets a link inode holding @oldname (not checked: a link may
 * dangle). -EEXIST if the name appeared meanwhile.
 */
int vfs_symlink(struct user_namespace *mnt_userns, struct inode *dir,
		struct dentry *dentry, const char *oldname)
{
	size_t len = strnlen(oldname, PATH_MAX);
	struct inode *inode;
	unsigned long flags;
	char *target;
	int err;

	if (!S_ISDIR(dir->i_mode))
		return -ENOTDIR;
	if (len >= PATH_MAX)
		return -ENAMETOOLONG;
	target = kmalloc(len + 1, GFP_KERNEL);
	inode = ramfs_get_inode(S_IFLNK | 0777, 0);
	if (!target || !inode) {
		kfree(target);
		kfree(inode);
		return -ENOMEM;
	}
	memcpy(target, oldname, len + 1);
	inode->i_private = target;
	inode->i_size = len;
	raw_spin_lock_irqsave(&dcache_lock, flags);
	err = d_add_locked(dentry, inode);
	raw_spin_unlock_irqrestore(&dcache_lock, flags);
	if (err) {
		kfree(target);
		kfree(inode);
		dentry->d_inode = NULL;
	}
	return err;
}

/* vfs_unlink - remove the non-directory @dentry from @dir. */
int vfs_unlink(struct user_namespace *mnt_userns, struct inode *dir,
	       struct dentry *dentry, struct inode **delegated_inode)
{
	unsigned long flags;

	if (S_ISDIR(dentry->d_inode->i_mode))
		return -EISDIR;
	raw_spin_lock_irqsave(&dcache_lock, flags);
	if (dentry->d_unlinked || dentry->d_parent->d_inode != dir) {
		raw_spin_unlock_irqrestore(&dcache_lock, flags);
		return -ENOENT;
	}
	d_delete_locked(dentry);
	raw_spin_unlock_irqrestore(&dcache_lock, flags);
	dput(dentry);	/* the tree's reference */
	return 0;
}

/* vfs_rmdir - remove the empty directory @dentry from @dir. */
int vfs_rmdir(struct user_namespace *mnt_userns, struct inode *dir,
	      struct dentry *dentry)
{
	unsigned long flags;

	if (!S_ISDIR(dentry->d_inode->i_mode))
		return -ENOTDIR;
	if (dentry == root_dentry)
		return -EBUSY;
	raw_spin_lock_irqsave(&dcache_lock, flags);
	if (dentry->d_unlinked || dentry->d_parent->d_inode != dir) {
		raw_spin_unlock_irqrestore(&dcache_lock, flags);
		return -ENOENT;
	}
	if (!list_empty(&dentry->d_subdirs)) {
		raw_spin_unlock_irqrestore(&dcache_lock, flags);
		return -ENOTEMPTY;
	}
	d_delete_locked(dentry);
	raw_spin_unlock_irqrestore(&dcache_lock, flags);
	dput(dentry);
	return 0;
}

/* mkdir -p for the boot-time tree. */
struct dentry *vfs_mkdir_p(const char *path)
{
	struct dentry *d = root_dentry, *next;
	const char *p = path, *name;
	unsigned long flags;
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
		raw_spin_lock_irqsave(&dcache_lock, flags);
		next = d_lookup(d, name, len);
		raw_spin_unlock_irqrestore(&dcache_lock, flags);
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

/* A boot-time symlink at @path to @target, making the directories above. */
struct dentry *vfs_create_symlink(const char *path, const char *target)
{
	size_t len = strnlen(target, PATH_MAX);
	struct inode *inode = ramfs_get_inode(S_IFLNK | 0777, 0);
	char *copy = kmalloc(len + 1, GFP_KERNEL);
	struct dentry *d;

	if (!inode || !copy) {
		kfree(inode);
		kfree(copy);
		return ERR_PTR(-ENOMEM);
	}
	memcpy(copy, target, len + 1);
	inode->i_private = copy;
	inode->i_size = len;
	d = vfs_create_file(path, inode);
	if (IS_ERR(d)) {
		kfree(copy);
		kfree(inode);
	}
	return d;
}

/*
 * d_remove_tree - take @dentry and everything below it out of the tree
 * (simple_recursive_removal()): the subtree is detached first, so no walk
 * reaches it, then taken apart from the leaves up; whatever is still open
 * goes at its last dput().
 */
void d_remove_tree(struct dentry *dentry)
{
	struct dentry *d = dentry, *child, *parent;
	unsigned long flags;

	raw_spin_lock_irqsave(&dcache_lock, flags);
	if (dentry->d_unlinked) {
		raw_spin_unlock_irqrestore(&dcache_lock, flags);
		return;
	}
	d_delete_locked(dentry);
	raw_spin_unlock_irqrestore(&dcache_lock, flags);
	for (;;) {
		raw_spin_lock_irqsave(&dcache_lock, flags);
		if (!list_empty(&d->d_subdirs)) {
			child = list_first_entry(&d->d_subdirs, struct dentry, d_child);
			d_delete_locked(child);
			raw_spin_unlock_irqrestore(&dcache_lock, flags);
			d = child;
			continue;
		}
		raw_spin_unlock_irqrestore(&dcache_lock, flags);
		parent = d->d_parent;
		if (d == dentry) {
			dput(d);
			return;
		}
		dput(d);	/* the tree's reference; its parent's is still held */
		d = parent;
	}
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
 * d_create - link @inode as @name under @dir, atomically with the check
 * that the name is free (-EEXIST). Returns the dentry with a reference.
 */
struct dentry *d_create(struct dentry *dir, const char *name, struct inode *inode)
{
	struct dentry *d = d_alloc(dir, name, strnlen(name, PATH_MAX), inode);
	unsigned long flags;
	int err;

	if (IS_ERR(d))
		return d;
	raw_spin_lock_irqsave(&dcache_lock, flags);
	err = dir->d_unlinked ? -ENOENT : d_add_locked(d, inode);
	if (!err)
		d->d_count++;	/* the caller's */
	raw_spin_unlock_irqrestore(&dcache_lock, flags);
	if (err) {
		kfree(d);
		return ERR_PTR(err);
	}
	return d;
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

/*
 * The name system calls (fs/namei.c, fs/stat.c): every cwd is /, so @dfd
 * matters only for a relative path, which fails with -EBADF unless it is
 * AT_FDCWD, where it fails with -ENOENT (as do_sys_openat2).
 */
static struct filename *getname_at(int dfd, const char *pathname)
{
	struct filename *name = getname(pathname);

	if (!IS_ERR(name) && name->name[0] != '/') {
		putname(name);
		return ERR_PTR(dfd == AT_FDCWD ? -ENOENT : -EBADF);
	}
	return name;
}

/* Looks up @name's parent: it must exist and be a directory. */
static struct dentry *lookup_parent(struct filename *name, const char **last)
{
	struct dentry *parent, *d;

	d = path_lookup(name->name, 0, &parent, last);
	if (!IS_ERR(d))
		dput(d);
	if (!parent)
		return ERR_PTR(IS_ERR(d) ? PTR_ERR(d) : -ENOENT);
	if (!**last) {		/* "/" itself */
		dput(parent);
		return ERR_PTR(-EEXIST);
	}
	return parent;
}

int do_symlinkat(struct filename *from, int newdfd, struct filename *to)
{
	struct dentry *parent, *dentry;
	const char *last;
	int err;

	if (IS_ERR(from)) {
		putname(to);
		return PTR_ERR(from);
	}
	if (IS_ERR(to)) {
		err = PTR_ERR(to);
		goto out_from;
	}
	parent = lookup_parent(to, &last);
	if (IS_ERR(parent)) {
		err = PTR_ERR(parent);
		goto out;
	}
	dentry = d_alloc(parent, last, strnlen(last, PATH_MAX), NULL);
	if (IS_ERR(dentry)) {
		err = PTR_ERR(dentry);
	} else {
		err = vfs_symlink(&init_user_ns, parent->d_inode, dentry, from->name);
		if (err)
			kfree(dentry);	/* never linked */
	}
	dput(parent);
out:
	putname(to);
out_from:
	putname(from);
	return err;
}

long __arm64_sys_symlinkat(const struct pt_regs *regs)
{
	return do_symlinkat(getname((const char *)regs->regs[0]), regs->regs[1],
			    getname_at(regs->regs[1], (const char *)regs->regs[2]));
}

/* unlink or rmdir @name: the removal both system calls share. */
static int remove_name(struct filename *name, bool dir)
{
	struct dentry *parent, *dentry;
	const char *last;
	int err;

	if (IS_ERR(name))
		return PTR_ERR(name);
	dentry = path_lookup(name->name, 0, &parent, &last);
	if (IS_ERR(dentry)) {
		err = PTR_ERR(dentry);
	} else {
		if (!parent)	/* "/" */
			err = dir ? -EBUSY : -EISDIR;
		else if (dir)
			err = vfs_rmdir(&init_user_ns, parent->d_inode, dentry);
		else
			err = vfs_unlink(&init_user_ns, parent->d_inode, dentry, NULL);
		dput(dentry);
	}
	dput(parent);
	putname(name);
	return err;
}

int do_unlinkat(int dfd, struct filename *name)
{
	return remove_name(name, false);
}

int do_rmdir(int dfd, struct filename *name)
{
	return remove_name(name, true);
}

long __arm64_sys_unlinkat(const struct pt_regs *regs)
{
	int dfd = regs->regs[0], flag = regs->regs[2];

	if (flag & ~AT_REMOVEDIR)
		return -EINVAL;
	if (flag & AT_REMOVEDIR)
		return do_rmdir(dfd, getname_at(dfd, (const char *)regs->regs[1]));
	return do_unlinkat(dfd, getname_at(dfd, (const char *)regs->regs[1]));
}

int do_mkdirat(int dfd, struct filename *name, umode_t mode)
{
	struct dentry *parent, *dentry;
	struct inode *inode;
	const char *last;
	int err = 0;

	if (IS_ERR(name))
		return PTR_ERR(name);
	parent = lookup_parent(name, &last);
	if (IS_ERR(parent)) {
		err = PTR_ERR(parent);
		goto out;
	}
	inode = ramfs_get_dir_inode();
	if (!inode) {
		err = -ENOMEM;
	} else {
		inode->i_mode = S_IFDIR | (mode & 07777);
		dentry = d_create(parent, last, inode);
		if (IS_ERR(dentry)) {
			kfree(inode);
			err = PTR_ERR(dentry);
		} else {
			dput(dentry);
		}
	}
	dput(parent);
out:
	putname(name);
	return err;
}

long __arm64_sys_mkdirat(const struct pt_regs *regs)
{
	return do_mkdirat(regs->regs[0], getname_at(regs->regs[0], (const char *)regs->regs[1]),
			  regs->regs[2]);
}

/* readlinkat(2): the target, not NUL-terminated; -EINVAL if not a link. */
long __arm64_sys_readlinkat(const struct pt_regs *regs)
{
	struct filename *name = getname_at(regs->regs[0], (const char *)regs->regs[1]);
	char *buf = (char *)regs->regs[2];
	int bufsiz = regs->regs[3];
	struct dentry *d;
	long ret;

	if (bufsiz <= 0)
		return -EINVAL;
	if (IS_ERR(name))
		return PTR_ERR(name);
	d = path_lookup(name->name, 0, NULL, NULL);
	putname(name);
	if (IS_ERR(d))
		return PTR_ERR(d);
	ret = -EINVAL;
	if (S_ISLNK(d->d_inode->i_mode)) {
		ret = min_t(long, d->d_inode->i_size, bufsiz);
		if (copy_to_user(buf, d->d_inode->i_private, ret))
			ret = -EFAULT;
	}
	dput(d);
	return ret;
}
