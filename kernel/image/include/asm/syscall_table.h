/* SPDX-License-Identifier: MIT */
/*
 * The table of implemented system calls, included twice by
 * arch/arm64/kernel/syscall.c with different __SYSCALL definitions (as
 * Linux's asm-generic/unistd.h). No include guard, on purpose.
 */
__SYSCALL(__NR_openat, __arm64_sys_openat)
__SYSCALL(__NR_close, __arm64_sys_close)
__SYSCALL(__NR_getdents64, __arm64_sys_getdents64)
__SYSCALL(__NR_lseek, __arm64_sys_lseek)
__SYSCALL(__NR_read, __arm64_sys_read)
__SYSCALL(__NR_write, __arm64_sys_write)
__SYSCALL(__NR_exit, __arm64_sys_exit)
__SYSCALL(__NR_exit_group, __arm64_sys_exit_group)
__SYSCALL(__NR_nanosleep, __arm64_sys_nanosleep)
__SYSCALL(__NR_sched_yield, __arm64_sys_sched_yield)
__SYSCALL(__NR_getpid, __arm64_sys_getpid)
__SYSCALL(__NR_getppid, __arm64_sys_getppid)
__SYSCALL(__NR_socket, __arm64_sys_socket)
__SYSCALL(__NR_bind, __arm64_sys_bind)
__SYSCALL(__NR_listen, __arm64_sys_listen)
__SYSCALL(__NR_accept, __arm64_sys_accept)
__SYSCALL(__NR_sendto, __arm64_sys_sendto)
__SYSCALL(__NR_recvfrom, __arm64_sys_recvfrom)
__SYSCALL(__NR_shutdown, __arm64_sys_shutdown)
__SYSCALL(__NR_brk, __arm64_sys_brk)
__SYSCALL(__NR_munmap, __arm64_sys_munmap)
__SYSCALL(__NR_clone, __arm64_sys_clone)
__SYSCALL(__NR_execve, __arm64_sys_execve)
__SYSCALL(__NR_mmap, __arm64_sys_mmap)
__SYSCALL(__NR_accept4, __arm64_sys_accept4)
__SYSCALL(__NR_wait4, __arm64_sys_wait4)
