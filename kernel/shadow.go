package kernel

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Shadowing: the guest replays system calls that host processes make, so
// that probes see them. A host shell in kpemu's namespace forks, opens
// /dev/null, makes a symlink; the host (package shadow) holds it in that
// call, and Shadow has the guest make the same call first: it queues the
// request in the guest's shadow_requests ring, rings the board's doorbell,
// and waits until the host process's twin in the guest (a task of
// /bin/shadowd's with the host process's pid), woken by the doorbell's
// interrupt, made the call and reported with HC_SHADOW_DONE
// (drivers/char/kpemu_shadow.c in the image).

// ShadowOp is a system call that the guest replays.
type ShadowOp uint32

// The ops of struct shadow_req (include/linux/kpemu_shadow.h).
const (
	ShadowFork    ShadowOp = 1 // clone3() with set_tid Child: the child's twin; without Child, a child that exits at once
	ShadowOpen    ShadowOp = 2 // openat(AT_FDCWD, Path, Flags, Mode), then close
	ShadowSymlink ShadowOp = 3 // symlink(Target, Path)
	ShadowMkdir   ShadowOp = 4 // mkdir(Path, Mode)
	ShadowUnlink  ShadowOp = 5 // unlinkat(AT_FDCWD, Path, Flags)
	ShadowAdopt   ShadowOp = 6 // a twin for Child, a process that shadowing begins with
	ShadowExit    ShadowOp = 7 // PID's twin exits with wait status Flags
	ShadowKill    ShadowOp = 8 // kill(Child, Flags), answering -Mode (the host's errno) and signalling no one
)

// ShadowRequest is one system call to replay.
type ShadowRequest struct {
	Op ShadowOp
	// PID is the host process whose twin replays the call; 0, or a
	// process without a twin, has /bin/shadowd replay it.
	PID int32
	// Child is the pid of the twin that ShadowFork or ShadowAttach makes
	// (the host's new process); 0 makes none.
	Child  int32
	Comm   string // the host process's name; the guest's replayer takes it
	Path   string // absolute
	Target string // ShadowSymlink: the link's contents
	Flags  uint32 // ShadowOpen: O_* as arm64 Linux's; ShadowUnlink: AT_REMOVEDIR or 0; ShadowExit: the wait status
	Mode   uint32 // ShadowOpen, ShadowMkdir; ShadowKill: the host's errno
}

// The ring's layout: head, tail, then shadowRingSize requests.
const (
	shadowRingSize  = 16
	shadowCommLen   = 16
	shadowPathMax   = 256
	shadowReqComm   = 8 + 6*4 // seq, op, flags, mode, pid, child, reserved
	shadowReqSize   = shadowReqComm + shadowCommLen + 2*shadowPathMax
	shadowRingHead  = 0
	shadowRingTail  = 8
	shadowRingReqs  = 16
	shadowDoorbell  = 1 << 0 // the doorbell bit drivers/char/kpemu_shadow.c answers
	shadowTimeout   = 2 * time.Second
	shadowNoReplyer = "the guest did not replay a shadow request within %v (is /bin/shadowd running?)"
)

// ErrNoShadow says that the guest cannot replay system calls: its image
// has no shadow ring, it has not booted, or it does not run by itself.
var ErrNoShadow = errors.New("the guest cannot replay system calls")

type shadowReplayer struct {
	ring uint64 // shadow_requests, 0 if the image has none

	queue sync.Mutex // one request in the ring at a time, in the callers' order
	head  uint64     // requests queued so far (guarded by queue)
	// stuck is the seq of a request the guest did not answer in time;
	// later requests do not wait until the guest has answered it.
	stuck uint64

	replayed guestProgress // the seqs shadowd reported
	timeout  time.Duration // how long a request waits for its reply
}

func (k *Kernel) initShadow() {
	s := &k.shadow
	s.ring = k.queue("shadow_requests", HCShadowDone, &s.replayed, nil)
	s.timeout = shadowTimeout
}

// Shadow has the guest make the system call r and returns once it has
// (as a user-space call of the guest's /bin/shadowd, named r.Comm), or
// when ctx ends, or after a timeout. The host process that made the call
// waits for it, so a probe enabled before the call sees it.
func (k *Kernel) Shadow(ctx context.Context, r ShadowRequest) error {
	s := &k.shadow
	select {
	case <-k.ready:
	default:
		return ErrNoShadow
	}
	if s.ring == 0 || !k.running.Load() {
		return ErrNoShadow
	}
	if len(r.Path) >= shadowPathMax || len(r.Target) >= shadowPathMax {
		return fmt.Errorf("shadowing %q: a path longer than the guest's %d bytes", r.Path, shadowPathMax-1)
	}
	s.queue.Lock()
	defer s.queue.Unlock()
	if s.stuck != 0 && s.replayed.at() < s.stuck {
		return fmt.Errorf(shadowNoReplyer, s.timeout)
	}
	s.stuck = 0

	req := make([]byte, shadowReqSize)
	binary.LittleEndian.PutUint64(req[0:], s.head+1)
	binary.LittleEndian.PutUint32(req[8:], uint32(r.Op))
	binary.LittleEndian.PutUint32(req[12:], r.Flags)
	binary.LittleEndian.PutUint32(req[16:], r.Mode)
	binary.LittleEndian.PutUint32(req[20:], uint32(r.PID))
	binary.LittleEndian.PutUint32(req[24:], uint32(r.Child))
	copy(req[shadowReqComm:shadowReqComm+shadowCommLen-1], r.Comm)
	copy(req[shadowReqComm+shadowCommLen:], r.Path)
	copy(req[shadowReqComm+shadowCommLen+shadowPathMax:], r.Target)
	var err error
	k.StopMachine(func() {
		var tail uint64
		if tail, err = k.Read64(s.ring + shadowRingTail); err != nil {
			return
		}
		if s.head-tail >= shadowRingSize {
			err = fmt.Errorf("the guest's shadow ring is full (%d requests not taken)", s.head-tail)
			return
		}
		slot := s.ring + shadowRingReqs + (s.head%shadowRingSize)*shadowReqSize
		if err = k.WriteMem(slot, req); err != nil {
			return
		}
		err = k.Write64(s.ring+shadowRingHead, s.head+1)
	})
	if err != nil {
		return fmt.Errorf("queueing a shadow request: %w", err)
	}
	s.head++
	seq := s.head
	k.m.RingDoorbell(shadowDoorbell)

	switch err := s.replayed.wait(ctx, seq, s.timeout); {
	case err == nil:
		return nil
	case errors.Is(err, errGuestTimeout):
		s.stuck = seq
		return fmt.Errorf(shadowNoReplyer, s.timeout)
	default:
		s.stuck = seq
		return err
	}
}
