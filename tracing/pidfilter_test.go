package tracing_test

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// The pid files as Linux 6.1 takes them (Debian's 6.1 through
// shared/oracle): pids listed in ascending order, '>' clears at the open
// and '>>' appends, every word kstrtoul(word, 0) truncated to a pid_t, a
// bad word EINVAL and a pid from 1<<30 on EPERM with the list unchanged,
// and set_ftrace_pid's "no pid" for no list. Each step runs on the state
// the steps before it left, as the oracle's did.
func TestPidFilesSyntax(t *testing.T) {
	f := setup(t)
	const ep, en, fp, fn = "tracing/set_event_pid", "tracing/set_event_notrace_pid", "tracing/set_ftrace_pid", "tracing/set_ftrace_notrace_pid"
	if got := f.read(t, ep) + f.read(t, en); got != "" {
		t.Errorf("event pid files at boot: %q", got)
	}
	if got := f.read(t, fp) + f.read(t, fn); got != "no pid\nno pid\n" {
		t.Errorf("ftrace pid files at boot: %q", got)
	}
	steps := []struct {
		file  string
		data  string
		trunc bool
		errno syscall.Errno
		want  string // the file's pids after, space-separated
	}{
		{ep, "30 1 2\n", true, 0, "1 2 30"},
		{ep, "5\n", false, 0, "1 2 5 30"},
		{ep, "7\n", true, 0, "7"},
		{ep, "abc\n", false, syscall.EINVAL, "7"},
		{ep, "8 abc 9\n", false, syscall.EINVAL, "7"},
		{ep, "abc\n", true, syscall.EINVAL, ""}, // the open cleared it
		{ep, "7\n", true, 0, "7"},
		{ep, "-1\n", false, syscall.EINVAL, "7"},
		{ep, "1073741824\n", false, syscall.EPERM, "7"},
		{ep, "1073741823\n", false, 0, "7 1073741823"},
		{ep, "4294967296\n", false, 0, "0 7 1073741823"},
		{ep, "4294967301\n", false, 0, "0 5 7 1073741823"},
		{ep, "4294967295\n", false, syscall.EPERM, "0 5 7 1073741823"},
		{ep, "0x10\n", false, 0, "0 5 7 16 1073741823"},
		{ep, "010\n", false, 0, "0 5 7 8 16 1073741823"},
		{ep, "08\n", false, syscall.EINVAL, "0 5 7 8 16 1073741823"},
		{ep, "+9\n", false, 0, "0 5 7 8 9 16 1073741823"},
		{ep, "0\n", false, 0, "0 5 7 8 9 16 1073741823"},
		{ep, "99999999999999999999999\n", false, syscall.EINVAL, "0 5 7 8 9 16 1073741823"},
		{ep, " 12  13 \n", false, 0, "0 5 7 8 9 12 13 16 1073741823"},
		{ep, "1,2\n", false, syscall.EINVAL, "0 5 7 8 9 12 13 16 1073741823"},
		{ep, "0X1f\n", false, 0, "0 5 7 8 9 12 13 16 31 1073741823"},
		{ep, "11\t12\n", false, 0, "0 5 7 8 9 11 12 13 16 31 1073741823"},
		{ep, "  \n", false, 0, "0 5 7 8 9 11 12 13 16 31 1073741823"},
		{ep, "21\x0022", false, 0, "0 5 7 8 9 11 12 13 16 21 22 31 1073741823"},
		{ep, "23\n24", false, 0, "0 5 7 8 9 11 12 13 16 21 22 23 24 31 1073741823"},
		{ep, "1" + strings.Repeat("0", 125) + "5\n", false, syscall.EINVAL, "0 5 7 8 9 11 12 13 16 21 22 23 24 31 1073741823"},
		{ep, "1" + strings.Repeat("0", 126) + "5\n", false, syscall.EINVAL, "0 5 7 8 9 11 12 13 16 21 22 23 24 31 1073741823"},
		{ep, "\n", true, 0, ""},
		{ep, "0 16384 32768 49152 65536 81920 98304 114688 131072 147456 163840\n", true, 0, "0 16384 32768 49152 65536 81920 98304 114688 131072 147456 163840"},
		{ep, "", true, 0, ""},
		{ep, "4\n", true, 0, "4"},
		{en, "", true, 0, ""},
		{en, "4\n", true, 0, "4"},
		{ep, "", true, 0, ""},
		{en, "", true, 0, ""},
		{fp, "30 1 2\n", true, 0, "1 2 30"},
		{fp, "5\n", false, 0, "1 2 5 30"},
		{fp, "abc\n", false, syscall.EINVAL, "1 2 5 30"},
		{fp, "1073741824\n", false, syscall.EPERM, "1 2 5 30"},
		{fp, "abc\n", true, syscall.EINVAL, "no pid"},
		{fp, "\n", true, 0, "no pid"},
		{fn, "3\n", true, 0, "3"},
		{fn, "", true, 0, "no pid"},
	}
	for _, s := range steps {
		err := f.write(s.file, s.data, s.trunc)
		switch {
		case s.errno == 0 && err != nil:
			t.Errorf("%s < %q: %v", s.file, s.data, err)
		case s.errno != 0 && !errors.Is(err, s.errno):
			t.Errorf("%s < %q: err %v, want %v", s.file, s.data, err, s.errno)
		}
		if got := strings.Join(strings.Fields(f.read(t, s.file)), " "); got != s.want {
			t.Errorf("%s after %q: %q, want %q", s.file, s.data, got, s.want)
		}
	}
	if got := f.read(t, fp); got != "no pid\n" {
		t.Errorf("set_ftrace_pid = %q", got)
	}
	if err := f.write(fn, "3 1\n", true); err != nil {
		t.Fatal(err)
	}
	if got := f.read(t, fn); got != "1\n3\n" {
		t.Errorf("set_ftrace_notrace_pid = %q, want %q", got, "1\n3\n")
	}
}

// The files' modes are those of the oracle's ls -l of /sys/kernel/tracing;
// the -fork options are trace flags with their files, off at boot.
func TestPidFileModesAndOptions(t *testing.T) {
	f := setup(t)
	for _, file := range []string{"set_event_pid", "set_event_notrace_pid", "set_ftrace_pid", "set_ftrace_notrace_pid", "options/event-fork", "options/function-fork"} {
		n, err := f.tree.Lookup("tracing/" + file)
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		if n.Mode() != fs.FileMode(0o640) {
			t.Errorf("%s: mode %v, want 0640", file, n.Mode())
		}
	}
	steps := []struct {
		file, data string
		errno      syscall.Errno
		event, fn  string
	}{
		{"tracing/trace_options", "event-fork", 0, "1", "0"},
		{"tracing/trace_options", "noevent-fork", 0, "0", "0"},
		{"tracing/options/function-fork", "1", 0, "0", "1"},
		{"tracing/options/function-fork", "0", 0, "0", "0"},
		{"tracing/options/event-fork", "2", syscall.EINVAL, "0", "0"},
	}
	for _, s := range steps {
		if err := f.write(s.file, s.data, true); s.errno == 0 && err != nil || s.errno != 0 && !errors.Is(err, s.errno) {
			t.Errorf("%s < %q: err %v, want %v", s.file, s.data, err, s.errno)
		}
		ev, fn := strings.TrimSpace(f.read(t, "tracing/options/event-fork")), strings.TrimSpace(f.read(t, "tracing/options/function-fork"))
		if ev != s.event || fn != s.fn {
			t.Errorf("after %s < %q: event-fork %s, function-fork %s; want %s, %s", s.file, s.data, ev, fn, s.event, s.fn)
		}
	}
}

// tracePids counts the trace's lines per pid for the lines that contain
// what.
func tracePids(t *testing.T, f *fixture, what string) map[int]int {
	t.Helper()
	return tracePidsOf(t, f, what, "")
}

// tracePidsOf is tracePids for the tasks named comm ("" for any).
func tracePidsOf(t *testing.T, f *fixture, what, comm string) map[int]int {
	t.Helper()
	out := map[int]int{}
	for _, l := range strings.Split(f.read(t, "tracing/trace"), "\n") {
		if strings.HasPrefix(l, "#") || !strings.Contains(l, what) {
			continue
		}
		task := strings.Fields(l)[0]
		if comm != "" && !strings.HasPrefix(task, comm+"-") {
			continue
		}
		pid, err := strconv.Atoi(task[strings.LastIndexByte(task, '-')+1:])
		if err != nil {
			t.Fatalf("no pid in %q", l)
		}
		out[pid]++
	}
	return out
}

// The event lists filter kprobe events by the task that hits them:
// set_event_pid keeps only its pids, set_event_notrace_pid drops its own,
// and both apply at once. The guest's kworkload (pid 6) forks children
// that exit at once and reaps them (release_task); init (pid 1) forks
// too.
func TestEventPidFilter(t *testing.T) {
	f := setupCPUs(t, 2)
	for _, w := range []struct{ file, data string }{
		{"tracing/kprobe_events", "p:clone kernel_clone\np:exit do_exit\n"},
		{"tracing/events/kprobes/enable", "1"},
	} {
		if err := f.write(w.file, w.data, true); err != nil {
			t.Fatal(err)
		}
	}
	f.stepForks(t, 100)
	all := tracePids(t, f, ": (")
	if all[6] == 0 || len(all) < 3 {
		t.Fatalf("unfiltered, the trace has lines of pids %v; want kworkload's (6) and its children's", all)
	}
	tests := []struct {
		name        string
		pids, nopid string
		keep        func(pid int) bool
	}{
		{"set_event_pid 6", "6", "", func(p int) bool { return p == 6 }},
		{"set_event_pid 6 1", "6 1", "", func(p int) bool { return p == 6 || p == 1 }},
		{"set_event_notrace_pid 6", "", "6", func(p int) bool { return p != 6 }},
		{"both lists, 6 in each", "6 1", "6", func(p int) bool { return p == 1 }},
		{"neither", "", "", func(int) bool { return true }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := f.write("tracing/set_event_pid", tc.pids+"\n", true); err != nil {
				t.Fatal(err)
			}
			if err := f.write("tracing/set_event_notrace_pid", tc.nopid+"\n", true); err != nil {
				t.Fatal(err)
			}
			if err := f.write("tracing/trace", "", true); err != nil {
				t.Fatal(err)
			}
			f.stepForks(t, 100)
			got := tracePids(t, f, ": (")
			kept := 0
			for pid, n := range got {
				if !tc.keep(pid) {
					t.Errorf("%d lines of pid %d", n, pid)
				}
				kept += n
			}
			if kept == 0 && tc.keep(6) {
				t.Errorf("no lines at all")
			}
		})
	}
}

// A trigger that needs no record (traceon, with no condition) fires even
// for a task the pid lists ignore, as Linux's trace_trigger_soft_disabled
// runs it before the pid test; a conditional one, or traceoff and
// stacktrace (post triggers, so EVENT_FILE_FL_TRIGGER_COND), waits for
// the record, which trace_event_buffer_reserve never reserves for an
// ignored task (the oracle, with set_event_pid 99999, agrees).
func TestEventPidFilterTriggers(t *testing.T) {
	for _, tc := range []struct {
		trigger   string
		on, after string // tracing_on before and after
	}{
		{"traceon", "0", "1"},
		{"traceoff", "1", "1"},
		{"traceon if common_pid > 0", "0", "0"},
		{"stacktrace", "1", "1"},
	} {
		t.Run(tc.trigger, func(t *testing.T) {
			f := setup(t)
			for _, w := range []struct{ file, data string }{
				{"tracing/kprobe_events", "p:clone kernel_clone\n"},
				{"tracing/events/kprobes/clone/trigger", tc.trigger + "\n"},
				{"tracing/set_event_pid", "99999\n"},
				{"tracing/events/kprobes/clone/enable", "1"},
				{"tracing/tracing_on", tc.on},
			} {
				if err := f.write(w.file, w.data, true); err != nil {
					t.Fatal(err)
				}
			}
			f.stepForks(t, 100)
			if on := strings.TrimSpace(f.read(t, "tracing/tracing_on")); on != tc.after {
				t.Errorf("tracing_on %s, want %s", on, tc.after)
			}
			tr := f.read(t, "tracing/trace")
			if strings.Contains(tr, "clone: (") {
				t.Errorf("records of an ignored task:\n%s", tr)
			}
			if strings.Contains(tr, "<stack trace>") {
				t.Errorf("a stacktrace trigger (a post trigger) fired for an ignored task:\n%s", tr)
			}
		})
	}
}

// The function tracer's lists filter its entries, and leave the events
// alone.
func TestFtracePidFilter(t *testing.T) {
	f := setupCPUs(t, 2)
	for _, w := range []struct{ file, data string }{
		{"tracing/set_ftrace_filter", "kernel_clone do_exit\n"},
		{"tracing/current_tracer", "function\n"},
		{"tracing/set_event_pid", "1\n"},
	} {
		if err := f.write(w.file, w.data, true); err != nil {
			t.Fatal(err)
		}
	}
	f.stepForks(t, 100)
	if all := tracePids(t, f, " <-"); all[6] == 0 || len(all) < 3 {
		t.Fatalf("unfiltered, the function tracer's lines are of pids %v", all)
	}
	tests := []struct {
		name        string
		pids, nopid string
		keep        func(pid int) bool
	}{
		{"set_ftrace_pid 6", "6", "", func(p int) bool { return p == 6 }},
		{"set_ftrace_notrace_pid 6", "", "6", func(p int) bool { return p != 6 }},
		{"both lists", "6 1", "6", func(p int) bool { return p == 1 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := f.write("tracing/set_ftrace_pid", tc.pids+"\n", true); err != nil {
				t.Fatal(err)
			}
			if err := f.write("tracing/set_ftrace_notrace_pid", tc.nopid+"\n", true); err != nil {
				t.Fatal(err)
			}
			if err := f.write("tracing/trace", "", true); err != nil {
				t.Fatal(err)
			}
			f.stepForks(t, 100)
			got := tracePids(t, f, " <-")
			for pid, n := range got {
				if !tc.keep(pid) {
					t.Errorf("%d lines of pid %d", n, pid)
				}
			}
			if len(got) == 0 && tc.keep(6) {
				t.Errorf("no lines at all")
			}
		})
	}
}

// pidsOf is the pids a pid file lists.
func pidsOf(t *testing.T, f *fixture, file string) []int {
	t.Helper()
	var out []int
	for _, w := range strings.Fields(f.read(t, file)) {
		if w == "no" || w == "pid" {
			continue
		}
		p, err := strconv.Atoi(w)
		if err != nil {
			t.Fatalf("%s lists %q", file, w)
		}
		out = append(out, p)
	}
	return out
}

// maxSteps bounds stepUntil: far more instructions than any wait here
// needs (kworkload forks about 200 children per million), so reaching it
// means the guest hangs or the awaited thing never happens.
const maxSteps = 200_000_000

// stepUntil steps the guest in small chunks until cond holds, so that a
// test runs the guest for the events it needs and no longer; on a loaded
// host or under -race each instruction costs many times more, and fixed
// budgets of tens of millions made the pid tests run for minutes.
func (f *fixture) stepUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for n := uint64(0); !cond(); n += 100_000 {
		if n >= maxSteps {
			t.Fatalf("%d instructions without %s", n, what)
		}
		f.step(t, 100_000)
	}
}

// stepForks steps the guest until kworkload has forked n more children
// (workload_forks), each of which exits and is reaped a few forks later:
// the events whose traces and pid-list changes the tests look for.
func (f *fixture) stepForks(t *testing.T, n uint64) {
	t.Helper()
	sym, ok := f.k.Kallsyms().LookupName("workload_forks")
	if !ok {
		t.Fatal("no workload_forks in the image")
	}
	forks := func() uint64 {
		v, err := f.k.ReadU64(sym.Addr)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	start := forks()
	f.stepUntil(t, fmt.Sprintf("%d forks of kworkload", n), func() bool { return forks() >= start+n })
}

// With event-fork (function-fork) on, the children a listed task forks
// are listed too, and a reaped task leaves the lists, as Linux's
// sched_process_fork and sched_process_free probes do; a list whose last
// pid went stays, empty, and then ignores every task. Off, the lists keep
// what was written. The hook shows in enabled_functions only while it is
// needed.
func TestPidFork(t *testing.T) {
	for _, tc := range []struct {
		name, option, list, nolist string
		setup                      []string // file, data pairs
		marker                     string   // what the tracer's lines of do_exit contain
	}{
		{"event-fork", "tracing/options/event-fork", "tracing/set_event_pid", "tracing/set_event_notrace_pid",
			[]string{"tracing/kprobe_events", "p:exit do_exit\n", "tracing/events/kprobes/enable", "1"}, "exit: (do_exit"},
		{"function-fork", "tracing/options/function-fork", "tracing/set_ftrace_pid", "tracing/set_ftrace_notrace_pid",
			[]string{"tracing/set_ftrace_filter", "do_exit\n", "tracing/current_tracer", "function\n"}, "do_exit <-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := setupCPUs(t, 2)
			write := func(file, data string) {
				t.Helper()
				if err := f.write(file, data, true); err != nil {
					t.Fatalf("%s < %q: %v", file, data, err)
				}
			}
			for i := 0; i < len(tc.setup); i += 2 {
				write(tc.setup[i], tc.setup[i+1])
			}
			hookless := f.read(t, "tracing/enabled_functions")
			// Off: kworkload's children exit unseen.
			write(tc.list, "6\n")
			write("tracing/trace", "")
			f.stepForks(t, 100)
			if got := tracePids(t, f, tc.marker); len(got) != 0 {
				t.Errorf("without %s, do_exit lines of %v", tc.option, got)
			}
			if got := f.read(t, "tracing/enabled_functions"); got != hookless {
				t.Errorf("without %s, enabled_functions = %q, want %q", tc.option, got, hookless)
			}
			// On: they are listed while they live, and seen.
			write(tc.option, "1")
			write("tracing/trace", "")
			seen := map[int]bool{}
			for i := 0; i < 20; i++ {
				f.stepForks(t, 5)
				for _, p := range pidsOf(t, f, tc.list) {
					seen[p] = true
				}
			}
			children := 0
			for p := range seen {
				if p != 6 {
					children++
				}
			}
			if children == 0 || !seen[6] {
				t.Errorf("with %s, %s listed only %v", tc.option, tc.list, seen)
			}
			if got := tracePids(t, f, tc.marker); len(got) == 0 || got[6] != 0 {
				t.Errorf("with %s, do_exit lines of %v; want kworkload's children's", tc.option, got)
			}
			// kworkload (6) and at most MAX_CHILDREN+1 (9) children
			// that it has not reaped yet.
			if got := pidsOf(t, f, tc.list); len(got) > 10 {
				t.Errorf("with %s, reaped children stay listed: %v", tc.option, got)
			}
			if got := f.read(t, "tracing/enabled_functions"); !strings.Contains(got, "wake_up_new_task") || !strings.Contains(got, "release_task") {
				t.Errorf("with %s, enabled_functions = %q", tc.option, got)
			}
			// A list of one child, which is reaped: the list stays, empty,
			// and nothing is traced until it is written again.
			var child int
			f.stepUntil(t, "a child of kworkload listed", func() bool {
				for _, p := range pidsOf(t, f, tc.list) {
					if p != 6 {
						child = p
					}
				}
				return child != 0
			})
			write(tc.list, strconv.Itoa(child)+"\n")
			f.stepForks(t, 100)
			if got := f.read(t, tc.list); got != "" {
				t.Errorf("after pid %d was reaped, %s = %q, want it empty", child, tc.list, got)
			}
			write("tracing/trace", "")
			f.stepForks(t, 100)
			if got := tracePids(t, f, tc.marker); len(got) != 0 {
				t.Errorf("an empty list let do_exit lines of %v through", got)
			}
			if err := f.write(tc.list, "\n", false); err != nil {
				t.Fatal(err)
			}
			if got := f.read(t, tc.list); strings.Contains(got, "pid") != strings.Contains(tc.list, "ftrace") {
				t.Errorf("an empty write to an empty list left %q", got)
			}
			f.stepForks(t, 100)
			if got := tracePids(t, f, tc.marker); len(got) == 0 {
				t.Error("no do_exit lines once the list went")
			}
			// The notrace list follows forks the same way. A child that
			// kworkload forked before the write is not in it: clear the
			// trace once those have exited.
			write(tc.nolist, "6\n")
			f.stepForks(t, 100)
			write("tracing/trace", "")
			// Other tasks exit far less often than kworkload's children:
			// after a hundred of these, run until one has.
			f.stepForks(t, 100)
			f.stepUntil(t, "a do_exit line of another task", func() bool { return len(tracePids(t, f, tc.marker)) > 0 })
			if got := tracePidsOf(t, f, tc.marker, "kworkload"); len(got) != 0 {
				t.Errorf("with 6 not traced, its children's do_exit lines of %v", got)
			}
			if got := tracePids(t, f, tc.marker); len(got) == 0 {
				t.Error("with 6 not traced, no other task's do_exit lines")
			}
			write(tc.nolist, "")
			write(tc.option, "0")
			if got := f.read(t, "tracing/enabled_functions"); got != hookless {
				t.Errorf("after %s off, enabled_functions = %q, want %q", tc.option, got, hookless)
			}
		})
	}
}
