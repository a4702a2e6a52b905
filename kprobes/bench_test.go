package kprobes_test

import (
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/kpemu/kpemu/debugfs"
	"github.com/kpemu/kpemu/internal/benchutil"
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

// hotFunction is the workload's most called probeable function (some
// 300 calls per million guest instructions).
const hotFunction = "__arch_copy_from_user"

// hitKinds are the probes BenchmarkProbeHit measures, each on a function
// hot enough for tens of thousands of hits a run but the guest jprobe,
// whose handler (jdo_fork) is do_fork's.
var hitKinds = []struct {
	name     string
	register func(kp *kprobes.Kprobes) (hits func() uint64, err error)
}{
	{"kprobe", func(kp *kprobes.Kprobes) (func() uint64, error) {
		p := &kprobes.Kprobe{Symbol: hotFunction, PreHandler: func(*kprobes.Kprobe, *kprobes.Regs) bool { return false }, PostHandler: func(*kprobes.Kprobe, *kprobes.Regs) {}}
		return p.Hits, kp.Register(p)
	}},
	{"kretprobe", func(kp *kprobes.Kprobes) (func() uint64, error) {
		rp := &kprobes.Kretprobe{Kp: kprobes.Kprobe{Symbol: hotFunction}, Handler: func(*kprobes.KretprobeInstance, *kprobes.Regs) {}, MaxActive: 16}
		return rp.Kp.Hits, kp.RegisterKretprobe(rp)
	}},
	{"jprobe-go", func(kp *kprobes.Kprobes) (func() uint64, error) {
		jp := &kprobes.Jprobe{Kp: kprobes.Kprobe{Symbol: hotFunction}, Handler: func([]kprobes.JprobeArg, *kprobes.Regs) {}}
		return jp.Kp.Hits, kp.RegisterJprobe(jp)
	}},
	{"jprobe-guest", func(kp *kprobes.Kprobes) (func() uint64, error) {
		jp := &kprobes.Jprobe{Kp: kprobes.Kprobe{Symbol: "do_fork"}, Entry: "jdo_fork"}
		return jp.Kp.Hits, kp.RegisterJprobe(jp)
	}},
}

// BenchmarkProbeHit measures what one hit of each kind of probe costs the
// host. Two kernels boot alike, one with the probe, and run in turn on
// this goroutine's thread, whose CPU time (RUSAGE_THREAD) is what is
// counted, so that neither the other kernel nor the Go runtime's other
// threads count. Each pairing is run twice:
//
//   - the same work (both kernels until the guest workload's iteration
//     counter has gone as far): the probed run's extra CPU time per hit
//     (cpu-ns/hit), the whole cost of a hit, and its extra guest
//     instructions per hit (insns/hit), the mechanism's path;
//   - the same instruction count: the extra CPU time per hit beyond
//     running that many guest instructions (extra-ns/hit), that is, what
//     the hostcalls and Go handlers cost over the path's instructions.
//
// Both run in 20 slices, alternating, and the CPU times per hit are the
// median of the slices': on a shared VM the host slows down for spells
// of a second or so, and a spell that fell on one kernel's run made a
// whole run's difference say anything (a kretprobe hit cheaper than a
// kprobe hit). The instruction counts are the sums'.
func BenchmarkProbeHit(b *testing.B) {
	const (
		warm  = 100  // workload iterations to translate the hot code
		work  = 3600 // iterations a same-work run (some 130 million instructions)
		insns = 130_000_000
		pairs = 20 // slices of a run, alternating
	)
	for _, kind := range hitKinds {
		b.Run(kind.name, func(b *testing.B) {
			runtime.LockOSThread() // a sub-benchmark runs on a goroutine of its own
			defer runtime.UnlockOSThread()
			b.StopTimer()
			plain, _ := bootReady(b)
			probed, kp := bootReady(b)
			hits, err := kind.register(kp)
			if err != nil {
				b.Fatal(err)
			}
			runIterations(b, plain, warm)
			runIterations(b, probed, warm)
			var w, n pairing
			// Timed from here: a stopped timer would have the testing
			// package raise b.N without end, each run seconds long.
			b.StartTimer()
			for i := 0; i < b.N; i++ {
				for range pairs {
					w.run(b, plain, probed, hits, func(k *kernel.Kernel) { runIterations(b, k, work/pairs) })
					n.run(b, plain, probed, hits, func(k *kernel.Kernel) {
						if err := k.Machine().Step(insns / pairs); err != nil {
							b.Fatal(err)
						}
					})
				}
			}
			if w.hits == 0 || n.hits == 0 {
				b.Fatalf("%s: no hits", kind.name)
			}
			b.ReportMetric(w.medianPerHit(), "cpu-ns/hit")
			b.ReportMetric(float64(int64(w.insProbed-w.insPlain))/float64(w.hits), "insns/hit")
			b.ReportMetric(n.medianPerHit(), "extra-ns/hit")
			b.ReportMetric(float64(w.hits)/float64(b.N), "hits/run")
			b.ReportMetric(float64(w.cpuProbed)/float64(w.cpuPlain), "probed/plain")
		})
	}
}

// pairing sums paired runs of a plain and a probed kernel, and keeps
// each pair's extra CPU time per hit.
type pairing struct {
	cpuPlain, cpuProbed time.Duration
	insPlain, insProbed uint64
	hits                uint64
	perHit              []float64 // ns
}

// run runs plain, then probed, each through step, and adds what each
// took and the probe's hits.
func (p *pairing) run(b *testing.B, plain, probed *kernel.Kernel, hits func() uint64, step func(*kernel.Kernel)) {
	measure := func(k *kernel.Kernel) (time.Duration, uint64) {
		i0, c0 := k.Machine().Stats().Instructions, benchutil.ThreadCPU(b)
		step(k)
		return benchutil.ThreadCPU(b) - c0, k.Machine().Stats().Instructions - i0
	}
	cPlain, n := measure(plain)
	p.cpuPlain += cPlain
	p.insPlain += n
	h0 := hits()
	cProbed, n := measure(probed)
	p.cpuProbed += cProbed
	p.insProbed += n
	h := hits() - h0
	p.hits += h
	if h > 0 {
		p.perHit = append(p.perHit, float64((cProbed-cPlain).Nanoseconds())/float64(h))
	}
}

// medianPerHit is the median of the pairs' extra CPU ns per hit.
func (p *pairing) medianPerHit() float64 {
	v := slices.Clone(p.perHit)
	slices.Sort(v)
	if len(v) == 0 {
		return 0
	}
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
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
