// SPDX-License-Identifier: MIT
/*
 * Opening and closing, after fs/open.c, fs/file.c and fs/file_table.c:
 * struct file per open (its own f_pos), a per-task fd table
 * (files_struct, shared by reference as CLONE_FILES would, copied by
 * fork), openat(2) with O_CREAT/O_TRUNC/O_APPEND/O_DIRECTORY on the
 * ramfs tree (__arm64_sys_openat -> do_sys_open -> do_sys_openat2 ->
 * getname + do_filp_open, as Linux 6.1), close(2); the last fput() calls
 * f_op->release (a socket's).
 */
#include <linux/kernel.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <asm/ptrace.h>

#define TMP_FILE_CAPACITY	2048	/* a new file's data: the largest kmalloc */

struct inode *ramfs_get_inode(umode_t mode, size_t capacity);
static DEFINE_RAW_SPINLOCK(files_lock);	/* f_count and files->count */

/* vfs_open(): @file, made empty, opened on @path (do_dentry_open). */
noinline int vfs_open(const struct path *path, struct file *file)
{
	struct dentry *dentry = path->dentry;

	file->f_dentry = dget(dentry);
	ramfs_file_init(file, dentry->d_inode, file->f_mode, dentry->d_name);
	return 0;
}

/* An open file of @dentry: alloc_empty_file(), then vfs_open() as do_open. */
struct file *alloc_file(struct dentry *dentry, fmode_t mode, unsigned int flags)
{
	struct path path = { .dentry = dentry };
	struct file *f = kzalloc(sizeof(*f), GFP_KERNEL);
	int err;

	if (!f)
		return ERR_PTR(-ENOMEM);
	f->f_flags = flags;
	f->f_count = 1;
	f->f_mode = mode;
	err = vfs_open(&path, f);
	if (err) {
		kfree(f);
		return ERR_PTR(err);
	}
	return f;
}

void fput(struct file *file)
{
	unsigned long flags;
	int n;

	raw_spin_lock_irqsave(&files_lock, flags);
	n = --file->f_count;
	raw_spin_unlock_irqrestore(&files_lock, flags);
	if (n)
		return;
	if (file->f_op && file->f_op->release)
		file->f_op->release(file_inode(file), file);
	dput(file->f_dentry);	/* an unlinked file's inode goes with it */
	kfree(file);
}

static void get_file(struct file *file)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&files_lock, flags);
	file->f_count++;
	raw_spin_unlock_irqrestore(&files_lock, flags);
}

/* The task's file for fd, without a reference: the task's own table. */
struct file *fget(unsigned int fd)
{
	struct files_struct *files = current->files;

	if (!files || fd >= NR_OPEN_DEFAULT)
		return NULL;
	return files->fd_array[fd];
}

int get_unused_fd(struct file *file)
{
	struct files_struct *files = current->files;
	int fd;

	if (!files)
		return -EMFILE;
	for (fd = 0; fd < NR_OPEN_DEFAULT; fd++)
		if (!files->fd_array[fd]) {
			files->fd_array[fd] = file;
			return fd;
		}
	return -EMFILE;
}

struct files_struct *dup_fd(struct files_struct *oldf)
{
	struct files_struct *newf = kzalloc(sizeof(*newf), GFP_KERNEL);
	int fd;

	if (!newf)
		return NULL;
	newf->count = 1;
	if (oldf)
		for (fd = 0; fd < NR_OPEN_DEFAULT; fd++)
			if (oldf->fd_array[fd]) {
				newf->fd_array[fd] = oldf->fd_array[fd];
				get_file(newf->fd_array[fd]);
			}
	return newf;
}

void put_files_struct(struct files_struct *files)
{
	unsigned long flags;
	int fd, n;

	raw_spin_lock_irqsave(&files_lock, flags);
	n = --files->count;
	raw_spin_unlock_irqrestore(&files_lock, flags);
	if (n)
		return;
	for (fd = 0; fd < NR_OPEN_DEFAULT; fd++)
		if (files->fd_array[fd])
			fput(files->fd_array[fd]);
	kfree(files);
}

/* The file for an open of @d: what @flags allow on what @d is. */
static struct file *open_dentry(struct dentry *d, int flags)
{
	fmode_t fmode;

	switch (flags & O_ACCMODE) {
	case O_RDONLY:
		fmode = FMODE_READ;
		break;
	case O_WRONLY:
		fmode = FMODE_WRITE;
		break;
	default:
		fmode = FMODE_READ | FMODE_WRITE;
	}
	if ((fmode & FMODE_WRITE) && S_ISDIR(d->d_inode->i_mode))
		return ERR_PTR(-EISDIR);
	if ((fmode & FMODE_WRITE) && S_ISREG(d->d_inode->i_mode) &&
	    !d->d_inode->i_capacity)
		return ERR_PTR(-EACCES);	/* initramfs data, /proc */
	if ((flags & O_TRUNC) && (fmode & FMODE_WRITE) && S_ISREG(d->d_inode->i_mode))
		d->d_inode->i_size = 0;
	return alloc_file(d, fmode, flags);
}

/* path_openat(): the dentry to open, made first with O_CREAT. */
static struct dentry *open_last_lookup(const char *path, int flags, umode_t mode)
{
	struct dentry *parent, *d;
	struct inode *inode;
	const char *last;

	d = path_lookup(path, (flags & O_CREAT) && (flags & O_EXCL) ? 0 : LOOKUP_FOLLOW,
			&parent, &last);
	if (!IS_ERR(d) && (flags & O_CREAT) && (flags & O_EXCL)) {
		dput(d);
		d = ERR_PTR(-EEXIST);
	} else if (PTR_ERR(d) == -ENOENT && (flags & O_CREAT) && parent && *last) {
		inode = ramfs_get_inode(S_IFREG | (mode & 07777), TMP_FILE_CAPACITY);
		d = inode ? d_create(parent, last, inode) : ERR_PTR(-ENOMEM);
		if (IS_ERR(d) && inode) {
			kfree(inode->i_private);
			kfree(inode);
		}
		/* lost a race to create it, or the name is a dangling link */
		if (PTR_ERR(d) == -EEXIST && !(flags & O_EXCL))
			d = ERR_PTR(-ENOENT);
	}
	dput(parent);
	return d;
}

struct file *do_filp_open(const char *path, int flags, umode_t mode)
{
	struct file *f = ERR_PTR(-ENOTDIR);
	struct dentry *d;

	if (path[0] != '/')
		return ERR_PTR(-ENOENT);	/* every cwd is / */
	d = open_last_lookup(path, flags, mode);
	if (IS_ERR(d))
		return ERR_CAST(d);
	if (!(flags & O_DIRECTORY) || S_ISDIR(d->d_inode->i_mode))
		f = open_dentry(d, flags);
	dput(d);
	return f;
}

/* build_open_how(): openat(2)'s flags and mode as openat2(2)'s how */
static inline struct open_how build_open_how(int flags, umode_t mode)
{
	struct open_how how = {
		.flags = flags & VALID_OPEN_FLAGS,
		.mode = mode & S_IALLUGO,
	};

	if (!(how.flags & O_CREAT))
		how.mode = 0;
	return how;
}

/*
 * do_sys_openat2 - open the user path @filename: getname() copies it in,
 * do_filp_open() opens it (every cwd is /, so @dfd matters only for a
 * relative path, which fails), and the file gets the lowest free fd. As
 * Linux's, but global: a static function with a pointer argument may get
 * its arguments rewritten by the compiler, and probes want Linux's.
 */
noinline long do_sys_openat2(int dfd, const char *filename, struct open_how *how)
{
	struct filename *tmp;
	struct file *f;
	long fd;

	if (how->flags & ~VALID_OPEN_FLAGS)
		return -EINVAL;
	tmp = getname(filename);
	if (IS_ERR(tmp))
		return PTR_ERR(tmp);
	if (dfd != AT_FDCWD && tmp->name[0] != '/') {
		putname(tmp);
		return -EBADF;
	}
	f = do_filp_open(tmp->name, how->flags, how->mode);
	if (IS_ERR(f)) {
		fd = PTR_ERR(f);
	} else {
		fd = get_unused_fd(f);
		if (fd < 0)
			fput(f);
	}
	putname(tmp);
	return fd;
}

noinline long do_sys_open(int dfd, const char *filename, int flags, umode_t mode)
{
	struct open_how how = build_open_how(flags, mode);

	return do_sys_openat2(dfd, filename, &how);
}

long close_fd(unsigned int fd)
{
	struct files_struct *files = current->files;
	struct file *f;

	if (!files || fd >= NR_OPEN_DEFAULT || !files->fd_array[fd])
		return -EBADF;
	f = files->fd_array[fd];
	files->fd_array[fd] = NULL;
	fput(f);
	return 0;
}

/*
 * SYSCALL_DEFINE4(openat): a 64-bit kernel opens every file as large, so
 * do_sys_openat2's how->flags carry O_LARGEFILE (0x20000 on arm64) as
 * Linux's do.
 */
long __arm64_sys_openat(const struct pt_regs *regs)
{
	int flags = regs->regs[2];

	if (force_o_largefile())
		flags |= O_LARGEFILE;
	return do_sys_open(regs->regs[0], (const char *)regs->regs[1],
			   flags, regs->regs[3]);
}

long __arm64_sys_close(const struct pt_regs *regs)
{
	return close_fd(regs->regs[0]);
}
