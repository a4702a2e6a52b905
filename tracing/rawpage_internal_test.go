package tracing

import (
	"context"
	"errors"
	"syscall"
	"testing"

	"github.com/kpemu/kpemu/debugfs"
	"github.com/kpemu/kpemu/internal/waitfor"
)

// trace_pipe_raw's splice (served to the seal, internal/splicectl) is
// tracing_buffers_splice_read's: whole pages the writer has left, a
// count below a page is EINVAL, and the wait ends at buffer_percent, at
// the open's wake ioctl (0: the splice returns 0), or with tracing off.
func TestTracePipeRawSplice(t *testing.T) {
	tr, _ := newTestTracing(t, 1)
	ctx := context.Background()
	tr.top.buf.CPU(0).Resize(4)
	rd, err := tr.top.openTracePipeRaw(0, false)(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	sp, ok := rd.(debugfs.Splicer)
	if !ok {
		t.Fatal("trace_pipe_raw's reader is not a Splicer")
	}
	page := make([]byte, pageSize)
	if n, err := sp.SpliceRead(ctx, page, 0); n != 0 || err != nil {
		t.Errorf("probe (want 0) = %d, %v; want 0, nil", n, err)
	}
	if _, err := sp.SpliceRead(ctx, page, pageSize-1); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("a count below a page: %v, want EINVAL", err)
	}
	printk(tr, 0, 1, "first")
	if _, err := sp.SpliceRead(ctx, page, pageSize); !errors.Is(err, syscall.EAGAIN) {
		t.Errorf("only the writer's page: %v, want EAGAIN", err)
	}

	// wait starts a SpliceWait, whose again comes on waited, and
	// returns once it waits (what an earlier wait registered is cleared
	// first, so that Waiting sees this one's).
	waited := make(chan bool)
	wait := func() {
		tr.top.buf.WakeAll()
		go func() {
			again, err := sp.SpliceWait(ctx)
			if err != nil {
				t.Errorf("SpliceWait: %v", err)
			}
			waited <- again
		}()
		waitfor.Until(t, "the splice to wait", func() bool { return tr.top.buf.Waiting() })
	}

	// Waiting: the wake ioctl ends it with 0 (again false).
	wait()
	if r, err := rd.(debugfs.Ioctler).Ioctl(ctx, 0, 0, nil); r != 0 || err != nil {
		t.Errorf("ioctl 0 = %d, %v", r, err)
	}
	if again := <-waited; again {
		t.Error("woken by the ioctl, the splice looks again")
	}
	if _, err := rd.(debugfs.Ioctler).Ioctl(ctx, 1, 0, nil); !errors.Is(err, syscall.ENOTTY) {
		t.Errorf("ioctl 1: %v, want ENOTTY", err)
	}

	// buffer_percent 50 of 4 pages: one page left and the writer's
	// make it; then the page is taken whole.
	wait()
	for i := 0; !tr.top.buf.CPU(0).WatermarkHit(50); i++ {
		printk(tr, 0, uint64(i+2), "filler")
	}
	if again := <-waited; !again {
		t.Error("at buffer_percent, the splice does not look again")
	}
	n, err := sp.SpliceRead(ctx, page, 2*pageSize)
	if n != pageSize || err != nil {
		t.Fatalf("SpliceRead = %d, %v; want a page", n, err)
	}
	if _, err := sp.SpliceRead(ctx, page, pageSize); !errors.Is(err, syscall.EAGAIN) {
		t.Errorf("after the left page: %v, want EAGAIN (it was taken whole)", err)
	}

	// Tracing off ends a wait with 0; a cancelled one is EINTR.
	wait()
	if _, err := tr.top.writeTracingOn(ctx, []byte("0\n"), 0); err != nil {
		t.Fatal(err)
	}
	if again := <-waited; again {
		t.Error("with tracing off, the splice looks again")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := sp.SpliceWait(cctx); !errors.Is(err, syscall.EINTR) {
		t.Errorf("cancelled wait: %v, want EINTR", err)
	}
}

// trace_pipe_raw polls readable as tracing_buffers_poll says
// (ring_buffer_poll_wait): at buffer_percent, or with anything in the
// buffer when buffer_percent is 0.
func TestTracePipeRawPollIn(t *testing.T) {
	tr, _ := newTestTracing(t, 1)
	ctx := context.Background()
	tr.top.buf.CPU(0).Resize(4)
	pollIn := func(snapshot bool) bool {
		t.Helper()
		rd, err := tr.top.openTracePipeRaw(0, snapshot)(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		p, ok := rd.(debugfs.Poller)
		if !ok {
			t.Fatal("trace_pipe_raw's reader is not a Poller")
		}
		return p.PollIn()
	}
	if pollIn(false) {
		t.Error("empty: readable")
	}
	printk(tr, 0, 1, "first")
	if pollIn(false) {
		t.Error("one event, buffer_percent 50: readable")
	}
	tr.top.info.bufferPercent.Store(0)
	if !pollIn(false) {
		t.Error("one event, buffer_percent 0: not readable")
	}
	tr.top.info.bufferPercent.Store(50)
	for i := 0; !tr.top.buf.CPU(0).WatermarkHit(50); i++ {
		printk(tr, 0, uint64(i+2), "filler")
	}
	if !pollIn(false) {
		t.Error("at buffer_percent: not readable")
	}
}
