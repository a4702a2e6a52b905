package events_test

import (
	"errors"
	"strings"
	"syscall"
	"testing"
)

func TestFormat(t *testing.T) {
	f := setup(t)
	if err := f.write("tracing/kprobe_events", "p:ev vfs_read fd=%x0 n=%x2:u32 s=+0(%x1):string c=$comm sym=%lr:symbol neg=%x3:s16\nr:rv vfs_read ret=$retval:s64", false); err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSpace(f.read(t, "tracing/events/kprobes/ev/id"))
	want := "name: ev\nID: " + id + `
format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;

	field:unsigned long __probe_ip;	offset:8;	size:8;	signed:0;
	field:u64 fd;	offset:16;	size:8;	signed:0;
	field:u32 n;	offset:24;	size:4;	signed:0;
	field:__data_loc char[] s;	offset:28;	size:4;	signed:0;
	field:__data_loc char[] c;	offset:32;	size:4;	signed:0;
	field:u64 sym;	offset:36;	size:8;	signed:0;
	field:s16 neg;	offset:44;	size:2;	signed:1;

print fmt: "(%lx) fd=0x%Lx n=%u s=\"%s\" c=\"%s\" sym=%pS neg=%d", REC->__probe_ip, REC->fd, REC->n, __get_str(s), __get_str(c), REC->sym, REC->neg
`
	if got := f.read(t, "tracing/events/kprobes/ev/format"); got != want {
		t.Errorf("format:\n%s\nwant:\n%s", got, want)
	}
	if got := f.read(t, "tracing/events/kprobes/rv/format"); !strings.Contains(got, "field:unsigned long __probe_func;\toffset:8;") ||
		!strings.Contains(got, "field:unsigned long __probe_ret_ip;\toffset:16;") || !strings.Contains(got, "print fmt: \"(%lx <- %lx) ret=%Ld\", REC->__probe_func, REC->__probe_ret_ip, REC->ret") {
		t.Errorf("return format:\n%s", got)
	}
}

func TestFilter(t *testing.T) {
	f := setup(t)
	write := func(p, d string) error { return f.write(p, d, false) }
	if err := write("tracing/kprobe_events", "p:rd vfs_read n=%x2 c=$comm"); err != nil {
		t.Fatal(err)
	}
	if got := f.read(t, "tracing/events/kprobes/rd/filter"); got != "none\n" {
		t.Errorf("filter = %q", got)
	}
	for _, bad := range []string{"nosuch == 1", "n ~ 3", "c < 3", "n ==", "(n == 1", "n == 1 &&", "n == x1"} {
		if err := write("tracing/events/kprobes/rd/filter", bad); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("filter %q: %v, want EINVAL", bad, err)
		}
	}
	if err := write("tracing/events/kprobes/rd/filter", "n == 0x40 && (c ~ \"kw*\" || common_pid < 0)"); err != nil {
		t.Fatal(err)
	}
	if got := f.read(t, "tracing/events/kprobes/rd/filter"); got != "n == 0x40 && (c ~ \"kw*\" || common_pid < 0)\n" {
		t.Errorf("filter = %q", got)
	}
	if err := write("tracing/events/kprobes/rd/enable", "1"); err != nil {
		t.Fatal(err)
	}
	f.step(t, 3_000_000)
	trace := f.read(t, "tracing/trace")
	lines := 0
	for _, l := range strings.Split(trace, "\n") {
		if strings.Contains(l, " rd: (") {
			lines++
			if !strings.Contains(l, " n=0x40 ") {
				t.Fatalf("a line the filter should have dropped: %q", l)
			}
		}
	}
	if lines == 0 {
		t.Fatalf("the filter dropped everything:\n%.1500s", trace)
	}
	// Nothing passes a filter on a value vfs_read never gets.
	if err := write("tracing/events/kprobes/rd/filter", "n == 12345"); err != nil {
		t.Fatal(err)
	}
	if err := f.write("tracing/trace", "", true); err != nil {
		t.Fatal(err)
	}
	f.step(t, 1_000_000)
	if strings.Contains(f.read(t, "tracing/trace"), " rd: (") {
		t.Error("a filter that matches nothing let hits through")
	}
	if err := write("tracing/events/kprobes/rd/filter", "0"); err != nil || f.read(t, "tracing/events/kprobes/rd/filter") != "none\n" {
		t.Errorf("clearing the filter: %v", err)
	}
}

func TestTracingOnSetEventAndFriends(t *testing.T) {
	f := setup(t)
	write := func(p, d string, trunc bool) {
		t.Helper()
		if err := f.write(p, d, trunc); err != nil {
			t.Fatalf("%s <- %q: %v", p, d, err)
		}
	}
	write("tracing/dynamic_events", "p:a vfs_read\np:g/b vfs_write\n", false)
	if got := f.read(t, "tracing/dynamic_events"); got != "p:kprobes/a vfs_read\np:g/b vfs_write\n" {
		t.Errorf("dynamic_events = %q", got)
	}
	if got := f.read(t, "tracing/available_events"); got != "kprobes:a\ng:b\n" {
		t.Errorf("available_events = %q", got)
	}
	write("tracing/set_event", "g:b", false)
	if got := f.read(t, "tracing/set_event"); got != "g:b\n" {
		t.Errorf("set_event = %q", got)
	}
	if f.read(t, "tracing/events/g/b/enable") != "1\n" {
		t.Error("set_event did not enable g:b")
	}
	if err := f.write("tracing/set_event", "nosuch:event", false); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("set_event of a missing event: %v", err)
	}
	write("tracing/tracing_on", "0", true)
	if f.read(t, "tracing/tracing_on") != "0\n" {
		t.Error("tracing_on")
	}
	f.step(t, 1_000_000)
	if strings.Contains(f.read(t, "tracing/trace"), " b: (") {
		t.Error("recorded with tracing off")
	}
	write("tracing/tracing_on", "1", true)
	f.step(t, 1_000_000)
	if !strings.Contains(f.read(t, "tracing/trace"), " b: (") {
		t.Error("nothing recorded with tracing on")
	}
	write("tracing/set_event", "", true)
	if f.read(t, "tracing/set_event") != "" || f.read(t, "tracing/events/g/b/enable") != "0\n" {
		t.Error("set_event truncation did not disable")
	}
	write("tracing/current_tracer", "nop\n", true)
	if err := f.write("tracing/current_tracer", "function\n", true); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("current_tracer function: %v", err)
	}
	if !strings.Contains(f.read(t, "tracing/README"), "place (kretprobe): [<module>:]<symbol>[+<offset>]%return|<memaddr>") {
		t.Error("README")
	}
	if got := f.read(t, "tracing/events/g/b/trigger"); !strings.HasPrefix(got, "# Available triggers:") {
		t.Errorf("trigger = %q", got)
	}
	write("tracing/events/g/b/trigger", "!traceon", false)
	write("tracing/dynamic_events", "", true)
	if f.read(t, "tracing/kprobe_events") != "" {
		t.Error("clearing dynamic_events left kprobe events")
	}
}

// kpemu's j: events: a jprobe-backed event whose record is the function's
// arguments by name.
func TestJprobeEvents(t *testing.T) {
	f := setup(t)
	if err := f.write("tracing/kprobe_events", "j:myj vfs_read\nj vfs_write\n", false); err != nil {
		t.Fatal(err)
	}
	if got := f.read(t, "tracing/kprobe_events"); got != "j:kprobes/myj vfs_read\nj:kprobes/j_vfs_write_0 vfs_write\n" {
		t.Errorf("kprobe_events = %q", got)
	}
	if list := f.read(t, "kprobes/list"); strings.Count(list, "  j  ") != 2 {
		t.Errorf("list:\n%s", list)
	}
	for _, bad := range []string{"j:x vfs_read+4", "j:x vfs_read fd=%x0", "j:x nosuch", "j:myj vfs_write"} {
		if err := f.write("tracing/kprobe_events", bad, false); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if got := f.read(t, "tracing/events/kprobes/myj/format"); !strings.Contains(got, "\tfield:struct file * file;\toffset:16;\tsize:8;\tsigned:0;\n") ||
		!strings.Contains(got, "field:size_t count;") || !strings.Contains(got, `print fmt: "(%lx) file=0x%lx buf=0x%lx count=%lu pos=0x%lx", REC->__probe_ip, REC->file`) {
		t.Errorf("format:\n%s", got)
	}
	if err := f.write("tracing/events/kprobes/myj/enable", "1", true); err != nil {
		t.Fatal(err)
	}
	f.step(t, 1_000_000)
	trace := f.read(t, "tracing/trace")
	if !strings.Contains(trace, " myj: (vfs_read+0x0/0x") || !strings.Contains(trace, " file=0x") || !strings.Contains(trace, " count=") {
		t.Errorf("trace:\n%.1500s", trace)
	}
	if err := f.write("tracing/events/kprobes/myj/enable", "0", true); err != nil {
		t.Fatal(err)
	}
	if err := f.write("tracing/kprobe_events", "", true); err != nil || f.read(t, "kprobes/list") != "" {
		t.Errorf("clear: %v", err)
	}
}
