//go:build linux

package shadow

import "golang.org/x/sys/unix"

// redZone is the part of the stack below the stack pointer that the ABI
// lets a function use without moving it (System V AMD64: 128 bytes).
const redZone = 128

// regs are a stopped tracee's registers.
type regs struct {
	r unix.PtraceRegs
}

func getRegs(tid int) (*regs, error) {
	var r regs
	if err := unix.PtraceGetRegs(tid, &r.r); err != nil {
		return nil, err
	}
	return &r, nil
}

func (r *regs) sp() uint64 { return r.r.Rsp }

// ret is the syscall's return value, at its exit.
func (r *regs) ret() int64 { return int64(r.r.Rax) }

// setArg sets syscall argument i (0-5).
func (r *regs) setArg(i int, v uint64) {
	switch i {
	case 0:
		r.r.Rdi = v
	case 1:
		r.r.Rsi = v
	case 2:
		r.r.Rdx = v
	case 3:
		r.r.R10 = v
	case 4:
		r.r.R8 = v
	case 5:
		r.r.R9 = v
	}
}

// skipSyscall makes the stopped syscall not run and return ret (a
// -errno or 0): a seccomp stop skips a syscall whose number the tracer
// sets to -1, and the return register is then what the tracer put there.
func (r *regs) skipSyscall(ret int64) {
	r.r.Orig_rax = ^uint64(0)
	r.r.Rax = uint64(ret)
}

// setRet sets the syscall's return value, at its exit.
func (r *regs) setRet(v int64) { r.r.Rax = uint64(v) }

// setSyscall makes the stopped syscall (at its seccomp stop) syscall nr
// instead; setArg sets its arguments.
func (r *regs) setSyscall(nr uint64) { r.r.Orig_rax = nr }

// rewind, at the exit stop of a syscall that entry replaced, sets r to
// entry's registers with the instruction pointer back on the syscall
// instruction (syscall, 2 bytes) and its number in rax: the tracee runs
// the syscall of entry again.
func (r *regs) rewind(entry *regs) {
	r.r = entry.r
	r.r.Rax = entry.r.Orig_rax
	r.r.Rip -= 2
}

// keepRet, at the exit stop of a syscall that entry replaced, sets r to
// entry's registers with the replacement's return value: the tracee sees
// its own syscall return that value, its argument registers unchanged.
func (r *regs) keepRet(entry *regs) {
	ret := r.r.Rax
	r.r = entry.r
	r.r.Rax = ret
}

func setRegs(tid int, r *regs) error { return unix.PtraceSetRegs(tid, &r.r) }
