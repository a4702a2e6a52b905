package tracing_test

import (
	"regexp"
	"strings"
	"testing"
)

// TestRawHexBinTrace checks that the raw, hex and bin options change how
// trace and trace_pipe print real hits, and that the header stays.
func TestRawHexBinTrace(t *testing.T) {
	f := setup(t)
	for _, l := range []string{"p:myp vfs_read count=%x2", "r:myr vfs_read ret=$retval"} {
		if err := f.write("tracing/kprobe_events", l, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.write("tracing/events/kprobes/enable", "1", true); err != nil {
		t.Fatal(err)
	}
	f.step(t, 2_000_000)
	if err := f.write("tracing/events/kprobes/enable", "0", true); err != nil {
		t.Fatal(err)
	}
	idp := strings.TrimSpace(f.read(t, "tracing/events/kprobes/myp/id"))
	idr := strings.TrimSpace(f.read(t, "tracing/events/kprobes/myr/id"))
	body := func(s string) []string {
		var out []string
		for _, l := range strings.SplitAfter(s, "\n") {
			if l != "" && !strings.HasPrefix(l, "#") {
				out = append(out, l)
			}
		}
		return out
	}
	tests := []struct {
		opts string // options set, in order
		line *regexp.Regexp
	}{
		{"raw", regexp.MustCompile(`^[0-9]+ 0 [0-9]+ type: (` + idp + `|` + idr + `)\n$`)},
		{"hex", regexp.MustCompile(`^[0-9a-f]{8} 00000000 [0-9a-f]{16} type: (` + idp + `|` + idr + `)\n$`)},
	}
	for _, tt := range tests {
		if err := f.write("tracing/options/"+tt.opts, "1", true); err != nil {
			t.Fatal(err)
		}
		trace := f.read(t, "tracing/trace")
		if !strings.HasPrefix(trace, "# tracer: nop\n#\n# entries-in-buffer/entries-written: ") {
			t.Errorf("%s: header changed:\n%.300s", tt.opts, trace)
		}
		lines := body(trace)
		if len(lines) == 0 {
			t.Fatalf("%s: no records:\n%s", tt.opts, trace)
		}
		for i, l := range lines {
			// hex puts an empty line after each record.
			if tt.opts == "hex" && i%2 == 1 {
				if l != "\n" {
					t.Errorf("hex: %q where the empty line goes", l)
				}
				continue
			}
			if !tt.line.MatchString(l) {
				t.Errorf("%s: line %q", tt.opts, l)
				break
			}
		}
		if err := f.write("tracing/options/"+tt.opts, "0", true); err != nil {
			t.Fatal(err)
		}
	}
	// bin: 16 bytes of context, then "type: N\n", through trace_pipe.
	if err := f.write("tracing/trace_options", "bin", true); err != nil {
		t.Fatal(err)
	}
	h, err := f.tree.Open(t.Context(), "tracing/trace_pipe", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	buf := make([]byte, 1<<16)
	n, err := h.Read(t.Context(), buf, 0)
	if err != nil || n < 24 {
		t.Fatalf("trace_pipe read = %d, %v", n, err)
	}
	pipe := string(buf[:n])
	if !strings.HasPrefix(pipe[16:], "type: "+idp+"\n") && !strings.HasPrefix(pipe[16:], "type: "+idr+"\n") {
		t.Errorf("bin trace_pipe starts %q", pipe[:min(len(pipe), 40)])
	}
}
