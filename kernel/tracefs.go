package kernel

import (
	"context"
	"encoding/binary"
	"time"
)

// The guest's tracefs hierarchy. kpemu serves the tracing files from the
// host (kprobes/events), but Linux's kprobe_events writer calls
// tracefs_create_dir() and tracefs_remove() as events come and go, and
// probes on those functions must see the calls. The host queues each
// change in the guest's tracefs_requests ring (kernel/trace/trace_events.c
// in the image), the workload applies it on its next iteration, and
// reports with HC_TRACEFS_DONE; SyncTracefs lets a writer wait for that,
// so that its write returns after the guest's call, as on Linux.

// TracefsOp is a change to the guest's tracefs hierarchy.
type TracefsOp uint64

// The ops of struct tracefs_req (include/linux/tracefs.h).
const (
	TracefsMkdir  TracefsOp = 1 // a new directory
	TracefsRemove TracefsOp = 2 // a directory and everything below it
)

// The ring's layout: head, tail, then tracefsRingSize requests of an op
// and a NUL-terminated path of at most tracefsPathMax bytes.
const (
	tracefsRingSize = 64
	tracefsPathMax  = 160
	tracefsReqSize  = 8 + tracefsPathMax
	tracefsRingHead = 0
	tracefsRingTail = 8
	tracefsRingReqs = 16
)

// tracefsSyncTimeout bounds how long a writer waits for the guest; a guest
// that does not get there (stopped, wedged) delays it no longer than this
// (Config.GuestWait changes it).
const tracefsSyncTimeout = 2 * time.Second

type tracefsMirror struct {
	ring uint64 // tracefs_requests, 0 if the image has none
	head uint64 // requests queued so far (guarded by StopMachine)

	timeout time.Duration // how long SyncTracefs waits

	applied guestProgress // the guest's reported tail
}

func (k *Kernel) initTracefsMirror() {
	tm := &k.tracefs
	tm.ring = k.queue("tracefs_requests", HCTracefsDone, &tm.applied)
	tm.timeout = tracefsSyncTimeout
}

// MirrorTracefs queues a change to the guest's tracefs hierarchy: path is
// relative to the tracefs root ("events/kprobes/myprobe"). It returns the
// request's sequence number for SyncTracefs, or 0 when nothing was queued
// (no ring in the image, a path too long, or the guest 64 requests behind;
// the hierarchy then misses that change).
func (k *Kernel) MirrorTracefs(op TracefsOp, path string) uint64 {
	tm := &k.tracefs
	if tm.ring == 0 || len(path) >= tracefsPathMax {
		return 0
	}
	select {
	case <-k.ready:
	default:
		// Not booted: head.S has still to clear the ring (.bss), and
		// would drop the request that SyncTracefs then waits for.
		return 0
	}
	var seq uint64
	k.StopMachine(func() {
		tail, err := k.Read64(tm.ring + tracefsRingTail)
		if err != nil || tm.head-tail >= tracefsRingSize {
			return
		}
		req := make([]byte, tracefsReqSize)
		binary.LittleEndian.PutUint64(req, uint64(op))
		copy(req[8:], path)
		slot := tm.ring + tracefsRingReqs + (tm.head%tracefsRingSize)*tracefsReqSize
		if k.WriteMem(slot, req) != nil {
			return
		}
		if k.Write64(tm.ring+tracefsRingHead, tm.head+1) != nil {
			return
		}
		tm.head++
		seq = tm.head
	})
	return seq
}

// SyncTracefs waits until the guest applied request seq, while the guest
// runs by itself (Run) and for at most tracefsSyncTimeout (or
// Config.GuestWait). Without Run
// (a test stepping the machine) it returns at once: the guest applies the
// request when it next runs.
func (k *Kernel) SyncTracefs(seq uint64) {
	if seq != 0 && k.running.Load() {
		_ = k.tracefs.applied.wait(context.Background(), seq, k.tracefs.timeout)
	}
}
