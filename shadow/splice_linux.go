//go:build linux && (amd64 || arm64)

package shadow

import (
	"encoding/binary"
	"os"
	"slices"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/kpemu/kpemu/internal/splicectl"
)

// The seal's splice(2): a sealed process that splices one of kpemu's
// stream files (trace_pipe_raw) into a pipe gets what Linux's splice
// gives, through the protocol of package internal/splicectl. The tracer
// never waits: when the splice would, the tracee's syscall becomes a
// wait of its own (WaitCmd on its descriptor of the file, or ppoll for
// room in its pipe), and at that syscall's exit the splice runs again.

// Linux's splice flags and poll events the seal looks at.
const (
	spliceFNonblock = 0x02
	pollIn          = 0x1
	pollOut         = 0x4
	pollErr         = 0x8
)

// spliceState is what the tracer keeps for splices: the devices of
// kpemu's trees, as last looked at.
type spliceState struct {
	devs []uint64
}

// kpemuDev reports whether dev is the device of one of kpemu's trees.
// A device not among those found so far has the trees looked at again:
// a stat of a FUSE mount can fail with EINTR (see noEINTR), and a
// device kept from a failed or early look made the seal pass every
// splice of a tree to Linux, which refuses a stream's (EINVAL). Only
// splices of other files pay the two stats.
func (st *spliceState) kpemuDev(seal *Seal, dev uint64) bool {
	if slices.Contains(st.devs, dev) {
		return true
	}
	st.devs = st.devs[:0]
	for _, p := range []string{seal.Tracefs, seal.Debugfs} {
		var fs unix.Stat_t
		if p == "" {
			continue
		}
		if noEINTR(func() error { return unix.Stat(p, &fs) }) == nil {
			st.devs = append(st.devs, fs.Dev)
		}
	}
	return slices.Contains(st.devs, dev)
}

// kpemuFile reports whether f (the tracer's duplicate of a caller's
// descriptor) is a file of kpemu's trees.
func (st *spliceState) kpemuFile(seal *Seal, f int) bool {
	var fs unix.Stat_t
	return noEINTR(func() error { return unix.Fstat(f, &fs) }) == nil && st.kpemuDev(seal, fs.Dev)
}

// spliceExit is a splice whose syscall the seal made a wait: at the
// wait's exit the splice runs again (the wait says so: 1 for WaitCmd,
// any count for ppoll), returns 0 (WaitCmd's 0), or fails as the wait
// did.
type spliceExit struct {
	entry   *regs // the splice's registers at its seccomp stop
	waitCmd bool  // WaitCmd; else ppoll for room in the pipe
}

// sealSplice serves a stopped splice(2) if its source is a stream of
// kpemu's: it makes the syscall return what the splice takes, or turns
// it into a wait (ok: the exit of which x handles). Any other splice
// runs unchanged.
func (s *Supervisor) sealSplice(tid int, st *spliceState, d *seccompData) (x spliceExit, ok bool) {
	fdIn, offIn, fdOut, offOut := int(int32(d.Args[0])), d.Args[1], int(int32(d.Args[2])), d.Args[3]
	length, flags := d.Args[4], uint32(d.Args[5])
	pidfd, err := openPidfd(tid)
	if err != nil {
		s.log().Debug("shadow: seal: splice: pidfd", "tid", tid, "err", err)
		return x, false
	}
	defer unix.Close(pidfd)
	in, err := unix.PidfdGetfd(pidfd, fdIn, 0)
	if err != nil {
		return x, false // the splice fails as it would (EBADF)
	}
	defer unix.Close(in)
	if !st.kpemuFile(s.Seal, in) {
		s.log().Debug("shadow: seal: splice: not kpemu's", "tid", tid, "devs", st.devs)
		return x, false
	}
	// Want 0 asks whether the file splices through the seal.
	var arg splicectl.ReadArg
	if _, err := ioctlRead(in, &arg); err != nil {
		s.log().Debug("shadow: seal: splice: not a stream", "tid", tid, "err", err)
		return x, false // not a stream: the page cache serves its splice
	}
	out, err := unix.PidfdGetfd(pidfd, fdOut, 0)
	if err != nil {
		s.finishSplice(tid, -int64(unix.EBADF))
		return x, false
	}
	defer unix.Close(out)
	ret, wait := spliceToPipe(in, out, offIn, offOut, length, flags)
	if wait != noWait {
		return s.spliceWait(tid, fdOut, wait)
	}
	if ret == -int64(unix.EPIPE) {
		// wait_for_space's send_sig(SIGPIPE, current): it comes when
		// the tracee goes on.
		_ = unix.Tgkill(tgid(tid), tid, unix.SIGPIPE)
	}
	s.finishSplice(tid, ret)
	return x, false
}

// Ways a splice waits.
const (
	noWait       = iota
	waitForData  // WaitCmd on the source
	waitForSpace // ppoll for room in the pipe
)

// spliceToPipe is do_splice for a kpemu stream in and a descriptor out,
// the tracee's: the result (a count or -errno) or, with nothing moved,
// how the splice waits.
func spliceToPipe(in, out int, offIn, offOut, length uint64, flags uint32) (ret int64, wait int) {
	var ofs unix.Stat_t
	if unix.Fstat(out, &ofs) != nil {
		return -int64(unix.EBADF), noWait
	}
	inFl, err1 := unix.FcntlInt(uintptr(in), unix.F_GETFL, 0)
	outFl, err2 := unix.FcntlInt(uintptr(out), unix.F_GETFL, 0)
	switch {
	case err1 != nil || err2 != nil:
		return -int64(unix.EBADF), noWait
	case inFl&unix.O_ACCMODE == unix.O_WRONLY || outFl&unix.O_ACCMODE == unix.O_RDONLY:
		return -int64(unix.EBADF), noWait
	case ofs.Mode&unix.S_IFMT != unix.S_IFIFO:
		return -int64(unix.EINVAL), noWait // neither end is a pipe
	case offOut != 0:
		return -int64(unix.ESPIPE), noWait
	case offIn != 0:
		return -int64(unix.EINVAL), noWait // a stream has no pread
	}
	nonblock := flags&spliceFNonblock != 0 || outFl&unix.O_NONBLOCK != 0
	// wait_for_space: a pipe without readers is EPIPE, with SIGPIPE; a
	// full one waits.
	pfd := []unix.PollFd{{Fd: int32(out), Events: pollOut}}
	if err := noEINTR(func() error { _, err := unix.Poll(pfd, 0); return err }); err != nil {
		return -int64(errnoOf(err)), noWait
	}
	switch {
	case pfd[0].Revents&pollErr != 0:
		return -int64(unix.EPIPE), noWait
	case pfd[0].Revents&pollOut == 0 && nonblock:
		return -int64(unix.EAGAIN), noWait
	case pfd[0].Revents&pollOut == 0:
		return 0, waitForSpace
	}
	// do_splice_to: no more than the pipe has room for.
	length = min(length, pipeRoom(out), 0x7ffff000)
	var arg splicectl.ReadArg
	var total int64
	for length > 0 {
		arg.Want = uint32(length)
		n, err := ioctlRead(in, &arg)
		if err != nil {
			if total > 0 {
				break
			}
			if err == unix.EAGAIN && !nonblock && inFl&unix.O_NONBLOCK == 0 {
				return 0, waitForData
			}
			return -int64(errnoOf(err)), noWait
		}
		if n == 0 {
			break
		}
		if _, err := unix.Write(out, arg.Data[:n]); err != nil {
			// Cannot be, with the room counted and the tracee
			// stopped, but for another writer of the pipe: that page
			// is lost.
			if total > 0 {
				break
			}
			return -int64(errnoOf(err)), noWait
		}
		total += int64(n)
		length -= uint64(min(uint64(n), length))
	}
	return total, noWait
}

// pipeRoom is the bytes of the pipe's free buffers (pipe->max_usage
// less the buffers in use, a page each): the capacity less what it
// holds, rounded up to pages.
func pipeRoom(p int) uint64 {
	size, err := unix.FcntlInt(uintptr(p), unix.F_GETPIPE_SZ, 0)
	if err != nil {
		return 0
	}
	queued, err := unix.IoctlGetInt(p, unix.TIOCINQ) // FIONREAD
	if err != nil {
		return 0
	}
	const page = 4096
	used := (queued + page - 1) / page * page
	if used >= size {
		return page // poll saw a free buffer
	}
	return uint64(size - used)
}

// ioctlRead is ReadCmd on fd: the bytes of arg.Data it filled.
func ioctlRead(fd int, arg *splicectl.ReadArg) (int, error) {
	return ioctl(fd, splicectl.ReadCmd, unsafe.Pointer(arg))
}

// ioctl is ioctl(2) of cmd on fd, again while EINTR: its result.
func ioctl(fd int, cmd uint32, arg unsafe.Pointer) (int, error) {
	var n int
	err := noEINTR(func() error {
		r, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(cmd), uintptr(arg))
		if errno != 0 {
			return errno
		}
		n = int(r)
		return nil
	})
	return n, err
}

// noEINTR calls f again while it fails with EINTR. The tracer's own
// syscalls get EINTR from signals that are not the tracee's: a FUSE
// request fails with it when a signal reaches the calling thread before
// the server has read it (fuse/dev.c's request_wait_answer), and the
// tracer's thread gets the tracees' SIGCHLDs. Passed on, it would have the
// seal take a stream for another file (and Linux refuse its splice,
// EINVAL) or fail the tracee's splice with an EINTR of no signal of its.
func noEINTR(f func() error) error {
	for {
		if err := f(); err != unix.EINTR {
			return err
		}
	}
}

// finishSplice makes the stopped splice return ret without running.
func (s *Supervisor) finishSplice(tid int, ret int64) {
	rg, err := getRegs(tid)
	if err == nil {
		rg.skipSyscall(ret)
		err = setRegs(tid, rg)
	}
	if err != nil {
		// The host's splice then runs, and fails as before (EINVAL).
		s.log().Warn("shadow: seal: cannot serve a splice", "tid", tid, "err", err)
		return
	}
	s.sealed.Add(1)
}

// spliceWait turns the stopped splice into its wait: WaitCmd on the
// tracee's descriptor of the source (the splice's first argument,
// kept), or ppoll(POLLOUT) on its fdOut with the pollfd written
// below its stack pointer. ok asks for the wait's exit.
func (s *Supervisor) spliceWait(tid, fdOut, wait int) (spliceExit, bool) {
	entry, err := getRegs(tid)
	if err != nil {
		return spliceExit{}, false
	}
	rg := *entry
	if wait == waitForData {
		rg.setSyscall(unix.SYS_IOCTL)
		rg.setArg(1, uint64(splicectl.WaitCmd))
		rg.setArg(2, 0)
	} else {
		var pfd [8]byte
		binary.LittleEndian.PutUint32(pfd[:], uint32(fdOut))
		binary.LittleEndian.PutUint16(pfd[4:], pollOut)
		addr := (rg.sp() - redZone - uint64(len(pfd))) &^ 15
		if _, err := unix.PtracePokeData(tid, uintptr(addr), pfd[:]); err != nil {
			return spliceExit{}, false
		}
		rg.setSyscall(unix.SYS_PPOLL)
		for i, v := range []uint64{addr, 1, 0, 0, 0} {
			rg.setArg(i, v)
		}
	}
	if err := setRegs(tid, &rg); err != nil {
		s.log().Warn("shadow: seal: cannot make a splice wait", "tid", tid, "err", err)
		return spliceExit{}, false
	}
	return spliceExit{entry: entry, waitCmd: wait == waitForData}, true
}

// Errnos a wait that a signal interrupts returns at its exit stop.
const (
	errRestartSys      = 512 // ERESTARTSYS
	errRestartNoIntr   = 513
	errRestartNoHand   = 514
	errRestartRestartB = 516 // ERESTART_RESTARTBLOCK
)

// atExit runs at the exit of a splice's wait: the splice runs again, or
// returns the wait's end. closing (the tracer is letting its tracees go)
// makes a splice that would run again return 0, as there will be no one
// to serve it.
func (x spliceExit) atExit(s *Supervisor, tid int, closing bool) {
	rg, err := getRegs(tid)
	if err != nil {
		return
	}
	ret := rg.ret()
	again := ret >= 0 && (!x.waitCmd || ret == 1)
	switch {
	case again && !closing:
		rg.rewind(x.entry)
	case again, ret == 0:
		rg.setRet(0)
	case ret == -errRestartSys || ret == -errRestartNoIntr || ret == -errRestartNoHand || ret == -errRestartRestartB:
		// A signal: Linux's splice returns EINTR from its wait for
		// data (wait_on_pipe). Its wait for room in the pipe returns
		// ERESTARTSYS, which a handler with SA_RESTART restarts; the
		// seal cannot tell the handler's flags, and says EINTR there
		// too.
		rg.setRet(-int64(unix.EINTR))
	default:
		// The wait's error is the splice's.
	}
	if err := setRegs(tid, rg); err != nil {
		s.log().Warn("shadow: seal: cannot end a splice's wait", "tid", tid, "err", err)
	}
}

// openPidfd opens a pidfd for tid's process (pidfd_getfd wants one).
func openPidfd(tid int) (int, error) {
	fd, err := unix.PidfdOpen(tid, 0)
	if err != unix.EINVAL && err != unix.ENOENT {
		return fd, err
	}
	// A thread other than the leader: its process's (EINVAL before
	// Linux 6.9, ENOENT since, without PIDFD_THREAD).
	if _, err := os.Stat("/proc/" + strconv.Itoa(tid)); err != nil {
		return -1, err
	}
	return unix.PidfdOpen(tgid(tid), 0)
}
