package tracing_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kpemu/kpemu/debugfs"
	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/kprobes"
	"github.com/kpemu/kpemu/tracing"
)

// BenchmarkTracePipe runs the full guest (2 vCPUs, its workload and its
// user programs) with one kprobe event enabled on vfs_read while a reader
// drains trace_pipe, as `cat trace_pipe` does, and reports:
//
//   - events/s: event lines the reader got per host second;
//   - hits/s: hits of the probe per host second (what the guest made);
//   - p50-latency-us, p99-latency-us: host time from a hit to the read
//     that returned its line. A second Go kprobe on vfs_read (the same
//     hit, an aggregate) notes the host time and the guest's clock; the
//     line's CPU and time stamp find it again;
//   - overrun: events the ring buffer overwrote before the reader came.
//
// One op is one event line delivered. Deterministic mode runs every vCPU
// on one goroutine; parallel mode one each.
func BenchmarkTracePipe(b *testing.B) {
	for _, par := range []bool{false, true} {
		name := "deterministic"
		if par {
			name = "parallel"
		}
		b.Run(name, func(b *testing.B) { benchTracePipe(b, par) })
	}
}

type hostHit struct {
	us uint64 // the guest's clock at the hit, in the µs the line prints
	at time.Time
}

func benchTracePipe(b *testing.B, parallel bool) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	const ncpu = 2
	k, err := kernel.Boot(kernel.Config{Logger: log, NumCPUs: ncpu, Parallel: parallel})
	if err != nil {
		b.Fatal(err)
	}
	kp, err := kprobes.New(k, log)
	if err != nil {
		b.Fatal(err)
	}
	tree := debugfs.NewTree()
	if _, err := tracing.New(kp, tree, "tracing", k.Uptime, log); err != nil {
		b.Fatal(err)
	}
	var hitMu sync.Mutex
	hits := make([][]hostHit, ncpu)
	var nhits int
	probe := &kprobes.Kprobe{Symbol: "vfs_read", PreHandler: func(_ *kprobes.Kprobe, r *kprobes.Regs) bool {
		h := hostHit{us: (uint64(k.Uptime()) + 500) / 1000, at: time.Now()}
		hitMu.Lock()
		hits[r.CPU] = append(hits[r.CPU], h)
		nhits++
		hitMu.Unlock()
		return false
	}}
	if err := kp.Register(probe); err != nil {
		b.Fatal(err)
	}
	if err := tree.WriteFile("tracing/kprobe_events", []byte("p:rd vfs_read\n"), false); err != nil {
		b.Fatal(err)
	}
	if err := tree.WriteFile("tracing/events/kprobes/rd/enable", []byte("1\n"), true); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h, err := tree.Open(ctx, "tracing/trace_pipe", os.O_RDONLY)
	if err != nil {
		b.Fatal(err)
	}
	defer h.Release()
	guest := make(chan error, 1)
	go func() { guest <- k.Run(ctx) }()
	select {
	case <-k.Ready():
	case err := <-guest:
		b.Fatalf("guest stopped: %v", err)
	}

	// Each hit a line matches is popped, with the ones before it on its
	// CPU (overrun, or filtered). In deterministic mode the two
	// handlers of a hit read the same guest clock; in parallel mode the
	// clock follows the host's, so they read it a little apart.
	slack := uint64(0)
	if parallel {
		slack = 200
	}
	match := func(cpu int, us uint64, at time.Time) (time.Duration, bool) {
		hitMu.Lock()
		defer hitMu.Unlock()
		q := hits[cpu]
		for len(q) > 0 && q[0].us+slack < us {
			q = q[1:]
		}
		if len(q) == 0 || q[0].us > us+slack {
			hits[cpu] = q
			return 0, false
		}
		d := at.Sub(q[0].at)
		hits[cpu] = q[1:]
		return d, true
	}
	buf := make([]byte, 64<<10)
	var partial []byte
	var lat []time.Duration
	delivered := 0
	hitMu.Lock()
	hits0 := nhits
	hitMu.Unlock()
	b.ResetTimer()
	start := time.Now()
	for delivered < b.N {
		n, err := h.Read(ctx, buf, 0)
		at := time.Now()
		if err != nil {
			b.Fatal(err)
		}
		data := append(partial, buf[:n]...)
		end := bytes.LastIndexByte(data, '\n') + 1
		partial = append([]byte(nil), data[end:]...)
		for _, line := range strings.Split(string(data[:end]), "\n") {
			cpu, us, ok := parseLine(line)
			if !ok {
				continue
			}
			delivered++
			if d, ok := match(cpu, us, at); ok {
				lat = append(lat, d)
			}
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	hitMu.Lock()
	made := nhits - hits0
	hitMu.Unlock()
	cancel()
	if err := <-guest; err != nil {
		b.Fatal(err)
	}
	var overrun uint64
	for cpu := 0; cpu < ncpu; cpu++ {
		stats, err := tree.ReadFile(fmt.Sprintf("tracing/per_cpu/cpu%d/stats", cpu))
		if err != nil {
			b.Fatal(err)
		}
		for _, l := range strings.Split(string(stats), "\n") {
			if v, ok := strings.CutPrefix(l, "overrun: "); ok {
				n, _ := strconv.ParseUint(v, 10, 64)
				overrun += n
			}
		}
	}
	b.ReportMetric(float64(delivered)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(made)/elapsed.Seconds(), "hits/s")
	b.ReportMetric(float64(overrun), "overrun")
	if len(lat) > 0 {
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-latency-us")
		b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1e3, "p99-latency-us")
		b.ReportMetric(float64(len(lat))/float64(delivered), "matched")
	}
}

// parseLine returns the CPU and the time stamp in µs of an "rd:" line.
func parseLine(line string) (cpu int, us uint64, ok bool) {
	i := strings.Index(line, "] ")
	j := strings.Index(line, ": rd: (")
	if i < 4 || j < 0 || line[i-4] != '[' {
		return 0, 0, false
	}
	c, err := strconv.Atoi(line[i-3 : i])
	if err != nil {
		return 0, 0, false
	}
	f := strings.Fields(line[i+2 : j])
	if len(f) != 2 {
		return 0, 0, false
	}
	sec, frac, found := strings.Cut(f[1], ".")
	s, err1 := strconv.ParseUint(sec, 10, 64)
	u, err2 := strconv.ParseUint(frac, 10, 64)
	if !found || err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return c, s*1_000_000 + u, true
}

// BenchmarkManyEvents times what a user does with many kprobe events, at
// 1,000 and 10,000 to show how each grows: one write of n p: events to
// kprobe_events, enabling and disabling them all (events/kprobes/enable),
// reading kprobes/list, and removing them all (an O_TRUNC write). Each is
// reported per event; a cost that does not grow with n stays flat. The
// guest is stopped, except in "running", where it runs by itself as under
// kpemu run, and every stop of the machine waits for a vCPU's quantum;
// there guest-mirror is how long after the write the guest took to make
// its tracefs_create_dir calls, which the write does not wait for.
func BenchmarkManyEvents(b *testing.B) {
	for _, c := range []struct {
		n       int
		running bool
	}{{1_000, false}, {10_000, false}, {10_000, true}} {
		name := strconv.Itoa(c.n)
		if c.running {
			name += "-running"
		}
		b.Run(name, func(b *testing.B) { benchManyEvents(b, c.n, c.running) })
	}
}

func benchManyEvents(b *testing.B, n int, running bool) {
	var add, mirror, enable, disable, list, remove time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		f := setup(b)
		cmds := manyEvents(b, f, n)
		if running {
			f.run(b)
		}
		b.StartTimer()

		timed := func(d *time.Duration, p, data string, trunc bool) {
			t0 := time.Now()
			if err := f.write(p, data, trunc); err != nil {
				b.Fatalf("%s: %v", p, err)
			}
			*d += time.Since(t0)
		}
		timed(&add, "tracing/kprobe_events", cmds, false)
		if running {
			// The guest makes its tracefs calls after the write
			// returned (kernel.MirrorTracefs): how long it takes.
			t0 := time.Now()
			f.k.SyncTracefs(f.k.TracefsQueued())
			mirror += time.Since(t0)
		}
		timed(&enable, "tracing/events/kprobes/enable", "1\n", true)
		timed(&disable, "tracing/events/kprobes/enable", "0\n", true)
		t0 := time.Now()
		out, err := f.tree.ReadFile("kprobes/list")
		if err != nil {
			b.Fatal(err)
		}
		list += time.Since(t0)
		if lines := bytes.Count(out, []byte("\n")); lines != n {
			b.Fatalf("kprobes/list has %d lines, want %d", lines, n)
		}
		timed(&remove, "tracing/kprobe_events", "", true)
	}
	per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 / float64(b.N) / float64(n) }
	b.ReportMetric(per(add), "add-us/event")
	if running {
		b.ReportMetric(per(mirror), "guest-mirror-us/event")
	}
	b.ReportMetric(per(enable), "enable-us/event")
	b.ReportMetric(per(disable), "disable-us/event")
	b.ReportMetric(per(list), "list-us/event")
	b.ReportMetric(per(remove), "remove-us/event")
}

// manyEvents returns n p: event definitions, spread over the functions
// kprobe events may probe (traceable, not blacklisted, a unique name):
// where those run out, several events share a kprobe.
func manyEvents(b *testing.B, f *fixture, n int) string {
	b.Helper()
	blacklisted := map[string]bool{}
	for _, l := range strings.Split(f.read(b, "kprobes/blacklist"), "\n") {
		if fs := strings.Fields(l); len(fs) == 2 {
			blacklisted[fs[1]] = true
		}
	}
	seen := map[string]int{}
	var order []string
	for _, l := range strings.Split(f.read(b, "tracing/available_filter_functions"), "\n") {
		fs := strings.Fields(l)
		if len(fs) == 0 || strings.ContainsAny(fs[0], ".:") || blacklisted[fs[0]] {
			continue
		}
		if seen[fs[0]]++; seen[fs[0]] == 1 {
			order = append(order, fs[0])
		}
	}
	var funcs []string
	for _, fn := range order {
		if seen[fn] == 1 {
			funcs = append(funcs, fn)
		}
	}
	if len(funcs) == 0 {
		b.Fatal("no function to probe")
	}
	var s strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&s, "p:kprobes/e%d %s\n", i, funcs[i%len(funcs)])
	}
	return s.String()
}
