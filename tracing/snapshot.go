package tracing

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"sync"
	"syscall"

	"github.com/kpemu/kpemu/debugfs"
	"github.com/kpemu/kpemu/tracing/internal/kstr"
	"github.com/kpemu/kpemu/tracing/ring"
)

// The snapshot buffer, after Linux 6.1's CONFIG_TRACER_SNAPSHOT: trace.c's
// snapshot and per_cpu/cpuN/snapshot files (tracing_snapshot_write,
// print_snapshot_help, update_max_tr) and trace_events_trigger.c's
// snapshot trigger.
//
// The snapshot is a second ring buffer, tr->max_buffer: two pages a CPU
// while it is freed, the live buffer's size once allocated, and resized
// with it from then on (__tracing_resize_ring_buffer). Taking a snapshot
// swaps the two whole, so the live buffer goes on from what the snapshot
// held, which Linux does not clear. kpemu swaps the per-CPU buffers'
// contents under their locks (ring.Buffer.Swap) rather than the
// buffers, so that the writers' t.top.buf never changes under them.
//
// The reference kernel (Debian's 6.1 arm64) has no latency tracer, so no
// tracer uses the max buffer (use_max_tr) and the EBUSY of a write while
// one does cannot happen; and it has no CONFIG_RING_BUFFER_ALLOW_SWAP,
// so a per-CPU snapshot file can clear its CPU's part of the snapshot but
// not take one (EINVAL). per_cpu/cpuN/snapshot_raw serves the binary
// pages of the snapshot as trace_pipe_raw does the live buffer's
// (rawpage.go).

// snapshotState is the trace array's snapshot: tr->max_buffer and
// tr->allocated_snapshot.
type snapshotState struct {
	// mu is tr->max_lock: a swap (a write of 1, a snapshot trigger on a
	// vCPU) against allocating, freeing and resizing. Taken after
	// traceArray.sizeMu and before any ring.CPU's lock.
	mu        sync.Mutex
	buf       *traceBuffer
	allocated bool // tr->allocated_snapshot
	// cond is tr->cond_snapshot's data, a hist's snapshot() action
	// (histvar.go): while it is set, a snapshot is taken only when its
	// update says so, and the snapshot file refuses writes (EBUSY).
	cond *histSnapCond
}

// initSnapshot makes the freed snapshot buffer (allocate_trace_buffers:
// max_buffer starts at one byte a CPU, so two pages) and its files.
func (ta *TraceArray) initSnapshot() error {
	ta.snap.buf = newTraceBuffer(ta.buf.NumCPUs(), traceBufSizeBoot)
	files := []struct {
		name string
		cpu  int
	}{{"snapshot", -1}}
	for cpu := range ta.buf.NumCPUs() {
		files = append(files, struct {
			name string
			cpu  int
		}{fmt.Sprintf("per_cpu/cpu%d/snapshot", cpu), cpu})
	}
	for _, f := range files {
		// Opening with O_TRUNC does nothing: tracing_snapshot_open
		// has no truncation.
		ops := debugfs.FileOps{Show: ta.showSnapshot(f.cpu), Write: ta.writeSnapshot(f.cpu)}
		if _, err := ta.t.tree.CreateFile(path.Join(ta.dir, f.name), modeWrite, ops); err != nil {
			return fmt.Errorf("creating %s/%s: %w", ta.dir, f.name, err)
		}
	}
	return nil
}

// showSnapshot is a read of snapshot (cpu < 0) or per_cpu/cpuN/snapshot:
// s_show over the snapshot buffer, which prints print_snapshot_help
// in place of the column headers while it shows nothing.
func (ta *TraceArray) showSnapshot(cpu int) func(context.Context, *bytes.Buffer) error {
	return func(_ context.Context, w *bytes.Buffer) error {
		ta.showBuffer(w, ta.snap.buf, cpu, func(w *bytes.Buffer) { ta.snapshotHelp(w, cpu) })
		return nil
	}
}

// snapshotHelp is print_snapshot_help, with the per-CPU help of a kernel
// without CONFIG_RING_BUFFER_ALLOW_SWAP.
func (ta *TraceArray) snapshotHelp(w *bytes.Buffer, cpu int) {
	ta.snap.mu.Lock()
	allocated := ta.snap.allocated
	ta.snap.mu.Unlock()
	if allocated {
		w.WriteString("#\n# * Snapshot is allocated *\n#\n")
	} else {
		w.WriteString("#\n# * Snapshot is freed *\n#\n")
	}
	w.WriteString("# Snapshot commands:\n")
	if cpu < 0 {
		w.WriteString("# echo 0 > snapshot : Clears and frees snapshot buffer\n" +
			"# echo 1 > snapshot : Allocates snapshot buffer, if not already allocated.\n" +
			"#                      Takes a snapshot of the main buffer.\n" +
			"# echo 2 > snapshot : Clears snapshot buffer (but does not allocate or free)\n" +
			"#                      (Doesn't have to be '2' works with any number that\n" +
			"#                       is not a '0' or '1')\n")
		return
	}
	w.WriteString("# echo 0 > snapshot : Invalid for per_cpu snapshot file.\n" +
		"# echo 1 > snapshot : Not supported with this kernel.\n" +
		"#                     Must use main snapshot file to allocate.\n" +
		"# echo 2 > snapshot : Clears this cpu's snapshot buffer (but does not allocate)\n" +
		"#                      (Doesn't have to be '2' works with any number that\n" +
		"#                       is not a '0' or '1')\n")
}

// writeSnapshot is tracing_snapshot_write: the buffer is expanded first
// (tracing_update_buffers, even for a value it then refuses), then a
// decimal number (kstrtoul_from_user): 0 frees the snapshot (EINVAL in a
// per-CPU file), 1 allocates it if need be and takes a snapshot (EINVAL
// in a per-CPU file: no CONFIG_RING_BUFFER_ALLOW_SWAP), anything else
// clears it, or its CPU's part, if it is allocated.
func (ta *TraceArray) writeSnapshot(cpu int) func(context.Context, []byte, int64) (int, error) {
	return func(_ context.Context, p []byte, _ int64) (int, error) {
		ta.updateBuffers()
		v, err := kstr.StrtoulFromUser(p)
		if err != nil {
			return 0, fmt.Errorf("snapshot: %w", err)
		}
		ta.opts.sizeMu.Lock()
		defer ta.opts.sizeMu.Unlock()
		ta.snap.mu.Lock()
		busy := ta.snap.cond != nil
		ta.snap.mu.Unlock()
		if busy {
			return 0, fmt.Errorf("%w: a hist's snapshot() holds the snapshot", syscall.EBUSY)
		}
		switch v {
		case 0:
			if cpu >= 0 {
				return 0, fmt.Errorf("%w: a per-CPU snapshot cannot be freed", syscall.EINVAL)
			}
			ta.freeSnapshot()
		case 1:
			if cpu >= 0 {
				return 0, fmt.Errorf("%w: no per-CPU snapshot swap (CONFIG_RING_BUFFER_ALLOW_SWAP)", syscall.EINVAL)
			}
			ta.allocSnapshot()
			ta.takeSnapshot()
		default:
			ta.snap.mu.Lock()
			if ta.snap.allocated {
				for i := range ta.snap.buf.NumCPUs() {
					if cpu < 0 || i == cpu {
						ta.snap.buf.CPU(i).Reset()
					}
				}
				if cpu < 0 {
					// tracing_reset_online_cpus stamps the max
					// buffer's time_start, which nothing prints
					// (the snapshot file has no latency format),
					// but the counter clock counts the stamp.
					ta.clock()
				}
			}
			ta.snap.mu.Unlock()
		}
		return len(p), nil
	}
}

// allocSnapshotInstance is tracing_alloc_snapshot_instance, for callers
// that do not hold t.top.opts.sizeMu (a trigger's or function command's
// registration).
func (ta *TraceArray) allocSnapshotInstance() {
	ta.opts.sizeMu.Lock()
	defer ta.opts.sizeMu.Unlock()
	ta.allocSnapshot()
}

// allocSnapshot is tracing_alloc_snapshot_instance and, when allocated
// already, resize_buffer_duplicate_size: the snapshot takes the live
// buffer's size CPU by CPU. t.top.opts.sizeMu is held, so no resize races.
func (ta *TraceArray) allocSnapshot() {
	ta.snap.mu.Lock()
	defer ta.snap.mu.Unlock()
	for i := range ta.buf.NumCPUs() {
		ta.snap.buf.CPU(i).Resize(ta.buf.CPU(i).Pages())
	}
	ta.snap.allocated = true
}

// freeSnapshot is free_snapshot: the buffer is not freed but shrunk to
// its two pages a CPU and emptied; t.top.opts.sizeMu is held.
func (ta *TraceArray) freeSnapshot() {
	ta.snap.mu.Lock()
	defer ta.snap.mu.Unlock()
	if !ta.snap.allocated {
		return
	}
	for i := range ta.snap.buf.NumCPUs() {
		b := ta.snap.buf.CPU(i)
		b.Resize(int(ring.PagesFor(traceBufSizeBoot)))
		b.Reset()
	}
	ta.snap.allocated = false
}

// resizeSnapshot is __tracing_resize_ring_buffer's part for the max
// buffer: an allocated snapshot takes the size the live buffer took;
// t.top.opts.sizeMu and t.top.snap.mu are held.
func (ta *TraceArray) resizeSnapshot(pages, cpu int) {
	if !ta.snap.allocated {
		return
	}
	for i := range ta.snap.buf.NumCPUs() {
		if cpu < 0 || i == cpu {
			ta.snap.buf.CPU(i).Resize(pages)
		}
	}
}

// takeSnapshot is update_max_tr: swap the live buffer with the
// allocated snapshot CPU by CPU, then wake the trace_pipe readers, which
// now have the old snapshot to read. It reports false, having done
// nothing, when the snapshot is not allocated. It runs on a vCPU for the
// snapshot trigger.
func (ta *TraceArray) takeSnapshot() bool {
	return ta.takeSnapshotCond(nil)
}

// takeSnapshotCond is tracing_snapshot_cond: takeSnapshot, but while a
// hist's snapshot() holds the snapshot, only if its update takes ctx
// (under tr->max_lock, as Linux calls it).
func (ta *TraceArray) takeSnapshotCond(ctx *histSnapHit) bool {
	ta.snap.mu.Lock()
	if !ta.snap.allocated {
		ta.snap.mu.Unlock()
		return false
	}
	if c := ta.snap.cond; c != nil && !c.update(ctx) {
		ta.snap.mu.Unlock()
		return true
	}
	ta.buf.Swap(ta.snap.buf)
	ta.snap.mu.Unlock()
	ta.buf.Wake()
	return true
}

// snapshotCaller is where tracing_snapshot_instance_cond calls
// trace_array_puts in the reference kernel, as kallsyms resolves it:
// the %ps of the entries it writes, with sym-offset
// "tracing_snapshot_instance_cond+0x10c/0x180" (the oracle's trace).
const (
	snapshotCaller     = "tracing_snapshot_instance_cond"
	snapshotCallerOff  = 0x10c
	snapshotCallerSize = 0x180
)

// snapshotNotAllocated is what tracing_snapshot_instance_cond does when a
// snapshot trigger fires without a snapshot (`echo 0 > snapshot` freed
// it under the trigger): two trace_array_puts, which the trace_printk
// option lets through, then tracing off, a permanent snapshot. No stack
// follows them with the stacktrace option: Linux's would be its own
// frames in the probe handler, which the guest does not have.
func (ta *TraceArray) snapshotNotAllocated(cpu int, flags uint8) {
	if ta.flag(optTracePrintk) && ta.on.Load() {
		comm, pid := ta.t.kp.Kernel().Current(cpu)
		for _, msg := range []string{"*** SNAPSHOT NOT ALLOCATED ***", "*** stopping trace here!   ***"} {
			e := traceEntry{kind: entrySnapPuts, pid: int32(pid), flags: flags, text: msg, raw: printRecord(0, msg, "\n\x00", printEntryHeadSize+len(msg)+2)}
			// __trace_array_puts: the print_entry, the text, room for
			// a newline and the NUL.
			ta.commit(cpu, comm, &e, printEntryHeadSize+len(msg)+2, nil)
		}
	}
	ta.on.Store(false)
}

// printSnapshotPuts is trace_print_print for snapshotNotAllocated's
// entries: "%ps: text", the caller being Linux's, which the guest's
// kallsyms lacks. sym-addr's address is left out, for the same reason.
func printSnapshotPuts(w *bytes.Buffer, e *traceEntry, sym uint32) {
	w.WriteString(snapshotCaller)
	if sym&optSymOffset != 0 {
		fmt.Fprintf(w, "+0x%x/0x%x", snapshotCallerOff, snapshotCallerSize)
	}
	w.WriteString(": ")
	w.WriteString(e.text)
}
