package shadow

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
)

// ErrUnsupported is returned where shadowing cannot work: hosts other
// than Linux on amd64 or arm64.
var ErrUnsupported = errors.New("shadow: needs Linux on amd64 or arm64 (seccomp and ptrace)")

// ErrNotTraced is returned by Install on a thread that no supervisor
// traces: under its filter every filtered syscall would fail with ENOSYS.
var ErrNotTraced = errors.New("shadow: this thread is not traced (Attach first, from the same goroutine)")

// Op is the kind of syscall a Request mirrors.
type Op int

const (
	Fork    Op = iota + 1 // clone without CLONE_THREAD, clone3, fork, vfork
	Open                  // open, openat, openat2, creat
	Symlink               // symlink, symlinkat
	Mkdir                 // mkdir, mkdirat
	Unlink                // unlink, unlinkat, rmdir
	// Adopt: shadowing begins with process Child, which needs a twin.
	Adopt
	// Exit: process PID exited, or was killed, with wait status Flags.
	Exit
	// Kill is kill(2): Child is its pid argument (the target, when its
	// signal-delivery stop replays it), Flags the signal, and Mode the
	// errno the host's call answers, which the guest's call answers
	// too. It is replayed at the caller's stop (atCaller), at the
	// target's (procTable.killed), or by the kill watch after the fact
	// (killwatch_linux.go). The host delivers.
	Kill
)

func (o Op) String() string {
	switch o {
	case Fork:
		return "fork"
	case Open:
		return "open"
	case Symlink:
		return "symlink"
	case Mkdir:
		return "mkdir"
	case Unlink:
		return "unlink"
	case Adopt:
		return "adopt"
	case Exit:
		return "exit"
	case Kill:
		return "kill"
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

// Request is one host syscall for the guest to replay, or a traced
// process's start or end, which the guest's twin of the process follows.
type Request struct {
	Op Op
	// PID is the calling process (its thread group's ID), in the
	// supervisor's PID namespace; 0 for Adopt.
	PID int
	// Child is the process that a Fork made (known once the host's fork
	// has made it: the request is replayed then) or that Adopt names.
	Child int
	Comm  string // the caller's comm at the time of the call
	// Path is absolute: a relative path is joined to the directory of its
	// dirfd, or to the caller's working directory. Empty for Fork.
	Path string
	// Target is a symlink's target exactly as given (not resolved).
	Target string
	// Flags: for Open, the O_* flags in the arm64 (asm-generic) encoding,
	// whatever the host's; for Unlink, AT_REMOVEDIR (0x200) for rmdir and
	// unlinkat(AT_REMOVEDIR), else 0; for Fork, the low 32 bits of the
	// clone flags (fork: SIGCHLD; vfork: CLONE_VM|CLONE_VFORK|SIGCHLD);
	// for Exit, the wait status (exit code << 8, or the killing signal).
	Flags uint32
	// Mode is the creation mode of Open (with O_CREAT or O_TMPFILE) and
	// Mkdir, before the umask.
	Mode uint32
}

// ReplayFunc has the guest replay r; it returns once the guest has, and
// the host syscall waits until it does. A Supervisor calls it in order for
// each traced process tree, concurrently for different ones.
type ReplayFunc func(ctx context.Context, r Request) error

// Stats counts what a Supervisor did.
type Stats struct {
	Forks, Opens, Symlinks, Mkdirs, Unlinks uint64 // requests replayed (including failed replays)
	Adopts, Exits                           uint64 // processes whose twins were made by Adopt, and twins ended by Exit
	Kills                                   uint64 // kill(2) calls replayed
	ReplayErrors                            uint64 // replays that returned an error
	Threads                                 uint64 // clone3 thread creations let through without replay
	Skipped                                 uint64 // stops not replayed: no syscall info, or arguments that could not be read
	Sealed                                  uint64 // opens redirected and mounts served by the Seal
}

// Supervisor traces process trees: it replays the syscalls at which their
// seccomp filter stops them and lets the host syscalls continue.
type Supervisor struct {
	Replay ReplayFunc
	Log    *slog.Logger // nil: slog.Default()
	// Seal, if not nil, keeps the traced trees on kpemu's trees (see Seal).
	Seal *Seal

	forks, opens, symlinks, mkdirs, unlinks atomic.Uint64
	adopts, exits, kills                    atomic.Uint64
	replayErrors, threads, skipped, sealed  atomic.Uint64

	samplers samplerTable // the sampling perf events the seal made
}

// Stats returns the counts so far, over all the processes traced.
func (s *Supervisor) Stats() Stats {
	return Stats{
		Forks: s.forks.Load(), Opens: s.opens.Load(), Symlinks: s.symlinks.Load(),
		Mkdirs: s.mkdirs.Load(), Unlinks: s.unlinks.Load(),
		Adopts: s.adopts.Load(), Exits: s.exits.Load(), Kills: s.kills.Load(),
		ReplayErrors: s.replayErrors.Load(), Threads: s.threads.Load(), Skipped: s.skipped.Load(),
		Sealed: s.sealed.Load(),
	}
}

func (s *Supervisor) count(op Op) {
	switch op {
	case Fork:
		s.forks.Add(1)
	case Open:
		s.opens.Add(1)
	case Symlink:
		s.symlinks.Add(1)
	case Mkdir:
		s.mkdirs.Add(1)
	case Unlink:
		s.unlinks.Add(1)
	case Adopt:
		s.adopts.Add(1)
	case Exit:
		s.exits.Add(1)
	case Kill:
		s.kills.Add(1)
	}
}

func (s *Supervisor) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

// Listen traces the processes that Attach at socketPath with a new
// Supervisor; see Supervisor.Listen.
func Listen(ctx context.Context, socketPath string, replay func(context.Context, Request) error, log *slog.Logger) error {
	return (&Supervisor{Replay: replay, Log: log}).Listen(ctx, socketPath)
}
