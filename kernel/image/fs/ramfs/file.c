// SPDX-License-Identifier: MIT
/*
 * A tiny ramfs (after fs/ramfs/): each regular file keeps its data in one
 * kmalloc'ed buffer of fixed capacity. A write that would run past the
 * capacity truncates the file to zero first and writes from the start, so
 * an append-only log wraps instead of filling up.
 */
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/fs.h>
#include <linux/slab.h>

static unsigned long last_ino = 1;
static ramfs_read_helper_t *ramfs_read_helper;

int ramfs_register_read_helper(ramfs_read_helper_t *fn)
{
	if (ramfs_read_helper)
		return -EBUSY;
	WRITE_ONCE(ramfs_read_helper, fn);
	return 0;
}

void ramfs_unregister_read_helper(ramfs_read_helper_t *fn)
{
	if (ramfs_read_helper == fn)
		WRITE_ONCE(ramfs_read_helper, NULL);
}

ssize_t ramfs_read(struct file *file, char *buf, size_t count, loff_t *ppos)
{
	struct inode *inode = file_inode(file);
	loff_t pos = *ppos;
	ramfs_read_helper_t *helper;
	size_t avail, left;

	if (pos >= inode->i_size)
		return 0;		/* EOF */
	avail = inode->i_size - pos;
	if (count > avail)
		count = avail;
	left = copy_to_user(buf, inode->i_private + pos, count);
	if (left == count)
		return -EFAULT;
	count -= left;	/* a short read, as Linux's copy_page_to_iter() gives */
	helper = READ_ONCE(ramfs_read_helper);
	if (helper)
		helper(file, buf, count);
	*ppos = pos + count;
	return count;
}

ssize_t ramfs_write(struct file *file, const char *buf, size_t count, loff_t *ppos)
{
	struct inode *inode = file_inode(file);
	loff_t pos = *ppos;

	if (count > inode->i_capacity)
		return -EFBIG;
	if (pos + count > inode->i_capacity) {
		/* wrap: truncate to zero and write from the start */
		inode->i_size = 0;
		pos = 0;
	}
	/* a fault part way writes what came before it, as Linux's
	 * copy_page_from_iter() does; none of it is -EFAULT */
	count -= copy_from_user(inode->i_private + pos, buf, count);
	if (!count)
		return -EFAULT;
	pos += count;
	if (pos > inode->i_size)
		inode->i_size = pos;
	inode->i_version++;
	*ppos = pos;
	return count;
}

const struct file_operations ramfs_file_operations = {
	.read		= ramfs_read,
	.write		= ramfs_write,
	.llseek		= generic_file_llseek,
};

struct inode *ramfs_get_inode(umode_t mode, size_t capacity)
{
	struct inode *inode = kzalloc(sizeof(*inode), GFP_KERNEL);

	if (!inode)
		return NULL;
	inode->i_mode = mode;
	inode->i_nlink = 1;
	inode->i_ino = __atomic_add_fetch(&last_ino, 1, __ATOMIC_RELAXED);
	inode->i_fop = &ramfs_file_operations;
	if (!capacity)
		return inode;	/* read-only: the caller points i_private at the data */
	inode->i_private = kzalloc(capacity, GFP_KERNEL);
	inode->i_capacity = capacity;
	if (!inode->i_private) {
		kfree(inode);
		return NULL;
	}
	return inode;
}

/* The file's fields that the inode gives (do_dentry_open's part). */
void ramfs_file_init(struct file *file, struct inode *inode, fmode_t mode, const char *name)
{
	file->f_inode = inode;
	file->f_op = inode->i_fop;
	file->f_mode = mode | FMODE_LSEEK;
	if (mode & FMODE_READ)
		file->f_mode |= FMODE_CAN_READ;
	if (mode & FMODE_WRITE)
		file->f_mode |= FMODE_CAN_WRITE;
	file->f_name = name;
}

struct file *ramfs_open(struct inode *inode, fmode_t mode, const char *name)
{
	struct file *file = kzalloc(sizeof(*file), GFP_KERNEL);

	if (!file)
		return NULL;
	ramfs_file_init(file, inode, mode, name);
	return file;
}
