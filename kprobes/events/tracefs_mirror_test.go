package events_test

import (
	"strings"
	"testing"
)

// TestTracefsMirror: creating and removing an event makes the guest call
// tracefs_create_dir() and tracefs_remove() with the names Linux passes
// (the kselftests kprobe_args_string and probepoint probe them), before
// the write to kprobe_events returns.
func TestTracefsMirror(t *testing.T) {
	f := setup(t)
	f.run(t)
	for _, cmd := range []string{
		"p:watch/mkdir tracefs_create_dir name=+0(%x0):string",
		"p:watch/rm tracefs_remove",
	} {
		if err := f.write("tracing/kprobe_events", cmd+"\n", false); err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
	}
	if err := f.write("tracing/events/watch/enable", "1\n", true); err != nil {
		t.Fatal(err)
	}
	if err := f.write("tracing/kprobe_events", "p:newgrp/test kernel_clone\n", false); err != nil {
		t.Fatal(err)
	}
	trace := f.read(t, "tracing/trace")
	for _, want := range []string{`mkdir: (tracefs_create_dir+0x0/`, `name="newgrp"`, `name="test"`} {
		if !strings.Contains(trace, want) {
			t.Errorf("trace lacks %q after creating newgrp/test:\n%s", want, trace)
		}
	}
	if strings.Index(trace, `name="newgrp"`) > strings.Index(trace, `name="test"`) {
		t.Errorf("the event's directory was made before its group's:\n%s", trace)
	}
	if strings.Contains(trace, "rm: (tracefs_remove") {
		t.Errorf("tracefs_remove called on creation:\n%s", trace)
	}
	if err := f.write("tracing/kprobe_events", "-:newgrp/test\n", false); err != nil {
		t.Fatal(err)
	}
	// the event's directory, then the group's (it was its last event)
	if n := strings.Count(f.read(t, "tracing/trace"), "rm: (tracefs_remove"); n != 2 {
		t.Errorf("%d tracefs_remove calls after removing newgrp/test, want 2:\n%s", n, f.read(t, "tracing/trace"))
	}
}
