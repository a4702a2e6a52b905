package tracing_test

import (
	"errors"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// The expectations below are what arm64 Linux 6.1 (Debian's 6.1.192,
// under QEMU with a busybox initramfs: /bin/sh a symlink to the regular
// file /bin/busybox, /sys a directory) printed for the same writes.

// uprobeFixture is a fixture whose guest runs, so that uprobe paths
// resolve in its file system.
func uprobeFixture(t *testing.T) *fixture {
	t.Helper()
	f := setup(t)
	f.run(t)
	return f
}

// errLogTail is error_log without the entries' timestamps.
var errLogStamp = regexp.MustCompile(`(?m)^\[ *\d+\.\d{6}\] `)

func (f *fixture) errLog(t *testing.T) string {
	t.Helper()
	return errLogStamp.ReplaceAllString(f.read(t, "tracing/error_log"), "")
}

// TestUprobeErrorLog writes each bad definition to uprobe_events alone, as
// the kselftest uprobe_syntax_errors.tc does, and compares the errno and
// the error_log entry byte for byte with Linux's.
func TestUprobeErrorLog(t *testing.T) {
	f := uprobeFixture(t)
	tests := []struct {
		line  string
		errno syscall.Errno
		log   string // the entry without its timestamp; "" when Linux logs nothing
	}{
		// uprobe_syntax_errors.tc
		{"p /non_exist_file:100", syscall.ENOENT, "trace_uprobe: error: Failed to find the given file\n  Command: p /non_exist_file:100\n             ^\n"},
		{"p /sys:100", syscall.EINVAL, "trace_uprobe: error: Not a regular file\n  Command: p /sys:100\n             ^\n"},
		{"p /bin/sh:10a", syscall.EINVAL, "trace_uprobe: error: Invalid uprobe offset\n  Command: p /bin/sh:10a\n                     ^\n"},
		{"p /bin/sh:10(1a)", syscall.EINVAL, "trace_uprobe: error: Invalid reference counter offset\n  Command: p /bin/sh:10(1a)\n                        ^\n"},
		{"p /bin/sh:10(10", syscall.EINVAL, "trace_uprobe: error: Reference counter brace is not closed\n  Command: p /bin/sh:10(10\n                          ^\n"},
		{"p /bin/sh:10(10)a", syscall.EINVAL, "trace_uprobe: error: Reference counter has wrong suffix\n  Command: p /bin/sh:10(10)a\n                           ^\n"},
		{"p /bin/sh:10 @+ab", syscall.EINVAL, "trace_uprobe: error: Invalid file offset value\n  Command: p /bin/sh:10 @+ab\n                        ^\n"},
		{"p /bin/sh:10 @symbol", syscall.EINVAL, "trace_uprobe: error: Symbol is not available with uprobe\n  Command: p /bin/sh:10 @symbol\n                        ^\n"},
		{"p /bin/sh:10%hoge", syscall.EINVAL, "trace_uprobe: error: Invalid probed address suffix\n  Command: p /bin/sh:10%hoge\n                       ^\n"},
		{"p /bin/sh:10(10)%return", syscall.EINVAL, "trace_uprobe: error: Reference counter has wrong suffix\n  Command: p /bin/sh:10(10)%return\n                           ^\n"},
		// the conversions' own errnos
		{"p /bin/sh:99999999999999999999999", syscall.ERANGE, "trace_uprobe: error: Invalid uprobe offset\n  Command: p /bin/sh:99999999999999999999999\n                     ^\n"},
		{"p /bin/sh:10(99999999999999999999999)", syscall.ERANGE, "trace_uprobe: error: Invalid reference counter offset\n  Command: p /bin/sh:10(99999999999999999999999)\n                        ^\n"},
		{"p /bin/sh:0x", syscall.EINVAL, "trace_uprobe: error: Invalid uprobe offset\n  Command: p /bin/sh:0x\n                     ^\n"},
		{"p /bin/sh:0b1", syscall.EINVAL, "trace_uprobe: error: Invalid uprobe offset\n  Command: p /bin/sh:0b1\n                     ^\n"},
		{"p /bin/sh:1_0", syscall.EINVAL, "trace_uprobe: error: Invalid uprobe offset\n  Command: p /bin/sh:1_0\n                     ^\n"},
		{"p /bin/sh:10 @+99999999999999999999999", syscall.ERANGE, "trace_uprobe: error: Invalid file offset value\n  Command: p /bin/sh:10 @+99999999999999999999999\n                        ^\n"},
		// not uprobe definitions: EINVAL, nothing logged
		{"p /bin/sh:+5", syscall.EINVAL, ""},
		{"p /bin/sh:", syscall.EINVAL, ""},
		{"p /bin/sh:x", syscall.EINVAL, ""},
		{"p /bin/sh", syscall.EINVAL, ""},
		{"vfs_read", syscall.EINVAL, ""},
		{"p vfs_read", syscall.EINVAL, ""},
		{"p:kp vfs_read", syscall.EINVAL, ""},
		{"x /bin/sh:1", syscall.EINVAL, ""},
		{"p", syscall.EINVAL, ""},
		{"!:grp/ev", syscall.EINVAL, ""},
		{"-:", syscall.EINVAL, ""},
		{"-", syscall.EINVAL, ""},
		{"-:nosuch", syscall.ENOENT, ""},
		// the path
		{"p /bin/sh/x:1", syscall.ENOTDIR, "trace_uprobe: error: Failed to find the given file\n  Command: p /bin/sh/x:1\n             ^\n"},
		{"p /sys/kernel/debug:1", syscall.EINVAL, "trace_uprobe: error: Not a regular file\n  Command: p /sys/kernel/debug:1\n             ^\n"},
		{"p bin/sh:1", syscall.ENOENT, "trace_uprobe: error: Failed to find the given file\n  Command: p bin/sh:1\n             ^\n"},
		{"p ./bin/sh:1", syscall.ENOENT, "trace_uprobe: error: Failed to find the given file\n  Command: p ./bin/sh:1\n             ^\n"},
		{"p /tmp/:1", syscall.EINVAL, "trace_uprobe: error: Not a regular file\n  Command: p /tmp/:1\n             ^\n"},
		// fetch arguments in a uprobe's context
		{"p /bin/sh:10 $arg1", syscall.EINVAL, "trace_uprobe: error: Invalid $-variable specified\n  Command: p /bin/sh:10 $arg1\n                        ^\n"},
		{"p /bin/sh:10 $retval", syscall.EINVAL, "trace_uprobe: error: $retval is not available on probe\n  Command: p /bin/sh:10 $retval\n                        ^\n"},
		{"p /bin/sh:10 +0(@sym)", syscall.EINVAL, "trace_uprobe: error: Symbol is not available with uprobe\n  Command: p /bin/sh:10 +0(@sym)\n                           ^\n"},
		{"p /bin/sh:10 a=+0(%x0 b=%x1", syscall.EINVAL, "trace_uprobe: error: Dereference brace is not closed\n  Command: p /bin/sh:10 a=+0(%x0 b=%x1\n                                ^\n"},
		// the event's name
		{"p:9x /bin/sh:10", syscall.EINVAL, "trace_uprobe: error: Event name must follow the same rules as C identifiers\n  Command: p:9x /bin/sh:10\n             ^\n"},
		{"p:/x /bin/sh:10", syscall.EINVAL, "trace_uprobe: error: Group name is not specified\n  Command: p:/x /bin/sh:10\n             ^\n"},
		{"p:g/9x /bin/sh:10", syscall.EINVAL, "trace_uprobe: error: Event name must follow the same rules as C identifiers\n  Command: p:g/9x /bin/sh:10\n               ^\n"},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			if err := f.write("tracing/error_log", "", true); err != nil {
				t.Fatal(err)
			}
			// As the kselftest: printf "%s" "$command" >> uprobe_events
			err := f.write("tracing/uprobe_events", tt.line, false)
			if !errors.Is(err, tt.errno) {
				t.Errorf("write = %v, want %v", err, tt.errno)
			}
			if got := f.errLog(t); got != tt.log {
				t.Errorf("error_log:\n%s\nwant:\n%s", got, tt.log)
			}
			if got := f.read(t, "tracing/uprobe_events"); got != "" {
				t.Errorf("uprobe_events = %q after a failed write", got)
			}
		})
	}
}

// The valid forms read back in Linux's format, in uprobe_events and
// dynamic_events, with auto names, ref_ctr_offset, %return, args; the
// same place twice, another probe type, other arguments are refused as
// Linux refuses them.
func TestUprobeEventsReadBack(t *testing.T) {
	f := uprobeFixture(t)
	ok := []string{
		"p /bin/sh:10 @+-0x10",
		"p10 /bin/sh:0x11",
		`p:x /bin/sh:1 a=$stack99999 b=$stack c=$stack3 d=$comm e=%x0:x32 f=+8(%sp):u64 g=+u0(%x1):string h=@0x1000 i=@+0x10:s16 j=\1 k=\"hi" l=%pc m=%lr:symbol n=$COMM:string`,
		"r /bin/sh:0x20",
		"p /bin/sh:0x30%return",
		"p:rc /bin/sh:0x40(0x50)",
		"p:rc3 /bin/sh:0x40(0x50)",
		"p:rc4 /bin/sh:0x60%return(0x70)",
		"p:myup /bin/sh:0x80 a=%x0 b=$stack c=$comm",
		"r:myret /bin/sh:0x90 rv=$retval",
		"p:grp.ev /bin/sh:0xa0",
		"p:uprobes/ /bin/sh:0xb0",
		"p //bin//sh:0xc0",
		"p:myup /bin/sh:0x88 a=%x0 b=$stack c=$comm",
		"p:myup /bin/sh:0x80 a=%x0 b=$stack c=$COMM",
	}
	for _, line := range ok {
		if err := f.write("tracing/uprobe_events", line+"\n", false); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
	}
	bad := []struct {
		line  string
		errno syscall.Errno
		log   string
	}{
		{"p /bin/sh:10", syscall.EEXIST, "trace_uprobe: error: Argument type or name is different from existing probe\n  Command: p /bin/sh:10\n                        ^\n"},
		{"p:rc2 /bin/sh:0x40(0x54)", syscall.EINVAL, ""}, // dmesg: Reference counter offset mismatch.
		{"p:myup /bin/sh:0x80 a=%x0 b=$stack c=$comm", syscall.EEXIST, "trace_uprobe: error: There is already the exact same probe event\n  Command: p:myup /bin/sh:0x80 a=%x0 b=$stack c=$comm\n           ^\n"},
		{"r:myup /bin/sh:0x88 a=%x0 b=$stack c=$comm", syscall.EEXIST, "trace_uprobe: error: Probe type is different from existing probe\n  Command: r:myup /bin/sh:0x88 a=%x0 b=$stack c=$comm\n           ^\n"},
		{"p:myup /bin/sh:0x88 a=%x0", syscall.EEXIST, "trace_uprobe: error: Argument type or name is different from existing probe\n  Command: p:myup /bin/sh:0x88 a=%x0\n                                     ^\n"},
		// the same file through another name is the same probe
		{"p:myup /sys/../bin/sh:0x80 a=%x0 b=$stack c=$comm", syscall.EEXIST, "trace_uprobe: error: There is already the exact same probe event\n  Command: p:myup /sys/../bin/sh:0x80 a=%x0 b=$stack c=$comm\n           ^\n"},
	}
	for _, tt := range bad {
		if err := f.write("tracing/error_log", "", true); err != nil {
			t.Fatal(err)
		}
		if err := f.write("tracing/uprobe_events", tt.line, false); !errors.Is(err, tt.errno) {
			t.Errorf("%s: write = %v, want %v", tt.line, err, tt.errno)
		}
		if got := f.errLog(t); got != tt.log {
			t.Errorf("%s: error_log:\n%s\nwant:\n%s", tt.line, got, tt.log)
		}
	}
	want := `p:uprobes/p_sh_0xa /bin/sh:0x000000000000000a arg1=@+-0x10
p:uprobes/p_sh_0x11 /bin/sh:0x0000000000000011
p:uprobes/x /bin/sh:0x0000000000000001 a=$stack99999 b=$stack c=$stack3 d=$comm e=%x0:x32 f=+8(%sp):u64 g=+u0(%x1):string h=@0x1000 i=@+0x10:s16 j=\1 k=\"hi" l=%pc m=%lr:symbol n=$COMM:string
r:uprobes/p_sh_0x20 /bin/sh:0x0000000000000020
r:uprobes/p_sh_0x30 /bin/sh:0x0000000000000030
p:uprobes/rc /bin/sh:0x0000000000000040(0x50)
p:uprobes/rc3 /bin/sh:0x0000000000000040(0x50)
r:uprobes/rc4 /bin/sh:0x0000000000000060(0x70)
p:uprobes/myup /bin/sh:0x0000000000000080 a=%x0 b=$stack c=$comm
r:uprobes/myret /bin/sh:0x0000000000000090 rv=$retval
p:grp/ev /bin/sh:0x00000000000000a0
p:uprobes/p_sh_0xb0 /bin/sh:0x00000000000000b0
p:uprobes/p_sh_0xc0 //bin//sh:0x00000000000000c0
p:uprobes/myup /bin/sh:0x0000000000000088 a=%x0 b=$stack c=$comm
p:uprobes/myup /bin/sh:0x0000000000000080 a=%x0 b=$stack c=$COMM
`
	if got := f.read(t, "tracing/uprobe_events"); got != want {
		t.Errorf("uprobe_events:\n%s\nwant:\n%s", got, want)
	}
	if got := f.read(t, "tracing/dynamic_events"); got != want {
		t.Errorf("dynamic_events:\n%s\nwant:\n%s", got, want)
	}
	if got := f.read(t, "tracing/kprobe_events"); got != "" {
		t.Errorf("kprobe_events = %q", got)
	}
	prof := f.read(t, "tracing/uprobe_profile")
	if !strings.HasPrefix(prof, "  /bin/sh p_sh_0xa                                                   0\n") ||
		!strings.Contains(prof, "\n  //bin//sh p_sh_0xc0                                                  0\n") ||
		strings.Count(prof, "\n") != 15 {
		t.Errorf("uprobe_profile:\n%s", prof)
	}
	if got := f.read(t, "tracing/kprobe_profile"); got != "" {
		t.Errorf("kprobe_profile = %q", got)
	}
	events := f.read(t, "tracing/available_events")
	for _, ev := range []string{"uprobes:p_sh_0xa", "uprobes:myup", "uprobes:myret", "grp:ev", "uprobes:p_sh_0xb0"} {
		if !strings.Contains(events, ev+"\n") {
			t.Errorf("available_events lacks %s:\n%s", ev, events)
		}
	}

	for _, tt := range []struct{ file, want string }{
		{"myup/format", `name: myup
ID: \d+
format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;

	field:unsigned long __probe_ip;	offset:8;	size:8;	signed:0;
	field:u64 a;	offset:16;	size:8;	signed:0;
	field:u64 b;	offset:24;	size:8;	signed:0;
	field:__data_loc char\[\] c;	offset:32;	size:4;	signed:1;

print fmt: "\(%lx\) a=0x%Lx b=0x%Lx c=\\"%s\\"", REC->__probe_ip, REC->a, REC->b, __get_str\(c\)
`},
		{"myret/format", `name: myret
ID: \d+
format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;

	field:unsigned long __probe_func;	offset:8;	size:8;	signed:0;
	field:unsigned long __probe_ret_ip;	offset:16;	size:8;	signed:0;
	field:u64 rv;	offset:24;	size:8;	signed:0;

print fmt: "\(%lx <- %lx\) rv=0x%Lx", REC->__probe_func, REC->__probe_ret_ip, REC->rv
`},
		// Linux lists its registered commands, the hist ones too.
		{"myup/trigger", `# Available triggers:
# traceon traceoff snapshot stacktrace enable_event disable_event enable_hist disable_hist hist
`},
		{"myup/filter", "none\n"},
		{"myup/enable", "0\n"},
		{"myup/id", `\d+\n`},
	} {
		got := f.read(t, "tracing/events/uprobes/"+tt.file)
		if !regexp.MustCompile(`\A` + tt.want + `\z`).MatchString(got) {
			t.Errorf("%s:\n%s\nwant (a regexp):\n%s", tt.file, got, tt.want)
		}
	}
}

// Linux's uprobe_events and kprobe_events share the event names, and each
// file refuses the other's definitions and removals; dynamic_events takes
// both, lists both in the order they came, and removes either.
func TestUprobeAndKprobeEvents(t *testing.T) {
	f := uprobeFixture(t)
	steps := []struct {
		file, line string
		errno      syscall.Errno
		log        string
	}{
		{"uprobe_events", "p:myup /bin/sh:0x80", 0, ""},
		{"kprobe_events", "p:uprobes/myup vfs_read", syscall.EEXIST, "trace_kprobe: error: Given group/event name is already used by another event\n  Command: p:uprobes/myup vfs_read\n           ^\n"},
		{"kprobe_events", "p:kp1 vfs_read", 0, ""},
		{"uprobe_events", "p:kprobes/kp1 /bin/sh:0x10", syscall.EEXIST, "trace_uprobe: error: Given group/event name is already used by another event\n  Command: p:kprobes/kp1 /bin/sh:0x10\n           ^\n"},
		{"kprobe_events", "p /bin/sh:0x10", syscall.EINVAL, ""},
		{"kprobe_events", "-:uprobes/myup", syscall.ENOENT, ""},
		{"uprobe_events", "-:kprobes/kp1", syscall.ENOENT, ""},
		{"dynamic_events", "p:dyn /bin/sh:0xd0", 0, ""},
		{"dynamic_events", "p:dyn2 /bin/sh:0xd0(0x10)", syscall.EINVAL, ""},
		{"dynamic_events", "r:dyn3 /bin/sh:0xe0", 0, ""},
		{"dynamic_events", "p:kp2 vfs_write", 0, ""},
		{"dynamic_events", "p /bin/sh:10a", syscall.EINVAL, "trace_uprobe: error: Invalid uprobe offset\n  Command: p /bin/sh:10a\n                     ^\n"},
		{"dynamic_events", "x:nothing vfs_read", syscall.EINVAL, ""},
	}
	for _, s := range steps {
		if err := f.write("tracing/error_log", "", true); err != nil {
			t.Fatal(err)
		}
		err := f.write("tracing/"+s.file, s.line, false)
		if s.errno == 0 && err != nil || s.errno != 0 && !errors.Is(err, s.errno) {
			t.Errorf("%s to %s = %v, want %v", s.line, s.file, err, s.errno)
		}
		if got := f.errLog(t); got != s.log {
			t.Errorf("%s to %s: error_log:\n%s\nwant:\n%s", s.line, s.file, got, s.log)
		}
	}
	want := "p:uprobes/myup /bin/sh:0x0000000000000080\np:kprobes/kp1 vfs_read\np:uprobes/dyn /bin/sh:0x00000000000000d0\nr:uprobes/dyn3 /bin/sh:0x00000000000000e0\np:kprobes/kp2 vfs_write\n"
	if got := f.read(t, "tracing/dynamic_events"); got != want {
		t.Errorf("dynamic_events:\n%s\nwant:\n%s", got, want)
	}
	if got := f.read(t, "tracing/kprobe_events"); got != "p:kprobes/kp1 vfs_read\np:kprobes/kp2 vfs_write\n" {
		t.Errorf("kprobe_events:\n%s", got)
	}
	if got := f.read(t, "tracing/uprobe_events"); got != "p:uprobes/myup /bin/sh:0x0000000000000080\np:uprobes/dyn /bin/sh:0x00000000000000d0\nr:uprobes/dyn3 /bin/sh:0x00000000000000e0\n" {
		t.Errorf("uprobe_events:\n%s", got)
	}

	// "!" removes through dynamic_events only; "-" a uprobe there too.
	if err := f.write("tracing/dynamic_events", "!:uprobes/dyn3", false); err != nil {
		t.Error(err)
	}
	if err := f.write("tracing/dynamic_events", "-:dyn /bin/sh:0x00000000000000d0", false); err != nil {
		t.Error(err)
	}
	// Clearing one file leaves the other kind, even an enabled one.
	if err := f.write("tracing/events/kprobes/kp1/enable", "1", true); err != nil {
		t.Fatal(err)
	}
	if err := f.write("tracing/uprobe_events", "\n", true); err != nil {
		t.Errorf("echo > uprobe_events with a kprobe event enabled: %v", err)
	}
	if got := f.read(t, "tracing/dynamic_events"); got != "p:kprobes/kp1 vfs_read\np:kprobes/kp2 vfs_write\n" {
		t.Errorf("after clearing uprobe_events, dynamic_events:\n%s", got)
	}
	if err := f.write("tracing/uprobe_events", "p:u2 /bin/sh:1\n", false); err != nil {
		t.Fatal(err)
	}
	if err := f.write("tracing/dynamic_events", "\n", true); !errors.Is(err, syscall.EBUSY) {
		t.Errorf("echo > dynamic_events with an event enabled = %v, want EBUSY", err)
	}
	if err := f.write("tracing/events/kprobes/kp1/enable", "0", true); err != nil {
		t.Fatal(err)
	}
	if err := f.write("tracing/kprobe_events", "\n", true); err != nil {
		t.Fatal(err)
	}
	if got := f.read(t, "tracing/dynamic_events"); got != "p:uprobes/u2 /bin/sh:0x0000000000000001\n" {
		t.Errorf("after clearing kprobe_events, dynamic_events:\n%s", got)
	}
	if err := f.write("tracing/dynamic_events", "\n", true); err != nil {
		t.Fatal(err)
	}
	if got := f.read(t, "tracing/dynamic_events"); got != "" {
		t.Errorf("after clearing dynamic_events: %q", got)
	}
	if _, err := f.tree.ReadFile("tracing/events/uprobes/u2/enable"); err == nil {
		t.Error("events/uprobes/u2 outlived its event")
	}
}

// Removal as Linux 6.1 does it: by name, by group, by a prefix of the
// definition as uprobe_events shows it.
func TestUprobeRemoval(t *testing.T) {
	f := uprobeFixture(t)
	for _, line := range []string{
		"p /bin/sh:10 @+-0x10", "r /bin/sh:0x20", "p:rc /bin/sh:0x40(0x50)", "p:rc3 /bin/sh:0x40(0x50)",
		"p:myup /bin/sh:0x80 a=%x0 b=$stack c=$comm", "p:myup /bin/sh:0x88 a=%x0 b=$stack c=$comm",
		"p:myup /bin/sh:0x80 a=%x0 b=$stack c=$COMM", "p:grp/ev /bin/sh:0xa0",
	} {
		if err := f.write("tracing/uprobe_events", line, false); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
	}
	for _, tt := range []struct {
		line  string
		errno syscall.Errno
	}{
		{"-:uprobes/p_sh_0xa", 0},
		{"-:p_sh_0x20 /bin/sh:0x0000000000000020", 0},
		{"-:rc /bin/sh:0x0000000000000040(0x50)", 0},
		{"-:rc3 /bin/sh:0x40(0x50)", syscall.ENOENT},
		{"-:rc3 /bin/sh:0x0000000000000040", syscall.ENOENT},
		{"-:nosuch", syscall.ENOENT},
		{"-:myup /bin/sh:0x0000000000000080 a=%x0", 0}, // both 0x80 probes
		{"-:myup /bin/sh:0x0000000000000088 b=$stack", syscall.ENOENT},
		{"-:grp/", 0},
	} {
		err := f.write("tracing/uprobe_events", tt.line, false)
		if tt.errno == 0 && err != nil || tt.errno != 0 && !errors.Is(err, tt.errno) {
			t.Errorf("%s = %v, want %v", tt.line, err, tt.errno)
		}
	}
	want := "p:uprobes/rc3 /bin/sh:0x0000000000000040(0x50)\np:uprobes/myup /bin/sh:0x0000000000000088 a=%x0 b=$stack c=$comm\n"
	if got := f.read(t, "tracing/uprobe_events"); got != want {
		t.Errorf("uprobe_events:\n%s\nwant:\n%s", got, want)
	}
	if _, err := f.tree.ReadFile("tracing/events/grp/enable"); err == nil {
		t.Error("events/grp outlived its last event")
	}
}

// A multi-line write runs line by line and stops at the first bad one.
func TestUprobeMultiLine(t *testing.T) {
	f := uprobeFixture(t)
	err := f.write("tracing/uprobe_events", "p:m1 /bin/sh:1\np:m2 /nonexist:1\np:m3 /bin/sh:3\n", false)
	if !errors.Is(err, syscall.ENOENT) {
		t.Errorf("write = %v, want ENOENT", err)
	}
	if got, want := f.errLog(t), "trace_uprobe: error: Failed to find the given file\n  Command: p:m2 /nonexist:1\n                ^\n"; got != want {
		t.Errorf("error_log:\n%s\nwant:\n%s", got, want)
	}
	if err := f.write("tracing/uprobe_events", "# comment\n\np:m4 /bin/sh:4 # trailing\np:m5 /bin/sh:5", false); err != nil {
		t.Fatal(err)
	}
	want := "p:uprobes/m1 /bin/sh:0x0000000000000001\np:uprobes/m4 /bin/sh:0x0000000000000004\np:uprobes/m5 /bin/sh:0x0000000000000005\n"
	if got := f.read(t, "tracing/uprobe_events"); got != want {
		t.Errorf("uprobe_events:\n%s\nwant:\n%s", got, want)
	}
}

// Auto names take the file's base name up to '.', '-' or '_', unsanitized,
// and the path is written back as given, symlinks not resolved.
func TestUprobeAutoNames(t *testing.T) {
	f := uprobeFixture(t)
	for _, line := range []string{
		"p /sys/kernel/debug/tracing/../../../../bin/sh:2",
		"r /bin/sh:0x1234567",
		"p /sys/class/rtc/rtc0/name:5",
	} {
		if err := f.write("tracing/uprobe_events", line, false); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
	}
	want := "p:uprobes/p_sh_0x2 /sys/kernel/debug/tracing/../../../../bin/sh:0x0000000000000002\n" +
		"r:uprobes/p_sh_0x1234567 /bin/sh:0x0000000001234567\n" +
		"p:uprobes/p_name_0x5 /sys/class/rtc/rtc0/name:0x0000000000000005\n"
	if got := f.read(t, "tracing/uprobe_events"); got != want {
		t.Errorf("uprobe_events:\n%s\nwant:\n%s", got, want)
	}
}

// README's mini-help lists uprobe_events and the uprobe place syntax, in
// Linux's words; the kselftest reads the latter to test %return.
func TestUprobeReadme(t *testing.T) {
	f := setup(t)
	readme := f.read(t, "tracing/README")
	for _, line := range []string{
		"  uprobe_events\t\t- Create/append/remove/show the userspace dynamic events\n\t\t\t  Write into this file to define/undefine new trace events.\n",
		"\n   place (uprobe): <path>:<offset>[%return][(ref_ctr_offset)]\n",
	} {
		if !strings.Contains(readme, line) {
			t.Errorf("README lacks %q", line)
		}
	}
}

// More of Linux's answers: what "@" means in a uprobe's argument, the
// offsets kstrtoul takes, where the reference counter's parentheses may
// go, and the last ':' splitting PATH from the offset.
func TestUprobeEdgeCases(t *testing.T) {
	f := uprobeFixture(t)
	for _, tt := range []struct {
		line  string
		errno syscall.Errno
		log   string
	}{
		{"r /bin/sh:1%return", 0, ""},
		{"p /bin/sh:0x10 +0(@+0x10):string", 0, ""},
		{"p /bin/sh:0x11 a=@+0x10:ustring", 0, ""},
		{"p /bin/sh:0x12 $stack4096", 0, ""},
		{"p /bin/sh:0x13 @", syscall.EINVAL, "trace_uprobe: error: Symbol is not available with uprobe\n  Command: p /bin/sh:0x13 @\n                          ^\n"},
		{"p /bin/sh:0x14 @+", syscall.EINVAL, "trace_uprobe: error: Invalid file offset value\n  Command: p /bin/sh:0x14 @+\n                          ^\n"},
		{"p /bin/sh:0x15 @-5", syscall.EINVAL, "trace_uprobe: error: Symbol is not available with uprobe\n  Command: p /bin/sh:0x15 @-5\n                          ^\n"},
		{"p /bin/sh:0x16 +0($comm)", syscall.EINVAL, "trace_uprobe: error: $comm can not be dereferenced\n  Command: p /bin/sh:0x16 +0($comm)\n                             ^\n"},
		{"p: /bin/sh:0x17", syscall.EINVAL, "trace_uprobe: error: Event name is not specified\n  Command: p: /bin/sh:0x17\n             ^\n"},
		{"p:a/ /bin/sh:0x18", 0, ""},
		{"p /bin/sh:0X19", 0, ""},
		{"p /bin/sh:010", 0, ""},
		{"p /bin/sh:10()", syscall.EINVAL, "trace_uprobe: error: Invalid reference counter offset\n  Command: p /bin/sh:10()\n                        ^\n"},
		{"p /bin/sh:10(0)", 0, ""},
		{"p /bin/sh:11(+0x8)", 0, ""},
		{"p /bin/sh:12(0x8", syscall.EINVAL, "trace_uprobe: error: Reference counter brace is not closed\n  Command: p /bin/sh:12(0x8\n                           ^\n"},
		{"p /bin/sh:13)(0x8)", syscall.EINVAL, "trace_uprobe: error: Invalid uprobe offset\n  Command: p /bin/sh:13)(0x8)\n                     ^\n"},
		{"p /bin/sh:1:2", syscall.ENOENT, "trace_uprobe: error: Failed to find the given file\n  Command: p /bin/sh:1:2\n             ^\n"},
		{"p /bin/s:h:1", syscall.ENOENT, "trace_uprobe: error: Failed to find the given file\n  Command: p /bin/s:h:1\n             ^\n"},
	} {
		if err := f.write("tracing/error_log", "", true); err != nil {
			t.Fatal(err)
		}
		err := f.write("tracing/uprobe_events", tt.line, false)
		if tt.errno == 0 && err != nil || tt.errno != 0 && !errors.Is(err, tt.errno) {
			t.Errorf("%s: write = %v, want %v", tt.line, err, tt.errno)
		}
		if got := f.errLog(t); got != tt.log {
			t.Errorf("%s: error_log:\n%s\nwant:\n%s", tt.line, got, tt.log)
		}
	}
	want := `r:uprobes/p_sh_0x1 /bin/sh:0x0000000000000001
p:uprobes/p_sh_0x10 /bin/sh:0x0000000000000010 arg1=+0(@+0x10):string
p:uprobes/p_sh_0x11 /bin/sh:0x0000000000000011 a=@+0x10:ustring
p:uprobes/p_sh_0x12 /bin/sh:0x0000000000000012 arg1=$stack4096
p:a/p_sh_0x18 /bin/sh:0x0000000000000018
p:uprobes/p_sh_0x19 /bin/sh:0x0000000000000019
p:uprobes/p_sh_0x8 /bin/sh:0x0000000000000008
p:uprobes/p_sh_0xa /bin/sh:0x000000000000000a
p:uprobes/p_sh_0xb /bin/sh:0x000000000000000b(0x8)
`
	if got := f.read(t, "tracing/uprobe_events"); got != want {
		t.Errorf("uprobe_events:\n%s\nwant:\n%s", got, want)
	}
	if got := f.read(t, "tracing/events/uprobes/p_sh_0x10/format"); !strings.Contains(got, "\n\tfield:__data_loc char[] arg1;\toffset:16;\tsize:4;\tsigned:1;\n\nprint fmt: \"(%lx) arg1=\\\"%s\\\"\", REC->__probe_ip, __get_str(arg1)\n") {
		t.Errorf("format:\n%s", got)
	}
	if err := f.write("tracing/uprobe_events", "-:uprobes/", false); err != nil {
		t.Fatal(err)
	}
	if got := f.read(t, "tracing/uprobe_events"); got != "p:a/p_sh_0x18 /bin/sh:0x0000000000000018\n" {
		t.Errorf("after -:uprobes/, uprobe_events:\n%s", got)
	}
	// kprobe_events shares the fixed message table.
	if err := f.write("tracing/error_log", "", true); err != nil {
		t.Fatal(err)
	}
	if err := f.write("tracing/kprobe_events", "p vfs_read $foo", false); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("p vfs_read $foo = %v", err)
	}
	if got, want := f.errLog(t), "trace_kprobe: error: Invalid $-variable specified\n  Command: p vfs_read $foo\n                      ^\n"; got != want {
		t.Errorf("error_log:\n%s\nwant:\n%s", got, want)
	}
}
