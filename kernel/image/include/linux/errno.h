/* SPDX-License-Identifier: MIT */
#ifndef _LINUX_ERRNO_H
#define _LINUX_ERRNO_H

#define EPERM		 1
#define ENOENT		 2
#define ESRCH		 3
#define EINTR		 4
#define EIO		 5
#define EBADF		 9
#define EAGAIN		11
#define ENOMEM		12
#define EFAULT		14
#define EBUSY		16
#define EINVAL		22
#define ENOSPC		28
#define ESPIPE		29
#define EFBIG		27
#define EOVERFLOW	75
#define E2BIG		 7
#define ENOEXEC		 8
#define ECHILD		10
#define EACCES		13
#define EEXIST		17
#define ENODEV		19
#define ENOTDIR		20
#define EISDIR		21
#define EMFILE		24
#define ENAMETOOLONG	36
#define ENOSYS		38
#define ENOTEMPTY	39
#define ELOOP		40

#define MAX_ERRNO	4095
#define IS_ERR_VALUE(x) unlikely((unsigned long)(void *)(x) >= (unsigned long)-MAX_ERRNO)

static inline void *ERR_PTR(long error) { return (void *)error; }
static inline long PTR_ERR(const void *ptr) { return (long)ptr; }
static inline bool IS_ERR(const void *ptr) { return IS_ERR_VALUE((unsigned long)ptr); }
static inline void *ERR_CAST(const void *ptr) { return (void *)ptr; }

#endif /* _LINUX_ERRNO_H */
