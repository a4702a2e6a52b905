// SPDX-License-Identifier: MIT
/*
 * ramfs_helper: a filesystem helper module. It registers a read helper
 * that ramfs_read() calls with every chunk read, and keeps a running
 * checksum of the data (csum_partial) and a count of the bytes.
 */
#include <linux/kernel.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <net/checksum.h>

u64 rfh_bytes;
u64 rfh_reads;
u32 rfh_csum;

static noinline void rfh_read_csum(struct file *file, const char *buf, size_t count)
{
	rfh_reads++;
	rfh_bytes += count;
	rfh_csum = csum_partial(buf, count, rfh_csum);
}

static int __init rfh_init(void)
{
	return ramfs_register_read_helper(rfh_read_csum);
}

static void __exit rfh_exit(void)
{
	ramfs_unregister_read_helper(rfh_read_csum);
}

module_init(rfh_init);
module_exit(rfh_exit);
MODULE_LICENSE("MIT");
