package tracing

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
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

// BenchmarkKprobeHitHist is BenchmarkKprobeHit without a trigger and
// with a hist trigger (keys=fd:vals=n) on the event, in one run, so that
// the two costs compare: the hist's hit builds the record's fields, the
// compound key and updates its entry's sums.
func BenchmarkKprobeHitHist(b *testing.B) {
	for _, c := range []struct{ name, trigger string }{
		{"plain", ""},
		{"hist", "hist:keys=fd:vals=n"},
		{"hist2keys", "hist:keys=fd,common_pid:vals=n"},
	} {
		b.Run(c.name, func(b *testing.B) {
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
			if c.trigger != "" {
				if err := tree.WriteFile("tracing/events/kprobes/hit/trigger", []byte(c.trigger), false); err != nil {
					b.Fatal(err)
				}
			}
			tr.mu.Lock()
			tp := tr.probes[0]
			tr.mu.Unlock()
			hit := tr.dispatcher(tp)
			regs := &kprobes.Regs{PC: tp.kprobe().Addr}
			regs.X[2] = 100
			b.ResetTimer()
			for i := range b.N {
				regs.X[0] = uint64(i & 63) // 64 keys
				hit(tp.kprobe(), regs)
			}
			b.StopTimer()
			if c.trigger != "" {
				out, err := tree.ReadFile("tracing/events/kprobes/hit/hist")
				if err != nil || !strings.Contains(string(out), fmt.Sprintf("Hits: %d\n    Entries: %d\n", b.N, min(b.N, 64))) {
					b.Fatalf("hist after the run: %v\n%s", err, out)
				}
			}
		})
	}
}
