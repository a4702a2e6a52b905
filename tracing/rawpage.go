package tracing

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"path"
	"sync"
	"syscall"

	"github.com/kpemu/kpemu/debugfs"
)

// The binary interface to the ring buffer, after Linux 6.1's trace.c
// (tracing_buffers_open, tracing_buffers_read) and the ftrace events of
// trace_entries.h: per_cpu/cpuN/trace_pipe_raw and snapshot_raw serve
// the buffer a page at a time in buffer_data_page's layout (package
// ring's ReadPage), each record laid out as its event's format file
// says, and events/ftrace/ has the formats of the entries the tracers
// write themselves (function, print, kernel_stack, raw_data, ...), so
// that trace-cmd, perf and any reader of events/header_page,
// events/header_event and the format files decode every record.
//
// What kpemu records, by format:
//
//   - a kprobe, kretprobe or j: event: its own format (kprobe_events'
//     __probe_ip or __probe_func and __probe_ret_ip, then the
//     arguments, strings as __data_loc);
//   - a static event (sched:*, signal:*): the guest's record, as its
//     TP_fast_assign filled it;
//   - the function tracer: ftrace:function, ip and parent_ip;
//   - trace_printk: ftrace:print, the caller and the text Linux's
//     trace_vprintk prints. Linux records a trace_printk with a constant
//     format as bputs or bprint (the format's address and binary
//     arguments), which a reader decodes through printk_formats; kpemu's
//     guest hands over the formatted text, so it records print, which
//     decodes to the same line;
//   - trace_marker: ftrace:print, ip 0 (Linux's is tracing_mark_write's
//     address, which kpemu's guest does not have), the text with its
//     newline and NUL;
//   - trace_marker_raw: ftrace:raw_data, the id and the data;
//   - the stacktrace option and trigger: ftrace:kernel_stack, the
//     frame count and the addresses.
//
// Pages are made when read (see package ring): the events of the
// oldest page of the CPU's ring, as ring_buffer_read_page takes them:
// the whole page, or, when the reader has caught up with the writer's
// page, the events committed so far; at most what the read's count
// holds. A read returns at most one page; a read shorter than a page
// takes the page's next bytes, as Linux keeps the page it read
// (info->spare) until its last byte is taken.
//
// Splice: Linux's trace_pipe_raw has splice_read, and trace-cmd record
// splices it into a pipe. kpemu's FUSE files cannot splice a stream
// (fuse/splice.go: the kernel would serve it through the page cache), so
// splice(2) of trace_pipe_raw fails with EINVAL, except in a process
// that scripts/kpemu-ns.sh seals: there the seal serves the splice
// (package internal/splicectl) through SpliceRead and SpliceWait, which
// are tracing_buffers_splice_read's two halves: whole pages the writer
// has left, and the wait for buffer_percent.

// rawReader is one open of trace_pipe_raw or snapshot_raw: Linux's
// ftrace_buffer_info, the page a read took (spare) and how much of it
// was returned (read, PAGE_SIZE when all of it), and the wait_index
// that its ioctl advances.
type rawReader struct {
	mu       sync.Mutex
	ta       *TraceArray
	cpu      int
	snapshot bool
	nonblock bool
	spare    []byte
	read     int

	wakeMu sync.Mutex
	woken  chan struct{} // closed by the wake ioctl; nil until a splice waits
}

// openTracePipeRaw returns per_cpu/cpuN/trace_pipe_raw's (snapshot
// false) or snapshot_raw's OpenRead (tracing_buffers_open).
func (ta *TraceArray) openTracePipeRaw(cpu int, snapshot bool) func(context.Context, int) (debugfs.Reader, error) {
	return func(_ context.Context, flags int) (debugfs.Reader, error) {
		return &rawReader{ta: ta, cpu: cpu, snapshot: snapshot, nonblock: flags&syscall.O_NONBLOCK != 0, read: pageSize}, nil
	}
}

// buffer is the ring buffer the open reads: the live one or the
// snapshot (iter->snapshot's max_buffer).
func (r *rawReader) buffer() *traceBuffer {
	if !r.snapshot {
		return r.ta.buf
	}
	r.ta.snap.mu.Lock()
	defer r.ta.snap.mu.Unlock()
	return r.ta.snap.buf
}

// Read is tracing_buffers_read: what is left of the page the last
// read took, else a new page (ring_buffer_read_page with the read's
// count), waiting for an event while the CPU's buffer is empty (EAGAIN
// for O_NONBLOCK); a count too small for a page's header reads 0.
func (r *rawReader) Read(ctx context.Context, p []byte, _ int64) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(p) == 0 {
		return 0, nil
	}
	if r.read >= pageSize {
		for {
			rb := r.buffer()
			page, ok := rb.CPU(r.cpu).ReadPage(r.spare[:0], len(p), encodeEntry)
			if ok {
				r.spare, r.read = page, 0
				break
			}
			if !rb.Empty(r.cpu) {
				return 0, nil // the count cannot hold the header
			}
			if nonblock(ctx, r.nonblock) {
				return 0, syscall.EAGAIN
			}
			wait := rb.Waiter()
			if !rb.Empty(r.cpu) {
				continue
			}
			select {
			case <-ctx.Done():
				return 0, syscall.EINTR
			case <-wait:
			}
		}
	}
	n := copy(p, r.spare[r.read:pageSize])
	r.read += n
	return n, nil
}

// SpliceRead is the taking half of tracing_buffers_splice_read: a count
// below a page is EINVAL (but 0, which takes nothing); else the oldest page if the writer has left it
// (ring_buffer_read_page with full set), whole; EAGAIN if there is none.
// What a read(2) left of its page stays for the next read.
func (r *rawReader) SpliceRead(_ context.Context, p []byte, want int) (int, error) {
	if want == 0 {
		return 0, nil // Splicer's probe
	}
	if want < pageSize || len(p) < pageSize {
		return 0, syscall.EINVAL
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	page, ok := r.buffer().CPU(r.cpu).ReadFullPage(p[:0], encodeEntry)
	if !ok {
		return 0, syscall.EAGAIN
	}
	if &page[0] != &p[0] {
		copy(p, page)
	}
	return len(page), nil
}

// SpliceWait is the waiting half of tracing_buffers_splice_read:
// wait_on_pipe until the CPU's buffer reaches buffer_percent (any event
// for snapshot_raw), the open's wake ioctl, or tracing_on's going off;
// then the splice looks again unless tracing is off or the ioctl woke
// it.
func (r *rawReader) SpliceWait(ctx context.Context) (again bool, err error) {
	woken := r.wakeChan()
	full := 0
	if !r.snapshot {
		full = int(r.ta.info.bufferPercent.Load())
	}
	for {
		rb := r.buffer()
		var wait <-chan struct{}
		if full == 0 {
			wait = rb.Waiter()
		} else {
			wait = rb.FullWaiter()
		}
		if rb.CPU(r.cpu).WatermarkHit(full) {
			break
		}
		select {
		case <-ctx.Done():
			return false, syscall.EINTR
		case <-woken:
			return false, nil
		case <-wait:
			if !r.ta.on.Load() {
				return false, nil
			}
		}
	}
	return r.ta.on.Load(), nil
}

// PollIn is tracing_buffers_poll (trace_poll): the CPU's buffer at
// buffer_percent (ring_buffer_poll_wait's full_hit), or, with
// buffer_percent 0 and for snapshot_raw, anything in it.
func (r *rawReader) PollIn() bool {
	full := 0
	if !r.snapshot {
		full = int(r.ta.info.bufferPercent.Load())
	}
	return r.buffer().CPU(r.cpu).WatermarkHit(full)
}

// wakeChan is the channel the next wake ioctl closes.
func (r *rawReader) wakeChan() <-chan struct{} {
	r.wakeMu.Lock()
	defer r.wakeMu.Unlock()
	if r.woken == nil {
		r.woken = make(chan struct{})
	}
	return r.woken
}

// Ioctl is tracing_buffers_ioctl: command 0 ends this open's waiting
// splices (wait_index) and wakes the buffer's waiters; any other is
// ENOTTY.
func (r *rawReader) Ioctl(_ context.Context, cmd uint32, _ uint64, _ []byte) (int32, error) {
	if cmd != 0 {
		return 0, syscall.ENOTTY
	}
	r.wakeMu.Lock()
	if r.woken != nil {
		close(r.woken)
		r.woken = nil
	}
	r.wakeMu.Unlock()
	r.buffer().WakeAll()
	return 0, nil
}

// nonblock is whether a read is O_NONBLOCK: the descriptor's flags at
// the read when the read carries them (a FUSE read: fcntl may have set
// it since the open), else the open's.
func nonblock(ctx context.Context, atOpen bool) bool {
	if f, ok := debugfs.ReadFlags(ctx); ok {
		return f&syscall.O_NONBLOCK != 0
	}
	return atOpen
}

// encodeEntry is e's record as the ring buffer holds it on Linux:
// struct trace_entry (common_type, common_flags, common_preempt_count,
// common_pid), then the event's fields.
func encodeEntry(e *traceEntry, out []byte) []byte {
	out = binary.LittleEndian.AppendUint16(out, uint16(entryType(e)))
	out = append(out, e.flags, 0)
	out = binary.LittleEndian.AppendUint32(out, uint32(e.pid))
	switch e.kind {
	case entryFn: // ftrace_entry
		out = binary.LittleEndian.AppendUint64(out, e.ip)
		out = binary.LittleEndian.AppendUint64(out, e.parent)
	case entryStack: // stack_entry: size, then caller[size]
		out = binary.LittleEndian.AppendUint32(out, uint32(len(e.stack)))
		out = append(out, 0, 0, 0, 0)
		for _, pc := range e.stack {
			out = binary.LittleEndian.AppendUint64(out, pc)
		}
	default:
		out = append(out, e.raw...)
	}
	return out
}

// printRecord is a print_entry's record after its trace_entry: ip, then
// text and end in buf, zero-filled to payload bytes in all.
func printRecord(ip uint64, text, end string, payload int) []byte {
	raw := make([]byte, 8, payload-traceEntryHeadSize)
	binary.LittleEndian.PutUint64(raw, ip)
	raw = append(raw, text...)
	raw = append(raw, end...)
	for len(raw) < payload-traceEntryHeadSize {
		raw = append(raw, 0)
	}
	return raw[:payload-traceEntryHeadSize]
}

// createRawFiles makes per_cpu/cpuN/trace_pipe_raw and snapshot_raw.
func (ta *TraceArray) createRawFiles() error {
	for cpu := range ta.buf.NumCPUs() {
		for _, f := range []struct {
			name     string
			snapshot bool
		}{{"trace_pipe_raw", false}, {"snapshot_raw", true}} {
			name := path.Join(ta.dir, fmt.Sprintf("per_cpu/cpu%d", cpu), f.name)
			if _, err := ta.t.tree.CreateFile(name, fsMode(0o440), debugfs.FileOps{OpenRead: ta.openTracePipeRaw(cpu, f.snapshot)}); err != nil {
				return fmt.Errorf("creating %s: %w", name, err)
			}
		}
	}
	return nil
}

// createFtraceEvents makes the array's events/ftrace/: a directory for
// each of Linux's built-in events with its format, and its id where
// Linux shows one. They cannot be enabled (TRACE_EVENT_FL_IGNORE_ENABLE):
// there is no enable file, in the events or in the group.
func (ta *TraceArray) createFtraceEvents() error {
	t := ta.t
	for _, def := range ftraceEventDefs {
		dir := path.Join(ta.dir, "events/ftrace", def.name)
		if _, err := t.tree.MkdirAll(dir, modeDir); err != nil {
			return fmt.Errorf("creating %s: %w", dir, err)
		}
		text := def.format
		if _, err := t.tree.CreateFile(path.Join(dir, "format"), fsMode(0o440), debugfs.FileOps{Show: func(_ context.Context, w *bytes.Buffer) error { w.WriteString(text); return nil }}); err != nil {
			return fmt.Errorf("creating %s/format: %w", dir, err)
		}
		if def.hasID {
			id := fmt.Sprintf("%d\n", def.id)
			if _, err := t.tree.CreateFile(path.Join(dir, "id"), fsMode(0o440), debugfs.FileOps{Show: func(_ context.Context, w *bytes.Buffer) error { w.WriteString(id); return nil }}); err != nil {
				return fmt.Errorf("creating %s/id: %w", dir, err)
			}
		}
		if def.name == markerEventName {
			// trace_marker's event takes triggers (trace.c's
			// trace_marker_file), hist ones too; it has no filter.
			f := ta.marker
			for _, c := range t.eventControlFiles(f) {
				if c.name == "trigger" || c.name == "hist" {
					if _, err := t.tree.CreateFile(path.Join(dir, c.name), fsMode(c.mode), c.ops); err != nil {
						return fmt.Errorf("creating %s/%s: %w", dir, c.name, err)
					}
				}
			}
		}
	}
	return nil
}
