//go:build linux && (amd64 || arm64)

package shadow

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
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
	offArgs1 = 24 // low 32 bits of args[1]
)

// buildFilter returns the BPF program: foreign-arch syscalls and threads
// (clone with CLONE_THREAD) are allowed, the calls stop for the tracer, the rest
// allowed. Threads are filtered in BPF so that the Go runtime and pthreads
// do not stop for the tracer; clone3's flags are behind a pointer that
// BPF cannot follow, so clone3 stops and the tracer tells. kill(2) stops
// only with a signal that no signal-delivery stop will show: 0, SIGKILL,
// or one that is not a signal (EINVAL); the others are replayed from
// their targets or the kill watch (see procTable.killed for why).
// ioctl(2) stops only with perf's commands, for the seal's sampling
// events.
func buildFilter(arch uint32, calls []hostSyscall) []unix.SockFilter {
	// Jumps name their targets ("" is the next instruction), resolved
	// once the program is laid out; BPF jumps only forward.
	type insn struct {
		f      unix.SockFilter
		jt, jf string
	}
	var prog []insn
	at := map[string]int{}
	emit := func(code uint16, k uint32, jt, jf string) {
		prog = append(prog, insn{unix.SockFilter{Code: code, K: k}, jt, jf})
	}
	const (
		ld  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret = unix.BPF_RET | unix.BPF_K
	)
	emit(ld, offArch, "", "")
	emit(jeq, arch, "", "allow")
	emit(ld, offNr, "", "")
	var clone, kill, ioctl []uint32
	for _, c := range calls {
		switch c.kind {
		case sysClone:
			clone = append(clone, c.nr)
			emit(jeq, c.nr, "clone", "")
		case sysKill:
			kill = append(kill, c.nr)
			emit(jeq, c.nr, "kill", "")
		case sysIoctl:
			ioctl = append(ioctl, c.nr)
			emit(jeq, c.nr, "ioctl", "")
		default:
			emit(jeq, c.nr, "trace", "")
		}
	}
	emit(unix.BPF_JMP|unix.BPF_JA, 0, "allow", "")
	if len(clone) > 0 {
		at["clone"] = len(prog)
		emit(ld, offArgs0, "", "")
		emit(unix.BPF_JMP|unix.BPF_JSET|unix.BPF_K, cloneThread, "allow", "trace")
	}
	if len(kill) > 0 {
		at["kill"] = len(prog)
		emit(ld, offArgs1, "", "")
		for _, sig := range callerSignals {
			emit(jeq, sig, "trace", "")
		}
		emit(unix.BPF_JMP|unix.BPF_JGT|unix.BPF_K, nsig, "trace", "allow") // past _NSIG, or negative
	}
	if len(ioctl) > 0 {
		at["ioctl"] = len(prog)
		emit(ld, offArgs1, "", "")
		emit(unix.BPF_ALU|unix.BPF_AND|unix.BPF_K, 0xff00, "", "")
		emit(jeq, perfIoctlType<<8, "trace", "allow")
	}
	at["allow"] = len(prog)
	emit(ret, unix.SECCOMP_RET_ALLOW, "", "")
	at["trace"] = len(prog)
	emit(ret, unix.SECCOMP_RET_TRACE, "", "")

	out := make([]unix.SockFilter, len(prog))
	for pc, in := range prog {
		off := func(label string) int {
			if label == "" {
				return 0
			}
			return at[label] - pc - 1
		}
		out[pc] = in.f
		if in.f.Code == unix.BPF_JMP|unix.BPF_JA {
			out[pc].K = uint32(off(in.jt))
			continue
		}
		out[pc].Jt, out[pc].Jf = uint8(off(in.jt)), uint8(off(in.jf))
	}
	return out
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
		case sysOpen, sysOpenat, sysOpenat2, sysMount, sysFsopen, sysStatfs, sysFstatfs, sysSplice, sysPerfEventOpen, sysIoctl, sysPoll, sysPpoll, sysSelect, sysPselect6:
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
	if traced, err := threadTraced(); err != nil {
		return err
	} else if !traced {
		return ErrNotTraced
	}
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

// threadTraced reports whether a tracer is attached to the calling thread
// (its TracerPid).
func threadTraced() (bool, error) {
	status, err := os.ReadFile("/proc/thread-self/status")
	if err != nil {
		return false, fmt.Errorf("shadow: %w", err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "TracerPid:"); ok {
			return strings.TrimSpace(v) != "0", nil
		}
	}
	return false, errors.New("shadow: no TracerPid in /proc/thread-self/status")
}
