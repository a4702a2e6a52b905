// SPDX-License-Identifier: MIT
/* /bin/cat: each file to stdout, 64 bytes a read(2); exit 1 if one cannot be opened. */
#include <libc.h>

int main(int argc, char **argv)
{
	char buf[64];
	int i, ret = 0;

	for (i = 1; i < argc; i++) {
		int fd = open(argv[i], O_RDONLY);
		long n;

		if (fd < 0) {
			ret = 1;
			continue;
		}
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			write(1, buf, n);
		close(fd);
	}
	return ret;
}
