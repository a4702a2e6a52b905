package kprobes_test

import (
	"fmt"
	"testing"

	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/kprobes"
)

// A kretprobe on a function several tasks sleep in at once: the cron
// threads of init/workload.c all sit in schedule_timeout() (msleep). With
// maxactive 1, the first sleeper holds the one instance until it returns,
// and every entry meanwhile is missed, which Linux counts in nmissed
// (pre_handler_kretprobe finding no free instance). A plain kprobe on the
// same address (an aggregate) counts every call, so that calls = entries
// with an instance + missed, exactly, at any stop.
func TestKretprobeMaxactiveMissesSleepers(t *testing.T) {
	tests := []struct {
		cpus      int
		maxActive int
		wantMiss  bool
	}{
		{1, 1, true},
		{2, 1, true},
		{1, 8, false}, // more instances than cron threads: none missed
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%dcpu_maxactive%d", tt.cpus, tt.maxActive), func(t *testing.T) {
			k, err := kernel.Boot(kernel.Config{NumCPUs: tt.cpus, Logger: quiet()})
			if err != nil {
				t.Fatal(err)
			}
			kp, err := kprobes.New(k, quiet())
			if err != nil {
				t.Fatal(err)
			}
			// Let the cron threads start and fall asleep first.
			runIterations(t, k, 50)
			var calls, entries, returns uint64
			count := &kprobes.Kprobe{
				Symbol: "schedule_timeout",
				PreHandler: func(*kprobes.Kprobe, *kprobes.Regs) bool {
					calls++
					return false
				},
			}
			rp := &kprobes.Kretprobe{
				Kp:        kprobes.Kprobe{Symbol: "schedule_timeout"},
				MaxActive: tt.maxActive,
				EntryHandler: func(*kprobes.KretprobeInstance, *kprobes.Regs) bool {
					entries++
					return false
				},
				Handler: func(_ *kprobes.KretprobeInstance, r *kprobes.Regs) {
					returns++
					if int64(r.X[0]) < 0 {
						t.Errorf("schedule_timeout returned %d", int64(r.X[0]))
					}
				},
			}
			if err := kp.Register(count); err != nil {
				t.Fatal(err)
			}
			if err := kp.RegisterKretprobe(rp); err != nil {
				t.Fatal(err)
			}
			runIterations(t, k, 3000)
			missed := rp.Missed()
			t.Logf("calls %d, entries %d, returns %d, nmissed %d", calls, entries, returns, missed)
			if calls == 0 || returns == 0 {
				t.Fatalf("schedule_timeout: %d calls, %d returns", calls, returns)
			}
			if calls != entries+missed {
				t.Errorf("calls %d != entries %d + nmissed %d", calls, entries, missed)
			}
			if inFlight := entries - returns; returns > entries || inFlight > uint64(tt.maxActive) {
				t.Errorf("%d entries, %d returns: more than maxactive %d in flight", entries, returns, tt.maxActive)
			}
			if got := missed > 0; got != tt.wantMiss {
				t.Errorf("nmissed = %d with maxactive %d and 4 sleepers", missed, tt.maxActive)
			}
			if msg, ok := k.Panicked(); ok {
				t.Fatal(msg)
			}
		})
	}
}
