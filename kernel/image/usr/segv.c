// SPDX-License-Identifier: MIT
/*
 * /bin/segv: first hands system calls buffers where nothing is mapped,
 * which must fail with EFAULT (the kernel's user accesses fault and the
 * exception table turns the fault into an error, not an oops); then writes
 * there itself, and the kernel kills it with SIGSEGV. Before that, a
 * read(2) and a write(2) whose buffer runs off the end of its only
 * anonymous page must be short: the bytes up to the end of the page; and
 * wait4(2) with a bad status pointer fails with EFAULT but still reaps the
 * child, as Linux's does. It exits 1 if any of that is wrong.
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
	fd = open("/tmp/segv", O_WRONLY | O_CREAT, 0644);
	if (fd < 0 || write(fd, UNMAPPED, 16) != -EFAULT || write(fd, page + 4088, 16) != 8)
		return 1;
	close(fd);
	fd = open("/etc", O_RDONLY);
	if (fd < 0 || getdents64(fd, UNMAPPED, 256) != -EFAULT)
		return 1;
	close(fd);
	pid_t child = fork();
	if (child == 0)
		exit(0);
	if (child < 0 || wait4(child, UNMAPPED, 0, NULL) != -EFAULT ||
	    wait4(child, NULL, 0, NULL) != -ECHILD)
		return 1;
	*(volatile int *)UNMAPPED = 42;
	return 0;
}
