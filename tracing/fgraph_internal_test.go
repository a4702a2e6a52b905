package tracing

import (
	"bytes"
	"testing"
)

// trace_print_graph_duration: at most seven digits, three decimals while
// they fit, padded to eight columns after " us ".
func TestPrintGraphDuration(t *testing.T) {
	for _, c := range []struct {
		ns   uint64
		want string
	}{
		{0, "0.000 us    "},
		{541, "0.541 us    "},
		{1234, "1.234 us    "},
		{123456, "123.456 us  "},
		{1234567, "1234.567 us "},
		{12345678, "12345.67 us "},
		{123456789, "123456.7 us "},
		{1234567890, "1234567 us  "},
		{12345678901, "12345678 us "},
	} {
		var w bytes.Buffer
		printGraphDuration(&w, c.ns)
		if w.String() != c.want {
			t.Errorf("%d ns: %q, want %q", c.ns, w.String(), c.want)
		}
	}
}

// trace_find_mark: strictly more than each threshold.
func TestTraceFindMark(t *testing.T) {
	for _, c := range []struct {
		ns   uint64
		want byte
	}{
		{0, ' '}, {10000, ' '}, {10001, '+'}, {100000, '+'}, {100001, '!'},
		{1000001, '#'}, {10000001, '*'}, {100000001, '@'}, {1000000001, '$'},
	} {
		if got := traceFindMark(c.ns); got != c.want {
			t.Errorf("%d ns: %q, want %q", c.ns, got, c.want)
		}
	}
}

// The column lines of a graph trace: print_graph_duration with each
// fill, print_graph_cpu, print_graph_proc, and the headers for the
// flags' combinations.
func TestGraphColumns(t *testing.T) {
	p := &graphPrinter{flags: graphDefault, lf: lineFormat{flags: optDefault}, cpuWidth: 1, cpus: make([]graphCPU, 2)}
	var w bytes.Buffer
	for _, c := range []struct {
		name string
		do   func()
		want string
	}{
		{"leaf duration", func() { p.duration(&w, 15234, fillNone) }, "+ 15.234 us   |  "},
		{"no overhead", func() {
			p.flags &^= graphPrintOverhead
			p.duration(&w, 15234, fillNone)
			p.flags |= graphPrintOverhead
		}, "  15.234 us   |  "},
		{"fill full", func() { p.duration(&w, 0, fillFull) }, "              |  "},
		{"fill start and end", func() { p.duration(&w, 0, fillStart); p.duration(&w, 0, fillEnd) }, "   |"},
		{"no duration", func() {
			p.flags &^= graphPrintDuration
			p.duration(&w, 15234, fillFull)
			p.flags |= graphPrintDuration
		}, ""},
		{"cpu", func() { p.printCPU(&w, 1) }, " 1) "},
		{"cpu, two digits", func() { p.cpuWidth = 2; p.printCPU(&w, 3); p.cpuWidth = 1 }, "  3) "},
	} {
		w.Reset()
		c.do()
		if w.String() != c.want {
			t.Errorf("%s: %q, want %q", c.name, w.String(), c.want)
		}
	}
}

// __print_graph_headers_flags, by flags.
func TestGraphHeader(t *testing.T) {
	tr := &Tracing{}
	for _, c := range []struct {
		name  string
		flags uint32
		ctx   bool
		want  string
	}{
		{"defaults", graphDefault, true,
			"# CPU  DURATION                  FUNCTION CALLS\n" +
				"# |     |   |                     |   |   |   |\n"},
		{"abstime and proc", graphDefault | graphPrintAbsTime | graphPrintProc, true,
			"#     TIME        CPU  TASK/PID         DURATION                  FUNCTION CALLS\n" +
				"#      |          |     |    |           |   |                     |   |   |   |\n"},
		{"no cpu, no duration", graphDefault &^ (graphPrintCPU | graphPrintDuration), true,
			"#               FUNCTION CALLS\n" +
				"#               |   |   |   |\n"},
		{"no context-info", graphDefault, false, ""},
	} {
		tr.graph.flags.Store(c.flags)
		lf := lineFormat{flags: optDefault}
		if !c.ctx {
			lf.flags &^= optContextInfo
		}
		var w bytes.Buffer
		tr.graphHeader(&w, lf)
		if w.String() != c.want {
			t.Errorf("%s:\n%q\nwant\n%q", c.name, w.String(), c.want)
		}
	}
}

// set_graph_function's order is its hash's: buckets by hash_long, each
// newest first, after the writes' default-sized hash is moved into one
// of fls(count/2) bits. The buckets here are worked out by hand from
// GOLDEN_RATIO_64 (ips 1 and 3 share bucket 0 of a 1-bit hash, 2 is in
// bucket 1; in a 10-bit hash they are 391, 782 and 149).
func TestGraphHashOrder(t *testing.T) {
	for _, c := range []struct {
		name string
		ops  func() *orderedHash
		want []uint64
	}{
		{"one entry", func() *orderedHash {
			h := newOrderedHash(ftraceHashDefaultBits)
			h.add(7)
			return h.moved()
		}, []uint64{7}},
		{"three, moved into one bit", func() *orderedHash {
			h := newOrderedHash(ftraceHashDefaultBits)
			h.add(1)
			h.add(2)
			h.add(3)
			return h.moved()
		}, []uint64{1, 3, 2}},
		{"the 10-bit hash", func() *orderedHash {
			h := newOrderedHash(ftraceHashDefaultBits)
			h.add(1)
			h.add(2)
			h.add(3)
			return h
		}, []uint64{3, 1, 2}},
		{"reopened and one removed", func() *orderedHash {
			h := copyOrdered(ftraceHashDefaultBits, []uint64{1, 3, 2})
			h.remove(3)
			return h.moved()
		}, []uint64{1, 2}},
	} {
		got := c.ops().order()
		if len(got) != len(c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: %v, want %v", c.name, got, c.want)
				break
			}
		}
	}
}
