package tracing

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
)

// The dynamic events layer, after Linux 6.1's trace_dynevent.c: kprobe,
// uprobe and synthetic events share one list (Tracing.probes,
// dyn_event_list), which kprobe_events, uprobe_events and
// synthetic_events each show and edit their own kind of, and
// dynamic_events all of.

// dynKind selects the dynamic events a command acts on, as the
// dyn_event_operations pointer does in Linux (NULL for every kind).
type dynKind int

const (
	dynAny    dynKind = iota // dynamic_events
	dynKprobe                // kprobe_events (kprobe and kpemu's j events)
	dynUprobe                // uprobe_events
	dynSynth                 // synthetic_events (synth.go)
)

// has reports whether tp is of kind k.
func (k dynKind) has(tp *traceProbe) bool {
	switch k {
	case dynKprobe:
		return tp.up == nil && tp.ev.synth == nil && tp.ev.eprobe == nil
	case dynUprobe:
		return tp.up != nil
	case dynSynth:
		return tp.ev.synth != nil
	}
	return true
}

// parseRunCommand is trace_parse_run_command, step for step: the write
// is taken in chunks of at most WRITE_BUFSIZE-1 bytes, each read as a C
// string, so a NUL ends what is seen of a chunk; a line is what comes
// before its '\n', or, without one, the rest of the string, which must
// end the write: a line cut short by the chunk's end is read again from
// the next chunk, and one that fills a chunk, or stops at a NUL before
// the write's end, is "too long" (EINVAL, the lines before it done).
// Comments after '#' are dropped; the first failing line stops the
// write with its error. who names the file in debug logs.
func (t *Tracing) parseRunCommand(p []byte, who string, run func(string) error) (int, error) {
	count := len(p)
	for done := 0; done < count; {
		size := min(count-done, writeBufSize-1)
		kbuf := p[done : done+size]
		if i := bytes.IndexByte(kbuf, 0); i >= 0 {
			kbuf = kbuf[:i]
		}
		for buf := 0; done < count; {
			line := kbuf[buf:]
			if i := bytes.IndexByte(line, '\n'); i >= 0 {
				line, size = line[:i], i+1
			} else {
				size = len(line)
				if done+size < count {
					if buf != 0 {
						break // read the rest again as the next chunk
					}
					// trace.c has no pr_fmt: the warning has no prefix.
					t.log.Warn(fmt.Sprintf("Line length is too long: Should be less than %d", writeBufSize-2))
					return 0, syscall.EINVAL
				}
			}
			done += size
			if i := bytes.IndexByte(line, '#'); i >= 0 {
				line = line[:i]
			}
			if err := run(string(line)); err != nil {
				t.log.Debug(who+": command failed", "command", string(line), "err", err)
				return 0, err
			}
			buf += size
		}
	}
	return count, nil
}

// writeDynamicEvents is dynamic_events' write: create_dyn_event for
// each line.
func (t *Tracing) writeDynamicEvents(_ context.Context, p []byte, _ int64) (int, error) {
	return t.parseRunCommand(p, "dynamic_events", t.createDynEvent)
}

// createDynEvent is create_dyn_event: "-" or "!" removes events of any
// kind; otherwise each kind's parser is tried in Linux's registration
// order (kprobes, synthetic events, event probes, then uprobes) until
// one does not answer "not mine".
func (t *Tracing) createDynEvent(line string) error {
	if strings.HasPrefix(line, "-") || strings.HasPrefix(line, "!") {
		return t.release(line, dynAny)
	}
	argv := strings.Fields(line)
	if len(argv) == 0 {
		return nil
	}
	err := t.create(argv)
	if errors.Is(err, errCanceled) {
		err = t.createSynthDyn(line)
	}
	if errors.Is(err, errCanceled) {
		err = t.createEprobe(argv)
	}
	if errors.Is(err, errCanceled) {
		err = t.createUprobe(argv)
	}
	if errors.Is(err, errCanceled) {
		return fmt.Errorf("%w: %q is not a dynamic event command", syscall.EINVAL, line)
	}
	return err
}

// showDynEvents is the read of kprobe_events, uprobe_events and
// dynamic_events (probes_seq_show, dyn_event_seq_show): the dynamic
// events of kind, in the order they were made, each as its own file
// shows it.
func (t *Tracing) showDynEvents(kind dynKind) func(context.Context, *bytes.Buffer) error {
	return func(_ context.Context, w *bytes.Buffer) error {
		t.mu.Lock()
		defer t.mu.Unlock()
		for _, tp := range t.probes {
			switch {
			case !kind.has(tp):
			case tp.ev.synth != nil:
				w.WriteString("s:" + synthSystem + "/")
				showSynth(w, tp.ev)
			case tp.ev.eprobe != nil:
				showEprobe(w, tp.ev)
			case tp.up != nil:
				tp.showUprobe(w)
			default:
				t.showKprobe(w, tp)
			}
		}
		return nil
	}
}
