package kernel

import (
	"context"
	"encoding/binary"
	"sync"
	"time"
)

// The guest's tracefs hierarchy. kpemu serves the tracing files from the
// host (tracing/), but Linux's kprobe_events writer calls
// tracefs_create_dir() and tracefs_remove() as events come and go, and
// probes on those functions must see the calls. Each change is queued on
// the host, never dropped, and copied in order into the guest's
// tracefs_requests ring (kernel/trace/trace_events.c in the image), which
// the workload drains on its next iteration and reports with
// HC_TRACEFS_DONE; that hostcall refills the ring from the host's queue,
// so a backlog of any size reaches the guest, 64 requests an iteration.
// The writer never waits for the guest: the guest applies the changes
// eventually, in order. A reader that must see their effect (a trace
// after the write) waits with SyncTracefs.

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

// tracefsSyncTimeout bounds how long SyncTracefs waits for the guest; a
// guest that does not get there (stopped, wedged) delays it no longer
// (Config.GuestWait changes it).
const tracefsSyncTimeout = 2 * time.Second

type tracefsReq struct {
	op   TracefsOp
	path string
}

type tracefsMirror struct {
	ring uint64 // tracefs_requests, 0 if the image has none

	mu      sync.Mutex
	backlog []tracefsReq // queued, not yet in the ring, oldest first
	queued  uint64       // requests queued so far: the last one's sequence number
	pushed  uint64       // requests copied into the ring so far: its head
	kicking bool         // a goroutine is on its way to copy the backlog in

	timeout time.Duration // how long SyncTracefs waits

	applied guestProgress // the guest's reported tail
}

func (k *Kernel) initTracefsMirror() {
	tm := &k.tracefs
	tm.timeout = tracefsSyncTimeout
	// The guest drained the ring: refill it from the backlog.
	tm.ring = k.queue("tracefs_requests", HCTracefsDone, &tm.applied, k.fillTracefsRing)
}

// MirrorTracefs queues a change to the guest's tracefs hierarchy: path is
// relative to the tracefs root ("events/kprobes/myprobe"). It returns the
// request's sequence number for SyncTracefs, or 0 when the image has no
// ring or the path does not fit one (event and group names are at most 64
// bytes, so "events/GROUP/EVENT" always does). It never waits for the
// guest: the request goes into the ring now if the guest is stopped or
// stepped by its caller, and otherwise as soon as the running guest lets
// the host in (a goroutine's StopMachine), or when the guest reports that
// it drained the ring.
func (k *Kernel) MirrorTracefs(op TracefsOp, path string) uint64 {
	tm := &k.tracefs
	if tm.ring == 0 || len(path) >= tracefsPathMax {
		return 0
	}
	tm.mu.Lock()
	tm.backlog = append(tm.backlog, tracefsReq{op, path})
	tm.queued++
	seq := tm.queued
	kick := !tm.kicking && tm.pushed == tm.applied.at() && k.booted()
	if kick {
		tm.kicking = true
	}
	tm.mu.Unlock()
	if !kick {
		// Not booted: hcReady copies the backlog in (head.S clears the
		// ring until then). Or the guest has requests in the ring: its
		// HC_TRACEFS_DONE for them copies the rest. Or a kick is under way.
		return seq
	}
	if !k.running.Load() {
		// Nothing runs the guest by itself (a test stepping it): copy
		// now, so that its next step sees the request.
		k.kickTracefs()
		return seq
	}
	go k.kickTracefs()
	return seq
}

// kickTracefs copies the backlog into the idle ring, with the machine
// stopped.
func (k *Kernel) kickTracefs() {
	k.StopMachine(k.fillTracefsRing)
	tm := &k.tracefs
	tm.mu.Lock()
	tm.kicking = false
	tm.mu.Unlock()
}

// fillTracefsRing copies as much of the backlog into the ring as it has
// room for. The machine must be stopped (StopMachine, or a hostcall).
func (k *Kernel) fillTracefsRing() {
	tm := &k.tracefs
	tm.mu.Lock()
	defer tm.mu.Unlock()
	if tm.ring == 0 || len(tm.backlog) == 0 || !k.booted() {
		return
	}
	tail, err := k.Read64(tm.ring + tracefsRingTail)
	if err != nil {
		k.log.Error("tracefs mirror: reading the ring's tail", "err", err)
		return
	}
	req := make([]byte, tracefsReqSize)
	n := 0
	for ; n < len(tm.backlog) && tm.pushed-tail < tracefsRingSize; n++ {
		r := tm.backlog[n]
		clear(req)
		binary.LittleEndian.PutUint64(req, uint64(r.op))
		copy(req[8:], r.path)
		slot := tm.ring + tracefsRingReqs + (tm.pushed%tracefsRingSize)*tracefsReqSize
		if err := k.WriteMem(slot, req); err != nil {
			k.log.Error("tracefs mirror: writing a request", "path", r.path, "err", err)
			break
		}
		tm.pushed++
	}
	if n == 0 {
		return
	}
	tm.backlog = tm.backlog[n:]
	if len(tm.backlog) == 0 {
		tm.backlog = nil // let the array go
	}
	if err := k.Write64(tm.ring+tracefsRingHead, tm.pushed); err != nil {
		k.log.Error("tracefs mirror: writing the ring's head", "err", err)
	}
}

// booted reports whether the guest finished booting (head.S cleared the
// ring's .bss long before).
func (k *Kernel) booted() bool {
	select {
	case <-k.ready:
		return true
	default:
		return false
	}
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

// TracefsQueued returns the sequence number of the last change queued to
// the guest's tracefs hierarchy, for SyncTracefs.
func (k *Kernel) TracefsQueued() uint64 {
	k.tracefs.mu.Lock()
	defer k.tracefs.mu.Unlock()
	return k.tracefs.queued
}
