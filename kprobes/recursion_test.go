package kprobes_test

import (
	"bytes"
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/kprobes"
)

// A probe hit while a handler runs on the CPU (here: the guest handler of
// a jprobe) runs no handler and counts as missed.
func TestReentryCountsMissed(t *testing.T) {
	k, kp := boot(t)
	if err := kp.RegisterJprobe(&kprobes.Jprobe{Kp: kprobes.Kprobe{Symbol: "do_fork"}, Entry: "jdo_fork"}); err != nil {
		t.Fatal(err)
	}
	var ran bool
	nested := &kprobes.Kprobe{Symbol: "jprobe_example_note", PreHandler: func(*kprobes.Kprobe, *kprobes.Regs) bool { ran = true; return false }}
	if err := kp.Register(nested); err != nil {
		t.Fatal(err)
	}
	runIterations(t, k, 20)
	if nested.Missed() == 0 || ran || nested.Hits() != 0 {
		t.Fatalf("nested probe: missed %d, hits %d, handler ran %v", nested.Missed(), nested.Hits(), ran)
	}
	if calls := counter(t, k, "jdo_fork_calls"); int64(calls)-int64(nested.Missed()) > 1 || calls < nested.Missed() {
		t.Errorf("%d handler calls, %d missed", calls, nested.Missed())
	}
	if msg, ok := k.Panicked(); ok {
		t.Fatal(msg)
	}
}

// What the blacklist prevents: a probe on the break hook of the step
// (kprobe_breakpoint_ss_handler) is hit while an instruction is being
// stepped. Linux cannot recover; the guest says so and BUG()s, and the host
// stays up to report it.
func TestUnrecoverableReentry(t *testing.T) {
	var console bytes.Buffer
	k, err := kernel.Boot(kernel.Config{Logger: quiet(), Console: &console})
	if err != nil {
		t.Fatal(err)
	}
	kp, err := kprobes.New(k, quiet())
	if err != nil {
		t.Fatal(err)
	}
	if err := kp.Register(&kprobes.Kprobe{Symbol: "kprobe_breakpoint_ss_handler"}); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("blacklisted without the unsafe switch: %v", err)
	}
	kp.SetAllowBlacklisted(true)
	for _, s := range []string{"vfs_read", "kprobe_breakpoint_ss_handler"} {
		if err := kp.Register(&kprobes.Kprobe{Symbol: s}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 100; i++ {
		if err := k.Machine().Step(100_000); err != nil {
			t.Fatal(err)
		}
		if _, ok := k.Panicked(); ok {
			break
		}
	}
	msg, ok := k.Panicked()
	if !ok {
		t.Fatal("the guest did not panic")
	}
	out := console.String()
	for _, want := range []string{"Unrecoverable kprobe detected.", "kernel BUG at"} {
		if !strings.Contains(out, want) {
			t.Errorf("console lacks %q:\n%s", want, out)
		}
	}
	t.Logf("panic: %s", msg)
}
