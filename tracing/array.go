package tracing

import (
	"maps"
	"slices"
	"sync/atomic"
)

// TraceArray is the state of one tracing root, Linux's struct
// trace_array: its ring buffer and tracing_on, its snapshot buffer, its
// trace options, clock and buffer sizes, current_tracer with its
// function filters and commands, its pid filters, its error_log and the
// files around its buffer (buffer_percent, tracing_cpumask, ...). What
// all roots share is Tracing's. Linux's instances/NAME makes more
// arrays; kpemu has the top one.
type TraceArray struct {
	t    *Tracing // the shared state: events, dynamic events, the kernel
	dir  string   // the root's directory in the tree
	name string   // the instance's name; "" for the top array

	// files are an instance's trace_event_files by event, guarded by
	// Tracing.mu; the top array's are the events' own (event.top).
	files map[*event]*eventFile
	// removed is set when rmdir took the instance away: its files'
	// writes that raced with it change nothing.
	removed atomic.Bool

	buf  *traceBuffer  // the per-CPU ring buffer (package ring)
	on   atomic.Bool   // tracing_on
	opts traceSettings // trace flags, clock, buffer size; see options.go
	snap snapshotState // the snapshot buffer; see snapshot.go
	info arrayInfo     // buffer_percent, max_latency, tracing_cpumask; see infofiles.go
	// timeStart is array_buffer.time_start, the trace clock's time at
	// the last reset of every CPU, which the latency format counts
	// from (latency.go).
	timeStart atomic.Uint64

	errlog errorLog       // error_log
	ft     functionTracer // current_tracer, the function tracer; see ftrace.go
	pids   pidFilters     // set_event_pid, set_ftrace_pid and the -fork options; see pidfilter.go

	// marker is tr->trace_marker_file, the array's file of ftrace/print,
	// whose triggers a trace_marker write runs (markerev.go).
	marker *eventFile
}

// newTraceArray makes an array with its buffer at its boot size
// (tracer_alloc_buffers), tracing on.
func newTraceArray(t *Tracing, dir string) *TraceArray {
	ta := &TraceArray{t: t, dir: dir, buf: newTraceBuffer(t.kp.Kernel().Machine().NumCPUs(), traceBufSizeBoot), files: map[*event]*eventFile{}}
	ta.marker = &eventFile{ev: t.markerEvent, ta: ta}
	ta.on.Store(true)
	return ta
}

// file is ta's trace_event_file of ev; nil for no event, or if ta has
// none (an event made while ta was being removed). Tracing.mu is held, or ev is ta's
// for good (the top array's).
func (ta *TraceArray) file(ev *event) *eventFile {
	if ev == nil {
		return nil
	}
	if ta == ta.t.top {
		return &ev.top
	}
	return ta.files[ev]
}

// arrays is the top array and the instances, in the order of their
// names; t.mu is held.
func (t *Tracing) arrays() []*TraceArray {
	out := []*TraceArray{t.top}
	names := slices.Sorted(maps.Keys(t.instances))
	for _, n := range names {
		out = append(out, t.instances[n])
	}
	return out
}
