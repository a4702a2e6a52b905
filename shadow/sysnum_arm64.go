//go:build linux

package shadow

import "golang.org/x/sys/unix"

// nativeAuditArch is seccomp_data.arch of native syscalls; others (arm32
// compat) are let through unmirrored.
const nativeAuditArch = unix.AUDIT_ARCH_AARCH64

// hostSyscalls are the syscalls to mirror or seal, by number on this host; arm64
// has only the *at and clone forms.
func hostSyscalls() []hostSyscall {
	return []hostSyscall{
		{unix.SYS_OPENAT, sysOpenat}, {unix.SYS_OPENAT2, sysOpenat2},
		{unix.SYS_SYMLINKAT, sysSymlinkat}, {unix.SYS_MKDIRAT, sysMkdirat}, {unix.SYS_UNLINKAT, sysUnlinkat},
		{unix.SYS_CLONE, sysClone}, {unix.SYS_CLONE3, sysClone3},
		{unix.SYS_MOUNT, sysMount}, {unix.SYS_FSOPEN, sysFsopen}, {unix.SYS_STATFS, sysStatfs}, {unix.SYS_FSTATFS, sysFstatfs},
		{unix.SYS_SPLICE, sysSplice}, {unix.SYS_PERF_EVENT_OPEN, sysPerfEventOpen},
		{unix.SYS_KILL, sysKill}, {unix.SYS_IOCTL, sysIoctl}, {unix.SYS_PPOLL, sysPpoll}, {unix.SYS_PSELECT6, sysPselect6},
	}
}
