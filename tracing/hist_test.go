package tracing_test

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"

	"github.com/kpemu/kpemu/internal/waitfor"
)

// TestHistOnGuest runs hist triggers on the guest's own forks: the hits
// land in the hist as they happen, in the top array and an instance,
// while the hist files are read; pause stops the count and cont resumes
// it; removal leaves the trigger file as it was.
func TestHistOnGuest(t *testing.T) {
	f := setup(t)
	f.run(t)
	if err := f.mkdir(t, "instances", "hi"); err != nil {
		t.Fatal(err)
	}
	hits := regexp.MustCompile(`\n    Hits: (\d+)\n`)
	count := func(p string) int {
		m := hits.FindStringSubmatch(f.read(t, p))
		if m == nil {
			return -1
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	for _, root := range []string{"tracing/", "tracing/instances/hi/"} {
		trig := root + "events/sched/sched_process_fork/trigger"
		hist := root + "events/sched/sched_process_fork/hist"
		for _, c := range []string{"hist:keys=parent_pid:vals=child_pid", "hist:keys=parent_comm,child_pid.log2"} {
			if err := f.write(trig, c, false); err != nil {
				t.Fatalf("%s <- %q: %v", trig, c, err)
			}
		}
		waitfor.Until(t, fmt.Sprintf("forks in %s", hist), func() bool { return count(hist) > 10 })
		if err := f.write(trig, "hist:keys=parent_pid:vals=child_pid:pause", false); err != nil {
			t.Fatal(err)
		}
		// The first hist's count stands while paused, while the second
		// counts more than 10 forks. (Counted from a read after the
		// pause: a hit already past the paused check when the write
		// returned may still land, as in Linux.)
		n, from := -1, 0
		waitfor.Until(t, "more forks", func() bool {
			out := f.read(t, root+"events/sched/sched_process_fork/hist")
			all := hits.FindAllStringSubmatch(out, -1)
			if len(all) != 2 {
				return false
			}
			a, _ := strconv.Atoi(all[0][1])
			b, _ := strconv.Atoi(all[1][1])
			if a != n {
				n, from = a, b
				return false
			}
			return b > from+10
		})
		if err := f.write(trig, "hist:keys=parent_pid:vals=child_pid:cont", false); err != nil {
			t.Fatal(err)
		}
		waitfor.Until(t, "counting again", func() bool { return count(hist) > n })
		for _, c := range []string{"!hist:keys=parent_pid:vals=child_pid", "!hist:keys=parent_comm,child_pid.log2"} {
			if err := f.write(trig, c, false); err != nil {
				t.Fatalf("%s <- %q: %v", trig, c, err)
			}
		}
		if got := f.read(t, hist); got != "" {
			t.Errorf("%s after the removals reads\n%s", hist, got)
		}
	}
}

// A variable of another hist's variable (filename=$__arg__1, the
// inter-event selftests' pattern) prints as Linux prints it; reading the
// trigger file once panicked on it, which the mount turned into EIO.
func TestHistVarOfRemoteVarPrints(t *testing.T) {
	f := setup(t)
	for _, w := range [][2]string{
		{"tracing/synthetic_events", "synth_open u64 filename; s64 ret;\n"},
		{"tracing/events/syscalls/sys_enter_openat/trigger", "hist:keys=common_pid:__arg__1=filename\n"},
		{"tracing/events/syscalls/sys_exit_openat/trigger", "hist:keys=common_pid:filename=$__arg__1,ret=ret:onmatch(syscalls.sys_enter_openat).trace(synth_open,$filename,$ret)\n"},
	} {
		if err := f.write(w[0], w[1], false); err != nil {
			t.Fatalf("%s: %v", w[0], err)
		}
	}
	const want = "hist:keys=common_pid:vals=hitcount:filename=$__arg__1,ret=ret:sort=hitcount:size=2048:onmatch(syscalls.sys_enter_openat).trace(synth_open,$filename,$ret) [active]\n"
	if got := f.read(t, "tracing/events/syscalls/sys_exit_openat/trigger"); got != want {
		t.Errorf("trigger:\n got %q\nwant %q", got, want)
	}
}
