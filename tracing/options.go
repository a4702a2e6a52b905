package tracing

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/kpemu/kpemu/debugfs"
	"github.com/kpemu/kpemu/tracing/internal/kstr"
)

// The trace array's settings and the files around the ring buffer, after
// Linux 6.1's trace.c: trace_options and options/ (the trace flags),
// trace_clock, buffer_size_kb, buffer_total_size_kb and per_cpu/cpuN/,
// and the saved command lines that give trace lines their comm.

// Trace flags: 1 << the option's index in Linux 6.1's TRACE_FLAGS, so
// that the masks are Linux's.
const (
	optPrintParent   = 1 << 0
	optSymOffset     = 1 << 1
	optSymAddr       = 1 << 2
	optVerbose       = 1 << 3 // latency.go
	optRaw           = 1 << 4 // rawoutput.go
	optHex           = 1 << 5
	optBin           = 1 << 6
	optBlock         = 1 << 7
	optTracePrintk   = 1 << 8
	optAnnotate      = 1 << 9
	optUserStack     = 1 << 10
	optSymUserobj    = 1 << 11
	optPrintkMsgOnly = 1 << 12
	optContextInfo   = 1 << 13
	optLatencyFmt    = 1 << 14 // latency.go
	optRecordCmd     = 1 << 15
	optRecordTgid    = 1 << 16 // infofiles.go
	optOverwrite     = 1 << 17
	optStopOnFree    = 1 << 18 // disable_on_free: infofiles.go
	optIrqInfo       = 1 << 19
	optMarkers       = 1 << 20 // infofiles.go
	optEventFork     = 1 << 21
	optPauseOnTrace  = 1 << 22
	optHashPtr       = 1 << 23
	optFunction      = 1 << 24
	optFuncFork      = 1 << 25
	optDisplayGraph  = 1 << 26
	optStacktrace    = 1 << 27

	// optSymMask is TRACE_ITER_SYM_MASK: the flags an entry prints
	// its addresses with.
	optSymMask = optPrintParent | optSymOffset | optSymAddr

	// optTopLevel is TOP_LEVEL_TRACE_FLAGS: options an instance lists
	// in trace_options but has no options/ file of, as they act on the
	// top buffer alone.
	optTopLevel = optTracePrintk | optPrintkMsgOnly | optRecordCmd

	// optDefault is TRACE_DEFAULT_FLAGS (with FUNCTION_DEFAULT_FLAGS).
	optDefault = optFunction | optPrintParent | optTracePrintk | optAnnotate | optContextInfo | optRecordCmd | optOverwrite | optIrqInfo | optMarkers | optHashPtr
)

type traceOption struct {
	name string
	mask uint32
}

// traceOptions are Linux 6.1 arm64's trace flags (TRACE_FLAGS with
// FUNCTION_FLAGS, FGRAPH_FLAGS and STACK_FLAGS; no BRANCH_FLAGS), in
// order, as trace_options lists them.
func traceOptions() []traceOption {
	return []traceOption{
		{"print-parent", optPrintParent},
		{"sym-offset", optSymOffset},
		{"sym-addr", optSymAddr},
		{"verbose", optVerbose},
		{"raw", optRaw},
		{"hex", optHex},
		{"bin", optBin},
		// block makes Linux's trace_poll report trace_pipe readable
		// even when it is empty. kpemu's FUSE mount serves no
		// poll(2) (go-fuse turns it off), and the kernel then reports
		// every file readable: as block does, whatever its value.
		{"block", optBlock},
		{"trace_printk", optTracePrintk},
		{"annotate", optAnnotate},
		// arm64 has no CONFIG_USER_STACKTRACE_SUPPORT, so Linux's
		// ftrace_trace_userstack is empty there: userstacktrace
		// records no user stack, and sym-userobj (which only names
		// the objects of such a stack's addresses) has nothing to
		// act on. Both keep their value, as on Linux.
		{"userstacktrace", optUserStack},
		{"sym-userobj", optSymUserobj},
		{"printk-msg-only", optPrintkMsgOnly},
		{"context-info", optContextInfo},
		{"latency-format", optLatencyFmt},
		{"record-cmd", optRecordCmd},
		{"record-tgid", optRecordTgid},
		{"overwrite", optOverwrite},
		{"disable_on_free", optStopOnFree},
		{"irq-info", optIrqInfo},
		{"markers", optMarkers},
		{"event-fork", optEventFork}, // pidfilter.go
		// Linux stops recording while trace is open; a read of trace
		// here is a snapshot taken at its first read, which never
		// races with the writers, so the option only keeps its value.
		{"pause-on-trace", optPauseOnTrace},
		{"hash-ptr", optHashPtr}, // tracepoint.go's printTracepoint
		// function-trace and display-graph are read by the latency
		// tracers alone (irqsoff, wakeup: is_graph and
		// function_enabled), which Debian's 6.1 is built without;
		// the function tracer does not look at function-trace.
		{"function-trace", optFunction},
		{"function-fork", optFuncFork}, // pidfilter.go
		{"display-graph", optDisplayGraph},
		{"stacktrace", optStacktrace},
	}
}

// The nop tracer's options (trace_nop.c): test_nop_accept takes any
// value, test_nop_refuse refuses to be set. Linux lists the current
// tracer's options after the trace flags (the function tracer's are
// funcopts.go's).
const (
	nopOptAccept = 1 << 0
	nopOptRefuse = 1 << 1
)

// traceClocks are the names of trace_clocks[] of Linux 6.1 on arm64
// (which adds no arch clocks), in order: a clock's id is its index.
func traceClocks() []string {
	return []string{"local", "global", "counter", "uptime", "perf", "mono", "mono_raw", "boot", "tai"}
}

const (
	clockCounter = 2
	clockUptime  = 3
	clockTAI     = 8
)

// clockInNS is trace_clocks[id].in_ns: every clock but counter and uptime.
func clockInNS(id int) bool { return id != clockCounter && id != clockUptime }

// guestHZ is the guest kernel's HZ (kernel/image/include/linux/timer.h),
// as Debian's arm64 kernel's: the uptime clock converts its jiffies.
const guestHZ = 250

// traceArray is what trace.c keeps beside the top-level buffer.
type traceSettings struct {
	flags    atomic.Uint32 // tr->trace_flags
	nopFlags atomic.Uint32 // the nop tracer's tracer_flags
	clockID  atomic.Int32  // tr->clock_id, an index into traceClocks()
	counter  atomic.Uint64 // trace_counter, the counter clock

	sizeMu   sync.Mutex  // trace_types_lock, for resizing
	expanded bool        // ring_buffer_expanded
	settled  atomic.Bool // expanded, for a look without the lock

	optMu sync.Mutex // trace_types_lock, for flag changes
}

// flag reports whether the trace flag mask is set.
func (ta *TraceArray) flag(mask uint32) bool { return ta.opts.flags.Load()&mask != 0 }

// clock is the current trace clock's now: the guest's time since boot
// in nanoseconds for local, global, perf, mono, mono_raw and boot (the
// guest has one clock, so they read alike, as they nearly do on a
// Linux box), the time of day in nanoseconds for tai (the machine's RTC:
// Linux's TAI is its realtime clock, which the RTC set at boot, with no
// leap-second offset until NTP sets one), an increment for counter, and
// the guest's jiffies in USER_HZ ticks for uptime
// (jiffies_64_to_clock_t).
func (ta *TraceArray) clock() uint64 {
	switch ta.opts.clockID.Load() {
	case clockTAI:
		return uint64(ta.t.kp.Kernel().Machine().RTCTime().UnixNano())
	case clockCounter:
		return ta.opts.counter.Add(1)
	case clockUptime:
		j, err := ta.t.kp.Kernel().ReadSymbolU64("jiffies")
		if err != nil {
			return 0
		}
		const tickNsec = (1_000_000_000 + guestHZ/2) / guestHZ // TICK_NSEC
		return j * tickNsec / (1_000_000_000 / 100)            // USER_HZ is 100
	}
	return uint64(ta.t.now())
}

// recordsCmdline reports whether a commit of kind saves the task's comm.
// Linux saves comms at the context switch after a commit while anyone
// asks for them: events with record-cmd, the function tracer always,
// trace_printk with the trace_printk option. kpemu saves at the commit.
func (ta *TraceArray) recordsCmdline(kind entryKind) bool {
	f := ta.opts.flags.Load()
	switch kind {
	case entryFn, entryRepeats, entryGraphEnt, entryGraphRet:
		return true
	case entryPrint:
		return f&(optTracePrintk|optRecordCmd) != 0
	}
	return f&optRecordCmd != 0
}

// initTraceArray sets the defaults and creates the files of this file.
func (ta *TraceArray) initTraceArray() error {
	ta.opts.flags.Store(optDefault)
	ncpu := ta.buf.NumCPUs()
	files := []struct {
		name string
		mode uint32
		ops  debugfs.FileOps
	}{
		{"buffer_size_kb", 0o640, debugfs.FileOps{Show: ta.showBufferSize(-1), Write: ta.writeBufferSize(-1)}},
		{"buffer_total_size_kb", 0o440, debugfs.FileOps{Show: ta.showBufferTotalSize}},
		{"trace_clock", 0o640, debugfs.FileOps{Show: ta.showTraceClock, Write: ta.writeTraceClock}},
		{"trace_options", 0o640, debugfs.FileOps{Show: ta.showTraceOptions, Write: ta.writeTraceOptions}},
	}
	for _, o := range traceOptions() {
		if ta != ta.t.top && o.mask&optTopLevel != 0 {
			continue // create_trace_options_dir: only the top has these files
		}
		files = append(files, struct {
			name string
			mode uint32
			ops  debugfs.FileOps
		}{"options/" + o.name, 0o640, ta.optionFile(o.mask)})
	}
	for _, o := range []struct {
		name string
		mask uint32
	}{{"test_nop_accept", nopOptAccept}, {"test_nop_refuse", nopOptRefuse}} {
		files = append(files, struct {
			name string
			mode uint32
			ops  debugfs.FileOps
		}{"options/" + o.name, 0o640, ta.nopOptionFile(o.name, o.mask)})
	}
	// The function tracer's options: in every array, as it runs in
	// every one (allow_instances).
	for _, o := range funcOptions() {
		files = append(files, struct {
			name string
			mode uint32
			ops  debugfs.FileOps
		}{"options/" + o.name, 0o640, ta.funcOptionFile(o.mask)})
	}
	if ta == ta.t.top {
		// The graph tracer's options: only where it can run.
		for _, o := range graphOptions() {
			files = append(files, struct {
				name string
				mode uint32
				ops  debugfs.FileOps
			}{"options/" + o.name, 0o640, ta.t.graphOptionFile(o.mask)})
		}
	}
	for cpu := 0; cpu < ncpu; cpu++ {
		dir := fmt.Sprintf("per_cpu/cpu%d/", cpu)
		files = append(files, []struct {
			name string
			mode uint32
			ops  debugfs.FileOps
		}{
			{dir + "buffer_size_kb", 0o640, debugfs.FileOps{Show: ta.showBufferSize(cpu), Write: ta.writeBufferSize(cpu)}},
			{dir + "stats", 0o440, debugfs.FileOps{Show: ta.showStats(cpu)}},
			{dir + "trace", 0o640, debugfs.FileOps{
				Show:     func(_ context.Context, w *bytes.Buffer) error { ta.showTraceCPU(w, cpu); return nil },
				Write:    func(_ context.Context, p []byte, _ int64) (int, error) { return len(p), nil },
				Truncate: ta.resetCPU(cpu),
			}},
			{dir + "trace_pipe", 0o440, debugfs.FileOps{OpenRead: ta.openTracePipe(cpu)}},
		}...)
	}
	for _, f := range files {
		if dir := path.Dir(f.name); dir != "." {
			if _, err := ta.t.tree.MkdirAll(path.Join(ta.dir, dir), modeDir); err != nil {
				return fmt.Errorf("creating %s/%s: %w", ta.dir, dir, err)
			}
		}
		if _, err := ta.t.tree.CreateFile(path.Join(ta.dir, f.name), fsMode(f.mode), f.ops); err != nil {
			return fmt.Errorf("creating %s/%s: %w", ta.dir, f.name, err)
		}
	}
	return nil
}

// showTraceClock is tracing_clock_show: the clocks, the current one in
// brackets.
func (ta *TraceArray) showTraceClock(_ context.Context, w *bytes.Buffer) error {
	cur := int(ta.opts.clockID.Load())
	for i, name := range traceClocks() {
		if i > 0 {
			w.WriteByte(' ')
		}
		if i == cur {
			fmt.Fprintf(w, "[%s]", name)
		} else {
			w.WriteString(name)
		}
	}
	w.WriteByte('\n')
	return nil
}

// writeTraceClock is tracing_clock_write: under 64 bytes, stripped of
// white space, a clock's exact name (EINVAL otherwise). A new clock's
// time stamps do not compare with the old one's, so the buffer is
// emptied (tracing_set_clock).
func (ta *TraceArray) writeTraceClock(_ context.Context, p []byte, _ int64) (int, error) {
	if len(p) >= 64 {
		return 0, syscall.EINVAL
	}
	name := stripSpace(cstring(p))
	for i, c := range traceClocks() {
		if c == name {
			ta.opts.optMu.Lock()
			ta.opts.clockID.Store(int32(i))
			ta.resetOnlineCPUs()
			ta.snap.buf.Reset() // tracing_set_clock empties the max buffer too
			ta.clock()          // and stamps its time_start: a count of the counter clock
			ta.opts.optMu.Unlock()
			return len(p), nil
		}
	}
	return 0, syscall.EINVAL
}

// cstring is p up to its first NUL, as a kernel string copied from the
// user ends there.
func cstring(p []byte) string {
	if i := bytes.IndexByte(p, 0); i >= 0 {
		p = p[:i]
	}
	return string(p)
}

// showTraceOptions is tracing_trace_options_show: each option, "no"
// before it when off, then the current tracer's options.
func (ta *TraceArray) showTraceOptions(_ context.Context, w *bytes.Buffer) error {
	flags := ta.opts.flags.Load()
	for _, o := range traceOptions() {
		if flags&o.mask == 0 {
			w.WriteString("no")
		}
		w.WriteString(o.name + "\n")
	}
	if ta.currentTracer() == tracerFunction {
		fl := ta.t.funcFlags.Load()
		for _, o := range funcOptions() {
			if fl&o.mask == 0 {
				w.WriteString("no")
			}
			w.WriteString(o.name + "\n")
		}
	}
	if ta.currentTracer() == tracerFunctionGraph {
		g := ta.t.graph.flags.Load()
		for _, o := range graphOptions() {
			if g&o.mask == 0 {
				w.WriteString("no")
			}
			w.WriteString(o.name + "\n")
		}
	}
	if ta.currentTracer() == tracerNop {
		nop := ta.opts.nopFlags.Load()
		for _, o := range []struct {
			name string
			mask uint32
		}{{"test_nop_accept", nopOptAccept}, {"test_nop_refuse", nopOptRefuse}} {
			if nop&o.mask == 0 {
				w.WriteString("no")
			}
			w.WriteString(o.name + "\n")
		}
	}
	return nil
}

// writeTraceOptions is tracing_trace_options_write and trace_set_options:
// under 64 bytes, stripped, an option's name with "no" before it to turn
// it off; a trace flag, else the current tracer's option, else EINVAL.
func (ta *TraceArray) writeTraceOptions(_ context.Context, p []byte, _ int64) (int, error) {
	if len(p) >= 64 {
		return 0, syscall.EINVAL
	}
	name := stripSpace(cstring(p))
	on := true
	if rest, ok := strings.CutPrefix(name, "no"); ok {
		name, on = rest, false
	}
	for _, o := range traceOptions() {
		if o.name == name {
			ta.setTraceFlag(o.mask, on)
			return len(p), nil
		}
	}
	for _, o := range funcOptions() {
		if o.name == name && ta.setCurrentFuncOption(o.mask, on) {
			return len(p), nil
		}
	}
	if ta.currentTracer() == tracerFunctionGraph {
		for _, o := range graphOptions() {
			if o.name == name {
				ta.t.setGraphFlag(o.mask, on)
				return len(p), nil
			}
		}
	}
	if ta.currentTracer() == tracerNop {
		switch name {
		case "test_nop_accept":
			return len(p), ta.setNopOption(name, nopOptAccept, on)
		case "test_nop_refuse":
			return 0, ta.setNopOption(name, nopOptRefuse, on)
		}
	}
	return 0, syscall.EINVAL
}

// setTraceFlag is set_tracer_flag: overwrite goes to the ring buffer
// (ring_buffer_change_overwrite).
func (ta *TraceArray) setTraceFlag(mask uint32, on bool) {
	ta.opts.optMu.Lock()
	defer ta.opts.optMu.Unlock()
	if on {
		ta.opts.flags.Or(mask)
	} else {
		ta.opts.flags.And(^mask)
	}
	if mask&(optEventFork|optFuncFork) != 0 {
		ta.updateForkHook() // trace_event_follow_fork, ftrace_pid_follow_fork
	}
	if mask == optOverwrite {
		ta.buf.SetOverwrite(on)
	}
}

// setNopOption is nop_set_flag under __set_tracer_option: it is asked
// at every write, even of the value the option has, and says so in the
// log; test_nop_refuse is EINVAL.
func (ta *TraceArray) setNopOption(name string, mask uint32, on bool) error {
	v := 0
	if on {
		v = 1
	}
	if mask == nopOptRefuse {
		ta.t.log.Debug(fmt.Sprintf("nop_test_refuse flag set to %d: we refuse. Now cat trace_options to see the result", v))
		return syscall.EINVAL
	}
	ta.t.log.Debug(fmt.Sprintf("nop_test_accept flag set to %d: we accept. Now cat trace_options to see the result", v))
	if on {
		ta.opts.nopFlags.Or(mask)
	} else {
		ta.opts.nopFlags.And(^mask)
	}
	return nil
}

// optionFile is options/NAME of a trace flag (trace_options_core_fops).
func (ta *TraceArray) optionFile(mask uint32) debugfs.FileOps {
	return boolOptionFile(func() bool { return ta.flag(mask) }, func(on bool) error {
		ta.setTraceFlag(mask, on)
		return nil
	})
}

// nopOptionFile is options/NAME of a nop tracer option
// (trace_options_fops): a write that changes the value asks the nop
// tracer, whichever tracer is current.
func (ta *TraceArray) nopOptionFile(name string, mask uint32) debugfs.FileOps {
	get := func() bool { return ta.opts.nopFlags.Load()&mask != 0 }
	return boolOptionFile(get, func(on bool) error {
		if get() == on {
			return nil
		}
		return ta.setNopOption(name, mask, on)
	})
}

// boolOptionFile is the file of an option: "0" or "1"; a write takes
// kstrtoul's 0 or 1 (EINVAL otherwise) and hands it to set.
func boolOptionFile(get func() bool, set func(bool) error) debugfs.FileOps {
	return debugfs.FileOps{
		Show: func(_ context.Context, w *bytes.Buffer) error {
			showBool(w, get())
			return nil
		},
		Write: func(_ context.Context, p []byte, _ int64) (int, error) {
			v, err := kstr.StrtoulFromUser(p)
			if err != nil {
				return 0, err
			}
			if v > 1 {
				return 0, syscall.EINVAL
			}
			if err := set(v == 1); err != nil {
				return 0, err
			}
			return len(p), nil
		},
	}
}

func showBool(w *bytes.Buffer, b bool) {
	if b {
		w.WriteString("1\n")
	} else {
		w.WriteString("0\n")
	}
}
