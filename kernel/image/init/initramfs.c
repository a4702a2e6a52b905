// SPDX-License-Identifier: MIT
/*
 * Unpacking the initramfs, after init/initramfs.c: the cpio "newc"
 * archive that usr/initramfs_data.S places in .init.rodata
 * (__initramfs_start..__initramfs_end) becomes directories and read-only
 * files of the ramfs tree. A file's data stay where they are in the
 * image: its inode points at them (Linux copies them and frees the
 * archive; kpemu keeps .init.rodata for good).
 */
#include <linux/kernel.h>
#include <linux/fs.h>

extern const char __initramfs_start[], __initramfs_end[];

static unsigned long parse_hex(const char *s)
{
	unsigned long v = 0;
	int i;

	for (i = 0; i < 8; i++) {
		char c = s[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
	}
	return v;
}

struct inode *ramfs_get_inode(umode_t mode, size_t capacity);

void populate_rootfs(void)
{
	const char *p = __initramfs_start, *end = __initramfs_end;
	int files = 0;

	while (p + 110 <= end) {
		unsigned long mode, size, namesize;
		const char *name, *data;
		char path[PATH_MAX];

		if (memcmp(p, "070701", 6))
			panic("Initramfs unpacking failed: no cpio magic at %lx",
			      (unsigned long)(p - __initramfs_start));
		mode = parse_hex(p + 6 + 8 * 1);
		size = parse_hex(p + 6 + 8 * 6);
		namesize = parse_hex(p + 6 + 8 * 11);
		name = p + 110;
		data = __initramfs_start + ALIGN((unsigned long)(name + namesize - __initramfs_start), 4);
		p = __initramfs_start + ALIGN((unsigned long)(data + size - __initramfs_start), 4);
		if (!strcmp(name, "TRAILER!!!"))
			break;
		while (*name == '.' && name[1] == '/')
			name += 2;
		while (*name == '/')
			name++;
		if (!*name || !strcmp(name, ".") || namesize > PATH_MAX - 2)
			continue;
		path[0] = '/';
		memcpy(path + 1, name, namesize);
		if (S_ISDIR(mode)) {
			if (IS_ERR(vfs_mkdir_p(path)))
				panic("Initramfs: cannot make %s", path);
		} else if (S_ISREG(mode)) {
			struct inode *inode = ramfs_get_inode(mode, 0);

			if (!inode || IS_ERR(vfs_create_file(path, inode)))
				panic("Initramfs: cannot make %s", path);
			inode->i_private = (char *)data;
			inode->i_size = size;
			files++;
		}
	}
	pr_info("Trying to unpack rootfs image as initramfs... %d files\n", files);
}
