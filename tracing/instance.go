package tracing

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"syscall"
	"time"

	"github.com/kpemu/kpemu/debugfs"
)

// The trace arrays: the files every array has, made by one registration
// for the top directory and for each instances/NAME (trace.c's
// init_tracer_tracefs, trace_events.c's create_event_toplevel_files and
// event_trace_add_tracer), and instances/ itself, whose mkdir and rmdir
// make and free an array (instance_mkdir, instance_rmdir).

// createFiles makes the files of the array in ta.dir: the buffer's, the
// options', the snapshot's, the function tracer's, the events' and the
// pid filters'. Each reads and writes ta's state; what only the top
// directory has (kprobe_events, README, saved_cmdlines, ...) is made by
// New.
func (ta *TraceArray) createFiles() error {
	t := ta.t
	ta.info.bufferPercent.Store(bufferPercentDefault)
	ncpu := ta.buf.NumCPUs()
	ta.info.cpumask = make([]uint32, (ncpu+31)/32)
	for cpu := 0; cpu < ncpu; cpu++ {
		ta.info.cpumask[cpu/32] |= 1 << (cpu % 32)
	}
	if _, err := t.tree.MkdirAll(path.Join(ta.dir, "events"), modeDir); err != nil {
		return fmt.Errorf("creating %s/events: %w", ta.dir, err)
	}
	hdrPage, hdrEvent := headerFileOps() // headers.go
	ro := func(text string) debugfs.FileOps {
		return debugfs.FileOps{Show: func(_ context.Context, w *bytes.Buffer) error { w.WriteString(text); return nil }}
	}
	files := []struct {
		name string
		mode uint32
		ops  debugfs.FileOps
	}{
		{"error_log", 0o640, debugfs.FileOps{
			Show:     func(_ context.Context, w *bytes.Buffer) error { ta.errlog.show(w); return nil },
			Write:    func(_ context.Context, p []byte, _ int64) (int, error) { return len(p), nil },
			Truncate: func(context.Context) error { ta.errlog.clear(); return nil },
		}},
		{"trace", 0o640, debugfs.FileOps{
			Show:     ta.showTrace,
			Write:    func(_ context.Context, p []byte, _ int64) (int, error) { return len(p), nil },
			Truncate: func(context.Context) error { ta.resetOnlineCPUs(); return nil },
		}},
		{"trace_pipe", 0o440, debugfs.FileOps{OpenRead: ta.openTracePipe(-1)}},
		{"events/enable", 0o640, debugfs.FileOps{Show: ta.showGroupEnable(""), Write: ta.writeGroupEnable("")}},
		{"events/header_page", 0o440, hdrPage},
		{"events/header_event", 0o440, hdrEvent},
		{"available_tracers", 0o440, ro(ta.availableTracers())},
		{"current_tracer", 0o640, debugfs.FileOps{Show: ta.showCurrentTracer, Write: ta.writeCurrentTracer}},
		{"tracing_on", 0o640, debugfs.FileOps{Show: ta.showTracingOn, Write: ta.writeTracingOn}},
		{"set_event", 0o640, debugfs.FileOps{Show: ta.showSetEvent, Write: ta.writeSetEvent, Truncate: ta.clearSetEvent}},
		{"set_event_pid", 0o640, ta.pidFileOps(&ta.pids.event, false, true)},
		{"set_event_notrace_pid", 0o640, ta.pidFileOps(&ta.pids.event, true, true)},
		{"set_ftrace_pid", 0o640, ta.pidFileOps(&ta.pids.fn, false, false)},
		{"set_ftrace_notrace_pid", 0o640, ta.pidFileOps(&ta.pids.fn, true, false)},
		{"trace_marker", 0o220, debugfs.FileOps{Write: ta.writeMarker}},
		{"trace_marker_raw", 0o220, debugfs.FileOps{Write: ta.writeMarkerRaw}},
		// kpemu stamps events by deltas only; its hist triggers'
		// common_timestamp reads the trace clock.
		{"timestamp_mode", 0o440, ro("[delta] absolute\n")},
		{"buffer_percent", 0o640, debugfs.FileOps{Show: ta.showBufferPercent, Write: ta.writeBufferPercent}},
		{"free_buffer", 0o200, debugfs.FileOps{Open: ta.openFreeBuffer, OpenRead: ta.openReadFreeBuffer}},
		{"tracing_max_latency", 0o640, nsecsFile(&ta.info.maxLatency)},
		{"tracing_cpumask", 0o640, debugfs.FileOps{Show: ta.showCpumask, Write: ta.writeCpumask}},
	}
	for _, f := range files {
		if _, err := t.tree.CreateFile(path.Join(ta.dir, f.name), fsMode(f.mode), f.ops); err != nil {
			return fmt.Errorf("creating %s/%s: %w", ta.dir, f.name, err)
		}
	}
	if err := ta.initTraceArray(); err != nil { // options, buffer sizes, per_cpu/
		return err
	}
	if err := ta.initSnapshot(); err != nil {
		return err
	}
	if err := ta.createRawFiles(); err != nil { // rawpage.go
		return err
	}
	if err := ta.createFtraceEvents(); err != nil {
		return err
	}
	return ta.initFunctionTracer()
}

// initInstances makes instances/, whose mkdir and rmdir make and free
// the trace arrays of instances/NAME.
func (t *Tracing) initInstances() error {
	d, err := t.tree.Mkdir(path.Join(t.dir, "instances"), modeDir)
	if err != nil {
		return fmt.Errorf("creating %s/instances: %w", t.dir, err)
	}
	d.SetOps(debugfs.DirOps{Mkdir: t.MkdirInstance, Rmdir: t.RmdirInstance})
	return nil
}

// MkdirInstance is instance_mkdir (trace_array_create): a new trace
// array instances/name, tracing on, with its own buffer at the boot
// size, its options at their defaults, the nop tracer and every event
// disabled. EEXIST if there is one of that name.
func (t *Tracing) MkdirInstance(name string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.instances[name]; ok {
		return syscall.EEXIST
	}
	dir := path.Join(t.dir, "instances", name)
	if _, err := t.tree.Mkdir(dir, modeDir); err != nil {
		return err
	}
	ta := newTraceArray(t, dir)
	ta.name = name
	fail := func(err error) error {
		ta.removed.Store(true)
		for ev := range ta.files {
			ta.dropFile(ev)
		}
		if rerr := t.tree.RemoveAll(dir); rerr != nil {
			t.log.Warn("removing instance", "name", name, "err", rerr)
		}
		return err
	}
	if err := ta.createFiles(); err != nil {
		return fail(err)
	}
	for _, ev := range t.sortedEvents() {
		if err := ta.createEventDir(ev); err != nil {
			return fail(err)
		}
	}
	t.instances[name] = ta
	return nil
}

// RmdirInstance is instance_rmdir (__remove_instance): EBUSY while a
// file of the instance is open (a reader of trace_pipe among them),
// ENOENT without one; else its tracer goes back to nop, its events and
// triggers are disabled, and the array with its buffers is freed.
func (t *Tracing) RmdirInstance(name string) error {
	// A close(2) just before reaches kpemu after it returned (FUSE's
	// RELEASE): an instance in use only by files being closed is
	// waited for, a little, as Linux's rmdir would not find them open.
	if d, err := t.tree.LookupDir(path.Join(t.dir, "instances", name)); err == nil {
		d.WaitIdle(releaseWait)
	}
	t.mu.Lock()
	ta, ok := t.instances[name]
	if !ok {
		t.mu.Unlock()
		return syscall.ENOENT
	}
	d, err := t.tree.LookupDir(ta.dir)
	if err != nil {
		t.mu.Unlock()
		return err
	}
	if d.Busy() {
		t.mu.Unlock()
		return syscall.EBUSY
	}
	ta.removed.Store(true)
	delete(t.instances, name)
	// event_trace_del_tracer: the triggers first, then every file off.
	err = t.batchArming(func() error {
		var first error
		// clear_event_triggers: the hist triggers' data goes too, with
		// the named hists' and the references' counts.
		t.dropHists(ta.marker)
		for _, ev := range t.sortedEvents() {
			if f := ta.files[ev]; f != nil {
				t.dropHists(f)
			}
		}
		for _, ev := range t.sortedEvents() {
			f := ta.files[ev]
			if f == nil {
				continue
			}
			if set := f.triggers.Load(); set != nil {
				for _, tr := range set.list {
					t.unregisterTrigger(f, tr.cmd.typ, tr.target)
				}
			}
		}
		for _, ev := range t.sortedEvents() {
			if f := ta.files[ev]; f != nil {
				f.smRef = 0
				f.softDisabled.Store(false)
				if err := t.armProbes(f, false); err != nil && first == nil {
					first = err
				}
			}
		}
		return first
	})
	for ev := range ta.files {
		ta.dropFile(ev)
	}
	// The directory goes under t.mu, so that a mkdir of the name
	// finds either the whole old instance or none of it.
	rerr := t.tree.RemoveAll(ta.dir)
	t.mu.Unlock()
	if err != nil {
		t.log.Warn("removing instance: disabling its events", "name", name, "err", err)
	}
	// tracing_set_nop, and the function probes go with the tracer's
	// files (ftrace_destroy_function_files).
	if err := ta.setTracer(tracerNop); err != nil {
		t.log.Warn("removing instance: its tracer", "name", name, "err", err)
	}
	ta.releaseFunctionProbes()
	// The pid filters' fork hook goes with the -fork options.
	ta.setTraceFlag(optEventFork|optFuncFork, false)
	return rerr
}

// releaseWait bounds how long rmdir waits for the files of an instance
// that are being closed.
const releaseWait = 500 * time.Millisecond

// dropFile takes ta's file of ev out of the event's list of instance
// files; t.mu is held.
func (ta *TraceArray) dropFile(ev *event) {
	f := ta.files[ev]
	delete(ta.files, ev)
	old := ev.inst.Load()
	if old == nil {
		return
	}
	var list []*eventFile
	for _, o := range *old {
		if o != f {
			list = append(list, o)
		}
	}
	if len(list) == 0 {
		ev.inst.Store(nil)
		return
	}
	ev.inst.Store(&list)
}
