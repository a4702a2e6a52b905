package events

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/kpemu/kpemu/kprobes"
)

// traceEntry is one recorded event.
type traceEntry struct {
	ts   time.Duration
	cpu  int
	comm string
	pid  int
	text string // "myprobe: (vfs_read+0x0/0x2d0) fd=0x1"
	// irqsOn: a return handler runs with interrupts as the function left
	// them (Linux prints '.' where a kprobe hit prints 'd').
	irqsOn bool

	// A function tracer entry (TRACE_FN): text is made when it is
	// printed, from ip and parent, as trace_fn_trace does.
	fn          bool
	ip, parent  uint64
	needResched bool
}

// traceBuffer is the ring buffer behind trace and trace_pipe: it keeps the
// newest entries (overwrite mode, as Linux's default) and counts every
// entry written.
type traceBuffer struct {
	mu      sync.Mutex
	cond    chan struct{} // closed and replaced when entries arrive
	ring    []traceEntry  // capacity max; the oldest entry is at head
	head    int
	n       int
	max     int
	written uint64
}

func newTraceBuffer(max int) *traceBuffer {
	return &traceBuffer{max: max, cond: make(chan struct{})}
}

func (b *traceBuffer) add(e traceEntry) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ring == nil {
		b.ring = make([]traceEntry, b.max)
	}
	b.ring[(b.head+b.n)%b.max] = e
	if b.n == b.max {
		b.head = (b.head + 1) % b.max // overwrite the oldest
	} else {
		b.n++
	}
	b.written++
	close(b.cond)
	b.cond = make(chan struct{})
}

// at returns the i-th oldest buffered entry; b.mu is held.
func (b *traceBuffer) at(i int) *traceEntry { return &b.ring[(b.head+i)%b.max] }

// consume drops the n oldest entries; b.mu is held.
func (b *traceBuffer) consume(n int) {
	b.head = (b.head + n) % b.max
	b.n -= n
}

// snapshot copies the buffered entries, oldest first.
func (b *traceBuffer) snapshot() ([]traceEntry, uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]traceEntry, b.n)
	for i := range out {
		out[i] = *b.at(i)
	}
	return out, b.written
}

func (b *traceBuffer) reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.head, b.n, b.written = 0, 0, 0
}

// record writes one event, as kprobe_trace_func and print_kprobe_event.
func (t *Tracing) record(tp *traceProbe, regs *kprobes.Regs) {
	if !t.on.Load() {
		return
	}
	f := fetcher{t: t, regs: regs}
	comm, pid := t.kp.Kernel().Current(regs.CPU)
	if !f.passes(tp.ev, comm, pid, regs.CPU, traceFlagIrqsOff) {
		return
	}
	var w bytes.Buffer
	fmt.Fprintf(&w, "%s: (%s)", tp.ev.name, t.kp.Kernel().Kallsyms().Format(regs.PC))
	for _, a := range tp.ev.args {
		f.format(&w, a)
	}
	t.buf.add(traceEntry{ts: t.now(), cpu: regs.CPU, comm: comm, pid: pid, text: w.String()})
}

// recordReturn writes one return event, as print_kretprobe_event:
// "(caller+off/size <- func)".
func (t *Tracing) recordReturn(tp *traceProbe, ri *kprobes.KretprobeInstance, regs *kprobes.Regs) {
	if !t.on.Load() {
		return
	}
	f := fetcher{t: t, regs: regs}
	comm, pid := t.kp.Kernel().Current(regs.CPU)
	if !f.passes(tp.ev, comm, pid, regs.CPU, 0) {
		return
	}
	syms := t.kp.Kernel().Kallsyms()
	fn := "0x0"
	if s, _, ok := syms.LookupAddr(tp.kprobe().Addr); ok {
		fn = s.Name
	}
	var w bytes.Buffer
	fmt.Fprintf(&w, "%s: (%s <- %s)", tp.ev.name, syms.Format(ri.RetAddr), fn)
	for _, a := range tp.ev.args {
		f.format(&w, a)
	}
	t.buf.add(traceEntry{ts: t.now(), cpu: regs.CPU, comm: comm, pid: pid, text: w.String(), irqsOn: true})
}

// format prints one entry as trace and trace_pipe show it.
func (t *Tracing) format(w *bytes.Buffer, e *traceEntry) {
	comm := e.comm
	if e.pid == 0 {
		comm = "<idle>"
	}
	flags, text := "d....", e.text
	if e.irqsOn {
		flags = "....."
	}
	if e.fn {
		flags, text = e.fnFlags(), t.fnText(e.ip, e.parent)
	}
	us := e.ts / time.Microsecond
	fmt.Fprintf(w, "%16s-%-7d [%03d] %s %5d.%06d: %s\n", comm, e.pid, e.cpu, flags, us/1e6, us%1e6, text)
}

// showTrace is the trace file: the header, then every buffered entry.
func (t *Tracing) showTrace(_ context.Context, w *bytes.Buffer) error {
	entries, written := t.buf.snapshot()
	ncpu := t.kp.Kernel().Machine().NumCPUs()
	fmt.Fprintf(w, "# tracer: %s\n#\n# entries-in-buffer/entries-written: %d/%d   #P:%d\n#\n", t.currentTracer(), len(entries), written, ncpu)
	w.WriteString(`#                                _-----=> irqs-off/BH-disabled
#                               / _----=> need-resched
#                              | / _---=> hardirq/softirq
#                              || / _--=> preempt-depth
#                              ||| / _-=> migrate-disable
#                              |||| /     delay
#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION
#              | |         |   |||||     |         |
`)
	for i := range entries {
		t.format(w, &entries[i])
	}
	return nil
}

// readTracePipe is trace_pipe: a consuming read that blocks until an
// entry arrives.
func (t *Tracing) readTracePipe(ctx context.Context, p []byte, _ int64) (int, error) {
	b := t.buf
	for {
		b.mu.Lock()
		if b.n > 0 {
			var w bytes.Buffer
			n := 0
			for n < b.n {
				before := w.Len()
				t.format(&w, b.at(n))
				if w.Len() > len(p) {
					if n == 0 { // one line longer than the read: truncate it
						n = 1
						break
					}
					w.Truncate(before)
					break
				}
				n++
			}
			b.consume(n)
			b.mu.Unlock()
			return copy(p, w.Bytes()), nil
		}
		wait := b.cond
		b.mu.Unlock()
		select {
		case <-ctx.Done():
			return 0, syscall.EINTR
		case <-wait:
		}
	}
}
