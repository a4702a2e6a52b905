// SPDX-License-Identifier: MIT
/* kpemu's tiny libc: see usr/include/libc.h. */
#include <libc.h>

long syscall6(long n, long a, long b, long c, long d, long e, long f)
{
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	register long x4 __asm__("x4") = e;
	register long x5 __asm__("x5") = f;

	__asm__ volatile("svc #0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
			 : "memory");
	return x0;
}

#define syscall3(n, a, b, c)	syscall6(n, (long)(a), (long)(b), (long)(c), 0, 0, 0)

ssize_t read(int fd, void *buf, size_t n) { return syscall3(__NR_read, fd, buf, n); }
ssize_t write(int fd, const void *buf, size_t n) { return syscall3(__NR_write, fd, buf, n); }
int open(const char *path, int flags, ...)
{
	return syscall6(__NR_openat, AT_FDCWD, (long)path, flags, 0644, 0, 0);
}
int socket(int domain, int type, int protocol)
{
	return syscall3(__NR_socket, domain, type, protocol);
}
int bind(int fd, const struct sockaddr_in *addr, int len) { return syscall3(__NR_bind, fd, addr, len); }
int listen(int fd, int backlog) { return syscall3(__NR_listen, fd, backlog, 0); }
int accept(int fd, struct sockaddr_in *addr, int *len) { return syscall3(__NR_accept, fd, addr, len); }
int accept4(int fd, struct sockaddr_in *addr, int *len, int flags)
{
	return syscall6(__NR_accept4, fd, (long)addr, (long)len, flags, 0, 0);
}
ssize_t sendto(int fd, const void *buf, size_t n, int flags, const struct sockaddr_in *addr, int len)
{
	return syscall6(__NR_sendto, fd, (long)buf, n, flags, (long)addr, len);
}
ssize_t recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr_in *addr, int *len)
{
	return syscall6(__NR_recvfrom, fd, (long)buf, n, flags, (long)addr, (long)len);
}
int shutdown(int fd, int how) { return syscall3(__NR_shutdown, fd, how, 0); }
int close(int fd) { return syscall3(__NR_close, fd, 0, 0); }
int symlink(const char *target, const char *path)
{
	return syscall3(__NR_symlinkat, (long)target, AT_FDCWD, (long)path);
}
int unlink(const char *path) { return syscall3(__NR_unlinkat, AT_FDCWD, (long)path, 0); }
ssize_t readlink(const char *path, char *buf, size_t n)
{
	return syscall6(__NR_readlinkat, AT_FDCWD, (long)path, (long)buf, n, 0, 0);
}
off_t lseek(int fd, off_t off, int whence) { return syscall3(__NR_lseek, fd, off, whence); }
long getdents64(int fd, void *buf, size_t n) { return syscall3(__NR_getdents64, fd, buf, n); }
pid_t fork(void) { return syscall6(__NR_clone, SIGCHLD, 0, 0, 0, 0, 0); }
int execve(const char *path, char *const argv[], char *const envp[])
{
	return syscall3(__NR_execve, path, argv, envp);
}
void exit(int code)
{
	syscall3(__NR_exit_group, code, 0, 0);
	for (;;)
		;
}
pid_t wait4(pid_t pid, int *status, int options, void *rusage)
{
	return syscall6(__NR_wait4, pid, (long)status, options, (long)rusage, 0, 0);
}
pid_t waitpid(pid_t pid, int *status, int options) { return wait4(pid, status, options, NULL); }
int nanosleep(const struct timespec *req, struct timespec *rem)
{
	return syscall3(__NR_nanosleep, req, rem, 0);
}
int msleep(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	return nanosleep(&ts, NULL);
}
pid_t getpid(void) { return syscall3(__NR_getpid, 0, 0, 0); }
pid_t getppid(void) { return syscall3(__NR_getppid, 0, 0, 0); }
int sched_yield(void) { return syscall3(__NR_sched_yield, 0, 0, 0); }
void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return (void *)syscall6(__NR_mmap, (long)addr, len, prot, flags, fd, off);
}
int munmap(void *addr, size_t len) { return syscall3(__NR_munmap, addr, len, 0); }

static unsigned long cur_brk;

void *sbrk(long inc)
{
	unsigned long old;

	if (!cur_brk)
		cur_brk = syscall3(__NR_brk, 0, 0, 0);
	old = cur_brk;
	if (inc && (unsigned long)syscall3(__NR_brk, old + inc, 0, 0) != old + inc)
		return (void *)-1;
	cur_brk = old + inc;
	return (void *)old;
}

size_t strlen(const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

void *memcpy(void *d, const void *s, size_t n)
{
	char *dp = d;
	const char *sp = s;

	while (n--)
		*dp++ = *sp++;
	return d;
}

void *memset(void *d, int c, size_t n)
{
	char *dp = d;

	while (n--)
		*dp++ = c;
	return d;
}

int strcmp(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return (unsigned char)*a - (unsigned char)*b;
}

char *utoa(unsigned long v, char *buf)
{
	char tmp[24];
	int n = 0;

	do {
		tmp[n++] = '0' + v % 10;
		v /= 10;
	} while (v);
	while (n)
		*buf++ = tmp[--n];
	*buf = 0;
	return buf;
}

int fputs(int fd, const char *s)
{
	return write(fd, s, strlen(s));
}

/*
 * for_each_leaf - fn("<dir>/<entry>/<leaf>") for every entry of @dir (but
 * "." and "..") and each of the @n @leaves, in the order a shell's glob
 * DIR/<any>/LEAF would visit them.
 */
void for_each_leaf(const char *dir, const char *const *leaves, unsigned int n,
		   void (*fn)(const char *path))
{
	char buf[512], path[128], *p;
	size_t dlen = strlen(dir);
	long got, off;
	unsigned int i;
	int fd = open(dir, O_RDONLY | O_DIRECTORY);

	if (fd < 0)
		return;
	while ((got = getdents64(fd, buf, sizeof(buf))) > 0)
		for (off = 0; off < got; off += ((struct linux_dirent64 *)(buf + off))->d_reclen) {
			const char *name = ((struct linux_dirent64 *)(buf + off))->d_name;
			size_t nlen = strlen(name);

			if (name[0] == '.')
				continue;
			for (i = 0; i < n; i++) {
				if (dlen + nlen + strlen(leaves[i]) + 3 > sizeof(path))
					continue;
				p = path;
				memcpy(p, dir, dlen);
				p += dlen;
				*p++ = '/';
				memcpy(p, name, nlen);
				p += nlen;
				*p++ = '/';
				memcpy(p, leaves[i], strlen(leaves[i]) + 1);
				fn(path);
			}
		}
	close(fd);
}
