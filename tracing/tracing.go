package tracing

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kpemu/kpemu/debugfs"
	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/kprobes"
)

// Tracing is the state of the tracing tree that every tracing root
// shares, Linux's globals in kernel/trace: the trace events and the
// dynamic event list (kprobe_events, uprobe_events), the static events
// on the guest's tracepoints, the saved comms and tgids, the
// trace_printk formats, the stack tracer and the kernel hooks. Each
// root's own state (its buffer, tracer, options, pid filters) is a
// TraceArray; today there is one, top, the tree's top directory.
type Tracing struct {
	kp   *kprobes.Kprobes
	tree *debugfs.Tree
	dir  string // the tracing directory in tree, e.g. "tracing"
	log  *slog.Logger
	now  func() time.Duration

	// top is the top-level trace array, Linux's global_trace: the
	// files in dir itself.
	top *TraceArray
	// instances are the arrays of instances/NAME by NAME, guarded by mu
	// (instance.go).
	instances map[string]*TraceArray

	mu     sync.Mutex        // event_mutex: guards everything below
	probes []*traceProbe     // dyn_event order: kprobe_events, kprobe_profile
	events map[string]*event // by group/name
	// namedHists are the named hist triggers (hist:name=...) by
	// "name=NAME", Linux's named_triggers; guarded by mu.
	namedHists map[string]*trigger
	// markerEvent is ftrace/print as the triggers know it: not in
	// events, as Linux's ftrace events are in no event list users
	// enable (markerev.go).
	markerEvent *event
	// fieldMaps are the maps of a hit's fields the triggers reuse
	// (trigger.go's callTriggersHit).
	fieldMaps sync.Pool
	// hitScratch holds the *hitScratch a hit formats its event in (one
	// reused, where fresh buffers and their growth were allocations).
	hitScratch sync.Pool
	groups     map[string]int // how many of events are in each group
	nextID     int
	// perfPending are the perf counters readied for a thread's next
	// open of kpemu/perf_event, by thread id; perfNextID numbers the
	// counters (PERF_EVENT_IOC_ID). Both guarded by mu (perf.go).
	perfPending map[int]PerfAttr
	perfNextID  uint64

	cmdlines savedCmdlines // savedcmd: the comms of the pids in the buffers
	tgids    savedTgids    // tgid_map: saved_tgids; see infofiles.go
	fmts     printkFormats // the modules' trace_printk formats; see printkfmt.go
	thresh   atomic.Uint64 // tracing_thresh, in ns
	graph    graphState    // the function_graph tracer's globals (fgraph.go)
	// funcFlags is the function tracer's func_flags.val, one for
	// every array; funcMu is trace_types_lock for its changes
	// (funcopts.go).
	funcFlags atomic.Uint32
	funcMu    sync.Mutex
	prof      profiler // the function profiler (profile.go)

	// arming, while a write enables or disables many events, collects
	// the probes to arm (true) and disarm (false), so that they are
	// armed in one stop of the machine; see batchArming.
	arming map[bool][]*kprobes.Kprobe

	// mirrored is the last change queued to the guest's tracefs
	// hierarchy (kernel.MirrorTracefs), which a reader of trace waits
	// for.
	mirrored atomic.Uint64

	stack stackTracer // the stack tracer, one for the kernel; see stack.go

	// static is the static events by their tracepoints; made by New
	// and never changed after (tracepoint.go).
	static map[*kernel.Tracepoint]*event
	// flagEvents are the static events whose output depends on the
	// trace flags (staticEvent.printFlags), by id, which a read
	// reprints (tracepoint.go); made with static.
	flagEvents map[uint16]*staticEvent
	// syscalls: the syscalls events on the raw_syscalls tracepoints, by
	// system call number; tpUsers counts the armed events on each
	// tracepoint (guarded by mu).
	syscalls map[*kernel.Tracepoint]map[int64]*event
	tpUsers  map[*kernel.Tracepoint]int
}

// New creates the tracing files under dir in tree ("tracing" for
// /sys/kernel/debug/tracing). now gives the timestamps of error_log and
// trace (the guest's clock); nil uses time since New.
func New(kp *kprobes.Kprobes, tree *debugfs.Tree, dir string, now func() time.Duration, log *slog.Logger) (*Tracing, error) {
	if log == nil {
		log = slog.Default()
	}
	if now == nil {
		start := time.Now()
		now = func() time.Duration { return time.Since(start) }
	}
	t := &Tracing{kp: kp, tree: tree, dir: dir, log: log, now: now, events: make(map[string]*event), groups: make(map[string]int), nextID: 2000, instances: map[string]*TraceArray{}, namedHists: map[string]*trigger{}, markerEvent: newMarkerEvent()}
	t.tgids.pidMax = kp.Kernel().PIDMax
	t.top = newTraceArray(t, dir)
	kp.Kernel().RegisterModuleNotifier(t.moduleCallback)
	if err := t.createFiles(); err != nil {
		return nil, err
	}
	if err := t.createTracefsFiles(); err != nil {
		return nil, err
	}
	if err := t.top.createFiles(); err != nil {
		return nil, err
	}
	if err := t.initInstances(); err != nil {
		return nil, err
	}
	if err := t.initFtrace(); err != nil {
		return nil, err
	}
	if err := t.initStaticEvents(); err != nil {
		return nil, err
	}
	kp.Kernel().SetHostcall(kernel.HCTracePrintk, t.hcTracePrintk)
	return t, nil
}
