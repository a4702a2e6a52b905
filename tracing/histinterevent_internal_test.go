package tracing

import "testing"

// TestHistInterEventParse is trigger-inter-event-combined-hist.tc's
// triggers: references to variables of two other hists in one
// expression, onmatch on a synthetic event, a pid_t param of a synthetic
// event's own pid_t field.
func TestHistInterEventParse(t *testing.T) {
	tr, _ := newTestTracing(t, 1)
	for _, c := range [][2]string{
		{"tracing/synthetic_events", "waking_latency  u64 lat pid_t pid"},
		{"tracing/events/sched/sched_waking/trigger", `hist:keys=pid:ts0=common_timestamp.usecs if comm=="ping"`},
		{"tracing/events/sched/sched_wakeup/trigger", `hist:keys=pid:waking_lat=common_timestamp.usecs-$ts0:onmatch(sched.sched_waking).waking_latency($waking_lat,pid) if comm=="ping"`},
		{"tracing/events/synthetic/waking_latency/trigger", "hist:keys=pid,lat:sort=pid,lat"},
		{"tracing/synthetic_events", "wakeup_latency u64 lat pid_t pid"},
		{"tracing/events/sched/sched_wakeup/trigger", `hist:keys=pid:ts1=common_timestamp.usecs if comm=="ping"`},
		{"tracing/events/sched/sched_switch/trigger", `hist:keys=next_pid:wakeup_lat=common_timestamp.usecs-$ts1:onmatch(sched.sched_wakeup).wakeup_latency($wakeup_lat,next_pid) if next_comm=="ping"`},
		{"tracing/synthetic_events", "waking_plus_wakeup_latency u64 lat; pid_t pid"},
		{"tracing/events/synthetic/wakeup_latency/trigger", `hist:keys=pid,lat:sort=pid,lat:ww_lat=$waking_lat+$wakeup_lat:onmatch(synthetic.wakeup_latency).waking_plus_wakeup_latency($ww_lat,pid)`},
		{"tracing/events/synthetic/waking_plus_wakeup_latency/trigger", "hist:keys=pid,lat:sort=pid,lat"},
	} {
		if err := tr.tree.WriteFile(c[0], []byte(c[1]), false); err != nil {
			t.Errorf("%s: %v", c[1], err)
		}
	}
	want := "hist:keys=pid,lat:vals=hitcount:ww_lat=$waking_lat+$wakeup_lat:sort=pid,lat:size=2048:onmatch(synthetic.wakeup_latency).waking_plus_wakeup_latency($ww_lat,pid) [active]\n"
	if got, _ := tr.tree.ReadFile("tracing/events/synthetic/wakeup_latency/trigger"); string(got) != want {
		t.Errorf("wakeup_latency's trigger reads %q, want %q", got, want)
	}
	if got, _ := tr.tree.ReadFile("tracing/error_log"); len(got) != 0 {
		t.Errorf("error_log reads\n%s", got)
	}
}
