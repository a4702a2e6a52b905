package tracing

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/kpemu/kpemu/debugfs"
	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/kprobes"
)

// BenchmarkKprobeHit is one hit of an enabled kprobe event, its
// dispatcher's work alone (kprobe_dispatcher: the triggers, the fetch,
// the record into the ring buffer), with no instance, so that the cost
// of the arrays' files shows where there is none to pay for.
func BenchmarkKprobeHit(b *testing.B) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	k, err := kernel.Boot(kernel.Config{Logger: log, NumCPUs: 1})
	if err != nil {
		b.Fatal(err)
	}
	kp, err := kprobes.New(k, log)
	if err != nil {
		b.Fatal(err)
	}
	tree := debugfs.NewTree()
	var clock time.Duration
	tr, err := New(kp, tree, "tracing", func() time.Duration { clock += time.Microsecond; return clock }, log)
	if err != nil {
		b.Fatal(err)
	}
	if err := tree.WriteFile("tracing/kprobe_events", []byte("p:hit vfs_read fd=%x0 n=%x2:u32\n"), false); err != nil {
		b.Fatal(err)
	}
	if err := tree.WriteFile("tracing/events/kprobes/hit/enable", []byte("1"), true); err != nil {
		b.Fatal(err)
	}
	tr.mu.Lock()
	tp := tr.probes[0]
	tr.mu.Unlock()
	hit := tr.dispatcher(tp)
	regs := &kprobes.Regs{PC: tp.kprobe().Addr}
	regs.X[0], regs.X[2] = 3, 100
	b.ResetTimer()
	for range b.N {
		hit(tp.kprobe(), regs)
	}
}
