// SPDX-License-Identifier: MIT
/*
 * /bin/segv: first hands read(2) a buffer where nothing is mapped, which
 * must fail with EFAULT (copy_to_user() faults and the exception table
 * turns the fault into an error, not an oops); then writes there itself,
 * and the kernel kills it with SIGSEGV. It exits 1 if read(2) succeeds.
 */
#include <libc.h>

#define UNMAPPED ((void *)0x30000000UL)	/* in the mmap area, outside any VMA */

int main(int argc, char **argv)
{
	int fd = open("/etc/passwd", O_RDONLY);

	if (fd < 0 || read(fd, UNMAPPED, 16) != -EFAULT)
		return 1;
	close(fd);
	*(volatile int *)UNMAPPED = 42;
	return 0;
}
