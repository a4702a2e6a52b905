//go:build linux && (amd64 || arm64)

package shadow

import (
	"math"

	"golang.org/x/sys/unix"
)

// killErrno is the errno that tracee tid's kill(pid, sig) will answer on
// the host, found before the call runs, so that the guest's kill(2)
// answers the same (the guest signals no one: the host delivers). It
// follows kill_something_info: a bad signal is EINVAL; pid 0 is the
// caller's process group, INT_MIN no one; the rest is what the
// supervisor's own kill(pid, 0) finds, as the supervisor and the tracee
// are both root in the namespace kpemu-ns.sh makes.
func killErrno(tid, pid int, sig int32) unix.Errno {
	if sig < 0 || sig > 64 { // _NSIG
		return unix.EINVAL
	}
	switch pid {
	case math.MinInt32:
		return unix.ESRCH
	case 0:
		pgid, err := unix.Getpgid(tid)
		if err != nil {
			return unix.ESRCH
		}
		pid = -pgid
	}
	if err := unix.Kill(pid, 0); err != nil {
		if e, ok := err.(unix.Errno); ok {
			return e
		}
		return unix.EPERM
	}
	return 0
}
