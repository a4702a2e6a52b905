package tracing

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/kpemu/kpemu/tracing/filter"
)

// wakingHit is a sched_waking (or sched_wakeup) hit of task comm, pid,
// prio, its fields as the event's record gives them.
func wakingHit(tr *Tracing, comm string, pid, prio int) *histHit {
	return &histHit{t: tr, fields: map[string]filter.Value{
		"common_pid": {Num: 1}, "comm": {Str: comm, IsStr: true}, "pid": {Num: uint64(pid)}, "prio": {Num: uint64(prio)},
	}}
}

// switchHit is a sched_switch hit to task comm, pid.
func switchHit(tr *Tracing, comm string, pid int) *histHit {
	return &histHit{t: tr, fields: map[string]filter.Value{
		"common_pid": {Num: 1}, "next_comm": {Str: comm, IsStr: true}, "next_pid": {Num: uint64(pid)}, "next_prio": {Num: 120},
	}}
}

func readString(tr *Tracing, p string) string {
	b, _ := tr.tree.ReadFile(p)
	return string(b)
}

func writeAll(t *testing.T, tr *Tracing, writes [][2]string) {
	t.Helper()
	for _, w := range writes {
		if err := tr.tree.WriteFile(w[0], []byte(w[1]), false); err != nil {
			t.Fatalf("%s <- %q: %v", w[0], w[1], err)
		}
	}
}

// TestHistSnapshotAction is onchange().snapshot(): the array's
// snapshot is taken when the tracked value changes, the hist says by
// what (the oracle's block), the snapshot file is busy meanwhile, and a
// second snapshot() in the array is refused; all until the hist goes.
func TestHistSnapshotAction(t *testing.T) {
	tr, _ := newTestTracing(t, 1)
	const waking = "tracing/events/sched/sched_waking/trigger"
	cmd := `hist:keys=comm:newprio=prio:onchange($newprio).save(comm,prio):onchange($newprio).snapshot() if comm=="ping"`
	writeAll(t, tr, [][2]string{{waking, cmd}})
	if err := tr.tree.WriteFile("tracing/snapshot", []byte("1"), false); !errors.Is(err, syscall.EBUSY) {
		t.Errorf("writing snapshot under a snapshot(): %v, want EBUSY", err)
	}
	if err := tr.tree.WriteFile("tracing/events/sched/sched_switch/trigger", []byte("hist:keys=next_pid:p=next_prio:onmax($p).snapshot()"), false); !errors.Is(err, syscall.EBUSY) {
		t.Errorf("a second snapshot() in the array: %v, want EBUSY", err)
	}
	if got := readString(tr, "tracing/error_log"); got != "" {
		t.Errorf("error_log reads %q after the EBUSYs, want nothing (the oracle's)", got)
	}
	hd := histTriggerOf(t, tr, "sched", "sched_waking", 0)
	for i, c := range []struct {
		prio int
		snap bool // the hit takes a snapshot
	}{{120, true}, {120, false}, {121, true}} {
		mark := fmt.Sprintf("mark%d", i)
		printk(tr, 0, 10, mark)
		hd.hit(wakingHit(tr, "ping", 7, c.prio), "ping")
		snap, _ := tr.tree.ReadFile("tracing/snapshot")
		if got := strings.Contains(string(snap), mark); got != c.snap {
			t.Errorf("prio %d: the snapshot holds the entry written before the hit: %v, want %v", c.prio, got, c.snap)
		}
	}
	got, _ := tr.tree.ReadFile("tracing/events/sched/sched_waking/hist")
	want := "{ comm: ping                                               } hitcount:          3\n" +
		"\tchanged:        121  comm: ping                              prio:        121\n" +
		"\tchanged:        121\n" +
		"\nSnapshot taken (see tracing/snapshot).  Details:\n" +
		"\ttriggering value { onchange($newprio) }:        121" +
		"\ttriggered by event with key: { comm: ping                                               }\n" +
		"\nTotals:\n"
	if !strings.Contains(string(got), want) {
		t.Errorf("hist reads\n%s\nwant it to hold\n%s", got, want)
	}
	writeAll(t, tr, [][2]string{{waking, "!" + cmd}, {"tracing/snapshot", "1"}})
}

// TestHistFieldVariables is trigger-field-variable-support.tc: a param
// that is another event's field adds a synthetic_<field> hist to that
// event, keyed as its hist that matches the target's keys, which goes
// with the target; a plain field of the target is a param too.
func TestHistFieldVariables(t *testing.T) {
	tr, _ := newTestTracing(t, 1)
	switchCmd := `hist:keys=next_comm:wakeup_lat=common_timestamp.usecs-$ts0:onmatch(sched.sched_waking).wakeup_latency($wakeup_lat,next_pid,sched.sched_waking.prio,next_comm) if next_comm=="ping"`
	writeAll(t, tr, [][2]string{
		{"tracing/synthetic_events", "wakeup_latency u64 lat; pid_t pid; int prio; char comm[16]"},
		{"tracing/events/sched/sched_waking/trigger", `hist:keys=comm:ts0=common_timestamp.usecs if comm=="ping"`},
		{"tracing/events/sched/sched_switch/trigger", switchCmd},
		{"tracing/events/synthetic/wakeup_latency/trigger", "hist:keys=pid,prio,comm:vals=lat:sort=pid,prio"},
	})
	wantTrig := `hist:keys=comm:vals=hitcount:synthetic_prio=prio:sort=hitcount:size=2048 if comm=="ping" [active]`
	if got, _ := tr.tree.ReadFile("tracing/events/sched/sched_waking/trigger"); !strings.Contains(string(got), wantTrig) {
		t.Errorf("sched_waking's trigger reads\n%s\nwant a line\n%s", got, wantTrig)
	}
	waking := tr.top.file(tr.findEvent("sched", "sched_waking")).triggers.Load().list
	for _, x := range waking {
		x.hist.hd.hit(wakingHit(tr, "ping", 9, 118), "ping")
	}
	histTriggerOf(t, tr, "sched", "sched_switch", 0).hit(switchHit(tr, "ping", 9), "ping")
	got, _ := tr.tree.ReadFile("tracing/events/synthetic/wakeup_latency/hist")
	if !strings.Contains(string(got), "{ pid:          9, prio:        118, comm: ping") {
		t.Errorf("wakeup_latency's hist reads\n%s", got)
	}
	writeAll(t, tr, [][2]string{{"tracing/events/sched/sched_switch/trigger", "!" + switchCmd}})
	if got, _ := tr.tree.ReadFile("tracing/events/sched/sched_waking/trigger"); strings.Contains(string(got), "synthetic_prio") {
		t.Errorf("the field variable's hist stays after its maker went:\n%s", got)
	}
	writeAll(t, tr, [][2]string{{"tracing/synthetic_events", "pp pid_t pid; int prio"}})
	// The oracle's error_log entries.
	for _, c := range []struct {
		cmd, log string
		pos      int
	}{
		{"hist:keys=next_pid:onmatch(sched.sched_waking).pp(next_pid,sched.sched_waking.prio)", "Matching event histogram not found", 78},
		{"hist:keys=next_comm:onmatch(sched.sched_waking).pp(next_pid,sched.nosuch.prio)", "Event file not found", 73},
	} {
		if err := tr.tree.WriteFile("tracing/error_log", nil, true); err != nil {
			t.Fatal(err)
		}
		if err := tr.tree.WriteFile("tracing/events/sched/sched_switch/trigger", []byte(c.cmd), false); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("%q: %v, want EINVAL", c.cmd, err)
		}
		if got, want := readString(tr, "tracing/error_log"), histLogEntry("sched_switch", c.log, c.cmd, c.pos); got != want {
			t.Errorf("%q: error_log reads\n%s\nwant\n%s", c.cmd, got, want)
		}
	}
	// A name that is no field of the event is the onmatch event's,
	// after create_target_field_var logged its failure (the oracle's
	// two entries, though the write succeeds).
	cmd := "hist:keys=next_comm:onmatch(sched.sched_waking).pp(next_pid,prio)"
	if err := tr.tree.WriteFile("tracing/error_log", nil, true); err != nil {
		t.Fatal(err)
	}
	writeAll(t, tr, [][2]string{{"tracing/events/sched/sched_switch/trigger", cmd}})
	want := histLogEntry("sched_switch", "Couldn't find field", cmd, 60) + histLogEntry("sched_switch", "Couldn't parse field variable", cmd, 60)
	if got, _ := tr.tree.ReadFile("tracing/error_log"); string(got) != want {
		t.Errorf("error_log reads\n%s\nwant\n%s", got, want)
	}
	if got, _ := tr.tree.ReadFile("tracing/events/sched/sched_waking/trigger"); !strings.Contains(string(got), ":synthetic_prio=prio:") {
		t.Errorf("sched_waking's trigger reads\n%s", got)
	}
}

// TestHistVarRefs: a string variable carries its text to the action;
// a char * field is the pointer (6.1's hist does not follow it), so a
// u64 param takes it; a bare reference does not consume the variable,
// an expression's operand does; a hist keyed pid,lat finds its pid in a
// hist keyed pid.
func TestHistVarRefs(t *testing.T) {
	tr, _ := newTestTracing(t, 1)
	writeAll(t, tr, [][2]string{
		{"tracing/synthetic_events", "wcomm pid_t pid; char comm[16]; int lat"},
		{"tracing/events/sched/sched_waking/trigger", "hist:keys=pid:c=comm:t=prio"},
		{"tracing/events/sched/sched_switch/trigger", "hist:keys=next_pid:l=next_prio-$t:onmatch(sched.sched_waking).wcomm(next_pid,$c,$l)"},
		{"tracing/events/synthetic/wcomm/trigger", "hist:keys=pid,comm,lat"},
	})
	waking := histTriggerOf(t, tr, "sched", "sched_waking", 0)
	sw := histTriggerOf(t, tr, "sched", "sched_switch", 0)
	waking.hit(wakingHit(tr, "ping-long-name-x", 9, 100), "ping")
	sw.hit(switchHit(tr, "ping", 9), "ping")
	sw.hit(switchHit(tr, "ping", 9), "ping") // $t was consumed: no match
	got, _ := tr.tree.ReadFile("tracing/events/synthetic/wcomm/hist")
	if !strings.Contains(string(got), "{ pid:          9, comm: ping-long-name-                                   , lat:         20 } hitcount:          1\n") {
		t.Errorf("wcomm's hist reads\n%s", got)
	}

	// A hist on the synthetic event whose keys begin with the key of
	// the hist it references.
	writeAll(t, tr, [][2]string{
		{"tracing/synthetic_events", "sum int lat; pid_t pid"},
		{"tracing/events/sched/sched_waking/trigger", "hist:keys=pid:u=prio"},
		{"tracing/events/synthetic/wcomm/trigger", "hist:keys=pid,lat:s=$u+lat:onmatch(synthetic.wcomm).sum($s,pid)"},
		{"tracing/events/synthetic/sum/trigger", "hist:keys=pid,lat"},
	})
	waking.hit(wakingHit(tr, "ping", 9, 100), "ping")
	histTriggerOf(t, tr, "sched", "sched_waking", 1).hit(wakingHit(tr, "ping", 9, 100), "ping")
	sw.hit(switchHit(tr, "ping", 9), "ping")
	if got, _ := tr.tree.ReadFile("tracing/events/synthetic/sum/hist"); !strings.Contains(string(got), "{ pid:          9, lat:        120 } hitcount:          1\n") {
		t.Errorf("sum's hist reads\n%s", got)
	}

	// syscalls' char * filename: a number in a hist.
	writeAll(t, tr, [][2]string{
		{"tracing/synthetic_events", "synth_open u64 filename; s64 ret;"},
		{"tracing/events/syscalls/sys_enter_openat/trigger", "hist:keys=common_pid:__arg__1=filename"},
		{"tracing/events/syscalls/sys_exit_openat/trigger", "hist:keys=common_pid:filename=$__arg__1,ret=ret:onmatch(syscalls.sys_enter_openat).trace(synth_open,$filename,$ret)"},
		{"tracing/events/synthetic/synth_open/trigger", "hist:keys=filename.hex,ret"},
	})
	enter := histTriggerOf(t, tr, "syscalls", "sys_enter_openat", 0)
	exit := histTriggerOf(t, tr, "syscalls", "sys_exit_openat", 0)
	enter.hit(&histHit{t: tr, fields: map[string]filter.Value{"common_pid": {Num: 5}, "filename": {Num: 0xffffd000, Str: "/etc/passwd", IsStr: true}}}, "cat")
	exit.hit(&histHit{t: tr, fields: map[string]filter.Value{"common_pid": {Num: 5}, "ret": {Num: 3}}}, "cat")
	if got, _ := tr.tree.ReadFile("tracing/events/synthetic/synth_open/hist"); !strings.Contains(string(got), "{ filename: ffffd000, ret:          3 } hitcount:          1\n") {
		t.Errorf("synth_open's hist reads\n%s", got)
	}
}

// TestEprobeOnSyntheticRecords: an event probe on a synthetic event
// records when the synthetic event fires, its $fields read from the
// fired event's record, while the soft-enabled synthetic event records
// nothing itself.
func TestEprobeOnSyntheticRecords(t *testing.T) {
	tr, _ := newTestTracing(t, 1)
	writeAll(t, tr, [][2]string{
		{"tracing/synthetic_events", "mysyn u64 n; s64 ret; char name[]; char tag[8]"},
		{"tracing/dynamic_events", "e:ep synthetic/mysyn x=$n:u64 ret=$ret:s64 nm=$name:string tg=$tag:string"},
		{"tracing/events/eprobes/ep/enable", "1"},
	})
	ev := tr.findEvent("synthetic", "mysyn")
	neg3 := filter.Value{Num: ^uint64(2)}
	str := func(s string) filter.Value { return filter.Value{Str: s, IsStr: true} }
	tr.fireSynth(ev, []filter.Value{{Num: 5}, neg3, str("/etc/passwd"), str("abc")}, &histHit{fields: map[string]filter.Value{"common_pid": {Num: 1}}}, "cat")
	trace, _ := tr.tree.ReadFile("tracing/trace")
	if !strings.Contains(string(trace), `: ep: (synthetic.mysyn) x=5 ret=-3 nm="/etc/passwd" tg="abc"`+"\n") {
		t.Errorf("trace reads\n%s\nwant an ep line", trace)
	}
	if strings.Contains(string(trace), "mysyn: n=") {
		t.Errorf("the soft-enabled synthetic event recorded itself:\n%s", trace)
	}
	writeAll(t, tr, [][2]string{{"tracing/events/eprobes/ep/enable", "0"}, {"tracing/events/synthetic/mysyn/enable", "1"}})
	tr.fireSynth(ev, []filter.Value{{Num: 6}, neg3, str("x"), str("y")}, &histHit{fields: map[string]filter.Value{"common_pid": {Num: 1}}}, "cat")
	if trace, _ = tr.tree.ReadFile("tracing/trace"); !strings.Contains(string(trace), ": mysyn: n=6 ret=-3 name=x tag=y\n") || strings.Count(string(trace), " ep: ") != 1 {
		t.Errorf("trace reads\n%s\nwant one ep line and a mysyn line", trace)
	}
}
