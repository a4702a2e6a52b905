package tracing

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"sync"

	"github.com/kpemu/kpemu/debugfs"
)

// The function tracer's own options, func_stack_trace and
// func-no-repeats (Linux 6.1's trace_functions.c: func_opts, func_flags,
// func_set_flag, function_stack_trace_call,
// function_no_repeats_trace_call), and the func_repeats record the
// second one writes (trace.c's trace_last_func_repeats, trace_output.c's
// trace_func_repeats_print and _raw).
//
// Linux keeps one func_flags for the tracer, shared by every trace
// array: Tracing.funcFlags. An array running the function tracer picks
// its callback from them when the tracer starts, and again when the
// option is changed through that array's files (func_set_flag): that is
// functionTracer.mode. A change through another array's options/ file
// changes funcFlags alone, as on Linux.

// Function tracer options: TRACE_FUNC_OPT_*.
const (
	funcOptStack     = 1 << 0 // TRACE_FUNC_OPT_STACK: func_stack_trace
	funcOptNoRepeats = 1 << 1 // TRACE_FUNC_OPT_NO_REPEATS: func-no-repeats
)

// funcOptions are func_opts, in order.
func funcOptions() []traceOption {
	return []traceOption{
		{"func_stack_trace", funcOptStack},
		{"func-no-repeats", funcOptNoRepeats},
	}
}

// funcRepeats is struct trace_func_repeats, one per CPU: the last call
// recorded, and how many identical calls came after it unrecorded.
type funcRepeats struct {
	mu         sync.Mutex // the vCPU's; a flag change reads it too
	ip, parent uint64
	count      uint16 // U16_MAX at most: the next identical call is recorded
	tsLast     uint64 // ts_last_call, in the trace clock
}

// funcRepeatsEntrySize is sizeof(struct func_repeats_entry): the
// trace_entry, ip, parent_ip, count, top_delta_ts and bottom_delta_ts.
const funcRepeatsEntrySize = traceEntryHeadSize + 24

// traceTypeFuncRepeats is TRACE_FUNC_REPEATS.
const traceTypeFuncRepeats = 19

// funcOptionFile is options/NAME of a function tracer option
// (trace_options_fops): a write of a new value goes to func_set_flag for
// this array, whichever tracer is current.
func (ta *TraceArray) funcOptionFile(mask uint32) debugfs.FileOps {
	get := func() bool { return ta.t.funcFlags.Load()&mask != 0 }
	return boolOptionFile(get, func(on bool) error {
		if get() == on {
			return nil
		}
		ta.ft.mu.Lock()
		defer ta.ft.mu.Unlock()
		ta.setFuncOption(mask, on)
		return nil
	})
}

// setCurrentFuncOption is set_tracer_option for the function tracer's
// option: only while it is the array's tracer (false otherwise).
func (ta *TraceArray) setCurrentFuncOption(mask uint32, on bool) bool {
	ta.ft.mu.Lock()
	defer ta.ft.mu.Unlock()
	if ta.ft.current != tracerFunction {
		return false
	}
	ta.setFuncOption(mask, on)
	return true
}

// setFuncOption is __set_tracer_option with func_set_flag: the array's
// callback follows when it runs the function tracer; the flag is
// changed for all. ta.ft.mu is held.
func (ta *TraceArray) setFuncOption(mask uint32, on bool) {
	t := ta.t
	t.funcMu.Lock()
	defer t.funcMu.Unlock()
	old := t.funcFlags.Load()
	nf := old &^ mask
	if on {
		nf |= mask
	}
	if nf == old {
		return // "Do nothing if already set."
	}
	if ta.ft.current == tracerFunction {
		ta.startFuncMode(nf)
	}
	t.funcFlags.Store(nf)
}

// startFuncMode is the callback select_trace_function picks for flags,
// with handle_func_repeats' per-CPU state, which once made stays (with
// its last call) for the array's life.
func (ta *TraceArray) startFuncMode(flags uint32) {
	if flags&funcOptNoRepeats != 0 && ta.ft.repeats.Load() == nil {
		r := make([]funcRepeats, ta.buf.NumCPUs())
		ta.ft.repeats.Store(&r)
	}
	ta.ft.mode.Store(flags)
}

// isRepeat is is_repeat_check: a call like the last one (same function,
// same parent) is counted instead of recorded, and its time kept.
func (ta *TraceArray) isRepeat(last *funcRepeats, ip, parent uint64) bool {
	if last.ip == ip && last.parent == parent && last.count < 0xffff {
		last.tsLast = ta.clock() // ring_buffer_time_stamp
		last.count++
		return true
	}
	return false
}

// processRepeats is process_repeats: the calls counted since the last
// recorded one are written as one func_repeats record before the new
// call's, which becomes the last.
func (ta *TraceArray) processRepeats(cpu int, comm string, pid int32, flags uint8, last *funcRepeats, ip, parent uint64) {
	if last.count > 0 {
		if ta.on.Load() {
			ta.commitFuncRepeats(cpu, comm, pid, flags, last)
		}
		last.count = 0
	}
	last.ip, last.parent = ip, parent
}

// commitFuncRepeats is trace_last_func_repeats: the delta is the
// record's time stamp less the last repeat's, split in a 16-bit top and
// a 32-bit bottom (func_repeats_set_delta_ts).
func (ta *TraceArray) commitFuncRepeats(cpu int, comm string, pid int32, flags uint8, last *funcRepeats) {
	e := traceEntry{kind: entryRepeats, pid: pid, flags: flags, ip: last.ip, parent: last.parent}
	e.ts = ta.clock()
	delta := e.ts - last.tsLast
	raw := make([]byte, 0, funcRepeatsEntrySize-traceEntryHeadSize)
	raw = binary.LittleEndian.AppendUint64(raw, last.ip)
	raw = binary.LittleEndian.AppendUint64(raw, last.parent)
	raw = binary.LittleEndian.AppendUint16(raw, last.count)
	raw = binary.LittleEndian.AppendUint16(raw, uint16(delta>>32))
	raw = binary.LittleEndian.AppendUint32(raw, uint32(delta))
	e.raw = raw
	ta.write(cpu, comm, &e, funcRepeatsEntrySize, nil)
}

// funcRepeatsFields are a func_repeats record's count and delta
// (FUNC_REPEATS_GET_DELTA_TS).
func funcRepeatsFields(e *traceEntry) (count uint16, delta uint64) {
	r := e.raw
	count = binary.LittleEndian.Uint16(r[16:])
	delta = uint64(binary.LittleEndian.Uint16(r[18:]))<<32 | uint64(binary.LittleEndian.Uint32(r[20:]))
	return count, delta
}

// printFuncRepeats is trace_func_repeats_print after the context:
// print_fn_trace, then " (repeats: N, last_ts: T)", T the last repeat's
// time stamp as trace_print_time prints one.
func (ta *TraceArray) printFuncRepeats(w *bytes.Buffer, e *traceEntry, sym uint32, inNS bool) {
	ta.t.printIPSym(w, e.ip, sym)
	if sym&optPrintParent != 0 && e.parent != 0 {
		w.WriteString(" <-")
		ta.t.printIPSym(w, e.parent, sym)
	}
	count, delta := funcRepeatsFields(e)
	w.WriteString(" (repeats: ")
	w.WriteString(strconv.FormatUint(uint64(count), 10))
	w.WriteString(", last_ts:")
	w.Write(appendPrintTime(nil, e.ts-delta, inNS))
	w.WriteByte(')')
}

// appendFuncRepeatsRaw is trace_func_repeats_raw: "%lu %lu %u %llu".
func appendFuncRepeatsRaw(out []byte, e *traceEntry) []byte {
	count, delta := funcRepeatsFields(e)
	out = strconv.AppendUint(out, e.ip, 10)
	out = append(out, ' ')
	out = strconv.AppendUint(out, e.parent, 10)
	out = append(out, ' ')
	out = strconv.AppendUint(out, uint64(count), 10)
	out = append(out, ' ')
	out = strconv.AppendUint(out, delta, 10)
	return append(out, '\n')
}

// appendPrintTime is trace_print_time: " %5lu.%06lu" of the time stamp
// in microseconds (rounded: ns2usecs) for a clock in nanoseconds, else
// " %12llu".
func appendPrintTime(out []byte, ts uint64, inNS bool) []byte {
	out = append(out, ' ')
	if !inNS {
		return padLeft(out, strconv.FormatUint(ts, 10), 12)
	}
	us := (ts + 500) / 1000
	out = padLeft(out, strconv.FormatUint(us/1e6, 10), 5)
	out = append(out, '.')
	return appendZeroPad(out, us%1e6, 6)
}
