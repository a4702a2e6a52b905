//go:build linux

package shadow

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// redZone: AArch64's ABI has none.
const redZone = 0

// NT_PRSTATUS, the general registers, and NT_ARM_SYSTEM_CALL, the
// syscall number: regsets of PTRACE_{GET,SET}REGSET.
const ntPRStatus, ntARMSystemCall = 1, 0x404

// regs are a stopped tracee's registers, and the syscall number to set
// (skip: -1; setSyscall), which arm64 keeps apart from x8.
type regs struct {
	r     unix.PtraceRegsArm64
	nr    int32
	setNr bool
}

func getRegs(tid int) (*regs, error) {
	var r regs
	if err := unix.PtraceGetRegSetArm64(tid, ntPRStatus, &r.r); err != nil {
		return nil, err
	}
	return &r, nil
}

func (r *regs) sp() uint64 { return r.r.Sp }

// ret is the syscall's return value, at its exit.
func (r *regs) ret() int64 { return int64(r.r.Regs[0]) }

// setArg sets syscall argument i (0-5), x0-x5.
func (r *regs) setArg(i int, v uint64) { r.r.Regs[i] = v }

// skipSyscall makes the stopped syscall not run and return ret: the
// number becomes -1 (NO_SYSCALL) and x0 is kept as the tracer sets it.
func (r *regs) skipSyscall(ret int64) {
	r.r.Regs[0] = uint64(ret)
	r.nr, r.setNr = -1, true
}

// setRet sets the syscall's return value (x0), at its exit.
func (r *regs) setRet(v int64) { r.r.Regs[0] = uint64(v) }

// setSyscall makes the stopped syscall (at its seccomp stop) syscall nr
// instead; setArg sets its arguments.
func (r *regs) setSyscall(nr uint64) { r.nr, r.setNr = int32(nr), true }

// rewind, at the exit stop of a syscall that entry replaced, sets r to
// entry's registers (x0 is the first argument again, x8 the number) with
// the pc back on the svc instruction (4 bytes): the tracee runs the
// syscall of entry again.
func (r *regs) rewind(entry *regs) {
	r.r = entry.r
	r.r.Pc -= 4
	r.setNr = false
}

// keepRet, at the exit stop of a syscall that entry replaced, sets r to
// entry's registers with the replacement's return value in x0.
func (r *regs) keepRet(entry *regs) {
	ret := r.r.Regs[0]
	r.r = entry.r
	r.r.Regs[0] = ret
	r.setNr = false
}

func setRegs(tid int, r *regs) error {
	if err := unix.PtraceSetRegSetArm64(tid, ntPRStatus, &r.r); err != nil {
		return err
	}
	if !r.setNr {
		return nil
	}
	nr := r.nr
	iov := unix.Iovec{Base: (*byte)(unsafe.Pointer(&nr))}
	iov.SetLen(int(unsafe.Sizeof(nr)))
	_, _, errno := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_SETREGSET, uintptr(tid), ntARMSystemCall, uintptr(unsafe.Pointer(&iov)), 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}
