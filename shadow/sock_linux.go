//go:build linux && (amd64 || arm64)

package shadow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// sendTimeout bounds Attach's wait for the supervisor's ack, and the
// supervisor's for Attach's byte.
const sendTimeout = 30 * time.Second

// Attach asks the supervisor listening at socketPath to trace this
// process and returns once it does, so that the caller may Install and
// exec the supervised command.
func Attach(socketPath string) error { return AttachMode(socketPath, ModeShadow) }

// AttachMode is Attach with mode m: ModeSeal asks only to be sealed.
// It locks the calling goroutine to its thread, the one to Install on.
func AttachMode(socketPath string, m Mode) error {
	// The thread that installs the filter and execs must be one the
	// supervisor seizes: a thread the Go runtime starts while it seizes
	// may escape (a clone begun before its parent was seized makes an
	// untraced thread), and a command exec'd from there would run
	// untraced, each filtered syscall failing with ENOSYS (seen in CI:
	// bash could not open its libraries). Locked now, the thread is one
	// the supervisor's first look at /proc/PID/task lists.
	runtime.LockOSThread()
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: socketPath, Net: "unix"})
	if err != nil {
		return fmt.Errorf("shadow: connecting to the supervisor: %w", err)
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(sendTimeout)); err != nil {
		return fmt.Errorf("shadow: %w", err)
	}
	if _, err := c.Write([]byte{byte(m)}); err != nil {
		return fmt.Errorf("shadow: asking to be traced: %w", err)
	}
	var ack [1]byte
	if _, err := io.ReadFull(c, ack[:]); err != nil {
		return fmt.Errorf("shadow: the supervisor at %s did not trace this process: %w", socketPath, err)
	}
	return nil
}

// Listen listens on the unix socket socketPath (mode 0600; a stale socket
// there is replaced) and traces each process that connects (Attach) until
// ctx is done; then it removes the socket, logs the totals and returns
// ctx.Err(). Tracers still running let their tracees go at their next stop.
func (s *Supervisor) Listen(ctx context.Context, socketPath string) error {
	log := s.log()
	if fi, err := os.Lstat(socketPath); err == nil && fi.Mode().Type() == os.ModeSocket {
		// A previous supervisor died without removing it.
		if err := os.Remove(socketPath); err != nil {
			return fmt.Errorf("shadow: %w", err)
		}
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: socketPath, Net: "unix"})
	if err != nil {
		return fmt.Errorf("shadow: %w", err)
	}
	// Whoever connects makes kpemu replay into its guest.
	if err := os.Chmod(socketPath, 0o600); err != nil {
		ln.Close()
		return fmt.Errorf("shadow: %w", err)
	}
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	log.Info("shadow supervisor listening", "socket", socketPath)

	for {
		c, err := ln.AcceptUnix()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				break // ctx is done
			}
			// EMFILE and the like pass; the socket stays.
			log.Warn("shadow: accept", "err", err)
			time.Sleep(100 * time.Millisecond)
			continue
		}
		pid, mode, err := peerPID(c)
		if err != nil {
			log.Warn("shadow: refusing a connection", "err", err)
			c.Close()
			continue
		}
		// The ack lets the process install its filter and exec; it goes
		// once the process is traced, or not at all.
		go func() {
			defer c.Close()
			err := s.trace(ctx, pid, mode, func() {
				if _, err := c.Write([]byte{1}); err != nil {
					log.Warn("shadow: acking", "pid", pid, "err", err)
				}
			})
			if err != nil && !errors.Is(err, ctx.Err()) {
				log.Error("shadow: tracing", "pid", pid, "err", err)
			}
		}()
	}
	st := s.Stats()
	log.Info("shadow supervisor stopped", "forks", st.Forks, "opens", st.Opens, "symlinks", st.Symlinks,
		"mkdirs", st.Mkdirs, "unlinks", st.Unlinks, "replay_errors", st.ReplayErrors, "threads", st.Threads, "skipped", st.Skipped,
		"sealed", st.Sealed)
	return ctx.Err()
}

// peerPID reads Attach's byte, the Mode, and returns the process that
// sent it and the mode.
func peerPID(c *net.UnixConn) (int, Mode, error) {
	if err := c.SetReadDeadline(time.Now().Add(sendTimeout)); err != nil {
		return 0, 0, err
	}
	var b [1]byte
	if _, err := io.ReadFull(c, b[:]); err != nil {
		return 0, 0, err
	}
	raw, err := c.SyscallConn()
	if err != nil {
		return 0, 0, err
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return 0, 0, err
	}
	if cerr != nil {
		return 0, 0, cerr
	}
	if cred.Pid <= 0 {
		return 0, 0, fmt.Errorf("peer in another PID namespace (pid %d)", cred.Pid)
	}
	if m := Mode(b[0]); m != ModeShadow && m != ModeSeal {
		return 0, 0, fmt.Errorf("unknown mode %d", b[0])
	}
	return int(cred.Pid), Mode(b[0]), nil
}
