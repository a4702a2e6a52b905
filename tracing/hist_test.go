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
		// The first hist's count stands while paused (read twice; the
		// second hist keeps counting).
		n := count(hist)
		waitfor.Until(t, "more forks", func() bool {
			out := f.read(t, root+"events/sched/sched_process_fork/hist")
			all := hits.FindAllStringSubmatch(out, -1)
			if len(all) != 2 {
				return false
			}
			a, _ := strconv.Atoi(all[0][1])
			b, _ := strconv.Atoi(all[1][1])
			return a == n && b > n+10
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
