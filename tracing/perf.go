package tracing

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/kpemu/kpemu/debugfs"
	"github.com/kpemu/kpemu/internal/procmem"
	"github.com/kpemu/kpemu/tracing/filter"
	"golang.org/x/sys/unix"
)

// perf counters of kpemu's events, after kernel/events/core.c and
// trace_event_perf.c: what perf_event_open(2) of a tracepoint's id
// gives perf stat, served to the processes that kpemu-ns.sh seals
// (shadow.Seal.Perf). The seal readies a counter for the calling thread
// (PreparePerf) and makes its perf_event_open an open of kpemu/perf_event;
// that open takes the counter, whose read(2) and ioctl(2)s are a perf
// counter's, until its last close. Counting only: a sampling event (perf
// record) is refused before it gets here. PERF_EVENT_IOC_SET_FILTER
// gives a counter a filter (ftrace_profile_set_filter), in the events'
// filter syntax, which then counts only the hits that pass it.

// PerfAttr is a counter that perf_event_open(2) asks for.
type PerfAttr struct {
	Config     uint64 // the event's id
	ReadFormat uint64 // PERF_FORMAT_*
	// Disabled: the counter starts disabled; EnableOnExec: enabled at
	// its process's exec, which kpemu takes as its open (the guest does
	// not see the host's exec); Inherit: it counts the process's
	// descendants too.
	Disabled, Inherit, EnableOnExec bool
	PID, CPU                        int // -1: any
}

// The read_format bits of include/uapi/linux/perf_event.h.
const (
	perfFormatTotalTimeEnabled = 1 << 0
	perfFormatTotalTimeRunning = 1 << 1
	perfFormatID               = 1 << 2
	perfFormatGroup            = 1 << 3
	perfFormatLost             = 1 << 4
)

// perfCounter is one counting perf_event on an event.
type perfCounter struct {
	t       *Tracing
	ev      *event
	file    eventFile // arms the event as an enabled file of an array would
	attr    PerfAttr
	id      uint64
	enabled atomic.Bool
	count   atomic.Uint64
	filter  atomic.Pointer[filter.Node] // nil: every hit counts
	sample  *perfSample                 // a sampling event's; nil for a counter

	mu        sync.Mutex    // guards the times
	enabledAt time.Time     // when enabled last
	total     time.Duration // enabled before that

	released bool // guarded by Tracing.mu
}

// PreparePerf readies a counter of a for thread tid's next open of
// kpemu/perf_event; it returns perf_event_open's errno (0 for success).
func (t *Tracing) PreparePerf(tid int, a PerfAttr) syscall.Errno {
	if errno := t.checkPerf(a); errno != 0 {
		return errno
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.perfPending == nil {
		t.perfPending = map[int]PerfAttr{}
	}
	t.perfPending[tid] = a
	return 0
}

// checkPerf is what perf_event_open refuses of a counter of a.
func (t *Tracing) checkPerf(a PerfAttr) syscall.Errno {
	if a.PID < -1 || a.CPU < -1 || a.PID == -1 && a.CPU == -1 {
		return syscall.EINVAL
	}
	if a.ReadFormat&^(perfFormatTotalTimeEnabled|perfFormatTotalTimeRunning|perfFormatID|perfFormatLost) != 0 {
		return syscall.EOPNOTSUPP // PERF_FORMAT_GROUP: groups are not served
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	ev := t.eventByID(int(a.Config))
	switch {
	case ev == nil:
		return syscall.EINVAL // perf_trace_init: no event of that id
	case ev.static == nil && len(ev.probes) == 0, ev.isUprobe:
		// Synthetic events, event probes and uprobes count no hits
		// through perf here.
		return syscall.EOPNOTSUPP
	}
	return 0
}

// eventByID is the event whose id is id; t.mu is held.
func (t *Tracing) eventByID(id int) *event {
	for _, ev := range t.events {
		if ev.id == id {
			return ev
		}
	}
	return nil
}

// PerfEventOps are kpemu/perf_event's: each open takes the counter that
// PreparePerf readied for its thread (ENOENT when there is none).
func (t *Tracing) PerfEventOps() debugfs.FileOps {
	return debugfs.FileOps{OpenRead: t.openPerf}
}

func (t *Tracing) openPerf(ctx context.Context, _ int) (debugfs.Reader, error) {
	c, ok := debugfs.CallerOf(ctx)
	t.mu.Lock()
	defer t.mu.Unlock()
	a, pending := t.perfPending[c.Pid]
	if !ok || !pending {
		return nil, syscall.ENOENT
	}
	delete(t.perfPending, c.Pid)
	ev := t.eventByID(int(a.Config))
	if ev == nil {
		return nil, syscall.ENOENT // removed meanwhile
	}
	return t.newPerfCounter(ev, a, nil)
}

// newPerfCounter makes a counter of a on ev (nil: perf record's dummy
// event, which counts nothing), sampling if sample is not nil, arms ev
// for it and enables it unless a starts disabled; t.mu is held.
func (t *Tracing) newPerfCounter(ev *event, a PerfAttr, sample *perfSample) (*perfCounter, error) {
	t.perfNextID++
	pc := &perfCounter{t: t, ev: ev, attr: a, id: t.perfNextID, sample: sample}
	if sample != nil {
		sample.id = pc.id
	}
	if ev != nil {
		pc.file.ev = ev
		if err := t.armProbes(&pc.file, true); err != nil {
			return nil, err
		}
		t.setPerfCounters(ev, func(l []*perfCounter) []*perfCounter { return append(l, pc) })
	}
	if !a.Disabled || a.EnableOnExec {
		pc.enable()
	}
	return pc, nil
}

// setPerfCounters replaces ev's counters with edit's result; t.mu is held.
func (t *Tracing) setPerfCounters(ev *event, edit func([]*perfCounter) []*perfCounter) {
	var old []*perfCounter
	if p := ev.perf.Load(); p != nil {
		old = *p
	}
	l := edit(append([]*perfCounter(nil), old...))
	if len(l) == 0 {
		ev.perf.Store(nil)
		return
	}
	ev.perf.Store(&l)
}

// perfHit counts a hit of ev in its counters (perf_trace_buf_submit and
// perf_swevent_event for a counting event) and samples it in its
// sampling events; f reads the hit's fields for a counter's filter, raw
// makes its record for a sample's PERF_SAMPLE_RAW (the part after
// struct trace_entry).
func (t *Tracing) perfHit(ev *event, f *fetcher, flags uint64, raw func() []byte) {
	p := ev.perf.Load()
	if p == nil {
		return
	}
	k := t.kp.Kernel()
	cpu := f.regs.CPU
	var fields map[string]filter.Value
	for _, pc := range *p {
		a := &pc.attr
		if !pc.enabled.Load() || a.CPU >= 0 && a.CPU != cpu {
			continue
		}
		if a.PID >= 0 {
			if a.Inherit {
				if !k.CurrentDescends(cpu, a.PID) {
					continue
				}
			} else if k.CurrentPid(cpu) != a.PID {
				continue
			}
		}
		if fl := pc.filter.Load(); fl != nil {
			if fields == nil {
				comm, pid := k.Current(cpu)
				fields = f.fields(ev, comm, pid, cpu, flags)
			}
			if !(*fl).Eval(fields) {
				continue
			}
		}
		pc.count.Add(1)
		if pc.sample != nil {
			pc.sample.hit(func() *sampleCtx { return t.sampleContext(ev, f, flags, raw, pc.sample.attr.SampleType) })
		}
	}
}

// sampleContext is a sample's view of a hit on f.regs.CPU.
func (t *Tracing) sampleContext(ev *event, f *fetcher, flags uint64, raw func() []byte, sampleType uint64) *sampleCtx {
	k := t.kp.Kernel()
	cpu := f.regs.CPU
	comm, pid := k.Current(cpu)
	c := &sampleCtx{ip: f.regs.PC, pid: int32(k.CurrentTgid(cpu)), tid: int32(pid), comm: comm, time: uint64(t.now()), cpu: uint32(cpu)}
	if sampleType&sampleCallchain != 0 {
		c.callchain = t.unwind(cpu, f.regs.PC, f.regs.X[29])
	}
	// struct trace_entry, then the event's fields
	head := make([]byte, traceEntryHeadSize, 64)
	binary.LittleEndian.PutUint16(head, uint16(ev.id))
	head[2] = uint8(flags)
	binary.LittleEndian.PutUint32(head[4:], uint32(pid))
	c.raw = append(head, raw()...)
	return c
}

func (pc *perfCounter) enable() {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if !pc.enabled.Load() {
		pc.enabledAt = time.Now()
		pc.enabled.Store(true)
	}
}

func (pc *perfCounter) disable() {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.enabled.Load() {
		pc.enabled.Store(false)
		pc.total += time.Since(pc.enabledAt)
	}
}

// enabledFor is total_time_enabled, which is total_time_running too: a
// tracepoint counter is never multiplexed.
func (pc *perfCounter) enabledFor() time.Duration {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	d := pc.total
	if pc.enabled.Load() {
		d += time.Since(pc.enabledAt)
	}
	return d
}

// Read is perf_read: the count and what read_format adds, at every read
// (ENOSPC for a buffer that cannot hold them).
func (pc *perfCounter) Read(_ context.Context, p []byte, _ int64) (int, error) {
	var b bytes.Buffer
	put := func(v uint64) { _ = binary.Write(&b, binary.LittleEndian, v) }
	put(pc.count.Load())
	f := pc.attr.ReadFormat
	d := uint64(pc.enabledFor())
	if f&perfFormatTotalTimeEnabled != 0 {
		put(d)
	}
	if f&perfFormatTotalTimeRunning != 0 {
		put(d)
	}
	if f&perfFormatID != 0 {
		put(pc.id)
	}
	if f&perfFormatLost != 0 {
		put(0)
	}
	if len(p) < b.Len() {
		return 0, syscall.ENOSPC
	}
	return copy(p, b.Bytes()), nil
}

// Ioctl is perf_ioctl's commands of a counting event.
func (pc *perfCounter) Ioctl(ctx context.Context, cmd uint32, arg uint64, out []byte) (int32, error) {
	switch cmd {
	case unix.PERF_EVENT_IOC_ENABLE:
		pc.enable()
	case unix.PERF_EVENT_IOC_DISABLE:
		pc.disable()
	case unix.PERF_EVENT_IOC_RESET:
		pc.count.Store(0)
	case unix.PERF_EVENT_IOC_REFRESH, unix.PERF_EVENT_IOC_PERIOD:
		return 0, syscall.EINVAL // for sampling events only
	case unix.PERF_EVENT_IOC_SET_OUTPUT:
		if int32(arg) != -1 {
			return 0, syscall.EINVAL // no ring buffer to share
		}
	case unix.PERF_EVENT_IOC_ID:
		if len(out) < 8 {
			return 0, syscall.EFAULT
		}
		binary.LittleEndian.PutUint64(out, pc.id)
	case unix.PERF_EVENT_IOC_SET_FILTER:
		c, ok := debugfs.CallerOf(ctx)
		if !ok {
			return 0, syscall.EFAULT
		}
		// strndup_user(arg, PAGE_SIZE)
		r := procmem.Reader{PID: c.Pid}
		defer r.Close()
		s, err := r.ReadString(arg, perfFilterMax)
		switch {
		case errors.Is(err, procmem.ErrUnterminated):
			return 0, syscall.EINVAL
		case err != nil:
			return 0, syscall.EFAULT
		}
		return 0, pc.setFilter(s)
	default:
		return 0, syscall.ENOTTY
	}
	return 0, nil
}

// perfFilterMax bounds a filter string with its NUL: perf_event_set_filter
// copies it with strndup_user(arg, PAGE_SIZE).
const perfFilterMax = 4096

// setFilter is ftrace_profile_set_filter: s replaces the counter's
// filter, or, when it does not parse, the counter keeps its filter and
// the caller gets Linux's errno (no error_log entry: perf's filters are
// not set_str).
func (pc *perfCounter) setFilter(s string) error {
	fields := filterFields(pc.ev)
	if pe := filter.Check(s, fields); pe != nil {
		return pe.Errno
	}
	n, err := filter.Parse(s, fields)
	if err != nil {
		return err
	}
	pc.filter.Store(&n)
	return nil
}

// Release is the counter's last close: its event is disarmed when no
// array or counter wants it.
func (pc *perfCounter) Release() {
	t := pc.t
	t.mu.Lock()
	defer t.mu.Unlock()
	if pc.released {
		return
	}
	pc.released = true
	pc.disable()
	t.setPerfCounters(pc.ev, func(l []*perfCounter) []*perfCounter {
		for i, x := range l {
			if x == pc {
				return append(l[:i], l[i+1:]...)
			}
		}
		return l
	})
	if err := t.armProbes(&pc.file, false); err != nil {
		t.log.Warn("tracing: disarming a perf counter's event", "event", pc.ev.key(), "err", err)
	}
}

var (
	_ debugfs.Ioctler  = (*perfCounter)(nil)
	_ debugfs.Releaser = (*perfCounter)(nil)
)
