/* SPDX-License-Identifier: MIT */
/* Files, as include/linux/fs.h (the part kpemu's workload needs). */
#ifndef _LINUX_FS_H
#define _LINUX_FS_H

#include <linux/types.h>

#define FMODE_READ		((fmode_t)0x1)
#define FMODE_WRITE		((fmode_t)0x2)
#define FMODE_LSEEK		((fmode_t)0x4)
#define FMODE_CAN_READ		((fmode_t)0x20000)
#define FMODE_CAN_WRITE		((fmode_t)0x40000)

#define SEEK_SET	0
#define SEEK_CUR	1
#define SEEK_END	2

#define MAX_RW_COUNT	(INT_MAX & ~((1UL << 12) - 1))
#define MAX_LFS_FILESIZE	((loff_t)LONG_MAX)

#define S_IFMT		0170000
#define S_IFREG		0100000
#define S_IFDIR		0040000
#define S_IFSOCK	0140000
#define S_IFCHR		0020000
#define S_IFLNK		0120000
#define S_ISDIR(m)	(((m) & S_IFMT) == S_IFDIR)
#define S_ISREG(m)	(((m) & S_IFMT) == S_IFREG)
#define S_ISLNK(m)	(((m) & S_IFMT) == S_IFLNK)

/* open(2) flags, include/uapi/asm-generic/fcntl.h (arm64's O_DIRECTORY) */
#define O_ACCMODE	00000003
#define O_RDONLY	00000000
#define O_WRONLY	00000001
#define O_RDWR		00000002
#define O_CREAT		00000100
#define O_EXCL		00000200
#define O_TRUNC		00001000
#define O_APPEND	00002000
#define O_NONBLOCK	00004000
#define O_DIRECTORY	00040000
#define O_LARGEFILE	00400000	/* arm64's (uapi/asm/fcntl.h) */
#define AT_FDCWD	(-100)
#define AT_REMOVEDIR	0x200

/* path walk flags (include/linux/namei.h) */
#define LOOKUP_FOLLOW	0x0001	/* follow a symlink in the last component */
#define MAXSYMLINKS	40

#define DT_UNKNOWN	0
#define DT_CHR		2
#define DT_DIR		4
#define DT_REG		8
#define DT_LNK		10

#define NAME_MAX	31
#define PATH_MAX	256
#define NR_OPEN_DEFAULT	16

struct file;
struct inode;
struct dir_context;

struct file_operations {
	loff_t (*llseek)(struct file *, loff_t, int);
	ssize_t (*read)(struct file *, char *, size_t, loff_t *);
	ssize_t (*write)(struct file *, const char *, size_t, loff_t *);
	int (*open)(struct inode *, struct file *);
	int (*iterate_shared)(struct file *, struct dir_context *);
	int (*release)(struct inode *, struct file *);	/* the last fput() */
};

/* getdents64's record, include/linux/dirent.h */
struct linux_dirent64 {
	u64		d_ino;
	s64		d_off;
	unsigned short	d_reclen;
	unsigned char	d_type;
	char		d_name[];
};

/* readdir's callback (include/linux/fs.h filldir_t): false stops the walk */
struct dir_context {
	bool (*actor)(struct dir_context *ctx, const char *name, int namlen,
		      loff_t offset, u64 ino, unsigned int d_type);
	loff_t pos;
};

/*
 * A name in the tree (include/linux/dcache.h): ramfs keeps every dentry
 * for ever, so the dentry tree is the directory tree.
 */
struct dentry {
	struct hlist_node	d_hash;		/* in dentry_hashtable while linked */
	struct dentry		*d_parent;
	struct inode		*d_inode;	/* NULL: negative (being created) */
	struct list_head	d_child;	/* in the parent's d_subdirs */
	struct list_head	d_subdirs;
	char			d_name[NAME_MAX + 1];
	int			d_count;	/* the tree's, files', walkers' */
	bool			d_unlinked;	/* out of the tree: freed at the last dput */
};

/* A task's open files (include/linux/fdtable.h), shared by count. */
struct files_struct {
	int			count;
	struct file		*fd_array[NR_OPEN_DEFAULT];
};

struct inode {
	umode_t			i_mode;
	unsigned int		i_nlink;
	unsigned long		i_ino;
	loff_t			i_size;
	u64			i_version;
	const struct file_operations *i_fop;
	/* ramfs: the file's one page of data */
	char			*i_private;
	size_t			i_capacity;	/* 0: read-only (initramfs data, /proc) */
	/* a read-only file's pages as exec maps them (fs/exec.c text_page) */
	void			**i_pages;
	struct dentry		*i_dentry;	/* a directory's own dentry */
};

struct file {
	const struct file_operations *f_op;
	struct inode		*f_inode;
	unsigned int		f_flags;
	fmode_t			f_mode;
	loff_t			f_pos;
	const char		*f_name;
	int			f_count;	/* references: fd slots, forked children */
	struct dentry		*f_dentry;
	void			*private_data;	/* a socket file's struct sock */
};

static inline struct inode *file_inode(const struct file *f)
{
	return f->f_inode;
}

extern u64 nr_vfs_read;
extern u64 nr_vfs_write;

ssize_t vfs_read(struct file *file, char *buf, size_t count, loff_t *pos);
ssize_t vfs_write(struct file *file, const char *buf, size_t count, loff_t *pos);
loff_t vfs_llseek(struct file *file, loff_t offset, int whence);
int rw_verify_area(int read_write, struct file *file, const loff_t *ppos, size_t count);
loff_t generic_file_llseek(struct file *file, loff_t offset, int whence);

extern const struct file_operations ramfs_file_operations;
struct inode *ramfs_get_inode(umode_t mode, size_t capacity);

/*
 * A helper that ramfs_read() hands every chunk it read to (a module:
 * modules/ramfs_helper). Returns -EBUSY when one is registered already.
 */
typedef void ramfs_read_helper_t(struct file *file, const char *buf, size_t count);
int ramfs_register_read_helper(ramfs_read_helper_t *fn);
void ramfs_unregister_read_helper(ramfs_read_helper_t *fn);
struct file *ramfs_open(struct inode *inode, fmode_t mode, const char *name);
void ramfs_file_init(struct file *file, struct inode *inode, fmode_t mode, const char *name);

/* the tree (fs/namei.c, fs/ramfs/inode.c, init/initramfs.c) */
struct user_namespace { int level; };	/* only the initial one */
extern struct user_namespace init_user_ns;
extern struct dentry *root_dentry;
void vfs_caches_init(void);
struct dentry *dget(struct dentry *dentry);
void dput(struct dentry *dentry);
struct dentry *path_lookup(const char *path, unsigned int flags,
			   struct dentry **parent, const char **last);
struct dentry *d_alloc_name(struct dentry *parent, const char *name, int len,
			    struct inode *inode);
struct dentry *d_child_at(struct dentry *dir, loff_t n, char *name,
			  unsigned long *ino, umode_t *mode);
int vfs_symlink(struct user_namespace *mnt_userns, struct inode *dir,
		struct dentry *dentry, const char *oldname);
int vfs_unlink(struct user_namespace *mnt_userns, struct inode *dir,
	       struct dentry *dentry, struct inode **delegated_inode);
int vfs_rmdir(struct user_namespace *mnt_userns, struct inode *dir,
	      struct dentry *dentry);
struct dentry *d_create(struct dentry *dir, const char *name, struct inode *inode);
struct dentry *vfs_mkdir_p(const char *path);
struct dentry *vfs_create_file(const char *path, struct inode *inode);
struct dentry *vfs_create_symlink(const char *path, const char *target);
void d_remove_tree(struct dentry *dentry);
struct inode *ramfs_get_inode(umode_t mode, size_t capacity);
void populate_rootfs(void);
void proc_root_init(void);
/* a device or proc file at @path whose operations are @fops; panics if it cannot */
void make_special(const char *path, umode_t mode, const struct file_operations *fops);

/* struct file (fs/open.c, fs/file_table.c) */
struct file *alloc_file(struct dentry *dentry, fmode_t mode, unsigned int flags);

/* include/linux/path.h: this kernel has one mount, so the dentry is all */
struct path {
	struct vfsmount *mnt;
	struct dentry *dentry;
};

int vfs_open(const struct path *path, struct file *file);
void fput(struct file *file);
struct file *fget(unsigned int fd);
int get_unused_fd(struct file *file);
struct file *do_filp_open(const char *path, int flags, umode_t mode);

#define VALID_OPEN_FLAGS \
	(O_ACCMODE | O_CREAT | O_EXCL | O_TRUNC | O_APPEND | O_NONBLOCK | O_DIRECTORY | O_LARGEFILE)
/* include/linux/fcntl.h: a 64-bit kernel (no CONFIG_ARCH_32BIT_OFF_T) */
#define force_o_largefile()	1
#define S_IALLUGO	07777

/* include/uapi/linux/openat2.h */
struct open_how {
	u64 flags;
	u64 mode;
	u64 resolve;
};

/* A path copied in from user space (include/linux/fs.h). */
struct filename {
	const char	*name;		/* pointer to actual string */
	const char	*uptr;		/* original userland pointer */
	int		refcnt;
	char		iname[];
};

/* include/uapi/linux/utsname.h, include/linux/utsname.h */
#define __NEW_UTS_LEN	64
struct new_utsname {
	char sysname[__NEW_UTS_LEN + 1];
	char nodename[__NEW_UTS_LEN + 1];
	char release[__NEW_UTS_LEN + 1];
	char version[__NEW_UTS_LEN + 1];
	char machine[__NEW_UTS_LEN + 1];
	char domainname[__NEW_UTS_LEN + 1];
};

struct uts_namespace {
	struct new_utsname name;
};

extern struct uts_namespace init_uts_ns;
extern const char linux_proc_banner[];

struct filename *getname(const char *filename);
void putname(struct filename *name);
long do_sys_openat2(int dfd, const char *filename, struct open_how *how);
long do_sys_open(int dfd, const char *filename, int flags, umode_t mode);
struct files_struct *dup_fd(struct files_struct *oldf);
void put_files_struct(struct files_struct *files);
int iterate_dir(struct file *file, struct dir_context *ctx);
ssize_t ksys_read(unsigned int fd, char *buf, size_t count);
ssize_t ksys_write(unsigned int fd, const char *buf, size_t count);

#define READ	0
#define WRITE	1

#endif /* _LINUX_FS_H */
