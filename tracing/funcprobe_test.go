package tracing_test

import (
	"errors"
	"strings"
	"syscall"
	"testing"
)

// set_ftrace_filter's function commands as Linux 6.1 takes them (Debian's
// 6.1 through shared/oracle, the same writes on schedule, vfs_read and
// sched:sched_switch): each write's errno and the file after it, the
// probes listed newest command first, a count shown as Linux prints its
// unsigned long with %ld.
func TestFuncProbeSyntax(t *testing.T) {
	f := setup(t)
	if err := f.write("tracing/kprobe_events", "p:myev vfs_write\n", true); err != nil {
		t.Fatal(err)
	}
	const sf, sn, st = "tracing/set_ftrace_filter", "tracing/set_ftrace_notrace", "tracing/stack_trace_filter"
	steps := []struct {
		name  string
		file  string
		data  string
		trunc bool
		errno syscall.Errno
		want  string // set_ftrace_filter after the write; "" to skip
	}{
		{"traceoff", sf, "schedule:traceoff\n", true, 0, allEnabled + "schedule:traceoff:unlimited\n"},
		{"the same again", sf, "schedule:traceoff\n", false, syscall.EINVAL, allEnabled + "schedule:traceoff:unlimited\n"},
		{"an empty count is -1", sf, "schedule:traceoff:\n", false, 0, allEnabled + "schedule:traceoff:count=-1\nschedule:traceoff:unlimited\n"},
		{"traceon with a count", sf, "schedule:traceon:5\n", false, 0, ""},
		{"a count that is no number", sf, "schedule:traceon:abc\n", false, syscall.EINVAL, ""},
		{"a count past 64 bits", sf, "schedule:traceon:18446744073709551616\n", false, syscall.ERANGE, ""},
		{"dump, once", sf, "schedule:dump\n", false, 0, ""},
		{"cpudump ignores its count", sf, "schedule:cpudump:7\n", false, 0, ""},
		{"snapshot", sf, "schedule:snapshot:3\n", false, 0, ""},
		{"stacktrace", sf, "schedule:stacktrace\n", false, 0, ""},
		{"enable_event", sf, "vfs_read:enable_event:kprobes:myev:2\n", false, 0, ""},
		{"enable_event of no such event", sf, "vfs_read:enable_event:kprobes:nosuch\n", false, syscall.EINVAL, ""},
		{"enable_event without an event", sf, "vfs_read:enable_event:kprobes\n", false, syscall.EINVAL, ""},
		{"enable_event with an empty count", sf, "vfs_read:enable_event:kprobes:myev:\n", false, syscall.EINVAL, ""},
		{"disable_event", sf, "vfs_read:disable_event:kprobes:myev\n", false, 0, ""},
		{"no such function", sf, "nosuch_function_xyz:traceon\n", false, syscall.EINVAL, ""},
		{"no such command", sf, "schedule:bogus\n", false, syscall.EINVAL, ""},
		{"not in set_ftrace_notrace", sn, "schedule:traceon\n", false, syscall.EINVAL, ""},
		{"no trace array behind stack_trace_filter", st, "schedule:traceon\n", false, syscall.ENODEV, ""},
		{"all of them", sf, "\n", false, 0, allEnabled +
			"vfs_read:disable_event:kprobes:myev:unlimited\n" +
			"vfs_read:enable_event:kprobes:myev:count=2\n" +
			"schedule:stacktrace:unlimited\n" +
			"schedule:snapshot:count=3\n" +
			"schedule:cpudump:unlimited\n" +
			"schedule:dump:count=1\n" +
			"schedule:traceon:count=5\n" +
			"schedule:traceoff:count=-1\n" +
			"schedule:traceoff:unlimited\n"},
		{"removing a command of no probe", sf, "!nosuch:traceon\n", false, syscall.ENODEV, ""},
		{"removing what matches nothing", sf, "!vfs_*:traceoff\n", false, syscall.EINVAL, ""},
		{"a double negation", sf, "!!schedule:traceoff\n", false, syscall.EINVAL, ""},
		{"removing the counted one, whatever the count", sf, "!*:traceoff:junk\n", false, 0, ""},
		{"removing by glob", sf, "!sched*:traceon:0\n", false, 0, ""},
		{"removing events", sf, "!vfs_read:enable_event:kprobes:myev:1\n", false, 0, ""},
		{"a truncation keeps the commands", sf, "vfs_read\n", true, 0, "vfs_read\n" +
			"vfs_read:disable_event:kprobes:myev:unlimited\n" +
			"schedule:stacktrace:unlimited\n" +
			"schedule:snapshot:count=3\n" +
			"schedule:cpudump:unlimited\n" +
			"schedule:dump:count=1\n" +
			"schedule:traceoff:unlimited\n"},
	}
	for _, s := range steps {
		err := f.write(s.file, s.data, s.trunc)
		if s.errno == 0 && err != nil || s.errno != 0 && !errors.Is(err, s.errno) {
			t.Errorf("%s: %q = %v, want errno %d", s.name, s.data, err, s.errno)
		}
		if s.want == "" {
			continue
		}
		if got := f.read(t, sf); got != s.want {
			t.Errorf("%s: set_ftrace_filter =\n%s\nwant:\n%s", s.name, got, s.want)
		}
	}
	// Commands are in no other file, and their functions are traced.
	if got := f.read(t, sn); got != "#### no functions disabled ####\n" {
		t.Errorf("set_ftrace_notrace = %q", got)
	}
	en := f.read(t, "tracing/enabled_functions")
	for _, fn := range []string{"schedule (5)", "vfs_read (1)"} {
		if !strings.Contains(en, fn) {
			t.Errorf("enabled_functions lacks %q:\n%s", fn, en)
		}
	}
	// disable_event keeps its event in soft mode, and the event cannot go.
	if got := f.read(t, "tracing/events/kprobes/myev/enable"); got != "0*\n" {
		t.Errorf("myev/enable = %q, want 0*", got)
	}
	if err := f.write("tracing/kprobe_events", "-:myev\n", false); !errors.Is(err, syscall.EBUSY) {
		t.Errorf("removing myev under disable_event = %v, want EBUSY", err)
	}
	for _, cmd := range []string{"!*:disable_event:kprobes:myev", "!*:stacktrace", "!*:snapshot:", "!*:cpudump", "!*:dump", "!*:traceoff"} {
		if err := f.write(sf, cmd+"\n", false); err != nil {
			t.Errorf("%q: %v", cmd, err)
		}
	}
	if got := f.read(t, sf); got != "vfs_read\n" {
		t.Errorf("set_ftrace_filter after removing every command = %q", got)
	}
	if got := f.read(t, "tracing/events/kprobes/myev/enable"); got != "0\n" {
		t.Errorf("myev/enable after its commands went = %q, want 0", got)
	}
	if got := f.read(t, "tracing/enabled_functions"); got != "" {
		t.Errorf("enabled_functions after removing every command = %q", got)
	}
}

// The commands at work on the guest's forks (kernel_clone): a counted
// traceoff turns tracing off once per count and only while it is on,
// stacktrace records the stack at the function's entry, enable_event
// turns its soft-disabled event on, and each counted command shows what
// is left of its count.
func TestFuncProbeRun(t *testing.T) {
	const sf = "tracing/set_ftrace_filter"
	tests := []struct {
		name    string
		setup   []string // writes to set_ftrace_filter, after kprobe_events "p:myev vfs_read"
		check   func(t *testing.T, f *fixture)
		wantSet string
	}{
		{
			name:  "traceoff:1",
			setup: []string{"kernel_clone:traceoff:1"},
			check: func(t *testing.T, f *fixture) {
				if got := f.read(t, "tracing/tracing_on"); got != "0\n" {
					t.Errorf("tracing_on = %q, want 0", got)
				}
			},
			wantSet: allEnabled + "kernel_clone:traceoff:count=0\n",
		},
		{
			name:  "stacktrace:1",
			setup: []string{"kernel_clone:stacktrace:1"},
			check: func(t *testing.T, f *fixture) {
				tr := f.read(t, "tracing/trace")
				if strings.Count(tr, "<stack trace>") != 1 || !strings.Contains(tr, "<stack trace>\n => kernel_clone\n") {
					t.Errorf("want one stack starting at kernel_clone:\n%s", tr)
				}
			},
			wantSet: allEnabled + "kernel_clone:stacktrace:count=0\n",
		},
		{
			name:  "enable_event:1",
			setup: []string{"kernel_clone:enable_event:kprobes:myev:1"},
			check: func(t *testing.T, f *fixture) {
				if got := f.read(t, "tracing/events/kprobes/myev/enable"); got != "1*\n" {
					t.Errorf("myev/enable = %q, want 1*", got)
				}
				if !strings.Contains(f.read(t, "tracing/trace"), " myev: (vfs_read+0x0/") {
					t.Error("myev recorded nothing once enabled")
				}
			},
			wantSet: allEnabled + "kernel_clone:enable_event:kprobes:myev:count=0\n",
		},
		{
			name:    "traceon while on spends nothing",
			setup:   []string{"kernel_clone:traceon:2"},
			check:   func(*testing.T, *fixture) {},
			wantSet: allEnabled + "kernel_clone:traceon:count=2\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := setup(t)
			if err := f.write("tracing/kprobe_events", "p:myev vfs_read\n", true); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.setup {
				if err := f.write(sf, w+"\n", false); err != nil {
					t.Fatalf("%q: %v", w, err)
				}
			}
			f.step(t, 20_000_000)
			tt.check(t, f)
			if got := f.read(t, sf); got != tt.wantSet {
				t.Errorf("set_ftrace_filter =\n%s\nwant:\n%s", got, tt.wantSet)
			}
		})
	}
}
