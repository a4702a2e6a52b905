package tracing

import (
	"bytes"
	"encoding/binary"
	"strconv"
)

// The raw, hex and bin trace options: print_raw_fmt, print_hex_fmt and
// print_bin_fmt of Linux 6.1's trace.c, with each entry kind's raw, hex
// and binary printers from trace_output.c. The context is the pid, the
// CPU and the time stamp in the clock's unit (as numbers, as hex
// fields or as the bytes themselves); the entry then prints itself.
//
// Only TRACE_FN has printers of all three. trace_print_raw,
// trace_raw_data and trace_func_repeats_raw are TRACE_PRINT's,
// TRACE_RAW_DATA's and TRACE_FUNC_REPEATS' raw ones; every
// other printer a kind lacks is trace_nop_print, "type: N" with the
// entry's type, and that is all a probe event prints: trace_kprobe.c
// registers print_kprobe_event and print_kretprobe_event as .trace only.
// So none of them needs the record's binary field values (which
// traceEntry.raw keeps, for trace_pipe_raw: rawpage.go).

// Entry types (enum trace_type of Linux 6.1's trace.h) that the printers
// show; a probe event's is its id (traceEntry.typ).
const (
	traceTypeFn      = 1  // TRACE_FN
	traceTypeStack   = 4  // TRACE_STACK
	traceTypePrint   = 5  // TRACE_PRINT
	traceTypeRawData = 18 // TRACE_RAW_DATA
)

// entryType is e's struct trace_entry type.
func entryType(e *traceEntry) int {
	switch e.kind {
	case entryFn:
		return traceTypeFn
	case entryStack:
		return traceTypeStack
	case entryPrint, entryMarker, entrySnapPuts:
		return traceTypePrint
	case entryRawData:
		return traceTypeRawData
	case entryRepeats:
		return traceTypeFuncRepeats
	}
	return int(e.typ)
}

// printRawLine prints e as print_trace_line does with bin, hex or raw
// set, in that order of precedence.
func printRawLine(w *bytes.Buffer, cpu int, e *traceEntry, lf lineFormat) {
	ctx := lf.flags&optContextInfo != 0
	var b [64]byte
	switch {
	case lf.flags&optBin != 0:
		// print_bin_fmt: SEQ_PUT_FIELD, the fields' own bytes.
		out := b[:0]
		if ctx {
			out = binary.LittleEndian.AppendUint32(out, uint32(e.pid))
			out = binary.LittleEndian.AppendUint32(out, uint32(cpu))
			out = binary.LittleEndian.AppendUint64(out, e.ts)
		}
		if e.kind == entryFn { // trace_fn_bin
			out = binary.LittleEndian.AppendUint64(out, e.ip)
			out = binary.LittleEndian.AppendUint64(out, e.parent)
			w.Write(out)
			return
		}
		w.Write(out)
		writeNopType(w, e)
	case lf.flags&optHex != 0:
		// print_hex_fmt: SEQ_PUT_HEX_FIELD, then a newline after
		// whatever the entry printed.
		out := b[:0]
		if ctx {
			out = appendHexField(out, uint64(uint32(e.pid)), 4)
			out = appendHexField(out, uint64(uint32(cpu)), 4)
			out = appendHexField(out, e.ts, 8)
		}
		if e.kind == entryFn { // trace_fn_hex
			out = appendHexField(out, e.ip, 8)
			out = appendHexField(out, e.parent, 8)
			w.Write(out)
		} else {
			w.Write(out)
			writeNopType(w, e)
		}
		w.WriteByte('\n')
	default:
		// print_raw_fmt: "%d %d %llu ".
		out := b[:0]
		if ctx {
			out = strconv.AppendInt(out, int64(e.pid), 10)
			out = append(out, ' ')
			out = strconv.AppendInt(out, int64(cpu), 10)
			out = append(out, ' ')
			out = strconv.AppendUint(out, e.ts, 10)
			out = append(out, ' ')
		}
		switch e.kind {
		case entryFn: // trace_fn_raw: "%lx %lx\n"
			out = strconv.AppendUint(out, e.ip, 16)
			out = append(out, ' ')
			out = strconv.AppendUint(out, e.parent, 16)
			out = append(out, '\n')
			w.Write(out)
		case entryPrint, entryMarker, entrySnapPuts:
			// trace_print_raw: "# %lx %s", the text with the
			// newline kpemu keeps apart. kpemu's trace_marker and
			// snapshot messages come from no guest code, so their
			// ip is 0 (Linux's is in tracing_mark_write or
			// tracing_snapshot_instance_cond).
			out = append(out, "# "...)
			out = strconv.AppendUint(out, e.ip, 16)
			out = append(out, ' ')
			w.Write(out)
			w.WriteString(e.text)
			w.WriteByte('\n')
		case entryRawData: // trace_raw_data, as trace prints it
			w.Write(out)
			printMarker(w, e)
			w.WriteByte('\n')
		case entryRepeats: // trace_func_repeats_raw
			w.Write(appendFuncRepeatsRaw(out, e))
		default:
			w.Write(out)
			writeNopType(w, e)
		}
	}
}

// writeNopType is trace_nop_print.
func writeNopType(w *bytes.Buffer, e *traceEntry) {
	var b [24]byte
	out := append(b[:0], "type: "...)
	out = strconv.AppendInt(out, int64(entryType(e)), 10)
	w.Write(append(out, '\n'))
}

// appendHexField is trace_seq_putmem_hex of a size-byte field on a
// little-endian machine (seq_buf_putmem_hex): its bytes most significant
// first, two lowercase digits each, then a blank.
func appendHexField(out []byte, v uint64, size int) []byte {
	const digits = "0123456789abcdef"
	for i := size - 1; i >= 0; i-- {
		c := byte(v >> (8 * i))
		out = append(out, digits[c>>4], digits[c&15])
	}
	return append(out, ' ')
}
