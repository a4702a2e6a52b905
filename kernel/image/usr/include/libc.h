/* SPDX-License-Identifier: MIT */
/*
 * kpemu's tiny libc for its user programs: system call wrappers with
 * arm64 Linux's numbers and calling convention (x8 = number, x0..x5 =
 * arguments, svc #0, result or -errno in x0), and a few string helpers.
 */
#ifndef _KPEMU_LIBC_H
#define _KPEMU_LIBC_H

typedef unsigned long size_t;
typedef long ssize_t;
typedef long off_t;
typedef int pid_t;
#define NULL ((void *)0)

#define O_RDONLY	00
#define O_WRONLY	01
#define O_RDWR		02
#define O_CREAT		0100
#define O_TRUNC		01000
#define O_APPEND	02000
#define O_DIRECTORY	040000
#define AT_FDCWD	(-100)
#define SEEK_SET	0
#define SEEK_END	2
#define SIGCHLD		17
#define WNOHANG		1
#define PROT_READ	1
#define PROT_WRITE	2
#define MAP_PRIVATE	0x02
#define MAP_ANONYMOUS	0x20
#define ECHILD		10	/* the wrappers return -errno */
#define EFAULT		14

#define AF_INET		2
#define SOCK_STREAM	1
#define SOCK_CLOEXEC	02000000
#define MSG_DONTWAIT	0x40
#define SHUT_RDWR	2
#define EAGAIN		11

#define WIFEXITED(s)	(((s) & 0x7f) == 0)
#define WEXITSTATUS(s)	(((s) >> 8) & 0xff)
#define WTERMSIG(s)	((s) & 0x7f)

struct timespec {
	long tv_sec;
	long tv_nsec;
};

struct sockaddr_in {
	unsigned short	sin_family;
	unsigned short	sin_port;	/* network order */
	unsigned int	sin_addr;	/* network order */
	unsigned char	sin_zero[8];
};

struct linux_dirent64 {
	unsigned long	d_ino;
	long		d_off;
	unsigned short	d_reclen;
	unsigned char	d_type;
	char		d_name[];
};

/*
 * syscall6(__NR_name, ...): the numbers are the kernel's own, one list for
 * both sides, as Linux user space takes them from uapi asm/unistd.h.
 */
#include "../../include/asm/unistd.h"
long syscall6(long n, long a, long b, long c, long d, long e, long f);

ssize_t read(int fd, void *buf, size_t n);
ssize_t write(int fd, const void *buf, size_t n);
int open(const char *path, int flags, ...);
int close(int fd);
int symlink(const char *target, const char *path);
int unlink(const char *path);
ssize_t readlink(const char *path, char *buf, size_t n);
void for_each_leaf(const char *dir, const char *const *leaves, unsigned int n,
		   void (*fn)(const char *path));
off_t lseek(int fd, off_t off, int whence);
long getdents64(int fd, void *buf, size_t n);
pid_t fork(void);
int execve(const char *path, char *const argv[], char *const envp[]);
__attribute__((noreturn)) void exit(int code);
pid_t wait4(pid_t pid, int *status, int options, void *rusage);
pid_t waitpid(pid_t pid, int *status, int options);
int nanosleep(const struct timespec *req, struct timespec *rem);
int msleep(long ms);
pid_t getpid(void);
pid_t getppid(void);
void *sbrk(long inc);
void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
int munmap(void *addr, size_t len);
int sched_yield(void);
int socket(int domain, int type, int protocol);
int bind(int fd, const struct sockaddr_in *addr, int len);
int listen(int fd, int backlog);
int accept(int fd, struct sockaddr_in *addr, int *len);
int accept4(int fd, struct sockaddr_in *addr, int *len, int flags);
ssize_t sendto(int fd, const void *buf, size_t n, int flags, const struct sockaddr_in *addr, int len);
ssize_t recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr_in *addr, int *len);
int shutdown(int fd, int how);

size_t strlen(const char *s);
void *memcpy(void *d, const void *s, size_t n);
void *memset(void *d, int c, size_t n);
int strcmp(const char *a, const char *b);
char *utoa(unsigned long v, char *buf);	/* returns the end */
#define htons(x)	((unsigned short)__builtin_bswap16(x))
int fputs(int fd, const char *s);

#endif
