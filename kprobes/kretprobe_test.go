package kprobes_test

import (
	"encoding/binary"
	"errors"
	"syscall"
	"testing"

	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/kprobes"
)

func TestKretprobe(t *testing.T) {
	k, kp := boot(t)
	read := symAddr(t, k, "vfs_read")
	var entries, returns int
	var retPC, retX0 uint64
	var sawRetAddr bool
	rp := &kprobes.Kretprobe{
		Kp:       kprobes.Kprobe{Symbol: "vfs_read"},
		DataSize: 8,
		EntryHandler: func(ri *kprobes.KretprobeInstance, r *kprobes.Regs) bool {
			entries++
			binary.LittleEndian.PutUint64(ri.Data, r.X[2]) // count
			return false
		},
		Handler: func(ri *kprobes.KretprobeInstance, r *kprobes.Regs) {
			returns++
			retPC, retX0 = r.PC, r.X[0]
			sawRetAddr = ri.RetAddr == r.PC
			if count := binary.LittleEndian.Uint64(ri.Data); int64(r.X[0]) > int64(count) {
				t.Errorf("vfs_read returned %d for count %d", int64(r.X[0]), count)
			}
		},
	}
	if err := kp.RegisterKretprobe(rp); err != nil {
		t.Fatal(err)
	}
	if rp.MaxActive != 10 {
		t.Errorf("default maxactive = %d, want 10", rp.MaxActive)
	}
	l := kp.List()
	if len(l) != 1 || l[0].Type != kprobes.TypeKretprobe || l[0].String()[18] != 'r' {
		t.Fatalf("list = %v", l)
	}
	reads0 := counter(t, k, "nr_vfs_read")
	runIterations(t, k, 30)
	reads := counter(t, k, "nr_vfs_read") - reads0
	// A few reads may be in flight when the loop stops: each task that was
	// preempted inside vfs_read (the workload's, sh's, cat's).
	const inFlight = 4
	if returns == 0 || entries-returns > inFlight || int64(reads)-int64(returns) > inFlight {
		t.Fatalf("%d entries, %d returns, %d reads", entries, returns, reads)
	}
	t.Logf("%d entries, %d returns, %d reads; last return to %s", entries, returns, reads, k.Kallsyms().Format(retPC))
	caller, _, _ := k.Kallsyms().LookupAddr(retPC)
	if caller.Name == "vfs_read" || caller.Name == "__kretprobe_trampoline" || !sawRetAddr {
		t.Errorf("returned to %s (%#x), RetAddr matched: %v", k.Kallsyms().Format(retPC), retPC, sawRetAddr)
	}
	if int64(retX0) < 0 {
		t.Errorf("return value %d", int64(retX0))
	}
	if rp.Missed() != 0 {
		t.Errorf("missed %d with no concurrency", rp.Missed())
	}
	kp.UnregisterKretprobe(rp)
	if insnAt(t, k, read) == brkKprobes {
		t.Error("unregister left the BRK")
	}
	n := returns
	runIterations(t, k, 10)
	if returns > n+1 {
		t.Errorf("handler ran after unregister")
	}
	if msg, ok := k.Panicked(); ok {
		t.Fatal(msg)
	}
}

// A kretprobe must not change what the guest computes: every return goes
// back to its caller with the registers the function left.
func TestKretprobesPreserveSemantics(t *testing.T) {
	const iterations = 60
	ref, _ := boot(t)
	runToIteration(t, ref, iterations)
	k, kp := boot(t)
	for _, fn := range []string{"vfs_read", "vfs_write", "do_fork", "kernel_clone", "copy_process", "tcp_v4_rcv", "ramfs_read"} {
		for i := 0; i < 2; i++ { // two on each: one returns to the other's trampoline
			rp := &kprobes.Kretprobe{Kp: kprobes.Kprobe{Symbol: fn}, Handler: func(*kprobes.KretprobeInstance, *kprobes.Regs) {}}
			if err := kp.RegisterKretprobe(rp); err != nil {
				t.Fatalf("%s: %v", fn, err)
			}
		}
	}
	runToIteration(t, k, iterations)
	if msg, ok := k.Panicked(); ok {
		t.Fatal(msg)
	}
	sameResults(t, k, ref, "with kretprobes")
}

func TestKretprobeErrors(t *testing.T) {
	_, kp := boot(t)
	tests := []struct {
		name string
		rp   func() *kprobes.Kretprobe
		want syscall.Errno
	}{
		{"not at entry", func() *kprobes.Kretprobe {
			return &kprobes.Kretprobe{Kp: kprobes.Kprobe{Symbol: "vfs_read", Offset: 8}}
		}, syscall.EINVAL},
		{"maxactive too big", func() *kprobes.Kretprobe {
			return &kprobes.Kretprobe{Kp: kprobes.Kprobe{Symbol: "vfs_read"}, MaxActive: 5000}
		}, syscall.EINVAL},
		{"data_size too big", func() *kprobes.Kretprobe {
			return &kprobes.Kretprobe{Kp: kprobes.Kprobe{Symbol: "vfs_read"}, DataSize: 4097}
		}, syscall.E2BIG},
		{"unknown symbol", func() *kprobes.Kretprobe { return &kprobes.Kretprobe{Kp: kprobes.Kprobe{Symbol: "nope_nope"}} }, syscall.ENOENT},
		{"past the end of the text", func() *kprobes.Kretprobe {
			return &kprobes.Kretprobe{Kp: kprobes.Kprobe{Symbol: "_text", Offset: 1 << 40}}
		}, syscall.ENOENT},
		{"blacklisted", func() *kprobes.Kretprobe {
			return &kprobes.Kretprobe{Kp: kprobes.Kprobe{Symbol: "notify_page_fault"}}
		}, syscall.EINVAL},
	}
	for _, tt := range tests {
		if err := kp.RegisterKretprobe(tt.rp()); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
}

// TestKretprobeAtTextOffset: a function's entry named from another symbol
// (perf probe's _text+OFF) is an entry, as kprobe_on_func_entry finds.
func TestKretprobeAtTextOffset(t *testing.T) {
	k, kp := boot(t)
	text, _ := k.Kallsyms().LookupName("_text")
	read, _ := k.Kallsyms().LookupName("vfs_read")
	rp := &kprobes.Kretprobe{Kp: kprobes.Kprobe{Symbol: "_text", Offset: read.Addr - text.Addr}}
	if err := kp.RegisterKretprobe(rp); err != nil {
		t.Fatal(err)
	}
	kp.UnregisterKretprobe(rp)
}

// A kretprobe on do_exit, which never returns: each exiting task holds an
// instance until release_task's kprobe_flush_task gives it back. The guest
// traps to the host there only for a task that the host has told it
// holds instances (task_struct.kretprobe_instances), so the host must
// keep that count: else the pool runs dry after maxactive exits.
func TestKretprobeOnExitRecycles(t *testing.T) {
	k, err := kernel.Boot(kernel.Config{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	kp, err := kprobes.New(k, quiet())
	if err != nil {
		t.Fatal(err)
	}
	const maxActive = 4
	var entries, returns uint64
	rp := &kprobes.Kretprobe{
		Kp:           kprobes.Kprobe{Symbol: "do_exit"},
		MaxActive:    maxActive,
		EntryHandler: func(*kprobes.KretprobeInstance, *kprobes.Regs) bool { entries++; return false },
		Handler:      func(*kprobes.KretprobeInstance, *kprobes.Regs) { returns++ },
	}
	if err := kp.RegisterKretprobe(rp); err != nil {
		t.Fatal(err)
	}
	runIterations(t, k, 3000)
	t.Logf("%d exits with an instance, %d missed", entries, rp.Missed())
	if returns != 0 {
		t.Errorf("do_exit returned %d times", returns)
	}
	if entries < 10*maxActive {
		t.Errorf("%d exits took an instance (maxactive %d, %d missed): the exited tasks' instances did not come back", entries, maxActive, rp.Missed())
	}
}
