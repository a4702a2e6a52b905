// SPDX-License-Identifier: MIT
/*
 * Attribute files, as fs/sysfs/file.c and kernfs's seq_file read path:
 * the first read(2) of an open file calls the kobject's
 * sysfs_ops->show() into a zeroed page that the open file keeps
 * (sysfs_kf_seq_show); reads that go on where the last one ended take
 * their bytes from there, so that one open file reads one consistent text
 * however small the reads. A read anywhere else (after a seek, or at
 * offset 0) calls show() again, as seq_read's traverse() does. The last
 * close frees the page.
 *
 * Files are read-only (mode 0444 and no store path): opening one for
 * writing fails with EACCES, as it does for a non-root user on Linux.
 * Two tasks reading one open file (a shared fd) at once may see each
 * other's show(); Linux serialises them with the open file's mutex.
 */
#include <linux/kernel.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/kobject.h>
#include "sysfs.h"

u64 nr_sysfs_shows;

/* An attribute file: its inode's i_private (Linux: the kernfs_node's priv and parent). */
struct sysfs_attr_file {
	struct kobject		*kobj;
	const struct attribute	*attr;
};

/* What an open attribute file keeps (Linux: kernfs_open_file's seq_file). */
struct sysfs_open_file {
	char			*page;
	ssize_t			count;		/* bytes in page; -1: none yet */
	loff_t			read_pos;	/* where the last read ended */
};

/* The kobject's ktype's sysfs_ops (kpemu's kobjects have no kset). */
static const struct sysfs_ops *sysfs_file_ops(struct kobject *kobj)
{
	return kobj->ktype ? kobj->ktype->sysfs_ops : NULL;
}

/* The attribute's text into @buf, a page: its length or -errno. */
static ssize_t sysfs_kf_seq_show(struct sysfs_attr_file *sf, char *buf)
{
	const struct sysfs_ops *ops = sysfs_file_ops(sf->kobj);
	ssize_t count;

	memset(buf, 0, PAGE_SIZE);
	if (!ops || !ops->show)
		return 0;
	count = ops->show(sf->kobj, (struct attribute *)sf->attr, buf);
	__atomic_fetch_add(&nr_sysfs_shows, 1, __ATOMIC_RELAXED);
	if (count < 0)
		return count;
	/* a full page means a show() that overran or truncated: warn, keep going */
	if (count >= (ssize_t)PAGE_SIZE) {
		printk("fill_read_buffer: %pS returned bad count\n", ops->show);
		count = PAGE_SIZE - 1;
	}
	return count;
}

static struct sysfs_open_file *sysfs_open_file(struct file *file)
{
	struct sysfs_open_file *of = READ_ONCE(file->private_data);
	void *expected = NULL;

	if (of)
		return of;
	of = kzalloc(sizeof(*of), GFP_KERNEL);
	if (!of)
		return NULL;
	of->page = get_zeroed_page(GFP_KERNEL);
	if (!of->page) {
		kfree(of);
		return NULL;
	}
	of->count = -1;
	if (!__atomic_compare_exchange_n(&file->private_data, &expected, of, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		/* a task sharing the file was first */
		free_page(of->page);
		kfree(of);
		of = (struct sysfs_open_file *)expected;
	}
	return of;
}

static ssize_t sysfs_kf_read(struct file *file, char *buf, size_t count, loff_t *ppos)
{
	struct sysfs_attr_file *sf = (struct sysfs_attr_file *)file_inode(file)->i_private;
	struct sysfs_open_file *of = sysfs_open_file(file);
	loff_t pos = *ppos;
	size_t left;

	if (!of)
		return -ENOMEM;
	if (of->count < 0 || pos == 0 || pos != of->read_pos) {
		ssize_t n = sysfs_kf_seq_show(sf, of->page);

		if (n < 0) {
			of->count = -1;
			return n;
		}
		of->count = n;
	}
	if (pos >= of->count)
		return 0;
	if (count > (size_t)(of->count - pos))
		count = of->count - pos;
	left = copy_to_user(buf, of->page + pos, count);
	if (left == count)
		return -EFAULT;
	count -= left;	/* a short read, as Linux's copy_page_to_iter() gives */
	*ppos = of->read_pos = pos + count;
	return count;
}

static int sysfs_kf_release(struct inode *inode, struct file *file)
{
	struct sysfs_open_file *of = file->private_data;

	if (of) {
		free_page(of->page);
		kfree(of);
	}
	return 0;
}

static const struct file_operations sysfs_file_operations = {
	.llseek		= generic_file_llseek,
	.read		= sysfs_kf_read,
	.release	= sysfs_kf_release,
};

int sysfs_add_file_mode_ns(struct dentry *parent, const struct attribute *attr,
			   umode_t mode, struct kobject *kobj)
{
	struct sysfs_attr_file *sf = kzalloc(sizeof(*sf), GFP_KERNEL);
	struct inode *inode;
	struct dentry *d;

	if (!sf)
		return -ENOMEM;
	inode = ramfs_get_inode(S_IFREG | (mode & 0777), 0);
	if (!inode) {
		kfree(sf);
		return -ENOMEM;
	}
	sf->kobj = kobj;
	sf->attr = attr;
	inode->i_fop = &sysfs_file_operations;
	inode->i_private = (char *)sf;
	inode->i_size = PAGE_SIZE;	/* what stat(2) shows on Linux */
	d = sysfs_new_dentry(parent, attr->name, inode);
	if (IS_ERR(d)) {
		kfree(inode);
		kfree(sf);
		return PTR_ERR(d);
	}
	return 0;
}

/* sysfs_create_file(): @attr's file in @kobj's directory. */
int sysfs_create_file(struct kobject *kobj, const struct attribute *attr)
{
	if (!kobj || !kobj->sd || !attr)
		return -EINVAL;
	return sysfs_add_file_mode_ns(kobj->sd, attr, attr->mode, kobj);
}

int sysfs_create_files(struct kobject *kobj, const struct attribute * const *ptr)
{
	int err = 0;
	int i;

	for (i = 0; ptr[i] && !err; i++)
		err = sysfs_create_file(kobj, ptr[i]);
	return err;
}
