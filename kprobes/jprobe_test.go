package kprobes_test

import (
	"errors"
	"syscall"
	"testing"

	"github.com/kpemu/kpemu/kprobes"
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
