/* SPDX-License-Identifier: MIT */
#ifndef _LINUX_TYPES_H
#define _LINUX_TYPES_H

#ifndef __ASSEMBLY__

typedef unsigned char		u8;
typedef unsigned short		u16;
typedef unsigned int		u32;
typedef unsigned long long	u64;
typedef signed char		s8;
typedef signed short		s16;
typedef signed int		s32;
typedef signed long long	s64;

typedef unsigned long		size_t;
typedef long			ssize_t;
typedef long			ptrdiff_t;
typedef unsigned long		uintptr_t;
typedef long long		loff_t;
typedef int			pid_t;
typedef unsigned short		umode_t;
typedef unsigned int		fmode_t;
typedef unsigned int		gfp_t;
typedef _Bool			bool;

typedef u16			__be16;
typedef u32			__be32;
typedef u16			__sum16;
typedef u32			__wsum;

#define true	1
#define false	0
#define NULL	((void *)0)

#define U32_MAX		((u32)~0U)
#define INT_MAX		((int)(~0U >> 1))
#define LONG_MAX	((long)(~0UL >> 1))

typedef __builtin_va_list va_list;
#define va_start(v, l)	__builtin_va_start(v, l)
#define va_end(v)	__builtin_va_end(v)
#define va_arg(v, T)	__builtin_va_arg(v, T)
#define va_copy(d, s)	__builtin_va_copy(d, s)

struct list_head {
	struct list_head *next, *prev;
};

struct hlist_head {
	struct hlist_node *first;
};

struct hlist_node {
	struct hlist_node *next, **pprev;
};

#endif /* !__ASSEMBLY__ */
#endif /* _LINUX_TYPES_H */
