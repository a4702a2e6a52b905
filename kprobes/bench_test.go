package kprobes_test

import (
	"testing"
	"time"

	"github.com/kpemu/kpemu/debugfs"
	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/kprobes"
)

// BenchmarkWorkload measures the interpreter on the guest kernel's
// workload: guest instructions per second (MIPS).
func BenchmarkWorkload(b *testing.B) {
	k, _ := boot(b)
	const chunk = 1_000_000
	start := k.Machine().Stats().Instructions
	b.ResetTimer()
	t0 := time.Now()
	for i := 0; i < b.N; i++ {
		if err := k.Machine().Step(chunk); err != nil {
			b.Fatal(err)
		}
	}
	el := time.Since(t0)
	n := k.Machine().Stats().Instructions - start
	b.ReportMetric(float64(n)/el.Seconds()/1e6, "MIPS")
}

// BenchmarkProbeHit measures the host cost of one hit of each kind of
// probe: the same number of guest instructions runs with and without the
// probe, in the same process, and the difference in host time is divided
// by the hits. Both runs retire the same instruction count, so this is
// what a hit costs beyond interpreting its guest instructions (the
// hostcalls, the Go handlers, the pt_regs copies); the guest instructions
// the mechanism itself runs (two trips through the entry code) come on top
// at the interpreter's speed.
func BenchmarkProbeHit(b *testing.B) {
	kinds := []struct {
		name     string
		register func(kp *kprobes.Kprobes) (func() uint64, error)
	}{
		{"kprobe", func(kp *kprobes.Kprobes) (func() uint64, error) {
			p := &kprobes.Kprobe{Symbol: "vfs_read", PreHandler: func(*kprobes.Kprobe, *kprobes.Regs) bool { return false }, PostHandler: func(*kprobes.Kprobe, *kprobes.Regs) {}}
			return p.Hits, kp.Register(p)
		}},
		{"jprobe-go", func(kp *kprobes.Kprobes) (func() uint64, error) {
			jp := &kprobes.Jprobe{Kp: kprobes.Kprobe{Symbol: "vfs_read"}, Handler: func([]kprobes.JprobeArg, *kprobes.Regs) {}}
			return jp.Kp.Hits, kp.RegisterJprobe(jp)
		}},
		{"jprobe-guest", func(kp *kprobes.Kprobes) (func() uint64, error) {
			jp := &kprobes.Jprobe{Kp: kprobes.Kprobe{Symbol: "do_fork"}, Entry: "jdo_fork"}
			return jp.Kp.Hits, kp.RegisterJprobe(jp)
		}},
		{"kretprobe", func(kp *kprobes.Kprobes) (func() uint64, error) {
			rp := &kprobes.Kretprobe{Kp: kprobes.Kprobe{Symbol: "vfs_read"}, Handler: func(*kprobes.KretprobeInstance, *kprobes.Regs) {}}
			return rp.Kp.Hits, kp.RegisterKretprobe(rp)
		}},
	}
	const insns = 20_000_000
	for _, kind := range kinds {
		b.Run(kind.name, func(b *testing.B) {
			var plain, probed time.Duration
			var hits uint64
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				k, _ := boot(b)
				b.StartTimer()
				t0 := time.Now()
				if err := k.Machine().Step(insns); err != nil {
					b.Fatal(err)
				}
				plain += time.Since(t0)

				b.StopTimer()
				k2, kp := boot(b)
				count, err := kind.register(kp)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				t0 = time.Now()
				if err := k2.Machine().Step(insns); err != nil {
					b.Fatal(err)
				}
				probed += time.Since(t0)
				hits += count()
			}
			if hits > 0 {
				b.ReportMetric(float64((probed-plain).Nanoseconds())/float64(hits), "ns/hit")
				b.ReportMetric(float64(hits)/float64(b.N), "hits/run")
				b.ReportMetric(float64(probed)/float64(plain), "probed/plain")
			}
		})
	}
}

// BenchmarkTenThousandProbes times what a user does with many probes:
// register 10,000 kprobes (aggregates where instructions run out), read
// kprobes/list, and toggle kprobes/enabled (every BRK out and back in, in
// one stop of the machine each).
func BenchmarkTenThousandProbes(b *testing.B) {
	const want = 10_000
	var reg, list, toggle time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		k, kp := boot(b)
		tree := debugfs.NewTree()
		if err := kp.RegisterFiles(tree); err != nil {
			b.Fatal(err)
		}
		specs := probeableOffsets(b, k, kp)
		b.StartTimer()

		t0 := time.Now()
		for n := 0; n < want; n++ {
			s := specs[n%len(specs)]
			if err := kp.Register(&kprobes.Kprobe{Symbol: s.Symbol, Offset: s.Offset}); err != nil {
				b.Fatal(err)
			}
		}
		reg += time.Since(t0)

		t0 = time.Now()
		out, err := tree.ReadFile("kprobes/list")
		if err != nil {
			b.Fatal(err)
		}
		list += time.Since(t0)
		if lines := countLines(out); lines != want {
			b.Fatalf("list has %d lines", lines)
		}

		t0 = time.Now()
		if err := tree.WriteFile("kprobes/enabled", []byte("0\n"), true); err != nil {
			b.Fatal(err)
		}
		if err := tree.WriteFile("kprobes/enabled", []byte("1\n"), true); err != nil {
			b.Fatal(err)
		}
		toggle += time.Since(t0)
	}
	n := float64(b.N)
	b.ReportMetric(float64(reg.Milliseconds())/n, "register-ms")
	b.ReportMetric(float64(list.Microseconds())/n/1000, "list-ms")
	b.ReportMetric(float64(toggle.Microseconds())/n/1000, "toggle-ms")
}

// probeableOffsets lists every instruction of the kernel's text that
// kprobes accepts, by trying each once and unregistering.
func probeableOffsets(b *testing.B, k *kernel.Kernel, kp *kprobes.Kprobes) []kprobes.Spec {
	b.Helper()
	var out []kprobes.Spec
	l := k.Layout()
	for _, s := range k.Kallsyms().Symbols() {
		if !k.IsText(s.Addr) || s.Type != 'T' && s.Type != 't' {
			continue
		}
		for off := uint64(0); off < s.Size && s.Addr+off < l.Text.End; off += 4 {
			p := &kprobes.Kprobe{Symbol: s.Name, Offset: off}
			if kp.Register(p) == nil {
				kp.Unregister(p)
				out = append(out, kprobes.Spec{Symbol: s.Name, Offset: off})
			}
		}
	}
	if len(out) == 0 {
		b.Fatal("nothing probeable")
	}
	return out
}

func countLines(b []byte) int {
	n := 0
	for _, c := range b {
		if c == '\n' {
			n++
		}
	}
	return n
}
