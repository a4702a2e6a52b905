// Package shadow mirrors the syscalls of host processes into kpemu's guest.
//
// Linux's ftrace selftests expect the traced kernel to see what the test
// shell does: a fork reaches kernel_clone, `echo > /dev/null` reaches
// do_sys_openat2 with "/dev/null", `ln -s` reaches vfs_symlink. Under kpemu
// the shell runs on the host, so the guest would see none of it. This
// package is the host half of "shadowing": a seccomp filter (Install)
// stops each fork, open, symlink, mkdir, unlink and rmdir of the supervised
// process tree for its tracer (SECCOMP_RET_TRACE); the tracer (Trace,
// Listen), which ptrace attached to the tree's first process before it
// installed the filter and follows every process and thread it makes,
// decodes the syscall into a Request, hands it to a replay function that
// has the guest kernel do the same syscall, and only then lets the host
// syscall run unchanged. Replay errors never fail the host syscall. A
// ptrace stop, unlike a wait for a seccomp user-notification supervisor,
// cannot be cut short by a signal (trace_linux.go says why that matters).
//
// A process asks to be traced over a unix socket (Attach, Listen), as
// `kpemu shadow-exec` does before it installs the filter and execs its
// command. A traced process cannot be traced by another tracer (strace,
// gdb) too.
//
// Only Linux on amd64 and arm64 hosts is supported; elsewhere the functions
// return ErrUnsupported.
package shadow
