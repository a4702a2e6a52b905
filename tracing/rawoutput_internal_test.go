package tracing

import (
	"bytes"
	"testing"
)

// TestPrintRawLine checks the raw, hex and bin printers against the
// shapes Linux 6.1 printed for the same kinds of record (shared/oracle
// transcripts: a kprobe event with id 1206, a kretprobe's 1207, a
// stacktrace, vfs_read under the function tracer, a trace_marker and a
// trace_marker_raw write).
func TestPrintRawLine(t *testing.T) {
	kp := traceEntry{kind: entryKprobe, pid: 1, ts: 3701356448, typ: 1206, nlen: 3, text: "myp count=0x1"}
	fn := traceEntry{kind: entryFn, pid: 1, ts: 5194965968, ip: 0xffffaeb8725ab524, parent: 0xffffaeb8725ac08c}
	stack := traceEntry{kind: entryStack, pid: 1, ts: 3701360320, stack: []uint64{1, 2}}
	marker := traceEntry{kind: entryMarker, pid: 1, ts: 3, text: "hello"}
	rawData := traceEntry{kind: entryRawData, pid: 1, ts: 4766318944, ip: 0x4030201, text: "abc"}
	const ctx = optContextInfo
	tests := []struct {
		name  string
		e     *traceEntry
		flags uint32
		want  string
	}{
		{"kprobe raw", &kp, optRaw | ctx, "1 0 3701356448 type: 1206\n"},
		{"kprobe raw, no context", &kp, optRaw, "type: 1206\n"},
		{"kprobe hex", &kp, optHex | ctx, "00000001 00000000 00000000dc9e37a0 type: 1206\n\n"},
		{"kprobe hex, no context", &kp, optHex, "type: 1206\n\n"},
		{"kprobe bin", &kp, optBin | optHex | optRaw | ctx, "\x01\x00\x00\x00\x00\x00\x00\x00\xa0\x37\x9e\xdc\x00\x00\x00\x00type: 1206\n"},
		{"stack raw", &stack, optRaw | ctx, "1 0 3701360320 type: 4\n"},
		{"stack hex over raw", &stack, optRaw | optHex | ctx, "00000001 00000000 00000000dc9e46c0 type: 4\n\n"},
		{"fn raw", &fn, optRaw | ctx, "1 0 5194965968 ffffaeb8725ab524 ffffaeb8725ac08c\n"},
		{"fn hex", &fn, optHex | ctx, "00000001 00000000 0000000135a4e3d0 ffffaeb8725ab524 ffffaeb8725ac08c \n"},
		{"fn hex, no context", &fn, optHex | optSymAddr, "ffffaeb8725ab524 ffffaeb8725ac08c \n"},
		{"fn bin", &fn, optBin | ctx, "\x01\x00\x00\x00\x00\x00\x00\x00\xd0\xe3\xa4\x35\x01\x00\x00\x00" +
			"\x24\xb5\x5a\x72\xb8\xae\xff\xff\x8c\xc0\x5a\x72\xb8\xae\xff\xff"},
		{"marker raw", &marker, optRaw | ctx, "1 0 3 # 0 hello\n"},
		{"marker hex", &marker, optHex | ctx, "00000001 00000000 0000000000000003 type: 5\n\n"},
		{"marker bin, no context", &marker, optBin, "type: 5\n"},
		{"raw data raw", &rawData, optRaw | ctx, "1 0 4766318944 # 4030201 buf: 61 62 63 00 00 00 00 00 00 00 00 00 00 00 00 00\n"},
		{"raw data hex", &rawData, optHex | ctx, "00000001 00000000 000000011c184160 type: 18\n\n"},
	}
	for _, tt := range tests {
		var w bytes.Buffer
		printRawLine(&w, 0, tt.e, lineFormat{flags: tt.flags, inNS: true})
		if got := w.String(); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}
