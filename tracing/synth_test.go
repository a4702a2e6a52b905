package tracing_test

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// Synthetic events: what arm64 Linux 6.1 (Debian's 6.1.192, under QEMU)
// printed for the same writes to synthetic_events and dynamic_events.
// Linux numbered the events from 1206; the formats below take kpemu's ids
// from the id files.

// synthDefs are the definitions the oracle made, in its order.
var synthDefs = []string{
	"ints u8 a; u16 b; u32 c; u64 d; s8 e; s16 f; s32 g; s64 h",
	"ctypes char a; unsigned char b; int c; unsigned int d; long e; unsigned long f; bool g; pid_t h; gfp_t i",
	"strs char s1[16]; char s2[]; char s3[256]; char s4[3]; u64 x",
	"stk unsigned long[] st; long[] st2",
	"oldfmt u64 a u32 b; pid_t c int d",
	" \tspaced   u64   a ;  ;  s32 b;",
	"one u64 x",
}

const synthListing = `ints	u8 a; u16 b; u32 c; u64 d; s8 e; s16 f; s32 g; s64 h
ctypes	char a; unsigned char b; int c; unsigned int d; long e; unsigned long f; bool g; pid_t h; gfp_t i
strs	char[16] s1; char[] s2; char[256] s3; char[3] s4; u64 x
stk	unsigned long[] st; long[] st2
oldfmt	u64 a; u32 b; pid_t c; int d
spaced	u64 a; s32 b
one	u64 x
`

func synthLog(msg, cmd string, pos int) string {
	return "synthetic_events: error: " + msg + "\n  Command: " + cmd + "\n" + strings.Repeat(" ", len("  Command: ")+pos) + "^\n"
}

func (f *fixture) mustAppend(t *testing.T, p, d string) {
	t.Helper()
	if err := f.write(p, d, false); err != nil {
		t.Fatalf("%s <- %q: %v", p, d, err)
	}
}

func (f *fixture) mustDefineSynth(t *testing.T) {
	t.Helper()
	for _, d := range synthDefs {
		if err := f.write("tracing/synthetic_events", d+"\n", false); err != nil {
			t.Fatalf("%q: %v", d, err)
		}
	}
}

func TestSynthEventsDefine(t *testing.T) {
	f := setup(t)
	if got := f.read(t, "tracing/synthetic_events"); got != "" {
		t.Fatalf("synthetic_events at start = %q", got)
	}
	f.mustDefineSynth(t)
	// An array other than char[N] is not a type: nothing is made.
	if err := f.write("tracing/synthetic_events", "arrs u64 arr[4]; int iarr[2]\n", false); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("arrs: %v, want EINVAL", err)
	}
	if got, want := f.errLog(t), synthLog("Invalid type", "arrs u64 arr[4]; int iarr[2]", 5); got != want {
		t.Errorf("error_log:\n%s\nwant:\n%s", got, want)
	}
	if got := f.read(t, "tracing/synthetic_events"); got != synthListing {
		t.Errorf("synthetic_events:\n%s\nwant:\n%s", got, synthListing)
	}
	dyn := ""
	for _, l := range strings.SplitAfter(synthListing, "\n") {
		if l != "" {
			dyn += "s:synthetic/" + l
		}
	}
	if got := f.read(t, "tracing/dynamic_events"); got != dyn {
		t.Errorf("dynamic_events:\n%s\nwant:\n%s", got, dyn)
	}
	formats := []struct{ name, format string }{
		{"ints", "name: ints\nID: %d\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\tfield:u8 a;\toffset:8;\tsize:1;\tsigned:0;\n\tfield:u16 b;\toffset:16;\tsize:2;\tsigned:0;\n\tfield:u32 c;\toffset:24;\tsize:4;\tsigned:0;\n\tfield:u64 d;\toffset:32;\tsize:8;\tsigned:0;\n\tfield:s8 e;\toffset:40;\tsize:1;\tsigned:1;\n\tfield:s16 f;\toffset:48;\tsize:2;\tsigned:1;\n\tfield:s32 g;\toffset:56;\tsize:4;\tsigned:1;\n\tfield:s64 h;\toffset:64;\tsize:8;\tsigned:1;\n\nprint fmt: \"a=%u, b=%u, c=%u, d=%llu, e=%d, f=%d, g=%d, h=%lld\", REC->a, REC->b, REC->c, REC->d, REC->e, REC->f, REC->g, REC->h\n"},
		{"ctypes", "name: ctypes\nID: %d\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\tfield:char a;\toffset:8;\tsize:1;\tsigned:1;\n\tfield:unsigned char b;\toffset:16;\tsize:1;\tsigned:0;\n\tfield:int c;\toffset:24;\tsize:4;\tsigned:1;\n\tfield:unsigned int d;\toffset:32;\tsize:4;\tsigned:0;\n\tfield:long e;\toffset:40;\tsize:8;\tsigned:1;\n\tfield:unsigned long f;\toffset:48;\tsize:8;\tsigned:0;\n\tfield:bool g;\toffset:56;\tsize:1;\tsigned:1;\n\tfield:pid_t h;\toffset:64;\tsize:4;\tsigned:1;\n\tfield:gfp_t i;\toffset:72;\tsize:4;\tsigned:0;\n\nprint fmt: \"a=%d, b=%u, c=%d, d=%u, e=%ld, f=%lu, g=%d, h=%d, i=%x\", REC->a, REC->b, REC->c, REC->d, REC->e, REC->f, REC->g, REC->h, REC->i\n"},
		{"strs", "name: strs\nID: %d\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\tfield:char s1[];\toffset:8;\tsize:16;\tsigned:1;\n\tfield:__data_loc char[] s2;\toffset:264;\tsize:8;\tsigned:1;\n\tfield:char s3[];\toffset:272;\tsize:256;\tsigned:1;\n\tfield:char s4[];\toffset:528;\tsize:3;\tsigned:1;\n\tfield:u64 x;\toffset:784;\tsize:8;\tsigned:0;\n\nprint fmt: \"s1=%s, s2=%s, s3=%s, s4=%s, x=%llu\", REC->s1, __get_str(s2), REC->s3, REC->s4, REC->x\n"},
		{"stk", "name: stk\nID: %d\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\tfield:__data_loc unsigned long[] st;\toffset:8;\tsize:8;\tsigned:1;\n\tfield:__data_loc long[] st2;\toffset:16;\tsize:8;\tsigned:1;\n\nprint fmt: \"st=%s, st2=%s\", __get_stacktrace(st), __get_stacktrace(st2)\n"},
		{"oldfmt", "name: oldfmt\nID: %d\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\tfield:u64 a;\toffset:8;\tsize:8;\tsigned:0;\n\tfield:u32 b;\toffset:16;\tsize:4;\tsigned:0;\n\tfield:pid_t c;\toffset:24;\tsize:4;\tsigned:1;\n\tfield:int d;\toffset:32;\tsize:4;\tsigned:1;\n\nprint fmt: \"a=%llu, b=%u, c=%d, d=%d\", REC->a, REC->b, REC->c, REC->d\n"},
		{"spaced", "name: spaced\nID: %d\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\tfield:u64 a;\toffset:8;\tsize:8;\tsigned:0;\n\tfield:s32 b;\toffset:16;\tsize:4;\tsigned:1;\n\nprint fmt: \"a=%llu, b=%d\", REC->a, REC->b\n"},
		{"one", "name: one\nID: %d\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\tfield:u64 x;\toffset:8;\tsize:8;\tsigned:0;\n\nprint fmt: \"x=%llu\", REC->x\n"},
		{"dyn1", "name: dyn1\nID: %d\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\tfield:u64 a;\toffset:8;\tsize:8;\tsigned:0;\n\tfield:__data_loc char[] b;\toffset:16;\tsize:8;\tsigned:1;\n\nprint fmt: \"a=%llu, b=%s\", REC->a, __get_str(b)\n"},
	}
	for _, tt := range formats {
		if tt.name == "dyn1" {
			if err := f.write("tracing/dynamic_events", "s:dyn1 u64 a; char b[]\n", false); err != nil {
				t.Fatal(err)
			}
		}
		dir := "tracing/events/synthetic/" + tt.name + "/"
		id, err := strconv.Atoi(strings.TrimSpace(f.read(t, dir+"id")))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := f.read(t, dir+"format"), strings.Replace(tt.format, "ID: %d\n", fmt.Sprintf("ID: %d\n", id), 1); got != want {
			t.Errorf("%s/format:\n%s\nwant:\n%s", tt.name, got, want)
		}
		for file, want := range map[string]string{"enable": "0\n", "filter": "none\n"} {
			if got := f.read(t, dir+file); got != want {
				t.Errorf("%s/%s = %q, want %q", tt.name, file, got, want)
			}
		}
	}
	if got := f.read(t, "tracing/events/synthetic/enable"); got != "0\n" {
		t.Errorf("events/synthetic/enable = %q", got)
	}
	want := "synthetic:dyn1\nsynthetic:one\nsynthetic:spaced\nsynthetic:oldfmt\nsynthetic:stk\nsynthetic:strs\nsynthetic:ctypes\nsynthetic:ints\n"
	if got := f.read(t, "tracing/available_events"); !strings.HasPrefix(got, want) {
		t.Errorf("available_events starts:\n%s\nwant:\n%s", got[:min(len(got), len(want))], want)
	}
}

// TestSynthEventsErrors writes each bad definition alone and compares
// the errno and the error_log entry with Linux's.
func TestSynthEventsErrors(t *testing.T) {
	f := setup(t)
	if err := f.write("tracing/synthetic_events", "one u64 x\n", false); err != nil {
		t.Fatal(err)
	}
	const (
		badName  = "Illegal name"
		badCmd   = "Command must be of the form: <name> field[;field] ..."
		badDyn   = "Command must be of the form: s or -:[synthetic/]<name> field[;field] ..."
		exists   = "Event already exists"
		badType  = "Invalid type"
		badField = "Invalid field"
		badArray = "Invalid array specification"
		incompl  = "Incomplete type"
	)
	tests := []struct {
		file, line string
		errno      syscall.Errno // 0: accepted
		msg        string        // "": nothing logged
		pos        int
	}{
		{"synthetic_events", "bad1 foo x", syscall.EINVAL, badType, 5},
		{"synthetic_events", "bad2 u64", syscall.EINVAL, badCmd, 0},
		{"synthetic_events", "bad3", syscall.EINVAL, badCmd, 0},
		{"synthetic_events", "bad4 u64 x; foo y", syscall.EINVAL, badType, 12},
		{"synthetic_events", "bad5 unsigned x", syscall.EINVAL, incompl, 5},
		{"synthetic_events", "bad5b unsigned", syscall.EINVAL, badCmd, 0},
		{"synthetic_events", "bad5c unsigned foo x", syscall.EINVAL, badType, 15},
		{"synthetic_events", "bad6 char x[300]", syscall.EINVAL, badArray, 10},
		{"synthetic_events", "bad6b char x[abc]", syscall.EINVAL, badArray, 11},
		{"synthetic_events", "bad6c char x[1000]", syscall.EINVAL, badArray, 11},
		{"synthetic_events", "bad6d u64 x[abc]", syscall.EINVAL, badType, 6},
		{"synthetic_events", "bad6e char x[16", syscall.EINVAL, badArray, 11},
		{"synthetic_events", "bad6f u64 x[]", syscall.EINVAL, badType, 6},
		{"synthetic_events", "bad6g char x[0]", 0, "", 0},
		{"synthetic_events", "bad6h u64 x[4]y", syscall.EINVAL, badType, 6},
		{"synthetic_events", "bad7 u64 9x", syscall.EINVAL, badName, 9},
		{"synthetic_events", "bad7b u64 x-y", syscall.EINVAL, badName, 10},
		{"synthetic_events", "bad7c u64 x;u64 x", 0, "", 0},
		{"synthetic_events", "9bad u64 x", syscall.EINVAL, badName, 0},
		{"synthetic_events", "bad-8 u64 x", syscall.EINVAL, badName, 0},
		{"synthetic_events", "synthetic/bad9 u64 x", syscall.EINVAL, badName, 0},
		{"synthetic_events", "one u64 x", syscall.EEXIST, exists, 0},
		{"synthetic_events", "one u32 y", syscall.EEXIST, exists, 0},
		{"synthetic_events", ";one u64 x", syscall.EINVAL, badCmd, 0},
		{"synthetic_events", "bad10 ;", syscall.EINVAL, badCmd, 0},
		{"synthetic_events", "bad11 u64 x u64", syscall.EINVAL, badField, 6},
		{"synthetic_events", "bad11b u64 x; u64", syscall.EINVAL, badField, 7},
		{"synthetic_events", "!nosuch", syscall.ENOENT, "", 0},
		{"synthetic_events", "!nosuch u64 x", syscall.ENOENT, "", 0},
		{"synthetic_events", "!", syscall.ENOENT, "", 0},
		{"synthetic_events", strings.Repeat("a", 80) + " u64 x", 0, "", 0},
		{"dynamic_events", "s:other/dyn3 int x", syscall.EINVAL, badDyn, 0},
		{"dynamic_events", "s:dyn4", syscall.EINVAL, badCmd, 0},
		{"dynamic_events", "s:", syscall.EINVAL, badCmd, 0},
		{"dynamic_events", "s:dyn5 int", syscall.EINVAL, badCmd, 0},
		{"dynamic_events", "s:one int x", syscall.EEXIST, exists, 2},
		{"dynamic_events", "s:synthetic/ int x", syscall.EINVAL, badCmd, 0},
		{"dynamic_events", "s:/dyn6 int x", syscall.EINVAL, badDyn, 0},
		{"dynamic_events", "s:dyn7 foo x", syscall.EINVAL, badType, 7},
	}
	for _, tt := range tests {
		if err := f.write("tracing/error_log", "", true); err != nil {
			t.Fatal(err)
		}
		err := f.write("tracing/"+tt.file, tt.line+"\n", false)
		if tt.errno == 0 && err != nil || tt.errno != 0 && !errors.Is(err, tt.errno) {
			t.Errorf("%s: %q: write = %v, want %v", tt.file, tt.line, err, tt.errno)
		}
		want := ""
		if tt.msg != "" {
			want = synthLog(tt.msg, tt.line, tt.pos)
		}
		if got := f.errLog(t); got != want {
			t.Errorf("%s: %q: error_log:\n%s\nwant:\n%s", tt.file, tt.line, got, want)
		}
	}
	f.write("tracing/error_log", "", true)
	var max, tooMany strings.Builder
	for i := 0; i < 64; i++ {
		fmt.Fprintf(&max, " u8 f%d;", i)
	}
	tooMany.WriteString("toomany" + max.String() + " u8 g")
	if err := f.write("tracing/synthetic_events", "max"+max.String()+"\n", false); err != nil {
		t.Errorf("64 fields: %v", err)
	}
	if err := f.write("tracing/synthetic_events", tooMany.String()+"\n", false); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("65 fields: %v, want EINVAL", err)
	}
	if got, want := f.errLog(t), synthLog("Too many fields", tooMany.String(), 0); got != want {
		t.Errorf("error_log:\n%s\nwant:\n%s", got, want)
	}
	f.write("tracing/error_log", "", true)
	// A write of several lines stops at the bad one, the lines before made.
	if err := f.write("tracing/synthetic_events", "multi1 u64 x\nbad1 foo x\nmulti3 u64 y\n", false); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("multi: %v, want EINVAL", err)
	}
	if got, want := f.errLog(t), synthLog(badType, "bad1 foo x", 5); got != want {
		t.Errorf("error_log:\n%s\nwant:\n%s", got, want)
	}
	if err := f.write("tracing/synthetic_events", "# comment\n\nnonl u64 x", false); err != nil {
		t.Errorf("comment, no newline: %v", err)
	}
	want := "one\tu64 x\nbad6g\tchar[0] x\nbad7c\tu64 x; u64 x\n" + strings.Repeat("a", 80) + "\tu64 x\nmax\t" +
		strings.TrimSuffix(strings.TrimPrefix(max.String(), " "), ";") + "\nmulti1\tu64 x\nnonl\tu64 x\n"
	if got := f.read(t, "tracing/synthetic_events"); got != want {
		t.Errorf("synthetic_events:\n%s\nwant:\n%s", got, want)
	}
}

// TestSynthEventsRemove removes synthetic events with !NAME, -:, and by
// truncating synthetic_events and dynamic_events, enabled ones too.
func TestSynthEventsRemove(t *testing.T) {
	f := setup(t)
	f.mustDefineSynth(t)
	for _, l := range []string{"s:dyn8 int x; int y", "p:kp vfs_read"} {
		if err := f.write("tracing/dynamic_events", l+"\n", false); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
	}
	// -: takes any arguments after the name; ! too.
	for _, tt := range []struct {
		file, line string
		errno      syscall.Errno
	}{
		{"dynamic_events", "-:synthetic/dyn8 int x; int z", 0},
		{"dynamic_events", "-:synthetic/dyn8 int y", syscall.ENOENT},
		{"dynamic_events", "-:kp", 0},
		{"synthetic_events", "!oldfmt", 0},
		{"synthetic_events", "!spaced u8 zz", 0},
	} {
		if err := f.write("tracing/"+tt.file, tt.line+"\n", false); tt.errno == 0 && err != nil || tt.errno != 0 && !errors.Is(err, tt.errno) {
			t.Errorf("%s: %q: %v, want %v", tt.file, tt.line, err, tt.errno)
		}
	}
	want := "ints\tu8 a; u16 b; u32 c; u64 d; s8 e; s16 f; s32 g; s64 h\nctypes\tchar a; unsigned char b; int c; unsigned int d; long e; unsigned long f; bool g; pid_t h; gfp_t i\n" +
		"strs\tchar[16] s1; char[] s2; char[256] s3; char[3] s4; u64 x\nstk\tunsigned long[] st; long[] st2\none\tu64 x\n"
	if got := f.read(t, "tracing/synthetic_events"); got != want {
		t.Errorf("synthetic_events:\n%s\nwant:\n%s", got, want)
	}
	if err := f.write("tracing/synthetic_events", "last u64 x\n", false); err != nil {
		t.Fatal(err)
	}
	f.mustWrite(t, "tracing/events/synthetic/one/enable", "1\n")
	if got := f.read(t, "tracing/events/synthetic/one/enable") + f.read(t, "tracing/events/synthetic/enable"); got != "1\nX\n" {
		t.Errorf("enable files = %q", got)
	}
	if got := f.read(t, "tracing/set_event"); got != "synthetic:one\n" {
		t.Errorf("set_event = %q", got)
	}
	// An enabled event is busy, with nothing in error_log. Truncating
	// removes the events before it, and fails there.
	for _, tt := range []struct {
		file, line string
		trunc      bool
	}{{"synthetic_events", "!one\n", false}, {"dynamic_events", "-:synthetic/one\n", false}, {"synthetic_events", "", true}} {
		if err := f.write("tracing/"+tt.file, tt.line, tt.trunc); !errors.Is(err, syscall.EBUSY) {
			t.Errorf("%s %q: %v, want EBUSY", tt.file, tt.line, err)
		}
	}
	if got := f.errLog(t); got != "" {
		t.Errorf("error_log = %q", got)
	}
	if got := f.read(t, "tracing/synthetic_events"); got != "one\tu64 x\nlast\tu64 x\n" {
		t.Errorf("synthetic_events after a busy truncation:\n%s", got)
	}
	f.mustWrite(t, "tracing/events/synthetic/one/enable", "0\n")
	f.mustWrite(t, "tracing/events/synthetic/enable", "1\n")
	if got := f.read(t, "tracing/set_event"); got != "synthetic:last\nsynthetic:one\n" {
		t.Errorf("set_event = %q", got)
	}
	f.mustWrite(t, "tracing/events/synthetic/enable", "0\n")
	// A trigger keeps the event busy; a filter on its fields is taken.
	f.mustWrite(t, "tracing/events/synthetic/one/trigger", "traceon\n")
	if err := f.write("tracing/synthetic_events", "!one\n", false); !errors.Is(err, syscall.EBUSY) {
		t.Errorf("!one with a trigger: %v, want EBUSY", err)
	}
	f.mustWrite(t, "tracing/events/synthetic/one/trigger", "!traceon\n")
	f.mustWrite(t, "tracing/events/synthetic/one/filter", "x == 1\n")
	f.mustAppend(t, "tracing/synthetic_events", "!one\n")
	if err := f.write("tracing/synthetic_events", "", true); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"tracing/synthetic_events", "tracing/dynamic_events"} {
		if got := f.read(t, p); got != "" {
			t.Errorf("%s = %q after truncation", p, got)
		}
	}
	if _, err := f.tree.LookupDir("tracing/events/synthetic"); err == nil {
		t.Errorf("events/synthetic is left without events")
	}
	// > dynamic_events removes them too; ids go on from the last event's.
	f.mustAppend(t, "tracing/synthetic_events", "again u64 x\n")
	f.mustAppend(t, "tracing/kprobe_events", "p:kp2 vfs_read\n")
	f.mustAppend(t, "tracing/synthetic_events", "again2 u64 x\n")
	a, _ := strconv.Atoi(strings.TrimSpace(f.read(t, "tracing/events/synthetic/again/id")))
	k, _ := strconv.Atoi(strings.TrimSpace(f.read(t, "tracing/events/kprobes/kp2/id")))
	b, _ := strconv.Atoi(strings.TrimSpace(f.read(t, "tracing/events/synthetic/again2/id")))
	if k != a+1 || b != k+1 {
		t.Errorf("ids %d %d %d are not consecutive", a, k, b)
	}
	if err := f.write("tracing/dynamic_events", "", true); err != nil {
		t.Fatal(err)
	}
	if got := f.read(t, "tracing/synthetic_events"); got != "" {
		t.Errorf("synthetic_events = %q after > dynamic_events", got)
	}
}

// TestSynthEventsMore: the odd corners the oracle was asked about next:
// char[N] sizes in other bases, unsigned and dynamic arrays, long[N]
// stacks, tabs, ';' runs, '/' anywhere in an s: line, a kprobe event
// named as a synthetic one, and > dynamic_events among enabled events.
func TestSynthEventsMore(t *testing.T) {
	f := setup(t)
	f.mustAppend(t, "tracing/synthetic_events", "ev1 unsigned char s[16]; char[8] t; long[5] st; char z[0x1]; char o[010]; char p[+4]; char q[0]; unsigned char[] r\n")
	f.mustAppend(t, "tracing/synthetic_events", "ev8 long[ x; unsigned long[2] y; char[] w\n")
	f.mustAppend(t, "tracing/synthetic_events", "ev2\tu64\tx;\ts32\ty\n")
	f.mustAppend(t, "tracing/dynamic_events", "s:ev3\tu64 x\n")
	f.mustAppend(t, "tracing/synthetic_events", "ev10 int x;;;\n")
	want := "ev1\tunsigned char[16] s; char[8] t; long[5] st; char[0x1] z; char[010] o; char[+4] p; char[0] q; unsigned char[] r\n" +
		"ev8\tlong[ x; unsigned long[2] y; char[] w\nev2\tu64 x; s32 y\nev3\tu64 x\nev10\tint x\n"
	if got := f.read(t, "tracing/synthetic_events"); got != want {
		t.Errorf("synthetic_events:\n%s\nwant:\n%s", got, want)
	}
	for _, tt := range []struct{ name, format string }{
		{"ev1", "name: ev1\nID: %d\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\tfield:unsigned char s[];\toffset:8;\tsize:16;\tsigned:0;\n\tfield:char t[];\toffset:264;\tsize:8;\tsigned:1;\n\tfield:__data_loc long[5] st;\toffset:520;\tsize:8;\tsigned:1;\n\tfield:char z[];\toffset:528;\tsize:1;\tsigned:1;\n\tfield:char o[];\toffset:784;\tsize:8;\tsigned:1;\n\tfield:char p[];\toffset:1040;\tsize:4;\tsigned:1;\n\tfield:__data_loc char[0] q;\toffset:1296;\tsize:8;\tsigned:1;\n\tfield:__data_loc unsigned char[] r;\toffset:1304;\tsize:8;\tsigned:1;\n\nprint fmt: \"s=%s, t=%s, st=%s, z=%s, o=%s, p=%s, q=%s, r=%s\", REC->s, REC->t, __get_stacktrace(st), REC->z, REC->o, REC->p, __get_str(q), __get_str(r)\n"},
		{"ev8", "name: ev8\nID: %d\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\tfield:__data_loc long[ x;\toffset:8;\tsize:8;\tsigned:1;\n\tfield:__data_loc unsigned long[2] y;\toffset:16;\tsize:8;\tsigned:1;\n\tfield:__data_loc char[] w;\toffset:24;\tsize:8;\tsigned:1;\n\nprint fmt: \"x=%s, y=%s, w=%s\", __get_stacktrace(x), __get_stacktrace(y), __get_str(w)\n"},
	} {
		dir := "tracing/events/synthetic/" + tt.name + "/"
		id, err := strconv.Atoi(strings.TrimSpace(f.read(t, dir+"id")))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := f.read(t, dir+"format"), strings.Replace(tt.format, "ID: %d\n", fmt.Sprintf("ID: %d\n", id), 1); got != want {
			t.Errorf("%s/format:\n%s\nwant:\n%s", tt.name, got, want)
		}
	}
	kprobeExists := func(cmd string) string {
		return "trace_kprobe: error: Given group/event name is already used by another event\n  Command: " + cmd + "\n           ^\n"
	}
	for _, tt := range []struct {
		file, line string
		errno      syscall.Errno
		log        string
	}{
		{"synthetic_events", "ev0 unsigned char s[16]; char z[0x10]", syscall.EINVAL, synthLog("Invalid array specification", "ev0 unsigned char s[16]; char z[0x10]", 30)},
		{"synthetic_events", "ev4 u64 [16]", syscall.EINVAL, synthLog("Illegal name", "ev4 u64 [16]", 8)},
		{"synthetic_events", "ev5 unsigned short x", syscall.EINVAL, synthLog("Invalid type", "ev5 unsigned short x", 13)},
		{"synthetic_events", "ev6 u64 x[16]", syscall.EINVAL, synthLog("Invalid type", "ev6 u64 x[16]", 4)},
		{"synthetic_events", "ev7 char x[-1]", syscall.EINVAL, synthLog("Invalid array specification", "ev7 char x[-1]", 9)},
		{"synthetic_events", "ev9 int x; int", syscall.EINVAL, synthLog("Invalid field", "ev9 int x; int", 4)},
		{"dynamic_events", "s:ev11 int x/y", syscall.EINVAL, synthLog("Command must be of the form: s or -:[synthetic/]<name> field[;field] ...", "s:ev11 int x/y", 0)},
		{"dynamic_events", "s:synthetic/ev12/x int y", syscall.EINVAL, synthLog("Illegal name", "s:synthetic/ev12/x int y", 12)},
		{"dynamic_events", "s:synthetic.ev13 int y", syscall.EINVAL, synthLog("Illegal name", "s:synthetic.ev13 int y", 2)},
		{"kprobe_events", "p:synthetic/ev3 vfs_read", syscall.EEXIST, kprobeExists("p:synthetic/ev3 vfs_read")},
		{"kprobe_events", "r:synthetic/ev3 vfs_read", syscall.EEXIST, kprobeExists("r:synthetic/ev3 vfs_read")},
		{"kprobe_events", "-:synthetic/ev3", syscall.ENOENT, ""},
		{"uprobe_events", "-:synthetic/ev3", syscall.ENOENT, ""},
		{"dynamic_events", "!s:synthetic/nosuch", syscall.ENOENT, ""},
	} {
		f.write("tracing/error_log", "", true)
		if err := f.write("tracing/"+tt.file, tt.line+"\n", false); !errors.Is(err, tt.errno) {
			t.Errorf("%s: %q: write = %v, want %v", tt.file, tt.line, err, tt.errno)
		}
		if got := f.errLog(t); got != tt.log {
			t.Errorf("%s: %q: error_log:\n%s\nwant:\n%s", tt.file, tt.line, got, tt.log)
		}
	}
	f.mustAppend(t, "tracing/dynamic_events", "!s:synthetic/ev1\n")
	// > dynamic_events: an enabled kprobe event stops it before anything
	// goes; an enabled synthetic event stops it where it is, the events
	// before it gone.
	f.mustWrite(t, "tracing/synthetic_events", "")
	f.mustAppend(t, "tracing/kprobe_events", "p:kpa vfs_read\n")
	f.mustAppend(t, "tracing/synthetic_events", "sa u64 x\n")
	f.mustAppend(t, "tracing/kprobe_events", "p:kpb vfs_write\n")
	f.mustWrite(t, "tracing/events/synthetic/sa/enable", "1\n")
	if err := f.write("tracing/dynamic_events", "", true); !errors.Is(err, syscall.EBUSY) {
		t.Errorf("> dynamic_events with sa enabled: %v, want EBUSY", err)
	}
	const left = "s:synthetic/sa\tu64 x\np:kprobes/kpb vfs_write\n"
	if got := f.read(t, "tracing/dynamic_events"); got != left {
		t.Errorf("dynamic_events:\n%s\nwant:\n%s", got, left)
	}
	f.mustWrite(t, "tracing/events/synthetic/sa/enable", "0\n")
	f.mustWrite(t, "tracing/events/kprobes/kpb/enable", "1\n")
	if err := f.write("tracing/dynamic_events", "", true); !errors.Is(err, syscall.EBUSY) {
		t.Errorf("> dynamic_events with kpb enabled: %v, want EBUSY", err)
	}
	if got := f.read(t, "tracing/dynamic_events"); got != left {
		t.Errorf("dynamic_events:\n%s\nwant:\n%s", got, left)
	}
	f.mustWrite(t, "tracing/events/kprobes/kpb/enable", "0\n")
	f.mustWrite(t, "tracing/synthetic_events", "")
	if got := f.read(t, "tracing/dynamic_events"); got != "p:kprobes/kpb vfs_write\n" {
		t.Errorf("dynamic_events after > synthetic_events: %q", got)
	}
}
