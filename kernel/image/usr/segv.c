// SPDX-License-Identifier: MIT
/*
 * /bin/segv: first hands read(2) a buffer where nothing is mapped, which
 * must fail with EFAULT (copy_to_user() faults and the exception table
 * turns the fault into an error, not an oops); then writes there itself,
 * and the kernel kills it with SIGSEGV. Before that, a read(2) whose
 * buffer runs off the end of its only anonymous page must be short: the
 * bytes up to the end of the page. It exits 1 if either read(2) is wrong.
 */
#include <libc.h>

#define UNMAPPED ((void *)0x30000000UL)	/* in the mmap area, outside any VMA */

int main(int argc, char **argv)
{
	int fd = open("/etc/passwd", O_RDONLY);

	char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (fd < 0 || read(fd, UNMAPPED, 16) != -EFAULT)
		return 1;
	if (page == (char *)-1 || read(fd, page + 4088, 16) != 8)
		return 1;
	close(fd);
	*(volatile int *)UNMAPPED = 42;
	return 0;
}
