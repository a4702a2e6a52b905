//go:build linux

package shadow

import "golang.org/x/sys/unix"

// nativeAuditArch is seccomp_data.arch of native syscalls; others (i386
// compat) are let through unmirrored.
const nativeAuditArch = unix.AUDIT_ARCH_X86_64

// hostSyscalls are the syscalls to mirror or seal, by number on this host.
func hostSyscalls() []hostSyscall {
	return []hostSyscall{
		{unix.SYS_OPEN, sysOpen}, {unix.SYS_OPENAT, sysOpenat}, {unix.SYS_OPENAT2, sysOpenat2}, {unix.SYS_CREAT, sysCreat},
		{unix.SYS_SYMLINK, sysSymlink}, {unix.SYS_SYMLINKAT, sysSymlinkat},
		{unix.SYS_MKDIR, sysMkdir}, {unix.SYS_MKDIRAT, sysMkdirat},
		{unix.SYS_UNLINK, sysUnlink}, {unix.SYS_UNLINKAT, sysUnlinkat}, {unix.SYS_RMDIR, sysRmdir},
		{unix.SYS_CLONE, sysClone}, {unix.SYS_CLONE3, sysClone3}, {unix.SYS_FORK, sysFork}, {unix.SYS_VFORK, sysVfork},
		{unix.SYS_MOUNT, sysMount}, {unix.SYS_FSOPEN, sysFsopen}, {unix.SYS_STATFS, sysStatfs}, {unix.SYS_FSTATFS, sysFstatfs},
		{unix.SYS_SPLICE, sysSplice}, {unix.SYS_PERF_EVENT_OPEN, sysPerfEventOpen},
		{unix.SYS_KILL, sysKill}, {unix.SYS_IOCTL, sysIoctl}, {unix.SYS_POLL, sysPoll}, {unix.SYS_PPOLL, sysPpoll},
		{unix.SYS_SELECT, sysSelect}, {unix.SYS_PSELECT6, sysPselect6},
	}
}
