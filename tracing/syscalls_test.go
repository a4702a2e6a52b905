package tracing_test

import (
	"regexp"
	"strings"
	"testing"
)

// withoutSyscalls drops the raw_syscalls and syscalls events from an
// available_events listing, for the tests of the other events.
func withoutSyscalls(s string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if !strings.HasPrefix(l, "syscalls:") && !strings.HasPrefix(l, "raw_syscalls:") {
			b.WriteString(l)
		}
	}
	return b.String()
}

// The reference kernel's format files (Debian's 6.1 arm64), byte for byte.
const (
	wantOpenatEnterFormat = "name: sys_enter_openat\nID: 580\nformat:\n" +
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" +
		"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n" +
		"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" +
		"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n" +
		"\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n" +
		"\tfield:int dfd;\toffset:16;\tsize:8;\tsigned:0;\n" +
		"\tfield:const char * filename;\toffset:24;\tsize:8;\tsigned:0;\n" +
		"\tfield:int flags;\toffset:32;\tsize:8;\tsigned:0;\n" +
		"\tfield:umode_t mode;\toffset:40;\tsize:8;\tsigned:0;\n\n" +
		`print fmt: "dfd: 0x%08lx, filename: 0x%08lx, flags: 0x%08lx, mode: 0x%08lx", ((unsigned long)(REC->dfd)), ((unsigned long)(REC->filename)), ((unsigned long)(REC->flags)), ((unsigned long)(REC->mode))` + "\n"
	wantOpenatExitFormat = "name: sys_exit_openat\nID: 579\nformat:\n" +
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" +
		"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n" +
		"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" +
		"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n" +
		"\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n" +
		"\tfield:long ret;\toffset:16;\tsize:8;\tsigned:1;\n\n" +
		"print fmt: \"0x%lx\", REC->ret\n"
	wantYieldEnterFormat = "name: sys_enter_sched_yield\nID: 229\nformat:\n" +
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" +
		"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n" +
		"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" +
		"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n" +
		"\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n\n" +
		"print fmt: \"\"\n"
	wantRawEnterFormat = "name: sys_enter\nID: 24\nformat:\n" +
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" +
		"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n" +
		"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" +
		"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n" +
		"\tfield:long id;\toffset:8;\tsize:8;\tsigned:1;\n" +
		"\tfield:unsigned long args[6];\toffset:16;\tsize:48;\tsigned:0;\n\n" +
		`print fmt: "NR %ld (%lx, %lx, %lx, %lx, %lx, %lx)", REC->id, REC->args[0], REC->args[1], REC->args[2], REC->args[3], REC->args[4], REC->args[5]` + "\n"
	wantRawExitFormat = "name: sys_exit\nID: 23\nformat:\n" +
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" +
		"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n" +
		"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" +
		"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n" +
		"\tfield:long id;\toffset:8;\tsize:8;\tsigned:1;\n" +
		"\tfield:long ret;\toffset:16;\tsize:8;\tsigned:1;\n\n" +
		"print fmt: \"NR %ld = %ld\", REC->id, REC->ret\n"
)

// The system calls the guest implements have their events, with the
// reference kernel's formats and ids; those it lacks (kill) have none.
func TestSyscallEventFiles(t *testing.T) {
	f := setupCPUs(t, 1)
	for _, tc := range []struct{ file, want string }{
		{"tracing/events/syscalls/sys_enter_openat/format", wantOpenatEnterFormat},
		{"tracing/events/syscalls/sys_exit_openat/format", wantOpenatExitFormat},
		{"tracing/events/syscalls/sys_enter_sched_yield/format", wantYieldEnterFormat},
		{"tracing/events/raw_syscalls/sys_enter/format", wantRawEnterFormat},
		{"tracing/events/raw_syscalls/sys_exit/format", wantRawExitFormat},
		{"tracing/events/syscalls/sys_enter_clone3/id", "77\n"},
		{"tracing/events/syscalls/sys_exit_mkdirat/id", "655\n"},
		{"tracing/events/syscalls/enable", "0\n"},
		{"tracing/events/raw_syscalls/sys_enter/filter", "none\n"},
	} {
		if got := f.read(t, tc.file); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.file, got, tc.want)
		}
	}
	if _, err := f.tree.ReadFile("tracing/events/syscalls/sys_enter_getuid/id"); err == nil {
		t.Errorf("the guest has no getuid(2), but sys_enter_getuid exists")
	}
	if got := f.read(t, "tracing/events/syscalls/sys_enter_kill/id"); got != "125\n" {
		t.Errorf("sys_enter_kill's id is %q, want 125 as the reference kernel's", got)
	}
	// Linux's order: ids ascending; raw_syscalls' 23 and 24 first.
	ev := f.read(t, "tracing/available_events")
	if !strings.HasPrefix(ev, "raw_syscalls:sys_exit\nraw_syscalls:sys_enter\nsyscalls:sys_exit_mmap\nsyscalls:sys_enter_mmap\n") {
		t.Errorf("available_events starts %q", ev[:min(len(ev), 200)])
	}
	if n := strings.Count(ev, "\nsyscalls:"); n != 2*34 {
		t.Errorf("%d syscalls events, want 68 (34 system calls)", n)
	}
	// A char * is a string to a filter: a number is refused as on Linux.
	if err := f.write("tracing/events/syscalls/sys_enter_openat/filter", "filename != 0\n", false); err == nil {
		t.Errorf("filter filename != 0 accepted")
	}
}

// The guest's system calls hit their events: the lines are
// print_syscall_enter's and _exit's; raw_syscalls shows every call; a
// filter on ret keeps the failures; one event's disabling leaves the
// others on the same tracepoint running.
func TestSyscallEventsRecord(t *testing.T) {
	f := setupCPUs(t, 2)
	for _, w := range []string{"syscalls/sys_enter_openat", "syscalls/sys_exit_openat", "syscalls/sys_enter_getpid", "raw_syscalls/sys_exit"} {
		if err := f.write("tracing/events/"+w+"/enable", "1\n", false); err != nil {
			t.Fatalf("%s: %v", w, err)
		}
	}
	f.step(t, 60_000_000)
	trace := f.read(t, "tracing/trace")
	for _, re := range []string{
		`(?m)^ +\S+-\d+ +\[00[01]\] \.\.\.\.\. +[0-9.]+: sys_openat\(dfd: [0-9a-f]+, filename: [0-9a-f]+, flags: [0-9a-f]+, mode: [0-9a-f]+\)$`,
		`(?m)^ +\S+-\d+ +\[00[01]\] \.\.\.\.\. +[0-9.]+: sys_openat -> 0x[0-9a-f]+$`,
		`(?m): sys_exit: NR \d+ = -?\d+$`,
	} {
		if !regexp.MustCompile(re).MatchString(trace) {
			t.Errorf("trace has no line matching %s", re)
		}
	}
	if t.Failed() {
		t.Logf("trace:\n%s", trace[:min(len(trace), 4000)])
	}
	// raw_syscalls:sys_exit off: openat's exit still records.
	for _, w := range []string{"raw_syscalls/sys_exit/enable", "syscalls/sys_enter_openat/enable"} {
		if err := f.write("tracing/events/"+w, "0\n", false); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.write("tracing/trace", "", true); err != nil {
		t.Fatal(err)
	}
	f.step(t, 60_000_000)
	trace = f.read(t, "tracing/trace")
	if strings.Contains(trace, "sys_exit: NR") || strings.Contains(trace, "sys_openat(") {
		t.Errorf("disabled events recorded:\n%s", trace)
	}
	if !strings.Contains(trace, "sys_openat -> 0x") {
		t.Errorf("sys_exit_openat stopped with raw_syscalls:sys_exit:\n%s", trace)
	}
}
