// SPDX-License-Identifier: MIT
/*
 * /bin/lockd: a daemon that keeps a lock the way many Unix programs do,
 * as a symlink whose target names the owner (ln -s "kpemu:<pid>" LOCK, as
 * Emacs and dpkg do), re-taking it every 500 us: it makes the link
 * (symlinkat -> vfs_symlink), says so on /dev/null (openat ->
 * do_sys_openat2), and drops the link (unlinkat -> vfs_unlink). So the
 * name paths of the VFS always have traffic to trace, about two thousand
 * times a second of guest time, without the cost of a fork and exec per
 * event.
 */
#include <libc.h>

#define LOCK	"/tmp/lockd.lock"

int main(int argc, char **argv)
{
	const struct timespec tick = { .tv_sec = 0, .tv_nsec = 500000 };
	char owner[32] = "kpemu:", *p = owner + 6;
	unsigned long n;

	*utoa(getpid(), p) = 0;
	for (n = 0; ; n++) {
		int fd;

		if (symlink(owner, LOCK) < 0)
			exit(1);	/* someone else holds it */
		fd = open("/dev/null", O_WRONLY);
		if (fd >= 0) {
			write(fd, "locked\n", 7);
			close(fd);
		}
		unlink(LOCK);
		nanosleep(&tick, NULL);
	}
}
