//go:build linux && (amd64 || arm64)

package shadow

import (
	"math"
	"slices"

	"golang.org/x/sys/unix"
)

// nsig is Linux's _NSIG: a kill(2) signal past it is EINVAL.
const nsig = 64

// callerSignals are the kill(2) signals that no signal-delivery stop
// shows (0 sends nothing, SIGKILL stops no one): the filter stops them at
// their caller (buildFilter), as it does a number past nsig.
var callerSignals = [...]uint32{0, uint32(unix.SIGKILL)}

// atCaller says whether a kill(2) of sig stops at its caller.
func atCaller(sig int32) bool {
	return sig < 0 || sig > nsig || slices.Contains(callerSignals[:], uint32(sig))
}

// killErrno is the errno that tracee tid's kill(pid, sig) will answer on
// the host, found before the call runs, so that the guest's kill(2)
// answers the same (the guest signals no one: the host delivers). It
// follows kill_something_info: a bad signal is EINVAL; pid 0 is the
// caller's process group, INT_MIN no one; the rest is what the
// supervisor's own kill(pid, 0) finds, as the supervisor and the tracee
// are both root in the namespace kpemu-ns.sh makes.
func killErrno(tid, pid int, sig int32) unix.Errno {
	if sig < 0 || sig > nsig {
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
