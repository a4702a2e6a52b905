package tracing_test

import (
	"context"
	"errors"
	"os"
	"regexp"
	"sort"
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
	field:__data_loc char[] s;	offset:28;	size:4;	signed:1;
	field:__data_loc char[] c;	offset:32;	size:4;	signed:1;
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

// TestFormatArrays: array arguments' fields and print fmt, byte for byte
// as the oracle (Debian's arm64 Linux 6.1.192) printed them: the type
// before the name and "[]" after it (a probe's field has no len), a
// string array as "__data_loc char[][N]" whole, its print fmt through
// __get_str.
func TestFormatArrays(t *testing.T) {
	const head = `format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;

	field:unsigned long __probe_ip;	offset:8;	size:8;	signed:0;
`
	for _, tt := range []struct{ name, args, fields, print string }{
		{"arr", "arr=+0(%x1):x8[4] sarr=+0(%x1):s16[2]", `	field:u8 arr[];	offset:16;	size:4;	signed:0;
	field:s16 sarr[];	offset:20;	size:4;	signed:1;
`, `print fmt: "(%lx) arr={0x%x,0x%x,0x%x,0x%x} sarr={%d,%d}", REC->__probe_ip, REC->arr[0], REC->arr[1], REC->arr[2], REC->arr[3], REC->sarr[0], REC->sarr[1]`},
		{"arr2", "a=+0(%x1):u32[3] b=+0(%x1):x64[2] d=+0(%x1):s8[1]", `	field:u32 a[];	offset:16;	size:12;	signed:0;
	field:u64 b[];	offset:28;	size:16;	signed:0;
	field:s8 d[];	offset:44;	size:1;	signed:1;
`, `print fmt: "(%lx) a={%u,%u,%u} b={0x%Lx,0x%Lx} d={%d}", REC->__probe_ip, REC->a[0], REC->a[1], REC->a[2], REC->b[0], REC->b[1], REC->d[0]`},
		{"arr3", "c=+0(%x1):string[2] f=+0(%x1):symbol[2]", `	field:__data_loc char[][2] c;	offset:16;	size:8;	signed:1;
	field:u64 f[];	offset:24;	size:16;	signed:0;
`, `print fmt: "(%lx) c={\"%s\",\"%s\"} f={%pS,%pS}", REC->__probe_ip, __get_str(c[0]), __get_str(c[1]), REC->f[0], REC->f[1]`},
		{"arr5", "h=+0(%x1):ustring[2] i=+0(%x1):b4@0/8[2]", `	field:__data_loc char[][2] h;	offset:16;	size:8;	signed:1;
	field:u8 i[];	offset:24;	size:2;	signed:0;
`, `print fmt: "(%lx) h={\"%s\",\"%s\"} i={%u,%u}", REC->__probe_ip, __get_str(h[0]), __get_str(h[1]), REC->i[0], REC->i[1]`},
		{"arr6", "h=+u0(%x1):string[2] i=+u0(%x1):ustring[2]", `	field:__data_loc char[][2] h;	offset:16;	size:8;	signed:1;
	field:__data_loc char[][2] i;	offset:24;	size:8;	signed:1;
`, `print fmt: "(%lx) h={\"%s\",\"%s\"} i={\"%s\",\"%s\"}", REC->__probe_ip, __get_str(h[0]), __get_str(h[1]), __get_str(i[0]), __get_str(i[1])`},
		{"u5", "a=+u0($arg2):string[2]", `	field:__data_loc char[][2] a;	offset:16;	size:8;	signed:1;
`, `print fmt: "(%lx) a={\"%s\",\"%s\"}", REC->__probe_ip, __get_str(a[0]), __get_str(a[1])`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := setup(t)
			if err := f.write("tracing/kprobe_events", "p:"+tt.name+" vfs_read "+tt.args+"\n", false); err != nil {
				t.Fatal(err)
			}
			id := strings.TrimSpace(f.read(t, "tracing/events/kprobes/"+tt.name+"/id"))
			want := "name: " + tt.name + "\nID: " + id + "\n" + head + tt.fields + "\n" + tt.print + "\n"
			if got := f.read(t, "tracing/events/kprobes/"+tt.name+"/format"); got != want {
				t.Errorf("format:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// What Linux 6.1 (Debian's 6.1.192, asked through shared/oracle) leaves in
// the filter file and error_log after each bad filter, and the errno the
// writer got: -ENOENT for an unclosed '(' is Linux's, calc_stack's
// TOO_MANY_OPEN returned as it is.
func TestFilterErrorsAsLinux(t *testing.T) {
	f := setup(t)
	write := func(p, d string) error { return f.write(p, d, false) }
	if err := write("tracing/kprobe_events", "p:myprobe vfs_read count=$arg3:u64 name=+0($arg1):u64"); err != nil {
		t.Fatal(err)
	}
	const filter = "tracing/events/kprobes/myprobe/filter"
	tests := []struct {
		write, file string
		errno       syscall.Errno
		caret       int // in error_log, under "  Command: "
	}{
		{"nosuchfield == 1\n", "nosuchfield == 1\n            ^\nparse_error: Field not found\n\n", syscall.EINVAL, 12},
		{"count > \n", "count >\n       ^\nparse_error: Invalid value (did you forget quotes)?\n\n", syscall.EINVAL, 8},
		{"(count > 1\n", "(count > 1\n^\nparse_error: Too many '('\n\n", syscall.ENOENT, 0},
		{"count == 1 &&\n", "count == 1 &&\n             ^\nparse_error: Meaningless filter expression\n\n", syscall.EINVAL, 13},
		{"comm ~ 1\n", "comm ~ 1\n        ^\nparse_error: Expecting string field\n\n", syscall.EINVAL, 8},
		{"count == abc\n", "count == abc\n          ^\nparse_error: Invalid value (did you forget quotes)?\n\n", syscall.EINVAL, 10},
		{"bad bad\n", "bad bad\n    ^\nparse_error: Field not found\n\n", syscall.EINVAL, 4},
	}
	for _, tt := range tests {
		if err := f.write("tracing/error_log", "\n", true); err != nil { // echo > error_log
			t.Fatal(err)
		}
		if err := write(filter, "count > 10"); err != nil {
			t.Fatal(err)
		}
		if err := write(filter, tt.write); !errors.Is(err, tt.errno) {
			t.Errorf("filter %q: %v, want %v", tt.write, err, tt.errno)
		}
		if got := f.read(t, filter); got != tt.file {
			t.Errorf("filter %q leaves\n%q, want\n%q", tt.write, got, tt.file)
		}
		log := strings.Split(f.read(t, "tracing/error_log"), "\n")
		msg := tt.file[strings.Index(tt.file, "parse_error: ")+len("parse_error: "):]
		msg = strings.TrimRight(msg, "\n")
		if len(log) != 4 || !strings.HasSuffix(log[0], "] event filter parse error: error: "+msg) ||
			log[1] != "  Command: "+strings.TrimRight(tt.write, " \n") || log[2] != strings.Repeat(" ", 11+tt.caret)+"^" {
			t.Errorf("filter %q: error_log\n%s", tt.write, strings.Join(log, "\n"))
		}
	}
	// More of Linux's answers (same oracle run): errno and the filter file.
	more := []struct {
		write, file string
		errno       syscall.Errno // 0: accepted
	}{
		{`count == "x`, "count == \"x\n         ^\nparse_error: Missing matching quote\n\n", syscall.ESRCH},
		{"count == 1)", "count == 1)\n          ^\nparse_error: Too few '('\n\n", syscall.EPERM},
		{"count = 1", "count = 1\n       ^\nparse_error: Invalid operator\n\n", syscall.EINVAL},
		{`count < "x"`, "count < \"x\"\n         ^\nparse_error: Illegal operation for field type\n\n", syscall.EINVAL},
		{`count == "x"`, "count == \"x\"\n          ^\nparse_error: Expecting numeric field\n\n", syscall.EINVAL},
		{"count ~ 1", "count ~ 1\n         ^\nparse_error: Illegal operation for field type\n\n", syscall.EINVAL},
		{"count == 1x", "count == 1x\n          ^\nparse_error: Illegal integer value\n\n", syscall.EINVAL},
		{"count == 1 count == 2", "count == 1 count == 2\n           ^\nparse_error: Too many terms in predicate expression\n\n", syscall.EPERM},
		{"== 1", "== 1\nError: (0)\n\n", syscall.EPERM},
		{`!(count == 1) || comm == "sh"`, "!(count == 1) || comm == \"sh\"\n", 0},
		{"count == -1", "count == -1\n          ^\nparse_error: Illegal integer value\n\n", syscall.EINVAL},
		{"common_pid == -1", "common_pid == -1\n", 0},
		{"comm == sh", "comm == sh\n         ^\nparse_error: Invalid value (did you forget quotes)?\n\n", syscall.EINVAL},
		{"  count > 1", "  count > 1\n", 0},
		{"count == 0b1", "count == 0b1\n          ^\nparse_error: Illegal integer value\n\n", syscall.EINVAL},
		{"count == 010", "count == 010\n", 0},
		{"", "\nError: (0)\n\n", syscall.EINVAL},
		{"   ", "\nError: (0)\n\n", syscall.EINVAL},
		{" 0 ", "none\n", 0},
	}
	for _, tt := range more {
		err := write(filter, tt.write+"\n")
		if tt.errno == 0 && err != nil || tt.errno != 0 && !errors.Is(err, tt.errno) {
			t.Errorf("filter %q: %v, want errno %d", tt.write, err, tt.errno)
		}
		if got := f.read(t, filter); got != tt.file {
			t.Errorf("filter %q leaves\n%q, want\n%q", tt.write, got, tt.file)
		}
	}
	if err := write(filter, "0"); err != nil {
		t.Fatal(err)
	}
	if got := f.read(t, filter); got != "none\n" {
		t.Errorf("after 0: %q", got)
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
	for _, bad := range []string{"nosuch == 1", "n ~ 3", "c < 3", "n ==", "n == 1 &&", "n == x1", "c == kworker"} {
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
	// The common fields and the generic CPU: a kprobe record has interrupts
	// off (TRACE_FLAG_IRQS_OFF) and the event's id as its type.
	id := strings.TrimSpace(f.read(t, "tracing/events/kprobes/rd/id"))
	for _, tt := range []struct {
		filter string
		some   bool
	}{
		{"CPU == 0 && common_flags & 1 && common_type == " + id + " && common_preempt_count == 0", true},
		{"cpu > 7 || common_type != " + id, false},
	} {
		if err := write("tracing/events/kprobes/rd/filter", tt.filter); err != nil {
			t.Fatalf("filter %q: %v", tt.filter, err)
		}
		if err := f.write("tracing/trace", "", true); err != nil {
			t.Fatal(err)
		}
		f.step(t, 2_000_000)
		n := 0
		for _, l := range strings.Split(f.read(t, "tracing/trace"), "\n") {
			if strings.Contains(l, " rd: (") {
				n++
				if !strings.Contains(l, " [000] ") {
					t.Errorf("filter %q let through %q", tt.filter, l)
				}
			}
		}
		if (n > 0) != tt.some {
			t.Errorf("filter %q: %d records", tt.filter, n)
		}
	}
	if err := write("tracing/events/kprobes/rd/filter", "0"); err != nil || f.read(t, "tracing/events/kprobes/rd/filter") != "none\n" {
		t.Errorf("clearing the filter: %v", err)
	}
}

// CPU filters by the CPU that took the hit, on a two-CPU guest.
func TestFilterCPU(t *testing.T) {
	f := setupCPUs(t, 2)
	for _, w := range [][2]string{{"tracing/kprobe_events", "p:rd vfs_read"}, {"tracing/events/kprobes/rd/filter", "CPU == 1"}, {"tracing/events/kprobes/rd/enable", "1"}} {
		if err := f.write(w[0], w[1], false); err != nil {
			t.Fatalf("%s: %v", w[0], err)
		}
	}
	n := 0
	for i := 0; i < 20 && n == 0; i++ {
		f.step(t, 2_000_000)
		for _, l := range strings.Split(f.read(t, "tracing/trace"), "\n") {
			if strings.Contains(l, " rd: (") {
				n++
				if !strings.Contains(l, " [001] ") {
					t.Fatalf("CPU == 1 let through %q", l)
				}
			}
		}
	}
	if n == 0 {
		t.Error("no vfs_read on CPU 1 passed the filter")
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
	// newest first, as Linux's ftrace_events list, then the static
	// events in id order (oracle)
	if got := withoutSyscalls(f.read(t, "tracing/available_events")); got != "g:b\nkprobes:a\n"+
		"signal:signal_deliver\nsignal:signal_generate\n"+
		"sched:sched_process_fork\nsched:sched_process_exit\nsched:sched_process_free\n"+
		"sched:sched_switch\nsched:sched_wakeup_new\nsched:sched_wakeup\nsched:sched_waking\n"+
		"kmem:kfree\nkmem:kmalloc\n" {
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
	if err := f.write("tracing/current_tracer", "bogus\n", true); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("current_tracer bogus: %v", err)
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

// TestEventNamedLikeAFile follows the oracle: an event named like a file
// of its group's directory (enable, filter), or a group named like a file
// of events/ (enable, header_page, header_event), is accepted; Linux's
// event_create_dir cannot make its directory, warns, and the event lives
// without its files, while the group's (or events/') file stays. Names
// that are files of an event's directory (format, id, trigger, hist,
// inject) are plain events.
func TestEventNamedLikeAFile(t *testing.T) {
	f := setup(t)
	// An instance's events/ gets the events as the top's does.
	if err := f.mkdir(t, "instances", "inst"); err != nil {
		t.Fatal(err)
	}
	must := func(file, data string) {
		t.Helper()
		if err := f.write("tracing/"+file, data, false); err != nil {
			t.Fatalf("%s < %q: %v", file, data, err)
		}
	}
	var defs string
	for _, n := range []string{"enable", "filter", "format", "id", "trigger", "hist", "inject"} {
		must("kprobe_events", "p:"+n+" vfs_read\n")
		defs += "p:kprobes/" + n + " vfs_read\n"
	}
	for _, g := range []string{"enable", "header_page", "header_event", "filter", "ftrace"} {
		must("kprobe_events", "p:"+g+"/foo vfs_read\n")
		defs += "p:" + g + "/foo vfs_read\n"
	}
	if got := f.read(t, "tracing/kprobe_events"); got != defs {
		t.Errorf("kprobe_events = %q, want %q", got, defs)
	}
	nodes, err := f.tree.ReadDir("tracing/events/kprobes")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range nodes {
		kind := "dir"
		if _, err := f.tree.LookupDir("tracing/events/kprobes/" + n.Name()); err != nil {
			kind = "file"
		}
		got = append(got, n.Name()+":"+kind)
	}
	sort.Strings(got)
	if want := "enable:file filter:file format:dir hist:dir id:dir inject:dir trigger:dir"; strings.Join(got, " ") != want {
		t.Errorf("events/kprobes = %s, want %s", strings.Join(got, " "), want)
	}
	for _, p := range []string{"kprobes/format/format", "kprobes/id/id", "kprobes/trigger/trigger", "filter/foo/format", "ftrace/foo/format"} {
		f.read(t, "tracing/events/"+p)
	}
	if got := f.read(t, "tracing/events/kprobes/enable"); got != "0\n" {
		t.Errorf("events/kprobes/enable = %q", got)
	}
	if got := f.read(t, "tracing/events/enable"); got != "0\n" {
		t.Errorf("events/enable = %q", got)
	}
	for _, p := range []string{"enable", "header_page", "header_event"} {
		if _, err := f.tree.LookupFile("tracing/events/" + p); err != nil {
			t.Errorf("events/%s: %v", p, err)
		}
	}
	must("set_event", "kprobes:enable\n")
	if got := f.read(t, "tracing/set_event"); got != "kprobes:enable\n" {
		t.Errorf("set_event = %q", got)
	}
	if got := f.read(t, "tracing/events/kprobes/enable"); got != "X\n" {
		t.Errorf("events/kprobes/enable = %q, want X (one of its events on)", got)
	}
	must("set_event", "kprobes:filter\n")
	if got := f.read(t, "tracing/set_event"); got != "kprobes:filter\nkprobes:enable\n" {
		t.Errorf("set_event = %q", got)
	}
	if err := f.write("tracing/set_event", "", true); err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{"-:kprobes/enable", "-:kprobes/filter", "-:enable/foo", "-:header_page/foo"} {
		must("kprobe_events", l+"\n")
	}
	for _, p := range []string{"kprobes/enable", "kprobes/filter", "enable", "header_page"} {
		if _, err := f.tree.LookupFile("tracing/events/" + p); err != nil {
			t.Errorf("after the removals, events/%s: %v", p, err)
		}
	}
	if got := f.read(t, "tracing/events/kprobes/enable"); got != "0\n" {
		t.Errorf("events/kprobes/enable = %q", got)
	}
	for _, p := range []string{"events/kprobes/enable", "events/kprobes/filter", "events/enable", "events/header_page", "events/kprobes/format/format"} {
		if _, err := f.tree.Lookup("tracing/instances/inst/" + p); err != nil {
			t.Errorf("instance: %v", err)
		}
	}
	if err := f.rmdir(t, "instances", "inst"); err != nil {
		t.Errorf("rmdir instances/inst: %v", err)
	}
}

// TestNULInEventFiles: one write(2) with a NUL to set_event, an event's
// filter and trigger, and a group's filter, as the oracle answered:
// set_event's trace_get_user ends the word at the NUL and returns what it
// read (a short count: the writer would write the rest again), the
// filter and trigger files take the write up to the NUL (memdup_user_nul)
// and return its whole length.
func TestNULInEventFiles(t *testing.T) {
	f := setup(t)
	if err := f.write("tracing/kprobe_events", "p:trg vfs_read\np:trg2 vfs_read\n", false); err != nil {
		t.Fatal(err)
	}
	once := func(p, data string) (int, error) {
		t.Helper()
		ctx := context.Background()
		h, err := f.tree.Open(ctx, "tracing/"+p, os.O_WRONLY|os.O_APPEND)
		if err != nil {
			t.Fatal(err)
		}
		defer h.Release()
		return h.Write(ctx, []byte(data), 0)
	}
	for _, tt := range []struct {
		file, data string
		n          int    // or, when negative, EINVAL
		read, want string // a file read afterwards and what it shows
	}{
		{"set_event", "kprobes:trg\x00x\n", 12, "set_event", "kprobes:trg\n"},
		{"set_event", "!kprobes:trg\x00x\n", 13, "set_event", ""},
		{"set_event", "kprobes:trg\n\x00", 12, "set_event", "kprobes:trg\n"},
		{"events/kprobes/trg/filter", "common_pid == 1\x00 x\n", 19, "events/kprobes/trg/filter", "common_pid == 1\n"},
		{"events/kprobes/trg/filter", "0\n", 2, "events/kprobes/trg/filter", "none\n"},
		{"events/kprobes/filter", "common_pid == 1\x00 x\n", 19, "events/kprobes/trg/filter", "common_pid == 1\n"},
		{"events/kprobes/trg/trigger", "traceon\x00x\n", 10, "events/kprobes/trg/trigger", "traceon:unlimited\n"},
		{"events/kprobes/trg/trigger", "!traceon\x00x\n", 11, "events/kprobes/trg/trigger", kpemuAvailableTriggers},
		// One word per write(2), white space before it skipped; a write
		// of nothing but white space, or a NUL, reads one byte.
		{"set_event", "kprobes:trg kprobes:trg2\n", 12, "set_event", "kprobes:trg\n"},
		{"set_event", "  kprobes:trg2\n", 15, "set_event", "kprobes:trg2\nkprobes:trg\n"},
		{"set_event", "\n", 1, "set_event", "kprobes:trg2\nkprobes:trg\n"},
		{"set_event", "\x00", 1, "set_event", "kprobes:trg2\nkprobes:trg\n"},
		{"set_event", "nosuch:ev\x00x\n", -1, "set_event", "kprobes:trg2\nkprobes:trg\n"},
		{"events/kprobes/trg/filter", "common_pid == 1\x00", 16, "events/kprobes/trg/filter", "common_pid == 1\n"},
		// Nothing before the NUL: the empty filter's error.
		{"events/kprobes/trg/filter", "\x00", -1, "events/kprobes/trg/filter", "\nError: (0)\n\n"},
	} {
		n, err := once(tt.file, tt.data)
		if tt.n < 0 {
			if !errors.Is(err, syscall.EINVAL) {
				t.Errorf("write(%s, %q) = %d, %v; want EINVAL", tt.file, tt.data, n, err)
			}
		} else if err != nil || n != tt.n {
			t.Errorf("write(%s, %q) = %d, %v; want %d", tt.file, tt.data, n, err, tt.n)
		}
		if got := f.read(t, "tracing/"+tt.read); got != tt.want {
			t.Errorf("after %q, %s = %q, want %q", tt.data, tt.read, got, tt.want)
		}
	}
	if got, want := f.read(t, "tracing/error_log"), "] event filter parse error: error: Error\n  Command: \n           ^\n"; !strings.HasSuffix(got, want) || strings.Count(got, "\n") != 3 {
		t.Errorf("error_log = %q, want one entry ending %q", got, want)
	}
}

// TestSymstr: a symstr argument is a __data_loc string of the value's
// symbol (sprint_symbol, as %pS), as the oracle's format showed; and, as
// Linux 6.1's fetch_store_symstring leaves each name without its NUL in
// the record, each symstr's text runs on into the symstrs after it: the
// oracle printed a="0xffff131d4303c600ksys_read+0x7c/0x1140x00x0"
// b="ksys_read+0x7c/0x1140x00x0" c="0x00x0" d="0x0".
func TestSymstr(t *testing.T) {
	f := setup(t)
	for _, w := range [][2]string{
		{"kprobe_events", "p:sy vfs_read a=%x0:symstr b=%lr:symstr c=$stack0:symstr d=+0(%x0):symstr\n"},
		{"kprobe_events", "p:sy5 vfs_read a=$arg1:symstr\n"},
		{"events/kprobes/enable", "1\n"},
	} {
		if err := f.write("tracing/"+w[0], w[1], false); err != nil {
			t.Fatalf("%s < %q: %v", w[0], w[1], err)
		}
	}
	id := strings.TrimSpace(f.read(t, "tracing/events/kprobes/sy/id"))
	want := "name: sy\nID: " + id + `
format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;

	field:unsigned long __probe_ip;	offset:8;	size:8;	signed:0;
	field:__data_loc char[] a;	offset:16;	size:4;	signed:1;
	field:__data_loc char[] b;	offset:20;	size:4;	signed:1;
	field:__data_loc char[] c;	offset:24;	size:4;	signed:1;
	field:__data_loc char[] d;	offset:28;	size:4;	signed:1;

print fmt: "(%lx) a=\"%s\" b=\"%s\" c=\"%s\" d=\"%s\"", REC->__probe_ip, __get_str(a), __get_str(b), __get_str(c), __get_str(d)
`
	if got := f.read(t, "tracing/events/kprobes/sy/format"); got != want {
		t.Errorf("format:\n%s\nwant:\n%s", got, want)
	}
	f.step(t, 3_000_000)
	trace := f.read(t, "tracing/trace")
	re := regexp.MustCompile(` sy: \(vfs_read\+0x0/0x[0-9a-f]+\) a="([^"]*)" b="([^"]*)" c="([^"]*)" d="([^"]*)"\n`)
	m := re.FindStringSubmatch(trace)
	if m == nil {
		t.Fatalf("no sy line:\n%s", trace)
	}
	a, b, c, d := m[1], m[2], m[3], m[4]
	if !strings.HasSuffix(a, b) || !strings.HasSuffix(b, c) || !strings.HasSuffix(c, d) || !strings.HasPrefix(a, "0xffff") || !regexp.MustCompile(`^\w+\+0x[0-9a-f]+/0x[0-9a-f]+0x`).MatchString(b) {
		t.Errorf("symstrs do not run on as Linux's: %q", m[0])
	}
	re5 := regexp.MustCompile(` sy5: \(vfs_read\+0x0/0x[0-9a-f]+\) a="0xffff[0-9a-f]+"\n`)
	if !re5.MatchString(trace) {
		t.Errorf("no sy5 line with a lone symstr:\n%s", trace)
	}
}

// TestAppendProbeArgs follows the oracle's third run: an appended probe
// must match the event's argument names, types and array sizes
// (trace_probe_compare_arg_type), keeps its own argument expressions,
// which kprobe_events shows, and resolves its own @SYMs.
func TestAppendProbeArgs(t *testing.T) {
	f := setup(t)
	for _, tt := range []struct {
		line  string
		errno syscall.Errno
		log   string // the error_log entry without its time stamp
	}{
		{"p:ac vfs_read a=+0(%x1):u8[2]", 0, ""},
		{"p:ac vfs_write a=+0(%x1):u8[4]", syscall.EEXIST, "trace_kprobe: error: Argument type or name is different from existing probe\n  Command: p:ac vfs_write a=+0(%x1):u8[4]\n                          ^\n"},
		{"p:ac vfs_write a=+0(%x1):u8", syscall.EEXIST, "trace_kprobe: error: Argument type or name is different from existing probe\n  Command: p:ac vfs_write a=+0(%x1):u8\n                          ^\n"},
		{"p:ac2 vfs_read a=+0(%x1):u8", 0, ""},
		{"p:ac2 vfs_write a=+0(%x1):b4@0/8", 0, ""},
		{"p:ap2 vfs_read x=@vfs_read", 0, ""},
		{"p:ap2 vfs_write x=@nosuch_symbol", syscall.ENOENT, "trace_kprobe: error: Invalid probed address or symbol\n  Command: p:ap2 vfs_write x=@nosuch_symbol\n                 ^\n"},
		{"p:ap2 vfs_write x=@vfs_write", 0, ""},
		{"p:ap3 vfs_read x=%x0:symstr", 0, ""},
		{"p:ap3 vfs_write x=%x0:string", syscall.EINVAL, "trace_kprobe: error: String accepts only memory argument\n  Command: p:ap3 vfs_write x=%x0:string\n                                 ^\n"},
	} {
		if err := f.write("tracing/error_log", "", true); err != nil {
			t.Fatal(err)
		}
		err := f.write("tracing/kprobe_events", tt.line+"\n", false)
		if tt.errno == 0 && err != nil || tt.errno != 0 && !errors.Is(err, tt.errno) {
			t.Errorf("%s: %v, want %v", tt.line, err, tt.errno)
		}
		if got := regexp.MustCompile(`(?m)^\[ *\d+\.\d+\] `).ReplaceAllString(f.read(t, "tracing/error_log"), ""); got != tt.log {
			t.Errorf("%s: error_log = %q, want %q", tt.line, got, tt.log)
		}
	}
	want := `p:kprobes/ac vfs_read a=+0(%x1):u8[2]
p:kprobes/ac2 vfs_read a=+0(%x1):u8
p:kprobes/ac2 vfs_write a=+0(%x1):b4@0/8
p:kprobes/ap2 vfs_read x=@vfs_read
p:kprobes/ap2 vfs_write x=@vfs_write
p:kprobes/ap3 vfs_read x=%x0:symstr
`
	if got := f.read(t, "tracing/kprobe_events"); got != want {
		t.Errorf("kprobe_events:\n%s\nwant:\n%s", got, want)
	}
}

// TestSymstrFault: a symstr whose fetch faults stores nothing and keeps
// the __data_loc store_trace_args gave it (the room left, at the dynamic
// data's end), so it prints what comes there: the next symstr's name, or
// "" when only the last name's NUL is left. The oracle printed
// a="ksys_read+0x7c/0x114" b="ksys_read+0x7c/0x114" for
// "a=+0(%x2):symstr b=%lr:symstr", b="ksys_read+0x7c/0x114" a="" for the
// reverse, and a="ksys_read+0x7c/0x114" s=(fault) c="ksys_read+0x7c/0x114"
// with a faulting string between.
func TestSymstrFault(t *testing.T) {
	f := setup(t)
	for _, w := range [][2]string{
		{"kprobe_events", "p:sf vfs_read a=+0(%x2):symstr b=%lr:symstr\n"},
		{"kprobe_events", "p:sf2 vfs_read b=%lr:symstr a=+0(%x2):symstr\n"},
		{"kprobe_events", "p:sf3 vfs_read a=+0(%x2):symstr s=+0(%x2):string c=%lr:symstr\n"},
		{"events/kprobes/enable", "1\n"},
	} {
		if err := f.write("tracing/"+w[0], w[1], false); err != nil {
			t.Fatalf("%s < %q: %v", w[0], w[1], err)
		}
	}
	f.step(t, 3_000_000)
	trace := f.read(t, "tracing/trace")
	sym := `\w+\+0x[0-9a-f]+/0x[0-9a-f]+`
	for _, re := range []string{
		` sf: \(vfs_read\+0x0/0x[0-9a-f]+\) a="(` + sym + `)" b="(` + sym + `)"\n`,
		` sf2: \(vfs_read\+0x0/0x[0-9a-f]+\) b="(` + sym + `)" a=""\n`,
		` sf3: \(vfs_read\+0x0/0x[0-9a-f]+\) a="(` + sym + `)" s=\(fault\) c="(` + sym + `)"\n`,
	} {
		m := regexp.MustCompile(re).FindStringSubmatch(trace)
		if m == nil || len(m) == 3 && m[1] != m[2] {
			t.Errorf("no line matching %s (with the same names):\n%s", re, trace)
		}
	}
}

// TestStringFaultBeforeStore: a string argument whose fetch faults in a
// dereference before the string is read stores nothing and keeps the
// __data_loc store_trace_args gave it (the room left, at the dynamic
// data's end), so it prints the next dynamic argument's string, or
// (fault) when no room is left; an array's other elements, never stored,
// print (fault). A fault in the string's own read is (fault). The
// oracle's fourth run, line for line.
func TestStringFaultBeforeStore(t *testing.T) {
	f := setup(t)
	for _, l := range []string{
		"p:sf4 vfs_read s=+0(+0(%x2)):string t=%lr:symstr",
		"p:sf5 vfs_read s=+0(%x2):string t=%lr:symstr",
		"p:sf6 vfs_read s=+0(+0(%x2)):string",
		"p:sf7 vfs_read a=+0(+0(%x2)):string c=$comm",
		"p:sf8 vfs_read a=+0(+0(%x2)):string[2] c=$comm",
		"p:sf9 vfs_read a=+0(+0(%x2)):u32 c=$comm",
	} {
		if err := f.write("tracing/kprobe_events", l+"\n", false); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
	}
	if err := f.write("tracing/events/kprobes/enable", "1\n", false); err != nil {
		t.Fatal(err)
	}
	f.step(t, 3_000_000)
	trace := f.read(t, "tracing/trace")
	head := ` \(vfs_read\+0x0/0x[0-9a-f]+\) `
	sym := `\w+\+0x[0-9a-f]+/0x[0-9a-f]+`
	for _, re := range []string{
		` sf4:` + head + `s="(` + sym + `)" t="(` + sym + `)"\n`,
		` sf5:` + head + `s=\(fault\) t="` + sym + `"\n`,
		` sf6:` + head + `s=\(fault\)\n`,
		` sf7:` + head + `a="([^"]+)" c="([^"]+)"\n`,
		` sf8:` + head + `a=\{"([^"]+)",\(fault\)\} c="([^"]+)"\n`,
		` sf9:` + head + `a=0 c="[^"]+"\n`,
	} {
		m := regexp.MustCompile(re).FindStringSubmatch(trace)
		if m == nil || len(m) == 3 && m[1] != m[2] {
			t.Errorf("no line matching %s (with the same strings):\n%s", re, trace)
		}
	}
}
