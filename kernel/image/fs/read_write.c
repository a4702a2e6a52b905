// SPDX-License-Identifier: MIT
/*
 * vfs_read(), vfs_write() and vfs_llseek(), as fs/read_write.c.
 */
#include <linux/kernel.h>
#include <linux/fs.h>
#include <linux/sched.h>
#include <linux/mm.h>
#include <asm/ptrace.h>

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

/* noinline: ksys_read() below would inline it, and probes must see every read */
noinline ssize_t vfs_read(struct file *file, char *buf, size_t count, loff_t *pos)
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

noinline ssize_t vfs_write(struct file *file, const char *buf, size_t count, loff_t *pos)
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

/*
 * The system calls (fs/read_write.c, fs/readdir.c): ksys_read() and
 * ksys_write() take the task's file, check the buffer with access_ok()
 * and go through vfs_read() and vfs_write() with a copy of f_pos, as
 * Linux does. f_op->read/write copy with copy_to_user()/copy_from_user(),
 * whose faults the exception table turns into short counts or -EFAULT.
 */
ssize_t ksys_read(unsigned int fd, char *buf, size_t count)
{
	struct file *f = fget(fd);
	loff_t pos;
	ssize_t ret;

	if (!f)
		return -EBADF;
	if (S_ISDIR(file_inode(f)->i_mode))
		return -EISDIR;
	if (count > MAX_RW_COUNT)
		count = MAX_RW_COUNT;
	/* f_op->read copies with copy_to_user(), which faults the pages in */
	if (!access_ok(buf, count))
		return -EFAULT;
	pos = f->f_pos;
	ret = vfs_read(f, buf, count, &pos);
	if (ret >= 0)
		f->f_pos = pos;
	return ret;
}

ssize_t ksys_write(unsigned int fd, const char *buf, size_t count)
{
	struct file *f = fget(fd);
	loff_t pos;
	ssize_t ret;

	if (!f)
		return -EBADF;
	if (count > MAX_RW_COUNT)
		count = MAX_RW_COUNT;
	if (!access_ok(buf, count))
		return -EFAULT;
	pos = (f->f_flags & O_APPEND) ? file_inode(f)->i_size : f->f_pos;
	ret = vfs_write(f, buf, count, &pos);
	if (ret >= 0)
		f->f_pos = pos;
	return ret;
}

long __arm64_sys_read(const struct pt_regs *regs)
{
	return ksys_read(regs->regs[0], (char *)regs->regs[1], regs->regs[2]);
}

long __arm64_sys_write(const struct pt_regs *regs)
{
	return ksys_write(regs->regs[0], (const char *)regs->regs[1], regs->regs[2]);
}

long __arm64_sys_lseek(const struct pt_regs *regs)
{
	struct file *f = fget(regs->regs[0]);

	if (!f)
		return -EBADF;
	return vfs_llseek(f, regs->regs[1], regs->regs[2]);
}

int iterate_dir(struct file *file, struct dir_context *ctx)
{
	int ret;

	if (!file->f_op->iterate_shared)
		return -ENOTDIR;
	ctx->pos = file->f_pos;
	ret = file->f_op->iterate_shared(file, ctx);
	file->f_pos = ctx->pos;
	return ret;
}

struct getdents_callback64 {
	struct dir_context ctx;
	struct linux_dirent64 *current_dir;
	int count;
	int error;
};

static bool filldir64(struct dir_context *ctx, const char *name, int namlen,
		      loff_t offset, u64 ino, unsigned int d_type)
{
	struct getdents_callback64 *buf = container_of(ctx, struct getdents_callback64, ctx);
	struct linux_dirent64 *dirent = buf->current_dir;
	int reclen = ALIGN(offsetof(struct linux_dirent64, d_name) + namlen + 1, sizeof(u64));
	/* the record is built here and copied out whole (Linux: unsafe_put_user) */
	union {
		struct linux_dirent64 d;
		char bytes[ALIGN(offsetof(struct linux_dirent64, d_name) + NAME_MAX + 1, sizeof(u64))];
	} rec;

	if (reclen > buf->count) {
		buf->error = -EINVAL;	/* "result buffer too small" */
		return false;
	}
	if (namlen > NAME_MAX) {
		buf->error = -EOVERFLOW;
		return false;
	}
	memset(&rec, 0, reclen);
	rec.d.d_ino = ino;
	rec.d.d_off = offset + 1;
	rec.d.d_reclen = reclen;
	rec.d.d_type = d_type;
	memcpy(rec.d.d_name, name, namlen);
	if (copy_to_user(dirent, &rec, reclen)) {
		buf->error = -EFAULT;
		return false;
	}
	buf->current_dir = (void *)dirent + reclen;
	buf->count -= reclen;
	buf->error = 0;
	return true;
}

long __arm64_sys_getdents64(const struct pt_regs *regs)
{
	struct file *f = fget(regs->regs[0]);
	struct linux_dirent64 *dirent = (struct linux_dirent64 *)regs->regs[1];
	unsigned int count = regs->regs[2];
	struct getdents_callback64 buf = {
		.ctx.actor = filldir64,
		.count = count,
		.current_dir = dirent,
	};
	int error;

	if (!f)
		return -EBADF;
	if (!access_ok(dirent, count))
		return -EFAULT;
	error = iterate_dir(f, &buf.ctx);
	if (error >= 0 && buf.error && buf.current_dir == dirent)
		error = buf.error;	/* the first entry did not fit */
	if (error < 0)
		return error;
	return count - buf.count;
}
