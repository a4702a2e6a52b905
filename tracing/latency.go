package tracing

import (
	"bytes"
	"fmt"
	"strconv"
)

// The latency-format and verbose options: Linux 6.1's latency trace
// output (trace.c's print_trace_header, print_lat_help_header and
// trace_default_header; trace_output.c's trace_print_lat_context,
// lat_print_generic and lat_print_timestamp). latency-format is taken
// when trace or trace_pipe is opened (TRACE_FILE_LAT_FMT), verbose at
// each line.

// utsRelease is the guest kernel's UTS_RELEASE
// (kernel/image/arch/arm64/kernel/process.c), which print_trace_header
// names.
const utsRelease = "6.1.0-kpemu"

// preemptModel is what print_trace_header says of the kernel's
// preemption model: the reference kernel (Debian's 6.1) is
// PREEMPT_VOLUNTARY, "desktop", and kpemu's guest behaves as one.
const preemptModel = "desktop"

// latPos is where an entry stands in the read, as
// trace_print_lat_context finds it in the iterator: its index
// (iter->idx), the time stamp of the entry after it
// (trace_find_next_entry; its own when it is the last), and the
// buffer's time_start, which the absolute time counts from.
type latPos struct {
	idx       int64
	nextTS    uint64
	timeStart uint64
}

// appendLatContext is trace_print_lat_context: with verbose
// "%16s %7d %3d %d %08x %08lx " (comm, pid, CPU, the flags in decimal,
// the preempt count, the index), else lat_print_generic's
// "%8.8s-%-7d %3d" and the flags as trace_print_lat_fmt prints them;
// then lat_print_timestamp.
func (ta *TraceArray) appendLatContext(out []byte, cpu int, e *traceEntry, lf lineFormat, pos latPos) []byte {
	comm := ta.t.cmdlines.find(int(e.pid))
	verbose := lf.flags&optVerbose != 0
	if verbose {
		out = padLeft(out, comm, 16)
		out = append(out, ' ')
		out = padLeft(out, strconv.FormatInt(int64(e.pid), 10), 7)
		out = append(out, ' ')
		out = padLeft(out, strconv.Itoa(cpu), 3)
		out = append(out, ' ')
		out = strconv.AppendUint(out, uint64(e.flags), 10)
		// kpemu records no preempt count: Debian's PREEMPT_VOLUNTARY
		// kernel has none to show either.
		out = append(out, " 00000000 "...)
		out = append(out, fmt.Sprintf("%08x ", uint64(pos.idx))...)
	} else {
		if len(comm) > 8 {
			comm = comm[:8]
		}
		out = padLeft(out, comm, 8)
		out = append(out, '-')
		out = padRight(out, strconv.AppendInt(nil, int64(e.pid), 10), 7)
		out = append(out, ' ')
		out = padLeft(out, strconv.Itoa(cpu), 3)
		out = append(out, latFlags(e.flags)...)
	}
	return appendLatTimestamp(out, e.ts, lf, pos)
}

// appendLatTimestamp is lat_print_timestamp: the time since the buffer's
// time_start and to the next entry, in microseconds for a clock in
// nanoseconds (rounded, ns2usecs).
func appendLatTimestamp(out []byte, ts uint64, lf lineFormat, pos latPos) []byte {
	verbose := lf.flags&optVerbose != 0
	abs := ts - pos.timeStart
	rel := pos.nextTS - ts
	if lf.inNS {
		abs = ns2usecs(abs)
		rel = ns2usecs(rel)
	}
	switch {
	case verbose && lf.inNS:
		return fmt.Appendf(out, "[%08x] %d.%03dms (+%d.%03dms): ", ns2usecs(ts), abs/1000, abs%1000, rel/1000, rel%1000)
	case verbose:
		return fmt.Appendf(out, "[%016x] %d (+%d): ", ts, int64(abs), int64(rel))
	case lf.inNS:
		return fmt.Appendf(out, " %4dus%c: ", int64(abs), traceFindMark(rel*1000))
	}
	return fmt.Appendf(out, " %4d: ", int64(abs))
}

// ns2usecs is trace.h's: nanoseconds to microseconds, rounded.
func ns2usecs(ns uint64) uint64 { return (ns + 500) / 1000 }

// writeLatHeader is trace_default_header's latency branch: nothing for
// an empty buffer (trace_empty: the file's CPU, or all), else
// print_trace_header and, without verbose, print_lat_help_header.
func (ta *TraceArray) writeLatHeader(w *bytes.Buffer, lf lineFormat, rb *traceBuffer, cpu int) {
	if rb.Empty(cpu) {
		return
	}
	ta.writeTraceHeader(w, rb)
	if lf.flags&optVerbose == 0 {
		writeLatHelpHeader(w)
	}
}

// writeTraceHeader is print_trace_header for a tracer that saves no
// latency (nop, function, function_graph): its per-CPU data's latency,
// task and critical section are all zero.
func (ta *TraceArray) writeTraceHeader(w *bytes.Buffer, rb *traceBuffer) {
	entries, total := rb.Totals()
	fmt.Fprintf(w, "# %s latency trace v1.1.5 on %s\n", ta.currentTracer(), utsRelease)
	w.WriteString("# --------------------------------------------------------------------\n")
	// buf->cpu is the CPU function_trace_init ran on; kpemu's writes
	// come from the host, on no guest CPU, and leave it at 0.
	fmt.Fprintf(w, "# latency: 0 us, #%d/%d, CPU#0 | (M:%s VP:0, KP:0, SP:0 HP:0 #P:%d)\n", entries, total, preemptModel, rb.NumCPUs())
	w.WriteString("#    -----------------\n")
	w.WriteString("#    | task: -0 (uid:0 nice:0 policy:0 rt_prio:0)\n")
	w.WriteString("#    -----------------\n")
	w.WriteString("#\n")
}

// writeLatHelpHeader is print_lat_help_header.
func writeLatHelpHeader(w *bytes.Buffer) {
	w.WriteString("#                    _------=> CPU#            \n" +
		"#                   / _-----=> irqs-off/BH-disabled\n" +
		"#                  | / _----=> need-resched    \n" +
		"#                  || / _---=> hardirq/softirq \n" +
		"#                  ||| / _--=> preempt-depth   \n" +
		"#                  |||| / _-=> migrate-disable \n" +
		"#                  ||||| /     delay           \n" +
		"#  cmd     pid     |||||| time  |   caller     \n" +
		"#     \\   /        ||||||  \\    |    /       \n")
}
