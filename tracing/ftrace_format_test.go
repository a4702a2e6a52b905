package tracing

import (
	"bytes"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/kpemu/kpemu/debugfs"
	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/kprobes"
)

// A TRACE_FN entry as trace and trace_pipe print it (trace_fn_trace with
// the default trace flags): the lat_fmt flags, then "func <-parent" with
// bare names; Linux 6.1's own lines, from shared/oracle, look like
//
//	init-1       [000] .....    67.181401: kernel_clone <-[unknown/kretprobe'd]
//	cat-388     [000] dN...    71.446083: schedule <-do_notify_resume
func TestFunctionEntryFormat(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	k, err := kernel.Boot(kernel.Config{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	kp, err := kprobes.New(k, log)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := New(kp, debugfs.NewTree(), "tracing", nil, log)
	if err != nil {
		t.Fatal(err)
	}
	sym := func(name string) uint64 {
		s, ok := k.Kallsyms().LookupName(name)
		if !ok {
			t.Fatalf("no %s", name)
		}
		return s.Addr
	}
	clone, fork := sym("kernel_clone"), sym("do_fork")
	ts := uint64(67*time.Second + 181401*time.Microsecond)
	for pid, comm := range map[int]string{1: "init", 388: "cat", 42: "sh"} {
		tr.cmdlines.save(pid, comm)
	}
	tests := []struct {
		name string
		cpu  int
		e    traceEntry
		want string
	}{
		{"irqs on", 0, traceEntry{kind: entryFn, pid: 1, ts: ts, ip: clone + 4, parent: fork + 0x60},
			"            init-1       [000] .....    67.181401: kernel_clone <-do_fork\n"},
		{"irqs off, need-resched", 1, traceEntry{kind: entryFn, pid: 388, ts: ts, ip: clone + 4, parent: fork + 0x60, flags: traceFlagIrqsOff | traceFlagNeedResched},
			"             cat-388     [001] dN...    67.181401: kernel_clone <-do_fork\n"},
		{"the kretprobe trampoline", 0, traceEntry{kind: entryFn, pid: 1, ts: ts, ip: clone + 4, parent: sym("__kretprobe_trampoline")},
			"            init-1       [000] .....    67.181401: kernel_clone <-[unknown/kretprobe'd]\n"},
		{"no parent", 0, traceEntry{kind: entryFn, pid: 0, ts: ts, ip: clone + 4},
			"          <idle>-0       [000] .....    67.181401: kernel_clone\n"},
		{"an address in no symbol", 0, traceEntry{kind: entryFn, pid: 42, ts: ts, ip: clone + 4, parent: 0x1234},
			"              sh-42      [000] .....    67.181401: kernel_clone <-0x00001234\n"},
		{"a pid never saved", 0, traceEntry{kind: entryFn, pid: 77, ts: ts, ip: clone + 4, parent: fork + 0x60},
			"           <...>-77      [000] .....    67.181401: kernel_clone <-do_fork\n"},
	}
	lf := lineFormat{flags: optDefault, inNS: true}
	for _, tt := range tests {
		var w bytes.Buffer
		tr.top.printLine(&w, tt.cpu, &tt.e, lf)
		if w.String() != tt.want {
			t.Errorf("%s:\n%q\nwant\n%q", tt.name, w.String(), tt.want)
		}
	}
}

// filter_parse_regex and lib/glob.c's glob_match, on the cases Linux's
// code takes apart: where '*' sits, classes (inverted, ranges, a leading
// ']', malformed ones as literals) and '\' escapes.
func TestFilterRegex(t *testing.T) {
	parse := []struct {
		in     string
		typ    int
		search string
		not    bool
	}{
		{"kernel_clone", matchFull, "kernel_clone", false},
		{"vfs_*", matchFrontOnly, "vfs_", false},
		{"*_clone", matchEndOnly, "_clone", false},
		{"*rnel*", matchMiddleOnly, "rnel", false},
		{"*", matchEndOnly, "", false},
		{"**", matchMiddleOnly, "", false},
		{"a*b", matchGlob, "a*b", false},
		{"k?rnel", matchGlob, "k?rnel", false},
		{"!vfs_read", matchFull, "vfs_read", true},
		{"!3", matchIndex, "3", true},
		{"12abc", matchIndex, "12abc", false},
	}
	for _, tt := range parse {
		g, not := filterParseRegex(tt.in)
		if g.typ != tt.typ || g.search != tt.search || not != tt.not {
			t.Errorf("filterParseRegex(%q) = %+v %v, want %d %q %v", tt.in, g, not, tt.typ, tt.search, tt.not)
		}
	}

}
