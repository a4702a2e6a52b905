// SPDX-License-Identifier: MIT
/*
 * vfs_read(), vfs_write() and vfs_llseek(), as fs/read_write.c.
 */
#include <linux/kernel.h>
#include <linux/fs.h>
#include <linux/sched.h>

u64 nr_vfs_read;
u64 nr_vfs_write;

static inline void add_rchar(struct task_struct *tsk, ssize_t amt)
{
	tsk->ioac.rchar += amt;
}

static inline void add_wchar(struct task_struct *tsk, ssize_t amt)
{
	tsk->ioac.wchar += amt;
}

static inline void inc_syscr(struct task_struct *tsk)
{
	tsk->ioac.syscr++;
}

static inline void inc_syscw(struct task_struct *tsk)
{
	tsk->ioac.syscw++;
}

/**
 * generic_file_llseek - generic llseek implementation for regular files
 * @file:	file structure to seek on
 * @offset:	file offset to seek to
 * @whence:	type of seek
 */
loff_t generic_file_llseek(struct file *file, loff_t offset, int whence)
{
	struct inode *inode = file_inode(file);

	switch (whence) {
	case SEEK_END:
		offset += inode->i_size;
		break;
	case SEEK_CUR:
		if (offset == 0)
			return file->f_pos;
		offset += file->f_pos;
		break;
	case SEEK_SET:
		break;
	default:
		return -EINVAL;
	}

	if (offset < 0)
		return -EINVAL;
	if (offset > MAX_LFS_FILESIZE)
		return -EINVAL;

	if (offset != file->f_pos)
		file->f_pos = offset;
	return offset;
}

loff_t vfs_llseek(struct file *file, loff_t offset, int whence)
{
	if (!(file->f_mode & FMODE_LSEEK))
		return -ESPIPE;
	return file->f_op->llseek(file, offset, whence);
}

int rw_verify_area(int read_write, struct file *file, const loff_t *ppos, size_t count)
{
	if (unlikely((ssize_t)count < 0))
		return -EINVAL;

	if (ppos) {
		loff_t pos = *ppos;

		if (unlikely(pos < 0))
			return -EINVAL;
		if (unlikely(pos > MAX_LFS_FILESIZE - (loff_t)count))
			return -EOVERFLOW;
	}
	return 0;
}

ssize_t vfs_read(struct file *file, char *buf, size_t count, loff_t *pos)
{
	ssize_t ret;

	nr_vfs_read++;

	if (!(file->f_mode & FMODE_READ))
		return -EBADF;
	if (!(file->f_mode & FMODE_CAN_READ))
		return -EINVAL;
	if (unlikely(!buf))
		return -EFAULT;

	ret = rw_verify_area(READ, file, pos, count);
	if (ret)
		return ret;
	if (count > MAX_RW_COUNT)
		count =  MAX_RW_COUNT;

	if (file->f_op->read)
		ret = file->f_op->read(file, buf, count, pos);
	else
		ret = -EINVAL;
	if (ret > 0)
		add_rchar(current, ret);
	inc_syscr(current);
	return ret;
}

ssize_t vfs_write(struct file *file, const char *buf, size_t count, loff_t *pos)
{
	ssize_t ret;

	nr_vfs_write++;

	if (!(file->f_mode & FMODE_WRITE))
		return -EBADF;
	if (!(file->f_mode & FMODE_CAN_WRITE))
		return -EINVAL;
	if (unlikely(!buf))
		return -EFAULT;

	ret = rw_verify_area(WRITE, file, pos, count);
	if (ret)
		return ret;
	if (count > MAX_RW_COUNT)
		count =  MAX_RW_COUNT;
	if (file->f_op->write)
		ret = file->f_op->write(file, buf, count, pos);
	else
		ret = -EINVAL;
	if (ret > 0)
		add_wchar(current, ret);
	inc_syscw(current);
	return ret;
}
