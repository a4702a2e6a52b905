/* SPDX-License-Identifier: MIT */
#ifndef _LINUX_KERNEL_H
#define _LINUX_KERNEL_H

#include <linux/compiler.h>
#include <linux/types.h>
#include <linux/printk.h>
#include <linux/errno.h>
#include <linux/string.h>

#define min(x, y)	((x) < (y) ? (x) : (y))
#define max(x, y)	((x) > (y) ? (x) : (y))
#define min_t(t, x, y)	((t)(x) < (t)(y) ? (t)(x) : (t)(y))

#define ALIGN(x, a)	(((x) + ((a) - 1)) & ~((__typeof__(x))(a) - 1))

struct pt_regs;

__printf(1, 2) __noreturn void panic(const char *fmt, ...);
void die(const char *str, struct pt_regs *regs, long err);
void arm64_notify_die(const char *str, struct pt_regs *regs, int signo,
		      int sicode, unsigned long far, unsigned long err);
void arm64_force_sig_fault(int signo, int code, unsigned long far,
			   const char *str, unsigned long esr);
void dump_stack(void);
void __show_regs(struct pt_regs *regs);
void dump_backtrace(struct pt_regs *regs, const char *loglvl);

extern int oops_in_progress;

/* Signal numbers and codes carried by fault_info tables, for fidelity. */
#define SIGILL		4
#define SIGTRAP		5
#define SIGBUS		7
#define SIGKILL		9
#define SIGSEGV		11
#define SIGCHLD		17
#define SI_KERNEL	0x80
#define SEGV_MAPERR	1
#define SEGV_ACCERR	2
#define SEGV_MTESERR	9
#define BUS_ADRALN	1
#define BUS_OBJERR	3
#define TRAP_BRKPT	1
#define TRAP_TRACE	2
#define TRAP_HWBKPT	4

#endif /* _LINUX_KERNEL_H */
