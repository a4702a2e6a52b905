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
	if _, err := t.tree.MkdirAll(path.Join(t.dir, "events"), modeDir); err != nil {
		return fmt.Errorf("creating %s/events: %w", t.dir, err)
	}
	hdrPage, hdrEvent := headerFileOps() // headers.go
	files := []struct {
		name string
		mode fs.FileMode
		ops  debugfs.FileOps
	}{
		{"kprobe_events", modeWrite, debugfs.FileOps{Show: t.showDynEvents(dynKprobe), Write: t.writeKprobeEvents, Truncate: func(context.Context) error { return t.releaseAll(dynKprobe) }}},
		{"kprobe_profile", modeRead, debugfs.FileOps{Show: t.showProfile}},
		{"error_log", modeWrite, debugfs.FileOps{
			Show:     func(_ context.Context, w *bytes.Buffer) error { t.top.errlog.show(w); return nil },
			Write:    func(_ context.Context, p []byte, _ int64) (int, error) { return len(p), nil },
			Truncate: func(context.Context) error { t.top.errlog.clear(); return nil },
		}},
		{"trace", modeWrite, debugfs.FileOps{
			Show:     t.top.showTrace,
			Write:    func(_ context.Context, p []byte, _ int64) (int, error) { return len(p), nil },
			Truncate: func(context.Context) error { t.top.buf.Reset(); return nil },
		}},
		{"trace_pipe", modeRead, debugfs.FileOps{OpenRead: t.top.openTracePipe(-1)}},
		{"events/enable", modeWrite, debugfs.FileOps{Show: t.showGroupEnable(""), Write: t.writeGroupEnable("")}},
		{"events/header_page", modeRead, hdrPage},
		{"events/header_event", modeRead, hdrEvent},
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
	fmt.Fprintf(w, ":%s/%s %s%s\n", ev.group, ev.name, tp.location(t), argsString(ev.args))
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
// enable file when it is the group's first event); t.mu is held.
func (t *Tracing) createEventFiles(ev *event) error {
	gdir := path.Join(t.dir, "events", ev.group)
	g, err := t.tree.LookupDir(gdir)
	if err != nil {
		if g, err = t.tree.Mkdir(gdir, modeDir); err != nil {
			return fmt.Errorf("creating %s: %w", gdir, err)
		}
		if ev.static == nil { // the guest made the static ones at boot (event_trace_init)
			t.mirror(kernel.TracefsMkdir, path.Join("events", ev.group))
		}
		if _, err := t.tree.CreateFile(path.Join(gdir, "enable"), modeWrite, debugfs.FileOps{Show: t.showGroupEnable(ev.group), Write: t.writeGroupEnable(ev.group)}); err != nil {
			return fmt.Errorf("creating %s/enable: %w", gdir, err)
		}
		if _, err := t.tree.CreateFile(path.Join(gdir, "filter"), modeWrite, t.subsysFilterOps(ev.group)); err != nil {
			return fmt.Errorf("creating %s/filter: %w", gdir, err)
		}
	}
	// In the directories themselves, not by path: a look-up from the root
	// for each file costs as much as making it.
	d, err := g.Mkdir(ev.name, modeDir)
	if err != nil {
		return fmt.Errorf("%w: creating %s/%s: %w", syscall.EEXIST, gdir, ev.name, err)
	}
	if ev.static == nil {
		t.mirror(kernel.TracefsMkdir, path.Join("events", ev.group, ev.name))
	}
	create := func(name string, mode fs.FileMode, ops debugfs.FileOps) error {
		if _, err := d.CreateFile(name, mode, ops); err != nil {
			return fmt.Errorf("creating %s/%s/%s: %w", gdir, ev.name, name, err)
		}
		return nil
	}
	if err := create("enable", modeWrite, debugfs.FileOps{Show: t.showEnable(ev), Write: t.writeEnable(ev)}); err != nil {
		return err
	}
	if err := create("id", modeRead, debugfs.FileOps{Show: func(_ context.Context, w *bytes.Buffer) error { fmt.Fprintf(w, "%d\n", ev.id); return nil }}); err != nil {
		return err
	}
	for _, f := range t.eventControlFiles(ev) {
		if err := create(f.name, fsMode(f.mode), f.ops); err != nil {
			return err
		}
	}
	return nil
}

// removeEventFiles drops events/GROUP/EVENT/, and the group's directory
// with its last event; t.mu is held.
func (t *Tracing) removeEventFiles(ev *event) {
	gdir := path.Join(t.dir, "events", ev.group)
	if err := t.tree.RemoveAll(path.Join(gdir, ev.name)); err != nil {
		t.log.Warn("removing event directory", "event", ev.key(), "err", err)
	}
	t.mirror(kernel.TracefsRemove, path.Join("events", ev.group, ev.name))
	others := t.groups[ev.group]
	if t.events[ev.key()] == ev {
		others--
	}
	if others > 0 {
		return
	}
	if err := t.tree.RemoveAll(gdir); err != nil {
		t.log.Warn("removing group directory", "group", ev.group, "err", err)
	}
	t.mirror(kernel.TracefsRemove, path.Join("events", ev.group))
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
func (t *Tracing) showEnable(ev *event) func(context.Context, *bytes.Buffer) error {
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
func (t *Tracing) writeEnable(ev *event) func(context.Context, []byte, int64) (int, error) {
	return t.writeEnableMatching(func(e *event) bool { return e == ev })
}

// writeGroupEnable is system_enable_write: every event of the group, or
// every event when group is "".
func (t *Tracing) writeGroupEnable(group string) func(context.Context, []byte, int64) (int, error) {
	return t.writeEnableMatching(func(e *event) bool { return group == "" || e.group == group })
}

func (t *Tracing) writeEnableMatching(match func(*event) bool) func(context.Context, []byte, int64) (int, error) {
	return func(_ context.Context, p []byte, _ int64) (int, error) {
		on, err := parseEnable(p)
		if err != nil {
			return 0, err
		}
		t.mu.Lock()
		defer t.mu.Unlock()
		// __ftrace_set_clr_event_nolock: every matching event, the
		// first error returned (a uprobe event fails to enable).
		first := t.batchArming(func() error {
			var first error
			for _, ev := range t.sortedEvents() {
				if !match(ev) {
					continue
				}
				if err := t.setEnabled(ev, on); err != nil && first == nil {
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
func (t *Tracing) showGroupEnable(group string) func(context.Context, *bytes.Buffer) error {
	return func(_ context.Context, w *bytes.Buffer) error {
		t.mu.Lock()
		defer t.mu.Unlock()
		var on, off bool
		for _, ev := range t.events {
			if group != "" && ev.group != group {
				continue
			}
			if ev.enabled.Load() {
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
