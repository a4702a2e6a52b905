//go:build linux && (amd64 || arm64)

package shadow

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hostSyscall is a syscall number to mirror and what it is.
type hostSyscall struct {
	nr   uint32
	kind sysKind
}

// Offsets into struct seccomp_data (little-endian hosts only).
const (
	offNr    = 0
	offArch  = 4
	offArgs0 = 16 // low 32 bits of args[0]
)

// buildFilter returns the BPF program: foreign-arch syscalls and threads
// (clone with CLONE_THREAD) are allowed, the calls stop for the tracer, the rest
// allowed. Threads are filtered in BPF so that the Go runtime and pthreads
// do not stop for the tracer; clone3's flags are behind a pointer that
// BPF cannot follow, so clone3 stops and the tracer tells.
func buildFilter(arch uint32, calls []hostSyscall) []unix.SockFilter {
	stmt := func(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }
	jump := func(code uint16, k uint32, jt, jf uint8) unix.SockFilter {
		return unix.SockFilter{Code: code, Jt: jt, Jf: jf, K: k}
	}
	var stop []uint32
	clone, hasClone := uint32(0), false
	for _, c := range calls {
		if c.kind == sysClone {
			clone, hasClone = c.nr, true
			continue
		}
		stop = append(stop, c.nr)
	}
	// Layout: arch check, nr load, one JEQ per stopped call, the clone
	// check (3 instructions), then "allow" and "trace".
	n := len(stop)
	tail := 0
	if hasClone {
		tail = 3
	}
	allow := 3 + n + tail // index of RET ALLOW; RET TRACE follows
	to := func(from, target int) uint8 { return uint8(target - from - 1) }

	prog := []unix.SockFilter{
		stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offArch),
		jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, arch, 0, to(1, allow)),
		stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offNr),
	}
	for i, nr := range stop {
		pc := 3 + i
		prog = append(prog, jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, nr, to(pc, allow+1), 0))
	}
	if hasClone {
		pc := 3 + n
		prog = append(prog,
			jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, clone, 0, to(pc, allow)),
			stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offArgs0),
			jump(unix.BPF_JMP|unix.BPF_JSET|unix.BPF_K, cloneThread, to(pc+2, allow), to(pc+2, allow+1)),
		)
	}
	return append(prog,
		stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ALLOW),
		stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_TRACE),
	)
}

// filterSyscalls are the syscalls the filter of mode m stops.
func filterSyscalls(m Mode) []hostSyscall {
	all := hostSyscalls()
	if m != ModeSeal {
		return all
	}
	var seal []hostSyscall
	for _, c := range all {
		switch c.kind {
		case sysOpen, sysOpenat, sysOpenat2, sysMount, sysFsopen, sysStatfs, sysFstatfs, sysSplice, sysPerfEventOpen:
			seal = append(seal, c)
		}
	}
	return seal
}

// Install locks the calling goroutine to its OS thread and installs the
// mirroring filter on that thread. The filter outlives execve and is
// inherited by children; its syscalls stop for a tracer, and fail with
// ENOSYS where there is none. So call Attach first, then Install, then
// syscall.Exec from the same goroutine.
//
// Why one locked thread rather than SECCOMP_FILTER_FLAG_TSYNC on all of
// them: execve from the locked thread gives the new program that thread's
// filter, which is all that is wanted, and the Go runtime's other threads
// do not stop for the tracer in between.
func Install() error { return InstallMode(ModeShadow) }

// InstallMode is Install for a tree that attached with mode m: ModeSeal
// stops only the syscalls that the seal acts on.
func InstallMode(m Mode) error {
	runtime.LockOSThread()
	prog := buildFilter(nativeAuditArch, filterSyscalls(m))
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	nnp := false
	for {
		_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog)))
		switch {
		case errno == 0:
			return nil
		case errno == unix.EACCES && !nnp:
			// Without CAP_SYS_ADMIN a filter needs no_new_privs; root
			// keeps setuid programs working by not setting it.
			if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
				return fmt.Errorf("shadow: prctl(PR_SET_NO_NEW_PRIVS): %w", err)
			}
			nnp = true
		default:
			return fmt.Errorf("shadow: seccomp(SET_MODE_FILTER): %w", errno)
		}
	}
}
