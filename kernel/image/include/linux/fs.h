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

#define S_IFREG		0100000
#define S_IFDIR		0040000

struct file;
struct inode;

struct file_operations {
	loff_t (*llseek)(struct file *, loff_t, int);
	ssize_t (*read)(struct file *, char *, size_t, loff_t *);
	ssize_t (*write)(struct file *, const char *, size_t, loff_t *);
	int (*open)(struct inode *, struct file *);
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
	size_t			i_capacity;
};

struct file {
	const struct file_operations *f_op;
	struct inode		*f_inode;
	unsigned int		f_flags;
	fmode_t			f_mode;
	loff_t			f_pos;
	const char		*f_name;
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

#define READ	0
#define WRITE	1

#endif /* _LINUX_FS_H */
