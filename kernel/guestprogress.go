package kernel

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/kpemu/kpemu/machine"
)

// guestProgress is how far the guest got through requests the host queued
// for it (tracefs changes, shadow requests): the guest reports the last
// sequence number it finished with a hostcall, and host callers wait for
// theirs.
type guestProgress struct {
	mu      sync.Mutex
	changed chan struct{} // closed and replaced at each report; nil until the first wait
	reached uint64        // the highest sequence number reported
}

// queue returns the address of the guest's request ring named sym (0 if
// the image has none), and has the guest's hostcall hc, which says how
// far it got, report to p and then call drained, if not nil, with the
// world stopped: how each host-to-guest queue is wired up.
func (k *Kernel) queue(sym string, hc uint16, p *guestProgress, drained func()) uint64 {
	k.m.SetHostcall(hc, func(cpu *machine.CPU) error {
		p.report(cpu.X(0))
		if drained != nil {
			drained()
		}
		cpu.SetX(0, 0)
		return nil
	})
	if s, ok := k.syms.LookupName(sym); ok {
		return s.Addr
	}
	return 0
}

// errGuestTimeout says that the guest did not report in time.
var errGuestTimeout = errors.New("the guest did not get there in time")

// report records that the guest finished seq and wakes the waiters. It
// never goes backwards.
func (p *guestProgress) report(seq uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if seq > p.reached {
		p.reached = seq
	}
	if p.changed != nil {
		close(p.changed)
		p.changed = nil
	}
}

// at returns the highest sequence number reported.
func (p *guestProgress) at() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.reached
}

// wait returns nil once the guest reported seq, ctx.Err() if ctx ends
// first, errGuestTimeout after timeout.
func (p *guestProgress) wait(ctx context.Context, seq uint64, timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		p.mu.Lock()
		if p.reached >= seq {
			p.mu.Unlock()
			return nil
		}
		if p.changed == nil {
			p.changed = make(chan struct{})
		}
		changed := p.changed
		p.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return errGuestTimeout
		}
	}
}
