package kprobes_test

import (
	"context"
	"errors"
	"syscall"
	"testing"

	"github.com/kpemu/kpemu/internal/waitfor"
	"github.com/kpemu/kpemu/kprobes"
	"github.com/kpemu/kpemu/machine"
)

// A guest jprobe handler (samples/kprobes/jprobe_example.c's jdo_fork) runs
// with do_fork's arguments, and do_fork then runs as if nothing happened.
func TestGuestJprobe(t *testing.T) {
	k, kp := boot(t)
	jp := &kprobes.Jprobe{Kp: kprobes.Kprobe{Symbol: "do_fork"}, Entry: "jdo_fork"}
	if err := kp.RegisterJprobe(jp); err != nil {
		t.Fatal(err)
	}
	l := kp.List()
	if len(l) != 1 || l[0].Type != kprobes.TypeJprobe || l[0].String()[18] != 'j' {
		t.Fatalf("list = %q", l[0].String())
	}
	forks0 := counter(t, k, "nr_forks")
	runIterations(t, k, 40)
	calls, forks := counter(t, k, "jdo_fork_calls"), counter(t, k, "nr_forks")-forks0
	if calls == 0 || int64(calls)-int64(forks) > 1 || calls > jp.Kp.Hits() {
		t.Fatalf("jdo_fork ran %d times, %d forks, %d hits", calls, forks, jp.Kp.Hits())
	}
	if flags := counter(t, k, "jdo_fork_last_flags"); flags == 0 {
		t.Error("jdo_fork did not see do_fork's clone_flags")
	}
	if msg, ok := k.Panicked(); ok {
		t.Fatal(msg)
	}
	// A second jprobe on the same address: EEXIST; a kprobe is fine.
	if err := kp.RegisterJprobe(&kprobes.Jprobe{Kp: kprobes.Kprobe{Symbol: "do_fork"}, Entry: "jdo_fork"}); !errors.Is(err, syscall.EEXIST) {
		t.Errorf("second jprobe: %v, want EEXIST", err)
	}
	kprobe := &kprobes.Kprobe{Symbol: "do_fork"}
	if err := kp.Register(kprobe); err != nil {
		t.Fatal(err)
	}
	runIterations(t, k, 20)
	if kprobe.Hits() == 0 {
		t.Error("a kprobe beside the jprobe never hit")
	}
	kp.UnregisterJprobe(jp)
	n := counter(t, k, "jdo_fork_calls")
	runIterations(t, k, 20)
	if counter(t, k, "jdo_fork_calls") != n {
		t.Error("handler ran after unregister")
	}
}

// A guest jprobe handler runs with preemption off, as Linux's arm64
// setjmp_pre_handler has it (preempt_disable, undone by
// longjmp_break_handler): preempted there, a task could be switched out
// inside a module's handler, come back after the module went (an Oops in
// TestGuestKprobeSamples beside another make test), or find the per-CPU
// saved registers taken by another task's hit.
func TestJprobeHandlerNotPreemptible(t *testing.T) {
	k, kp := boot(t)
	if err := kp.RegisterJprobe(&kprobes.Jprobe{Kp: kprobes.Kprobe{Symbol: "do_fork"}, Entry: "jdo_fork"}); err != nil {
		t.Fatal(err)
	}
	m := k.Machine()
	ctx, cancel := context.WithDeadline(context.Background(), waitfor.Deadline(t))
	defer cancel()
	// stopAt runs the guest to a host breakpoint at addr and returns the
	// preempt_count of the task there.
	stopAt := func(addr uint64) int32 {
		t.Helper()
		if err := m.SetHostBreakpoint(addr); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := m.ClearHostBreakpoint(addr); err != nil {
				t.Fatal(err)
			}
		}()
		ev := m.DebugRun(ctx, -1)
		if ev.Reason != machine.StopBreakpoint {
			t.Fatalf("run to %s: %+v", k.Kallsyms().Format(addr), ev)
		}
		n, err := k.PreemptCount(ev.CPU)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for i := 0; i < 3; i++ {
		before := stopAt(symAddr(t, k, "do_fork") + 4)     // do_fork going on after a handler
		in := stopAt(symAddr(t, k, "jprobe_example_note")) // called by jdo_fork, the handler
		if in != before+1 {
			t.Errorf("hit %d: preempt_count %d in the handler, %d outside it; want one more", i, in, before)
		}
		// After jprobe_return the probed do_fork goes on at +4, preemptible again.
		if after := stopAt(symAddr(t, k, "do_fork") + 4); after != before {
			t.Errorf("hit %d: preempt_count %d after the handler, want %d", i, after, before)
		}
	}
	if msg, ok := k.Panicked(); ok {
		t.Fatal(msg)
	}
}

func TestGoJprobeArgs(t *testing.T) {
	k, kp := boot(t)
	var got []kprobes.JprobeArg
	jp := &kprobes.Jprobe{Kp: kprobes.Kprobe{Symbol: "vfs_read"}, Handler: func(args []kprobes.JprobeArg, _ *kprobes.Regs) { got = args }}
	if err := kp.RegisterJprobe(jp); err != nil {
		t.Fatal(err)
	}
	runIterations(t, k, 5)
	if len(got) != 4 || got[0].Name != "file" || got[0].Type != "struct file *" || got[0].Value == 0 || got[2].Name != "count" || got[2].Value == 0 {
		t.Fatalf("args = %+v", got)
	}
}

// Jprobes must not change what the guest computes either.
func TestJprobePreservesSemantics(t *testing.T) {
	const iterations = 60
	ref, _ := boot(t)
	runToIteration(t, ref, iterations)
	k, kp := boot(t)
	if err := kp.RegisterJprobe(&kprobes.Jprobe{Kp: kprobes.Kprobe{Symbol: "do_fork"}, Entry: "jdo_fork"}); err != nil {
		t.Fatal(err)
	}
	if err := kp.RegisterKretprobe(&kprobes.Kretprobe{Kp: kprobes.Kprobe{Symbol: "do_fork"}}); err != nil {
		t.Fatal(err)
	}
	runToIteration(t, k, iterations)
	sameResults(t, k, ref, "with a jprobe")
}

func TestJprobeErrors(t *testing.T) {
	_, kp := boot(t)
	tests := []struct {
		name string
		jp   func() *kprobes.Jprobe
		want syscall.Errno
	}{
		{"not at entry", func() *kprobes.Jprobe {
			return &kprobes.Jprobe{Kp: kprobes.Kprobe{Symbol: "do_fork", Offset: 4}, Entry: "jdo_fork"}
		}, syscall.EINVAL},
		{"handler not a function start", func() *kprobes.Jprobe {
			return &kprobes.Jprobe{Kp: kprobes.Kprobe{Symbol: "do_fork"}, Entry: "nr_forks"}
		}, syscall.EINVAL},
		{"no handler", func() *kprobes.Jprobe { return &kprobes.Jprobe{Kp: kprobes.Kprobe{Symbol: "do_fork"}} }, syscall.EINVAL},
		{"unknown handler", func() *kprobes.Jprobe {
			return &kprobes.Jprobe{Kp: kprobes.Kprobe{Symbol: "do_fork"}, Entry: "nope"}
		}, syscall.ENOENT},
	}
	for _, tt := range tests {
		if err := kp.RegisterJprobe(tt.jp()); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
}
