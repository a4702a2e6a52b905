/* SPDX-License-Identifier: MIT */
/* arm64's system call numbers (include/uapi/asm-generic/unistd.h), those kpemu implements. */
#ifndef __ASM_UNISTD_H
#define __ASM_UNISTD_H

#define __NR_mkdirat		34
#define __NR_unlinkat		35
#define __NR_symlinkat		36
#define __NR_readlinkat		78
#define __NR_getdents64		61
#define __NR_openat		56
#define __NR_close		57
#define __NR_lseek		62
#define __NR_read		63
#define __NR_write		64
#define __NR_exit		93
#define __NR_exit_group		94
#define __NR_nanosleep		101
#define __NR_sched_setscheduler	119
#define __NR_sched_yield	124
#define __NR_kill		129
#define __NR_prctl		167
#define __NR_getpid		172
#define __NR_getppid		173
#define __NR_socket		198
#define __NR_bind		200
#define __NR_listen		201
#define __NR_accept		202
#define __NR_sendto		206
#define __NR_recvfrom		207
#define __NR_shutdown		210
#define __NR_brk		214
#define __NR_munmap		215
#define __NR_clone		220
#define __NR_execve		221
#define __NR_mmap		222
#define __NR_accept4		242
#define __NR_wait4		260
#define __NR_clone3		435

#define __NR_syscalls		451	/* as Linux 6.1 */

#endif /* __ASM_UNISTD_H */
