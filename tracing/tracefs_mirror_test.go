package tracing_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kpemu/kpemu/kprobes"
)

// TestTracefsMirror: creating and removing an event makes the guest call
// tracefs_create_dir() and tracefs_remove() with the names Linux passes
// (the kselftests kprobe_args_string and probepoint probe them). The write
// to kprobe_events does not wait for the guest, but a read of trace after
// it shows the calls (a probe on them recorded), as on Linux, where the
// writer made them.
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
	// kprobe_profile counts the calls too (read first: trace waits).
	var hits int
	for _, l := range strings.Split(f.read(t, "tracing/kprobe_profile"), "\n") {
		if fs := strings.Fields(l); len(fs) == 3 && fs[0] == "mkdir" {
			fmt.Sscan(fs[1], &hits)
		}
	}
	if hits < 2 {
		t.Errorf("kprobe_profile counts %d tracefs_create_dir calls after creating newgrp/test, want 2 or more", hits)
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

// TestTracefsMirrorBacklog: changes queued faster than the guest applies
// them (here with the guest stopped, far more than its 64-entry ring
// holds) are all applied, in order, once it runs: none is dropped.
func TestTracefsMirrorBacklog(t *testing.T) {
	f := setup(t)
	// Booted (its kprobes hooks in place), then stopped.
	for booted := false; !booted; {
		f.step(t, 1_000_000)
		select {
		case <-f.k.Ready():
			booted = true
		default:
		}
	}
	const n = 300
	var calls []string
	var mu sync.Mutex
	done := make(chan struct{})
	probe := &kprobes.Kprobe{Symbol: "tracefs_create_dir", PreHandler: func(_ *kprobes.Kprobe, r *kprobes.Regs) bool {
		name, err := f.k.ReadString(r.X[0], 64)
		mu.Lock()
		defer mu.Unlock()
		if err == nil && strings.HasPrefix(name, "many") {
			if calls = append(calls, name); len(calls) == n {
				close(done)
			}
		}
		return false
	}}
	if err := f.kp.Register(probe); err != nil {
		t.Fatal(err)
	}
	var cmds strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&cmds, "p:kprobes/many%d kernel_clone\n", i)
	}
	if err := f.write("tracing/kprobe_events", cmds.String(), false); err != nil {
		t.Fatal(err)
	}
	f.run(t)
	select {
	case <-done:
	case <-time.After(time.Minute): // a guard; the guest gets there in far less
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("the guest made %d of %d tracefs_create_dir calls", len(calls), n)
	}
	mu.Lock()
	defer mu.Unlock()
	for i, name := range calls {
		if want := fmt.Sprintf("many%d", i); name != want {
			t.Fatalf("call %d made %q, want %q", i, name, want)
		}
	}
}

// TestTracefsMirrorManyEvents: the guest makes the directory of every
// one of 3,000 events. Its kernel pages were a 256 KiB arena that held
// about 1,000 event directories: tracefs_create_dir returned NULL for the
// rest, and every allocation after them failed.
func TestTracefsMirrorManyEvents(t *testing.T) {
	const n = 3000
	f := setup(t)
	f.run(t)
	for _, w := range []struct{ file, data string }{
		{"tracing/kprobe_events", "r:watch/mkdir tracefs_create_dir $retval\n"},
		{"tracing/events/watch/enable", "1\n"},
		{"tracing/buffer_size_kb", "4096\n"},
	} {
		if err := f.write(w.file, w.data, w.file != "tracing/kprobe_events"); err != nil {
			t.Fatalf("%s: %v", w.file, err)
		}
	}
	var s strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&s, "p:many/e%d kernel_clone\n", i)
	}
	if err := f.write("tracing/kprobe_events", s.String(), false); err != nil {
		t.Fatal(err)
	}
	trace := f.read(t, "tracing/trace") // waits for the guest's calls
	// (watch/ and watch/mkdir may be made after the probe is armed too)
	if calls := strings.Count(trace, "mkdir: ("); calls < n+1 {
		t.Fatalf("the trace has %d tracefs_create_dir returns, want %d or more (the group's and each event's)", calls, n+1)
	}
	if failed := strings.Count(trace, "arg1=0x0\n"); failed != 0 {
		t.Errorf("tracefs_create_dir returned NULL %d times of %d", failed, n+1)
	}
}
