package tracing

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"sort"
	"sync"

	"github.com/kpemu/kpemu/debugfs"
	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/tracing/internal/kstr"
)

// The function profiler, after Linux 6.1's ftrace.c with
// CONFIG_FUNCTION_PROFILER and CONFIG_FUNCTION_GRAPH_TRACER:
// function_profile_enabled, and trace_stat/functionN, each CPU's hits
// and times of the functions set_ftrace_filter takes, on the graph
// (fprofiler_ops), so that it cannot run beside the function_graph
// tracer (EBUSY), and trace_stat.c's sorted listing. Debian's 6.1 lacks
// the option; these are Linux's source's formats and modes.

// profileRec is a struct ftrace_profile.
type profileRec struct {
	ip          uint64
	counter     uint64
	time, time2 uint64 // total time and its squares, in ns
}

// profileCPU is a struct ftrace_profile_stat: the records in first-hit
// order and by ip.
type profileCPU struct {
	recs []*profileRec
	byIP map[uint64]*profileRec
}

// profiler is the profiler's state (ftrace_profile_enabled,
// ftrace_profile_stats).
type profiler struct {
	mu      sync.Mutex // ftrace_profile_lock, and the records
	enabled bool
	cpus    []profileCPU
	ops     kernel.FgraphOps
}

// initProfiler creates function_profile_enabled and trace_stat/.
func (t *Tracing) initProfiler() error {
	p := &t.prof
	p.cpus = make([]profileCPU, t.top.buf.NumCPUs())
	p.ops = kernel.FgraphOps{
		Entry:  t.profileGraphEntry,
		Return: t.profileGraphReturn,
		Filter: &t.top.ft.ops,
		Clock:  func() uint64 { return uint64(t.now()) },
	}
	if _, err := t.tree.CreateFile(path.Join(t.dir, "function_profile_enabled"), fsMode(0o640),
		debugfs.FileOps{Show: t.showProfileEnabled, Write: t.writeProfileEnabled}); err != nil {
		return fmt.Errorf("creating %s/function_profile_enabled: %w", t.dir, err)
	}
	if _, err := t.tree.MkdirAll(path.Join(t.dir, "trace_stat"), modeDir); err != nil {
		return fmt.Errorf("creating %s/trace_stat: %w", t.dir, err)
	}
	for cpu := range p.cpus {
		name := path.Join(t.dir, "trace_stat", fmt.Sprintf("function%d", cpu))
		if _, err := t.tree.CreateFile(name, fsMode(0o440), debugfs.FileOps{Show: t.showFunctionStat(cpu)}); err != nil {
			return fmt.Errorf("creating %s: %w", name, err)
		}
	}
	return nil
}

func (t *Tracing) showProfileEnabled(_ context.Context, w *bytes.Buffer) error {
	t.prof.mu.Lock()
	defer t.prof.mu.Unlock()
	showBool(w, t.prof.enabled)
	return nil
}

// writeProfileEnabled is ftrace_profile_write: kstrtoul base 10, any
// non-zero turns it on, which starts the records afresh and registers
// the profiler on the graph (EBUSY while function_graph traces).
func (t *Tracing) writeProfileEnabled(_ context.Context, b []byte, _ int64) (int, error) {
	v, err := kstr.StrtoulFromUser(b)
	if err != nil {
		return 0, err
	}
	on := v != 0
	p := &t.prof
	p.mu.Lock()
	if p.enabled == on {
		p.mu.Unlock()
		return len(b), nil
	}
	k := t.kp.Kernel()
	if on {
		for i := range p.cpus {
			p.cpus[i] = profileCPU{byIP: make(map[uint64]*profileRec)} // ftrace_profile_init
		}
		p.mu.Unlock()
		// Registering stops the machine, whose CPUs may be in the
		// callbacks, which take p.mu: not under it.
		if err := k.RegisterFtraceGraph(&p.ops); err != nil {
			return 0, err
		}
		p.mu.Lock()
		p.enabled = true
		p.mu.Unlock()
		return len(b), nil
	}
	p.enabled = false
	p.mu.Unlock()
	if err := k.UnregisterFtraceGraph(&p.ops); err != nil {
		return 0, err
	}
	return len(b), nil
}

// profileGraphEntry is profile_graph_entry with function_profile_call:
// a hit on this CPU, and the frame's subtime zeroed.
func (t *Tracing) profileGraphEntry(gt kernel.FgraphTask, ent *kernel.FgraphEnt) bool {
	p := &t.prof
	p.mu.Lock()
	if p.enabled {
		c := &p.cpus[gt.CPU.Index()]
		r := c.byIP[ent.Func]
		if r == nil {
			r = &profileRec{ip: ent.Func}
			c.byIP[ent.Func] = r
			c.recs = append(c.recs, r)
		}
		r.counter++
	}
	p.mu.Unlock()
	if st := gt.SubTime(0); st != nil {
		*st = 0
	}
	return true
}

// profileGraphReturn is profile_graph_return: the call's time, less its
// children's without graph-time, goes to the function's record on this
// CPU.
func (t *Tracing) profileGraphReturn(gt kernel.FgraphTask, ret *kernel.FgraphRet) {
	if ret.CallTime == 0 {
		return
	}
	calltime := ret.RetTime - ret.CallTime
	if !t.graphFlag(graphGraphTime) {
		if st := gt.SubTime(1); st != nil {
			*st += calltime
		}
		if st := gt.SubTime(0); st != nil && *st < calltime {
			calltime -= *st
		} else {
			calltime = 0
		}
	}
	p := &t.prof
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.enabled {
		return
	}
	if r := p.cpus[gt.CPU.Index()].byIP[ret.Func]; r != nil {
		r.time += calltime
		r.time2 += calltime * calltime
	}
}

// showFunctionStat is trace_stat/functionN: function_stat_headers, then
// the records by total time, highest first (trace_stat.c's rbtree puts
// a record before those it ties with, so ties come newest first),
// each as function_stat_show prints it.
func (t *Tracing) showFunctionStat(cpu int) func(context.Context, *bytes.Buffer) error {
	return func(_ context.Context, w *bytes.Buffer) error {
		p := &t.prof
		p.mu.Lock()
		recs := make([]profileRec, 0, len(p.cpus[cpu].recs))
		for _, r := range p.cpus[cpu].recs {
			recs = append(recs, *r)
		}
		p.mu.Unlock()
		// Newest first, then a stable sort by time.
		for i, j := 0, len(recs)-1; i < j; i, j = i+1, j-1 {
			recs[i], recs[j] = recs[j], recs[i]
		}
		sort.SliceStable(recs, func(i, j int) bool { return recs[i].time > recs[j].time })
		w.WriteString("  Function                               Hit    Time            Avg             s^2\n" +
			"  --------                               ---    ----            ---             ---\n")
		syms := t.kp.Kernel().Kallsyms()
		thresh := t.thresh.Load()
		for _, r := range recs {
			writeFunctionStat(w, syms, r, thresh)
		}
		return nil
	}
}

// writeFunctionStat is function_stat_show for one record.
func writeFunctionStat(w *bytes.Buffer, syms *kernel.Kallsyms, r profileRec, thresh uint64) {
	if r.counter == 0 {
		return
	}
	avg := r.time / r.counter
	if thresh != 0 && avg < thresh {
		return
	}
	name := ""
	if s, _, ok := syms.LookupAddr(r.ip); ok {
		name = s.Name
	}
	if len(name) > 30 {
		name = name[:30]
	}
	fmt.Fprintf(w, "  %-30s  %10d    ", name, r.counter)
	// s^2 = (n * Σx² - (Σx)²) / (n * (n-1)), in µs² (a division by
	// 1000 here, the other in the printing), in unsigned 64-bit
	// arithmetic as Linux's.
	var stddev uint64
	if denom := r.counter * (r.counter - 1) * 1000; denom != 0 {
		stddev = (r.counter*r.time2 - r.time*r.time) / denom
	}
	printGraphDuration(w, r.time)
	w.WriteString("    ")
	printGraphDuration(w, avg)
	w.WriteString("    ")
	printGraphDuration(w, stddev)
	w.WriteByte('\n')
}
