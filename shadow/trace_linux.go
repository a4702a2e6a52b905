//go:build linux && (amd64 || arm64)

package shadow

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Why ptrace and not seccomp user notification: a process that waits for
// a user-notification supervisor waits interruptibly until the supervisor
// has received the notification, and a signal then (SIGCHLD to a shell
// that forks a pipeline) fails the syscall with EINTR, which no shell
// expects of fork ("Cannot fork"). However fast the supervisor, that window
// exists. A seccomp stop (SECCOMP_RET_TRACE) is a ptrace stop: signals wait
// until the tracer lets the tracee go on.

// traceOptions: stop at the filter's syscalls, and trace every process and
// thread the tracees make, as they inherit the filter.
// TRACESYSGOOD marks a syscall-exit stop (the seal's statfs) apart from a
// SIGTRAP. TRACEEXIT stops a process before it exits, for its twin's exit
// (procs_linux.go), which its parent's wait4 then follows, as on Linux.
const traceOptions = unix.PTRACE_O_TRACESECCOMP | unix.PTRACE_O_TRACEFORK |
	unix.PTRACE_O_TRACEVFORK | unix.PTRACE_O_TRACECLONE | unix.PTRACE_O_TRACESYSGOOD |
	unix.PTRACE_O_TRACEEXIT

// wNoThread is __WNOTHREAD: wait for this thread's tracees only, so that
// several tracers (one per Attach) keep apart.
const wNoThread = 0x20000000

// ptraceSyscallInfo is struct ptrace_syscall_info as PTRACE_GET_SYSCALL_INFO
// fills it at a seccomp stop (op PTRACE_SYSCALL_INFO_SECCOMP).
type ptraceSyscallInfo struct {
	Op   uint8
	_    [3]uint8
	Arch uint32
	IP   uint64
	SP   uint64
	Nr   uint64
	Args [6]uint64
	Ret  uint32
	_    uint32
}

const ptraceSyscallInfoSeccomp = 3

// Trace supervises process pid, which has not yet installed the filter:
// it seizes each of its threads, calls attached, then serves the seccomp
// stops of pid and of every process and thread descended from it until
// none is left: for each, in order, it decodes the syscall, has s.Replay
// replay it, and lets it go on. It runs on a goroutine locked to its
// thread, as ptrace wants; signals and job control pass through. When ctx
// is done, the tracees are let go at their next stop (they then get ENOSYS
// for the filter's syscalls, which want a tracer).
func (s *Supervisor) Trace(ctx context.Context, pid int, attached func()) error {
	return s.trace(ctx, pid, ModeShadow, attached)
}

// trace is Trace for a tree that attached with mode m.
func (s *Supervisor) trace(ctx context.Context, pid int, m Mode, attached func()) error {
	runtime.LockOSThread()
	// The thread ends with the goroutine (not unlocked): its tracees are
	// then detached by the kernel.
	if err := seizeAll(pid); err != nil {
		return err
	}
	attached()

	rp, err := s.startReplayer(ctx)
	if err != nil {
		return err
	}
	defer rp.close()
	// The twins of the tree's processes, when their calls are replayed.
	var pt *procTable
	var kw *killWatch
	if m == ModeShadow {
		pt = newProcTable()
		s.replay(rp, pt.adopt(pid))
		kw, err = startKillWatch(pt.tree, func(r Request) { s.replay(rp, r) })
		if err != nil {
			s.log().Info("shadow: a kill(2) that no traced process takes is not replayed", "err", err)
		} else {
			defer kw.close()
		}
	}
	// exit replays r, the Exit of a process, after the kills the
	// process made (the kill watch's).
	exit := func(r Request) {
		if kw != nil {
			kw.drain()
		}
		s.replay(rp, r)
	}
	kinds := make(map[int32]sysKind)
	for _, c := range hostSyscalls() {
		kinds[int32(c.nr)] = c.kind
	}
	caller := &procCaller{}
	var splices spliceState
	// The syscalls whose exit the seal awaits, by thread.
	exits := make(map[int]exitStop)
	for {
		var ws unix.WaitStatus
		tid, err := unix.Wait4(-1, &ws, unix.WALL|wNoThread, nil)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.ECHILD:
			return nil // every tracee is gone
		case err != nil:
			return fmt.Errorf("shadow: wait4: %w", err)
		}
		if !ws.Stopped() {
			// exited or killed
			delete(exits, tid)
			s.samplers.exit(tid) // a process's sampling events end with it
			if pt != nil {
				if r, ok := pt.exit(tid, uint32(ws), false); ok && ctx.Err() == nil {
					exit(r) // after no PTRACE_EVENT_EXIT stop (SIGKILL), or threads
				}
				pt.gone(tid)
			}
			continue
		}
		// The event is in bits 16..23 of the status (WaitStatus.TrapCause
		// reports it only for SIGTRAP stops, and a group stop's
		// PTRACE_EVENT_STOP comes with the stopping signal).
		sig, event := ws.StopSignal(), int(uint32(ws)>>16&0xff)
		if ctx.Err() != nil {
			if x, ok := exits[tid]; ok && event == 0 && sig == unix.SIGTRAP|0x80 {
				delete(exits, tid)
				x.atExit(s, tid, true)
			}
			_ = unix.PtraceDetach(tid)
			continue
		}
		if pt != nil && !pt.known(tid) {
			if r, ok := pt.first(tid); ok {
				s.replay(rp, r)
			}
		}
		switch {
		case event == unix.PTRACE_EVENT_FORK || event == unix.PTRACE_EVENT_VFORK || event == unix.PTRACE_EVENT_CLONE:
			if pt != nil {
				if child, err := unix.PtraceGetEventMsg(tid); err == nil {
					if r, ok := pt.forked(tid, int(child), event); ok {
						s.replay(rp, r)
					}
				}
			}
			err = unix.PtraceCont(tid, 0) // the child is traced
		case event == unix.PTRACE_EVENT_EXIT:
			if pt != nil {
				if status, err := unix.PtraceGetEventMsg(tid); err == nil {
					if r, ok := pt.exit(tid, uint32(status), true); ok {
						exit(r)
					}
				}
			}
			err = unix.PtraceCont(tid, 0)
		case event == unix.PTRACE_EVENT_SECCOMP:
			if x, ok := s.stopped(tid, m, kinds, caller, &splices, rp, pt); ok {
				// Run the syscall and stop at its exit.
				exits[tid] = x
				err = unix.PtraceSyscall(tid, 0)
				break
			}
			err = unix.PtraceCont(tid, 0)
		case event == 0 && sig == unix.SIGTRAP|0x80:
			// A syscall-exit stop that PtraceSyscall asked for.
			if x, ok := exits[tid]; ok {
				delete(exits, tid)
				x.atExit(s, tid, false)
			}
			err = unix.PtraceCont(tid, 0)
		case event == unix.PTRACE_EVENT_STOP:
			switch sig {
			case unix.SIGSTOP, unix.SIGTSTP, unix.SIGTTIN, unix.SIGTTOU:
				// A group stop: stay stopped, as without a tracer.
				_, _, e := unix.RawSyscall6(unix.SYS_PTRACE, unix.PTRACE_LISTEN, uintptr(tid), 0, 0, 0, 0)
				if e != 0 {
					err = e
				}
			default:
				err = unix.PtraceCont(tid, 0) // a new tracee's first stop
			}
		case event != 0:
			err = unix.PtraceCont(tid, 0) // exec
		default:
			// A signal: deliver it, after the guest has seen the
			// kill(2) that sent it, if a traced process did.
			if pt != nil {
				if r, ok := pt.killed(tid, sig); ok {
					s.replay(rp, r)
				}
			}
			err = unix.PtraceCont(tid, int(sig))
		}
		if err != nil && err != unix.ESRCH {
			// ESRCH: killed meanwhile.
			return fmt.Errorf("shadow: letting %d go on: %w", tid, err)
		}
	}
}

// seizeAll seizes every thread of pid, again until no new one appears.
func seizeAll(pid int) error {
	seized := map[int]bool{}
	for {
		ents, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
		if err != nil {
			return fmt.Errorf("shadow: the threads of %d: %w", pid, err)
		}
		fresh := false
		for _, e := range ents {
			tid, err := strconv.Atoi(e.Name())
			if err != nil || seized[tid] {
				continue
			}
			_, _, errno := unix.RawSyscall6(unix.SYS_PTRACE, unix.PTRACE_SEIZE, uintptr(tid), 0, traceOptions, 0, 0)
			if errno != 0 && errno != unix.ESRCH {
				if len(seized) == 0 {
					return fmt.Errorf("shadow: PTRACE_SEIZE %d: %w", tid, errno)
				}
				continue
			}
			seized[tid], fresh = true, true
		}
		if !fresh {
			if len(seized) == 0 {
				return fmt.Errorf("shadow: process %d has no threads to seize", pid)
			}
			return nil
		}
	}
}

// stopped replays the syscall at which tid is stopped, if it is one to
// and m is ModeShadow, and seals it if s has a Seal. ok asks for the
// syscall's exit stop, for x.
func (s *Supervisor) stopped(tid int, m Mode, kinds map[int32]sysKind, c *procCaller, splices *spliceState, rp *replayer, pt *procTable) (x exitStop, ok bool) {
	log := s.log()
	var info ptraceSyscallInfo
	_, _, errno := unix.RawSyscall6(unix.SYS_PTRACE, unix.PTRACE_GET_SYSCALL_INFO, uintptr(tid),
		unsafe.Sizeof(info), uintptr(unsafe.Pointer(&info)), 0, 0)
	if errno != 0 || info.Op != ptraceSyscallInfoSeccomp {
		log.Debug("shadow: no syscall info", "tid", tid, "err", errno, "op", info.Op)
		s.skipped.Add(1)
		return x, false
	}
	d := seccompData{Nr: int32(info.Nr), Arch: info.Arch, IP: info.IP, Args: info.Args}
	kind, ok := kinds[d.Nr]
	if !ok || d.Arch != nativeAuditArch {
		log.Debug("shadow: unexpected syscall", "nr", d.Nr, "arch", d.Arch)
		s.skipped.Add(1)
		return x, false
	}
	c.PID = tid
	switch kind {
	case sysMount, sysFsopen:
		if s.Seal != nil {
			s.sealMount(tid, kind, &d, c)
		}
		c.Close()
		return x, false
	case sysStatfs, sysFstatfs:
		defer c.Close()
		if s.Seal == nil {
			return nil, false
		}
		return sealStatfs(tid, kind, &d, c)
	case sysSplice:
		if s.Seal == nil {
			return nil, false
		}
		return s.sealSplice(tid, splices, &d)
	case sysPerfEventOpen:
		defer c.Close()
		if s.Seal == nil {
			return nil, false
		}
		return s.sealPerf(tid, &d, c)
	case sysIoctl:
		defer c.Close()
		if s.Seal != nil && s.Seal.Perf != nil {
			s.sealIoctl(tid, &d, c)
		}
		return nil, false
	case sysPoll, sysPpoll:
		defer c.Close()
		if s.Seal == nil {
			return nil, false
		}
		return s.sealPoll(tid, kind, splices, &d, c)
	case sysSelect, sysPselect6:
		defer c.Close()
		if s.Seal == nil {
			return nil, false
		}
		return s.sealSelect(tid, kind, splices, &d, c)
	}
	r, replay, err := decode(kind, &d, c)
	c.Close()
	switch {
	case err != nil:
		log.Debug("shadow: not replayed", "tid", tid, "nr", d.Nr, "err", err)
		s.skipped.Add(1)
		return x, false
	case !replay:
		s.threads.Add(1)
		return x, false
	}
	if s.Seal != nil && r.Op == Open {
		s.sealOpen(tid, kind, &r)
	}
	if m == ModeSeal || pt == nil {
		return x, false
	}
	r.Comm = readComm(tid)
	if r.Op == Fork {
		pt.forking(tid, r) // replayed once the child is known
		return x, false
	}
	r.PID = pt.process(tid)
	if r.Op == Kill {
		// Signal 0, SIGKILL or no signal (atCaller): no target will
		// show it.
		r.Mode = uint32(killErrno(tid, r.Child, int32(r.Flags)))
	}
	s.replay(rp, r)
	return x, false
}

// replay has rp replay r, and counts it.
func (s *Supervisor) replay(rp *replayer, r Request) {
	s.count(r.Op)
	s.log().Debug("shadow: replaying", "op", r.Op, "pid", r.PID, "child", r.Child, "comm", r.Comm,
		"path", r.Path, "target", r.Target, "flags", r.Flags, "mode", r.Mode)
	rp.replay(r)
}

// replayer runs Replay on another thread for the tracer's locked one.
// Both wait in reads of eventfds, not on channels: a goroutine locked to
// its thread and woken through a channel waits for the Go scheduler to
// hand that thread a processor, which took a millisecond per replay (fifty
// thousand guest instructions) while the emulator kept the others busy,
// and a goroutine woken by a locked one first waits for that one to give
// up its processor; a blocked system call wakes the thread itself.
type replayer struct {
	mu        sync.Mutex              // one request at a time: the tracer's or the kill watch's
	next      atomic.Pointer[Request] // the request to replay
	ask, done int                     // eventfds: a request is in next; it was replayed
	quit      atomic.Bool
}

func (s *Supervisor) startReplayer(ctx context.Context) (*replayer, error) {
	ask, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("shadow: eventfd: %w", err)
	}
	done, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(ask)
		return nil, fmt.Errorf("shadow: eventfd: %w", err)
	}
	rp := &replayer{ask: ask, done: done}
	go func() {
		defer unix.Close(ask)
		defer unix.Close(done)
		for {
			eventfdWait(ask)
			if rp.quit.Load() {
				return
			}
			r := rp.next.Swap(nil)
			if err := s.Replay(ctx, *r); err != nil {
				s.replayErrors.Add(1)
				s.log().Debug("shadow: replay failed", "op", r.Op, "path", r.Path, "err", err)
			}
			eventfdPost(done)
		}
	}()
	return rp, nil
}

// replay has r replayed and returns when it has been.
func (rp *replayer) replay(r Request) {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	rp.next.Store(&r)
	eventfdPost(rp.ask)
	eventfdWait(rp.done)
}

func (rp *replayer) close() {
	rp.quit.Store(true)
	eventfdPost(rp.ask)
}

func eventfdPost(fd int) {
	one := [8]byte{1}
	_, _ = unix.Write(fd, one[:])
}

func eventfdWait(fd int) {
	var b [8]byte
	for {
		if _, err := unix.Read(fd, b[:]); err != unix.EINTR {
			return
		}
	}
}
