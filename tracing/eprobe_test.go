package tracing_test

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// errorLogEntries is error_log without its timestamps: each entry as
// "LOC: error: MSG|COMMAND|CARET".
func errorLogEntries(t *testing.T, log string) []string {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(log, "\n"), "\n")
	if log == "" {
		return nil
	}
	if len(lines)%3 != 0 {
		t.Fatalf("error_log = %q", log)
	}
	var out []string
	for i := 0; i < len(lines); i += 3 {
		_, head, ok := strings.Cut(lines[i], "] ")
		cmd, ok2 := strings.CutPrefix(lines[i+1], "  Command: ")
		if !ok || !ok2 || !strings.HasSuffix(lines[i+2], "^") {
			t.Fatalf("error_log entry %q", lines[i:i+3])
		}
		out = append(out, fmt.Sprintf("%s|%s|%d", head, cmd, len(lines[i+2])-1-len("  Command: ")))
	}
	return out
}

// The oracle's answers (Debian's 6.1 arm64) to bad event probe
// definitions: errno and error_log, caret positions in the command.
func TestEprobeErrors(t *testing.T) {
	f := setup(t)
	if err := f.write("tracing/dynamic_events", "p:kprobes/myk vfs_read\ne:eprobes/taken syscalls/sys_enter_openat\n", false); err != nil {
		t.Fatal(err)
	}
	const ep = "event_probe: error: "
	const fe = "event filter parse error: error: "
	for _, tc := range []struct {
		line  string
		errno syscall.Errno
		log   []string
	}{
		{"e a.", syscall.EINVAL, []string{ep + "This requires both group and event name to attach|e a.|2"}},
		{"e .b", syscall.EINVAL, []string{ep + "Group name is not specified|e .b|2", ep + "This requires both group and event name to attach|e .b|2"}},
		{"e a.b", syscall.ENODEV, []string{ep + "Attached event does not exist|e a.b|2"}},
		{"e syscalls/sys_enter_openat foo", syscall.EINVAL, []string{ep + "Invalid fetch argument|e syscalls/sys_enter_openat foo|28"}},
		{"e:/bar syscalls/sys_enter_openat", syscall.EINVAL, []string{ep + "Group name is not specified|e:/bar syscalls/sys_enter_openat|2"}},
		{"e:foo.1/bar syscalls/sys_enter_openat", syscall.EINVAL, []string{ep + "Group name must follow the same rules as C identifiers|e:foo.1/bar syscalls/sys_enter_openat|2"}},
		{"e: syscalls/sys_enter_openat", syscall.EINVAL, []string{ep + "Event name is not specified|e: syscalls/sys_enter_openat|2"}},
		{"e:foo/bar.1 syscalls/sys_enter_openat", syscall.EINVAL, []string{ep + "Event name must follow the same rules as C identifiers|e:foo/bar.1 syscalls/sys_enter_openat|6"}},
		{"e:foo/bar syscalls/sys_enter_openat arg=dfd", syscall.EINVAL, []string{ep + "Invalid fetch argument|e:foo/bar syscalls/sys_enter_openat arg=dfd|40"}},
		{"e:foo/bar syscalls/sys_enter_openat arg=$foo", syscall.ENOENT, []string{ep + "Attached event does not have this field|e:foo/bar syscalls/sys_enter_openat arg=$foo|36"}},
		{"e:foo/bar syscalls/sys_enter_openat a=$retval", syscall.ENOENT, []string{ep + "Attached event does not have this field|e:foo/bar syscalls/sys_enter_openat a=$retval|36"}},
		{"e:my3 syscalls.sys_enter_openat cpid=$common_pid", syscall.ENOENT, []string{ep + "Attached event does not have this field|e:my3 syscalls.sys_enter_openat cpid=$common_pid|32"}},
		{"e:foo/bar sched.sched_switch a=$nonexist", syscall.ENOENT, []string{ep + "Attached event does not have this field|e:foo/bar sched.sched_switch a=$nonexist|29"}},
		{"e:foo/bar syscalls/sys_enter_openat if", syscall.EINVAL, []string{ep + "No filter rule after 'if'|e:foo/bar syscalls/sys_enter_openat if|39"}},
		{"e:foo/bar syscalls/sys_enter_openat if foo == 1", syscall.EINVAL, []string{fe + "Field not found|foo == 1|4"}},
		{"e:foo/bar syscalls/sys_enter_openat a=%x0", syscall.EINVAL, []string{
			ep + "Invalid $-variable specified|e:foo/bar syscalls/sys_enter_openat a=%x0|38",
			ep + "Invalid fetch argument|e:foo/bar syscalls/sys_enter_openat a=%x0|38"}},
		{"e:foo/bar syscalls/sys_enter_openat a=@+0", syscall.EINVAL, []string{ep + "File offset is not available with kprobe|e:foo/bar syscalls/sys_enter_openat a=@+0|38"}},
		{"e:foo/bar syscalls/sys_enter_openat a=$filename b=$dfd a=$flags", syscall.EINVAL, []string{ep + "This argument name is already used|e:foo/bar syscalls/sys_enter_openat a=$filename b=$dfd a=$flags|55"}},
		{"e:foo/bar syscalls", syscall.EINVAL, []string{ep + "This requires both group and event name to attach|e:foo/bar syscalls|10"}},
		{"e:foo/bar syscalls.", syscall.EINVAL, []string{ep + "This requires both group and event name to attach|e:foo/bar syscalls.|10"}},
		{"e:foo/bar kprobes.myk", syscall.ENODEV, []string{ep + "Attached event does not exist|e:foo/bar kprobes.myk|10"}},
		{"e:foo/bar eprobes.taken", syscall.ENODEV, []string{ep + "Attached event does not exist|e:foo/bar eprobes.taken|10"}},
		{"e:foo/bar", syscall.EINVAL, nil},
		{"e", syscall.EINVAL, nil},
		{"e:foo/bar syscalls/sys_enter_openat a=@no_such_symbol", syscall.ENOENT, nil},
		{"e:taken syscalls/sys_enter_openat", syscall.EEXIST, []string{ep + "Given group/event name is already used by another event|e:taken syscalls/sys_enter_openat|0"}},
		{"e:syscalls/sys_enter_openat syscalls/sys_enter_openat", syscall.EEXIST, []string{ep + "Given group/event name is already used by another event|e:syscalls/sys_enter_openat syscalls/sys_enter_openat|0"}},
		{"e:kprobes/myk syscalls/sys_enter_openat", syscall.EEXIST, []string{ep + "Given group/event name is already used by another event|e:kprobes/myk syscalls/sys_enter_openat|0"}},
		{"p:eprobes/taken vfs_open", syscall.EEXIST, []string{"trace_kprobe: error: Given group/event name is already used by another event|p:eprobes/taken vfs_open|0"}},
		// The oracle parsed these (kprobes refuse them), then found the name taken.
		{"e:taken syscalls/sys_enter_openat a=$comm:u32", syscall.EEXIST, []string{ep + "Given group/event name is already used by another event|e:taken syscalls/sys_enter_openat a=$comm:u32|0"}},
		{"e:taken syscalls/sys_enter_openat a=$dfd:string", syscall.EEXIST, []string{ep + "Given group/event name is already used by another event|e:taken syscalls/sys_enter_openat a=$dfd:string|0"}},
		{"e:taken syscalls/sys_enter_openat a=$filename:symstr", syscall.EEXIST, []string{ep + "Given group/event name is already used by another event|e:taken syscalls/sys_enter_openat a=$filename:symstr|0"}},
		{"e:taken syscalls/sys_enter_openat a=+0($comm)", syscall.EEXIST, []string{ep + "Given group/event name is already used by another event|e:taken syscalls/sys_enter_openat a=+0($comm)|0"}},
		{"e:taken syscalls/sys_enter_openat a=$dfd:string[2]", syscall.EEXIST, []string{ep + "Given group/event name is already used by another event|e:taken syscalls/sys_enter_openat a=$dfd:string[2]|0"}},
	} {
		t.Run(tc.line, func(t *testing.T) {
			before := f.read(t, "tracing/dynamic_events")
			if err := f.write("tracing/error_log", "", true); err != nil {
				t.Fatal(err)
			}
			err := f.write("tracing/dynamic_events", tc.line+"\n", false)
			if !errors.Is(err, tc.errno) {
				t.Errorf("write = %v, want %v", err, tc.errno)
			}
			if after := f.read(t, "tracing/dynamic_events"); after != before {
				t.Errorf("a failed write changed dynamic_events:\n%s", after)
			}
			got := errorLogEntries(t, f.read(t, "tracing/error_log"))
			if strings.Join(got, "\n") != strings.Join(tc.log, "\n") {
				t.Errorf("error_log:\n got %q\nwant %q", got, tc.log)
			}
		})
	}
}

// The oracle's files for event probes: dynamic_events, format, and
// removal by each form eprobe_dyn_event_match takes.
func TestEprobeFiles(t *testing.T) {
	f := setup(t)
	const common = "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" +
		"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n" +
		"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" +
		"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	defs := "e syscalls/sys_enter_openat\n" +
		"e:mygrp/ sched/sched_switch\n" +
		`e:myopen syscalls.sys_enter_openat dfd=$dfd fn=$filename fns=$filename:string fnu=$filename:ustring file=+0($filename):ustring fl=$flags:x32 m=$mode:u16 c=$comm` + "\n" +
		`e:sw sched.sched_switch pc=$prev_comm pcs=$prev_comm:string nc=$next_comm:string[2] ps=$prev_state:s8 np=$next_pid` + "\n" +
		"e:my5 syscalls.sys_enter_openat   f=+0($filename):ustring   if   flags   ==   0  \n"
	if err := f.write("tracing/dynamic_events", defs, false); err != nil {
		t.Fatal(err)
	}
	var id int
	if _, err := fmt.Sscan(f.read(t, "tracing/events/eprobes/sys_enter_openat/id"), &id); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ file, want string }{
		{"tracing/dynamic_events", "e:eprobes/sys_enter_openat syscalls.sys_enter_openat\n" +
			"e:mygrp/sched_switch sched.sched_switch\n" +
			`e:eprobes/myopen syscalls.sys_enter_openat dfd=$dfd fn=$filename fns=$filename:string fnu=$filename:ustring file=+0($filename):ustring fl=$flags:x32 m=$mode:u16 c=$comm` + "\n" +
			`e:eprobes/sw sched.sched_switch pc=$prev_comm pcs=$prev_comm:string nc=$next_comm:string[2] ps=$prev_state:s8 np=$next_pid` + "\n" +
			"e:eprobes/my5 syscalls.sys_enter_openat f=+0($filename):ustring\n"},
		{"tracing/kprobe_events", ""},
		{"tracing/events/eprobes/sys_enter_openat/format", fmt.Sprintf("name: sys_enter_openat\nID: %d\nformat:\n", id) + common + "\nprint fmt: \"\"\n"},
		{"tracing/events/eprobes/myopen/format", fmt.Sprintf("name: myopen\nID: %d\nformat:\n", id+2) + common +
			"\tfield:u64 dfd;\toffset:8;\tsize:8;\tsigned:0;\n" +
			"\tfield:u64 fn;\toffset:16;\tsize:8;\tsigned:0;\n" +
			"\tfield:__data_loc char[] fns;\toffset:24;\tsize:4;\tsigned:1;\n" +
			"\tfield:__data_loc char[] fnu;\toffset:28;\tsize:4;\tsigned:1;\n" +
			"\tfield:__data_loc char[] file;\toffset:32;\tsize:4;\tsigned:1;\n" +
			"\tfield:u32 fl;\toffset:36;\tsize:4;\tsigned:0;\n" +
			"\tfield:u16 m;\toffset:40;\tsize:2;\tsigned:0;\n" +
			"\tfield:u64 c;\toffset:42;\tsize:8;\tsigned:0;\n\n" +
			`print fmt: " dfd=0x%Lx fn=0x%Lx fns=\"%s\" fnu=\"%s\" file=\"%s\" fl=0x%x m=%u c=0x%Lx", REC->dfd, REC->fn, __get_str(fns), __get_str(fnu), __get_str(file), REC->fl, REC->m, REC->c` + "\n"},
		{"tracing/events/eprobes/sw/format", fmt.Sprintf("name: sw\nID: %d\nformat:\n", id+3) + common +
			"\tfield:u64 pc;\toffset:8;\tsize:8;\tsigned:0;\n" +
			"\tfield:__data_loc char[] pcs;\toffset:16;\tsize:4;\tsigned:1;\n" +
			"\tfield:__data_loc char[][2] nc;\toffset:20;\tsize:8;\tsigned:1;\n" +
			"\tfield:s8 ps;\toffset:28;\tsize:1;\tsigned:1;\n" +
			"\tfield:u64 np;\toffset:29;\tsize:8;\tsigned:0;\n\n" +
			`print fmt: " pc=0x%Lx pcs=\"%s\" nc={\"%s\",\"%s\"} ps=%d np=0x%Lx", REC->pc, __get_str(pcs), __get_str(nc[0]), __get_str(nc[1]), REC->ps, REC->np` + "\n"},
		{"tracing/events/eprobes/my5/format", fmt.Sprintf("name: my5\nID: %d\nformat:\n", id+4) + common +
			"\tfield:__data_loc char[] f;\toffset:8;\tsize:4;\tsigned:1;\n\n" +
			`print fmt: " f=\"%s\"", __get_str(f)` + "\n"},
		{"tracing/events/eprobes/myopen/enable", "0\n"},
		{"tracing/events/eprobes/myopen/filter", "none\n"},
		{"tracing/events/eprobes/myopen/trigger", "# Available triggers:\n# traceon traceoff snapshot stacktrace enable_event disable_event enable_hist disable_hist hist\n"},
	} {
		if got := f.read(t, tc.file); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.file, got, tc.want)
		}
	}
	// Removal: the attached event and the arguments must match.
	for _, tc := range []struct {
		line  string
		errno syscall.Errno
		gone  string
	}{
		{"-:sw sched.sched_switch np=$next_pid", syscall.ENOENT, ""},
		{"-:sw sched.sched_wakeup", syscall.ENOENT, ""},
		{"-:eprobes/sw sched/sched_switch pc=$prev_comm pcs=$prev_comm:string nc=$next_comm:string[2] ps=$prev_state:s8 np=$next_pid", 0, "sw"},
		{"-:my5 syscalls/sys_enter_openat", 0, "my5"},
		{"-:mygrp/", 0, "sched_switch"},
		{"-:eprobes/myopen", 0, "myopen"},
		{"-:sys_enter_openat syscalls.sys_enter_openat", 0, "sys_enter_openat"},
	} {
		err := f.write("tracing/dynamic_events", tc.line+"\n", false)
		if tc.errno != 0 {
			if !errors.Is(err, tc.errno) {
				t.Errorf("%s: %v, want %v", tc.line, err, tc.errno)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.line, err)
		}
		if strings.Contains(f.read(t, "tracing/dynamic_events"), "/"+tc.gone+" ") {
			t.Errorf("%s left %s", tc.line, tc.gone)
		}
	}
	if got := f.read(t, "tracing/dynamic_events"); got != "" {
		t.Errorf("dynamic_events = %q", got)
	}
	if _, err := f.tree.ReadFile("tracing/events/mygrp/enable"); err == nil {
		t.Errorf("events/mygrp outlived its last event")
	}
}

// An enabled event probe hangs a hidden trigger on its attached event
// (soft mode: 0*, no trigger shown), records the guest's own openat
// calls with the attached event's fields, and cannot go while enabled.
func TestEprobeRecords(t *testing.T) {
	f := setupCPUs(t, 2)
	defs := `e:myopen syscalls.sys_enter_openat dfd=$dfd fn=$filename file=+0($filename):ustring fl=$flags:x32 c=$comm:string nr=$__syscall_nr:s32` + "\n" +
		`e:none syscalls.sys_enter_openat dfd=$dfd if flags == 12345` + "\n" +
		`e:sw sched.sched_switch pcs=$prev_comm:string np=$next_pid:s32` + "\n"
	if err := f.write("tracing/dynamic_events", defs, false); err != nil {
		t.Fatal(err)
	}
	for _, e := range []string{"myopen", "none", "sw"} {
		if err := f.write("tracing/events/eprobes/"+e+"/enable", "1\n", false); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ file, want string }{
		{"tracing/events/syscalls/sys_enter_openat/enable", "0*\n"},
		{"tracing/events/syscalls/sys_enter_openat/trigger", "# Available triggers:\n# traceon traceoff snapshot stacktrace enable_event disable_event enable_hist disable_hist hist\n"},
		{"tracing/events/eprobes/myopen/enable", "1\n"},
	} {
		if got := f.read(t, tc.file); got != tc.want {
			t.Errorf("%s = %q, want %q", tc.file, got, tc.want)
		}
	}
	if err := f.write("tracing/dynamic_events", "-:myopen\n", false); !errors.Is(err, syscall.EBUSY) {
		t.Errorf("removing an enabled event probe: %v, want EBUSY", err)
	}
	if err := f.write("tracing/dynamic_events", "", true); !errors.Is(err, syscall.EBUSY) {
		t.Errorf("truncating dynamic_events with an enabled event probe: %v, want EBUSY", err)
	}
	f.step(t, 60_000_000)
	trace := f.read(t, "tracing/trace")
	re := regexp.MustCompile(`(?m)^ +(\S+)-\d+ +\[00[01]\] [.dN]{5} +[0-9.]+: myopen: \(syscalls\.sys_enter_openat\) dfd=0x[0-9a-f]+ fn=0x[0-9a-f]+ file=("[^"]*"|\(fault\)) fl=0x[0-9a-f]+ c="([^"]*)" nr=56$`)
	m := re.FindStringSubmatch(trace)
	if m == nil {
		t.Errorf("no myopen line in the trace:\n%s", trace[:min(len(trace), 4000)])
	} else if t.Logf("%s", m[0]); m[1] != m[3] && m[1] != "<...>" { // a slot of saved_cmdlines may have gone
		t.Errorf("comm column %q and c=%q differ", m[1], m[3])
	}
	// A char array field is its address in the record: :string reads
	// the comm there, the task switching out, current.
	sw := regexp.MustCompile(`(?m)^ +(\S+)-\d+ +\[00[01]\] [.dN]{5} +[0-9.]+: sw: \(sched\.sched_switch\) pcs="([^"]*)" np=\d+$`).FindStringSubmatch(trace)
	if sw == nil {
		t.Errorf("no sw line in the trace:\n%s", trace[:min(len(trace), 4000)])
	} else if t.Logf("%s", sw[0]); sw[1] != sw[2] && sw[1] != "<idle>" && sw[1] != "<...>" {
		t.Errorf("comm column %q and pcs=%q differ", sw[1], sw[2])
	}
	if strings.Contains(trace, "sys_openat(") {
		t.Errorf("the attached event recorded itself:\n%s", trace)
	}
	if strings.Contains(trace, " none: ") {
		t.Errorf("the filter of none let a hit through:\n%s", trace)
	}
	for _, e := range []string{"myopen", "none", "sw"} {
		if err := f.write("tracing/events/eprobes/"+e+"/enable", "0\n", false); err != nil {
			t.Fatal(err)
		}
	}
	if got := f.read(t, "tracing/events/syscalls/sys_enter_openat/enable"); got != "0\n" {
		t.Errorf("sys_enter_openat/enable = %q after the event probes went off", got)
	}
	if err := f.write("tracing/dynamic_events", "", true); err != nil {
		t.Errorf("clearing dynamic_events: %v", err)
	}
}

// In an instance the hidden trigger goes on the attached event's file of
// that instance, and the records there. As on Linux, an event probe
// enabled in two arrays records in the one enabled first, whichever is
// disabled first (the oracle's my5 went on recording in instances/foo
// after foo's file was disabled, while the top's stayed enabled).
func TestEprobeInstances(t *testing.T) {
	f := setupCPUs(t, 2)
	if err := f.write("tracing/dynamic_events", `e:my5 syscalls.sys_enter_openat f=+0($filename):ustring`+"\n", false); err != nil {
		t.Fatal(err)
	}
	if err := f.mkdir(t, "instances", "foo"); err != nil {
		t.Fatal(err)
	}
	const line = ": my5: (syscalls.sys_enter_openat) f="
	for i, tc := range []struct {
		writes         []string // "FILE VALUE"
		inTop, inFoo   bool
		topSoft, fSoft string
	}{
		{[]string{"instances/foo/events/eprobes/my5/enable 1"}, false, true, "0\n", "0*\n"},
		{[]string{"events/eprobes/my5/enable 1", "instances/foo/events/eprobes/my5/enable 0"}, false, true, "0\n", "0*\n"},
		// The last file off is the top's: Linux looks for the trigger
		// there, finds none, and leaves foo's hooked.
		{[]string{"events/eprobes/my5/enable 0", "events/eprobes/my5/enable 1"}, true, true, "0*\n", "0*\n"},
		{[]string{"events/eprobes/my5/enable 0"}, false, true, "0\n", "0*\n"},
	} {
		for _, w := range tc.writes {
			file, v, _ := strings.Cut(w, " ")
			if err := f.write("tracing/"+file, v+"\n", false); err != nil {
				t.Fatalf("step %d: %s: %v", i, w, err)
			}
		}
		for _, tr := range []string{"tracing/trace", "tracing/instances/foo/trace"} {
			if err := f.write(tr, "", true); err != nil {
				t.Fatal(err)
			}
		}
		f.step(t, 40_000_000)
		if got := strings.Contains(f.read(t, "tracing/trace"), line); got != tc.inTop {
			t.Errorf("step %d: my5 in the top trace: %v, want %v", i, got, tc.inTop)
		}
		if got := strings.Contains(f.read(t, "tracing/instances/foo/trace"), line); got != tc.inFoo {
			t.Errorf("step %d: my5 in foo's trace: %v, want %v", i, got, tc.inFoo)
		}
		if got := f.read(t, "tracing/events/syscalls/sys_enter_openat/enable"); got != tc.topSoft {
			t.Errorf("step %d: top sys_enter_openat/enable = %q, want %q", i, got, tc.topSoft)
		}
		if got := f.read(t, "tracing/instances/foo/events/syscalls/sys_enter_openat/enable"); got != tc.fSoft {
			t.Errorf("step %d: foo's sys_enter_openat/enable = %q, want %q", i, got, tc.fSoft)
		}
	}
	// kpemu drops the leftover trigger with its event.
	if err := f.write("tracing/dynamic_events", "", true); err != nil {
		t.Fatal(err)
	}
	if got := f.read(t, "tracing/instances/foo/events/syscalls/sys_enter_openat/enable"); got != "0\n" {
		t.Errorf("foo's sys_enter_openat/enable = %q after the event probe went", got)
	}
}

// Linux's find_and_get_event takes a synthetic event (the selftest
// trigger-synthetic-eprobe attaches to one), which then cannot go while
// the event probe holds it (trace_event_dyn_busy).
func TestEprobeOnSynthetic(t *testing.T) {
	f := setup(t)
	for _, tc := range []struct {
		line  string
		errno syscall.Errno
	}{
		{"s:mysyn u64 filename; s64 ret; char name[]; char tag[8]", 0},
		{`e:ep synthetic/mysyn file=+0($filename):ustring ret=$ret:s64 n=$name:string g=$tag:string`, 0},
		{`e:bad synthetic.mysyn x=$nofield`, syscall.ENOENT},
		{"-:synthetic/mysyn", syscall.EBUSY},
		{"-:ep", 0},
		{"-:synthetic/mysyn", 0},
	} {
		err := f.write("tracing/dynamic_events", tc.line+"\n", false)
		if tc.errno == 0 && err != nil || tc.errno != 0 && !errors.Is(err, tc.errno) {
			t.Errorf("%s: %v, want %v", tc.line, err, tc.errno)
		}
		if strings.HasPrefix(tc.line, "e:ep ") {
			want := "s:synthetic/mysyn\tu64 filename; s64 ret; char[] name; char[8] tag\n" +
				"e:eprobes/ep synthetic.mysyn file=+0($filename):ustring ret=$ret:s64 n=$name:string g=$tag:string\n"
			if got := f.read(t, "tracing/dynamic_events"); got != want {
				t.Errorf("dynamic_events:\n got %q\nwant %q", got, want)
			}
		}
	}
	if got := f.read(t, "tracing/dynamic_events"); got != "" {
		t.Errorf("dynamic_events = %q at the end", got)
	}
}
