// SPDX-License-Identifier: MIT
/*
 * The rest of the tree's inodes, after fs/ramfs/inode.c, fs/libfs.c
 * (dcache_readdir), drivers/char/mem.c (/dev/null), drivers/tty
 * (/dev/console) and fs/proc/version.c (/proc/version).
 */
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/console.h>
#include <linux/fs.h>
#include <linux/list.h>
#include <linux/slab.h>

struct inode *ramfs_get_inode(umode_t mode, size_t capacity);

/*
 * dcache_readdir(): ".", "..", then the children in creation order; f_pos
 * counts entries. Each entry is copied out of the tree under its lock
 * (d_child_at) and handed to the actor after, which may fault on the
 * user buffer.
 */
static int dcache_readdir(struct file *file, struct dir_context *ctx)
{
	struct dentry *dir = file_inode(file)->i_dentry;
	char name[NAME_MAX + 1];
	unsigned long ino;
	umode_t mode;

	if (ctx->pos == 0) {
		if (!ctx->actor(ctx, ".", 1, 0, file_inode(file)->i_ino, DT_DIR))
			return 0;
		ctx->pos = 1;
	}
	if (ctx->pos == 1) {
		if (!ctx->actor(ctx, "..", 2, 1, dir->d_parent->d_inode->i_ino, DT_DIR))
			return 0;
		ctx->pos = 2;
	}
	while (!IS_ERR(d_child_at(dir, ctx->pos - 2, name, &ino, &mode))) {
		unsigned int type = S_ISDIR(mode) ? DT_DIR : S_ISREG(mode) ? DT_REG :
				    S_ISLNK(mode) ? DT_LNK : DT_CHR;

		if (!ctx->actor(ctx, name, strnlen(name, NAME_MAX + 1), ctx->pos, ino, type))
			return 0;
		ctx->pos++;
	}
	return 0;
}

const struct file_operations simple_dir_operations = {
	.llseek		= generic_file_llseek,
	.iterate_shared	= dcache_readdir,
};

struct inode *ramfs_get_dir_inode(void)
{
	struct inode *inode = ramfs_get_inode(S_IFDIR | 0755, 0);

	if (inode)
		inode->i_fop = &simple_dir_operations;
	return inode;
}

static ssize_t read_null(struct file *file, char *buf, size_t count, loff_t *ppos)
{
	return 0;
}

static ssize_t write_null(struct file *file, const char *buf, size_t count, loff_t *ppos)
{
	return count;
}

static loff_t null_lseek(struct file *file, loff_t offset, int orig)
{
	return file->f_pos = 0;
}

static const struct file_operations null_fops = {
	.llseek		= null_lseek,
	.read		= read_null,
	.write		= write_null,
};

/* /dev/console: writes go to the UART, reads see end of file. */
/* As tty_write(): copied in chunks; a fault ends the write short. */
static ssize_t console_write(struct file *file, const char *buf, size_t count, loff_t *ppos)
{
	char chunk[64];
	size_t done = 0;

	while (done < count) {
		size_t n = min_t(size_t, count - done, sizeof(chunk));
		size_t got = n - copy_from_user(chunk, buf + done, n);

		pl011_early_write(chunk, got);
		done += got;
		if (got < n)
			return done ? (ssize_t)done : -EFAULT;
	}
	return done;
}

static const struct file_operations console_fops = {
	.llseek		= null_lseek,
	.read		= read_null,
	.write		= console_write,
};

/*
 * As init/version.c: the format of /proc/version, filled from the UTS
 * name (kernel/utsname.c's init_uts_ns; kpemu has one namespace). The
 * host's kpemu/version formats the same two symbols.
 */
const char linux_proc_banner[] =
	"%s version %s"
	" (kpemu@kpemu) (clang 14)"
	" %s\n";

struct uts_namespace init_uts_ns = {
	.name = {
		.sysname	= "Linux",
		.nodename	= "kpemu",
		.release	= "6.1.0-kpemu",
		.version	= "#1 SMP",
		.machine	= "aarch64",
		.domainname	= "(none)",
	},
};

static ssize_t version_proc_read(struct file *file, char *buf, size_t count, loff_t *ppos)
{
	const struct new_utsname *uts = &init_uts_ns.name;
	char text[256];
	size_t left;
	int len = snprintf(text, sizeof(text), linux_proc_banner, uts->sysname,
			   uts->release, uts->version);
	loff_t pos = *ppos;

	if (len > (int)sizeof(text) - 1)
		len = sizeof(text) - 1;
	if (pos >= len)
		return 0;
	if (count > (size_t)(len - pos))
		count = len - pos;
	left = copy_to_user(buf, text + pos, count);
	if (left == count)
		return -EFAULT;
	count -= left;	/* a short read, as Linux's copy_page_to_iter() gives */
	*ppos = pos + count;
	return count;
}

static const struct file_operations version_proc_fops = {
	.llseek		= generic_file_llseek,
	.read		= version_proc_read,
};

void make_special(const char *path, umode_t mode, const struct file_operations *fops)
{
	struct inode *inode = ramfs_get_inode(mode, 0);

	if (!inode || IS_ERR(vfs_create_file(path, inode)))
		panic("VFS: cannot make %s", path);
	inode->i_fop = fops;
}

/* /dev, /proc and /tmp, made at boot before the initramfs is unpacked. */
void proc_root_init(void)
{
	make_special("/dev/null", S_IFCHR | 0666, &null_fops);
	make_special("/dev/console", S_IFCHR | 0600, &console_fops);
	make_special("/proc/version", S_IFREG | 0444, &version_proc_fops);
	if (IS_ERR(vfs_mkdir_p("/tmp")))
		panic("VFS: cannot make /tmp");
}
