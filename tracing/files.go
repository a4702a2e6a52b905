package tracing

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"syscall"

	"github.com/kpemu/kpemu/debugfs"
	"github.com/kpemu/kpemu/kernel"
)

// Modes of tracefs files in Linux 6.1 (TRACE_MODE_WRITE, TRACE_MODE_READ).
const (
	modeWrite fs.FileMode = 0o640
	modeRead  fs.FileMode = 0o440
	modeDir   fs.FileMode = 0o750
)

func (t *Tracing) createFiles() error {
	if _, err := t.tree.MkdirAll(t.dir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", t.dir, err)
	}
	files := []struct {
		name string
		mode fs.FileMode
		ops  debugfs.FileOps
	}{
		{"kprobe_events", modeWrite, debugfs.FileOps{Show: t.showDynEvents(dynKprobe), Write: t.writeKprobeEvents, Truncate: func(context.Context) error { return t.releaseAll(dynKprobe) }}},
		{"kprobe_profile", modeRead, debugfs.FileOps{Show: t.showProfile}},
	}
	for _, f := range files {
		if _, err := t.tree.CreateFile(path.Join(t.dir, f.name), f.mode, f.ops); err != nil {
			return fmt.Errorf("creating %s/%s: %w", t.dir, f.name, err)
		}
	}
	return nil
}

// showKprobe is trace_kprobe_show; t.mu is held.
func (t *Tracing) showKprobe(w *bytes.Buffer, tp *traceProbe) {
	ev := tp.ev
	kind := byte('p')
	switch {
	case ev.isReturn:
		kind = 'r'
	case ev.isJprobe:
		kind = 'j'
	}
	w.WriteByte(kind)
	if ev.isReturn && tp.maxactive > 0 {
		fmt.Fprintf(w, "%d", tp.maxactive)
	}
	fmt.Fprintf(w, ":%s/%s %s%s\n", ev.group, ev.name, tp.location(t), argsString(tp.args))
}

// writeKprobeEvents is kprobe_events' write (probes_write).
func (t *Tracing) writeKprobeEvents(_ context.Context, p []byte, _ int64) (int, error) {
	return t.parseRunCommand(p, "kprobe_events", func(line string) error {
		return t.runDynCommand(line, dynKprobe, t.create, "kprobe")
	})
}

// showProfile is probes_profile_seq_show.
func (t *Tracing) showProfile(_ context.Context, w *bytes.Buffer) error {
	t.syncMirror() // the hits of the tracefs calls of the writes before
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, tp := range t.probes {
		if dynKprobe.has(tp) {
			fmt.Fprintf(w, "  %-44s %15d %15d\n", tp.ev.name, tp.nhit.Load(), tp.missed())
		}
	}
	return nil
}

// createEventFiles makes events/GROUP/EVENT/ (and the group's dir and
// enable file when it is the group's first event) in every trace array,
// with each array's trace_event_file of ev; t.mu is held.
func (t *Tracing) createEventFiles(ev *event) error {
	ev.top.ev, ev.top.ta = ev, t.top
	for _, ta := range t.arrays() {
		if err := ta.createEventDir(ev); err != nil {
			return err
		}
	}
	return nil
}

// createEventDir makes ta's file of ev and its events/GROUP/EVENT/;
// t.mu is held.
func (ta *TraceArray) createEventDir(ev *event) error {
	t := ta.t
	top := ta == t.top
	f := &ev.top
	if !top {
		f = &eventFile{ev: ev, ta: ta}
		ta.files[ev] = f
		list := []*eventFile{f}
		if old := ev.inst.Load(); old != nil {
			list = append(list, *old...)
		}
		ev.inst.Store(&list)
	}
	// __trace_add_new_event ignores event_create_dir's failures: a
	// directory that cannot be made, because a file of that name is
	// there (events/enable, events/header_page, events/GROUP/filter),
	// leaves the event without its files, with a warning.
	gdir := path.Join(ta.dir, "events", ev.group)
	g, err := t.tree.LookupDir(gdir)
	if err != nil {
		if n, ferr := t.tree.Lookup(gdir); ferr == nil && !isDir(n) {
			t.log.Warn("Failed to create system directory " + ev.group)
			f.noDir = true
			return nil
		}
		if g, err = t.tree.Mkdir(gdir, modeDir); err != nil {
			return fmt.Errorf("creating %s: %w", gdir, err)
		}
		if top && ev.static == nil { // the guest made the static ones at boot (event_trace_init)
			t.mirror(kernel.TracefsMkdir, path.Join("events", ev.group))
		}
		if _, err := g.CreateFile("enable", modeWrite, debugfs.FileOps{Show: ta.showGroupEnable(ev.group), Write: ta.writeGroupEnable(ev.group)}); err != nil {
			return fmt.Errorf("creating %s/enable: %w", gdir, err)
		}
		if _, err := g.CreateFile("filter", modeWrite, ta.subsysFilterOps(ev.group)); err != nil {
			return fmt.Errorf("creating %s/filter: %w", gdir, err)
		}
	}
	// In the directories themselves, not by path: a look-up from the root
	// for each file costs as much as making it.
	if n, err := g.Lookup(ev.name); err == nil && !isDir(n) {
		t.log.Warn(fmt.Sprintf("Could not create tracefs '%s' directory", ev.name))
		f.noDir = true
		return nil
	}
	d, err := g.Mkdir(ev.name, modeDir)
	if err != nil {
		return fmt.Errorf("%w: creating %s/%s: %w", syscall.EEXIST, gdir, ev.name, err)
	}
	if top && ev.static == nil {
		t.mirror(kernel.TracefsMkdir, path.Join("events", ev.group, ev.name))
	}
	create := func(name string, mode fs.FileMode, ops debugfs.FileOps) error {
		if _, err := d.CreateFile(name, mode, ops); err != nil {
			return fmt.Errorf("creating %s/%s/%s: %w", gdir, ev.name, name, err)
		}
		return nil
	}
	if err := create("enable", modeWrite, debugfs.FileOps{Show: t.showEnable(f), Write: ta.writeEnable(ev)}); err != nil {
		return err
	}
	if err := create("id", modeRead, debugfs.FileOps{Show: func(_ context.Context, w *bytes.Buffer) error { fmt.Fprintf(w, "%d\n", ev.id); return nil }}); err != nil {
		return err
	}
	for _, c := range t.eventControlFiles(f) {
		if err := create(c.name, fsMode(c.mode), c.ops); err != nil {
			return err
		}
	}
	return nil
}

func isDir(n debugfs.Node) bool { _, ok := n.(*debugfs.Dir); return ok }

// removeEventFiles drops events/GROUP/EVENT/ in every array, and the
// group's directory with its last event; t.mu is held.
func (t *Tracing) removeEventFiles(ev *event) {
	last := t.groups[ev.group]
	if t.events[ev.key()] == ev {
		last--
	}
	for _, ta := range t.arrays() {
		ta.removeEventDir(ev, last <= 0)
	}
	ev.inst.Store(nil)
}

// removeEventDir drops ta's events/GROUP/EVENT/ and file of ev, and the
// group's directory when lastOfGroup; t.mu is held.
func (ta *TraceArray) removeEventDir(ev *event, lastOfGroup bool) {
	t := ta.t
	top := ta == t.top
	gdir := path.Join(ta.dir, "events", ev.group)
	f := &ev.top
	if !top {
		f = ta.files[ev]
		delete(ta.files, ev)
	}
	if f == nil || !f.noDir {
		if err := t.tree.RemoveAll(path.Join(gdir, ev.name)); err != nil {
			t.log.Warn("removing event directory", "event", ev.key(), "err", err)
		}
		if top {
			t.mirror(kernel.TracefsRemove, path.Join("events", ev.group, ev.name))
		}
	}
	if !lastOfGroup {
		return
	}
	if _, err := t.tree.LookupDir(gdir); err != nil {
		return // no directory of the group's: a file of events/ has its name
	}
	if err := t.tree.RemoveAll(gdir); err != nil {
		t.log.Warn("removing group directory", "group", ev.group, "err", err)
	}
	if top {
		t.mirror(kernel.TracefsRemove, path.Join("events", ev.group))
	}
}

// mirror queues a change of the tracing hierarchy to the guest, whose
// trace_events.c makes the tracefs_create_dir()/tracefs_remove() call
// Linux makes here. The writer does not wait for it: the guest makes the
// calls in order, soon after (kernel.MirrorTracefs).
func (t *Tracing) mirror(op kernel.TracefsOp, dir string) {
	if seq := t.kp.Kernel().MirrorTracefs(op, dir); seq != 0 {
		t.mirrored.Store(seq)
	}
}

// syncMirror returns once the guest made the tracefs calls of every change
// queued so far (while it runs, and for a bounded time; see
// kernel.SyncTracefs), so that a read of trace or kprobe_profile shows
// what a probe on them recorded for the writes before it, as on Linux,
// where the writer made them. It does not wait when the guest is in step. Called without t.mu:
// the guest's calls may hit probes, whose handlers take it.
func (t *Tracing) syncMirror() { t.kp.Kernel().SyncTracefs(t.mirrored.Load()) }

// showEnable is event_enable_read: 1 when enabled, 0 when not or only
// armed for triggers (soft-disabled), with a '*' in soft mode.
func (t *Tracing) showEnable(ev *eventFile) func(context.Context, *bytes.Buffer) error {
	return func(_ context.Context, w *bytes.Buffer) error {
		t.mu.Lock()
		on, soft, softMode := ev.enabled.Load(), ev.softDisabled.Load(), ev.smRef > 0
		t.mu.Unlock()
		if on && !soft {
			w.WriteByte('1')
		} else {
			w.WriteByte('0')
		}
		if soft || softMode {
			w.WriteByte('*')
		}
		w.WriteByte('\n')
		return nil
	}
}

// parseEnable is event_enable_write's kstrtoul_from_user(..., 10): a
// decimal number with an optional trailing newline, 0 or 1.
func parseEnable(p []byte) (bool, error) {
	s := strings.TrimSuffix(string(p), "\n")
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "+"), 10, 64)
	if err != nil || len(p) == 0 {
		return false, syscall.EINVAL
	}
	switch v {
	case 0:
		return false, nil
	case 1:
		return true, nil
	}
	return false, syscall.EINVAL
}

// writeEnable is event_enable_write on events/GROUP/EVENT/enable.
func (ta *TraceArray) writeEnable(ev *event) func(context.Context, []byte, int64) (int, error) {
	return ta.writeEnableMatching(func(e *event) bool { return e == ev })
}

// writeGroupEnable is system_enable_write: every event of the group, or
// every event when group is "".
func (ta *TraceArray) writeGroupEnable(group string) func(context.Context, []byte, int64) (int, error) {
	return ta.writeEnableMatching(func(e *event) bool { return group == "" || e.group == group })
}

func (ta *TraceArray) writeEnableMatching(match func(*event) bool) func(context.Context, []byte, int64) (int, error) {
	t := ta.t
	return func(_ context.Context, p []byte, _ int64) (int, error) {
		on, err := parseEnable(p)
		if err != nil {
			return 0, err
		}
		t.mu.Lock()
		defer t.mu.Unlock()
		if ta.removed.Load() {
			return 0, syscall.ENODEV
		}
		// __ftrace_set_clr_event_nolock: every matching event, the
		// first error returned (a uprobe event fails to enable).
		first := t.batchArming(func() error {
			var first error
			for _, ev := range t.sortedEvents() {
				if !match(ev) {
					continue
				}
				if err := t.setEnabled(ta.file(ev), on); err != nil && first == nil {
					first = err
				}
			}
			return first
		})
		if first != nil {
			return 0, first
		}
		return len(p), nil
	}
}

// showGroupEnable is system_enable_read: 0, 1, or X when mixed; group ""
// means every event.
func (ta *TraceArray) showGroupEnable(group string) func(context.Context, *bytes.Buffer) error {
	t := ta.t
	return func(_ context.Context, w *bytes.Buffer) error {
		t.mu.Lock()
		defer t.mu.Unlock()
		var on, off bool
		for _, ev := range t.events {
			if group != "" && ev.group != group {
				continue
			}
			if f := ta.file(ev); f != nil && f.enabled.Load() {
				on = true
			} else {
				off = true
			}
		}
		switch {
		case on && off:
			w.WriteString("X\n")
		case on:
			w.WriteString("1\n")
		default:
			w.WriteString("0\n")
		}
		return nil
	}
}

func fsMode(m uint32) fs.FileMode { return fs.FileMode(m) }
