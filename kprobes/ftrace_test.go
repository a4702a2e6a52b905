package kprobes_test

import (
	"sync"
	"testing"

	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/kprobes"
)

// A kprobe on a function's first instruction (MOV X9, LR since ftrace_init)
// and the function tracer's call site right after it work together: each
// call hits the probe, steps the MOV out of line, then calls ftrace_caller,
// whose callback sees the real caller. Under a kretprobe the caller is the
// trampoline, as on Linux (which prints it as [unknown/kretprobe'd]).
func TestKprobeWithFtrace(t *testing.T) {
	k, kp := bootReady(t)
	clone := symAddr(t, k, "kernel_clone")
	p := &kprobes.Kprobe{Symbol: "kernel_clone"}
	if err := kp.Register(p); err != nil {
		t.Fatal(err)
	}
	if p.Opcode() != 0xaa1e03e9 {
		t.Errorf("the probe replaced %#08x, want MOV X9, LR", p.Opcode())
	}
	off8 := &kprobes.Kprobe{Symbol: "kernel_clone", Offset: 8}
	if err := kp.Register(off8); err != nil {
		t.Fatalf("kernel_clone+8: %v", err)
	}
	var mu sync.Mutex
	parents := map[uint64]int{}
	ops := &kernel.FtraceOps{Func: func(c kernel.FtraceCall) {
		mu.Lock()
		defer mu.Unlock()
		parents[c.ParentIP]++
	}}
	var h kernel.FtraceHash
	h.Add(clone + kernel.MCountInsnSize)
	if err := k.FtraceSetHash(ops, true, h); err != nil {
		t.Fatal(err)
	}
	if err := k.RegisterFtraceFunction(ops); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := k.UnregisterFtraceFunction(ops); err != nil {
			t.Error(err)
		}
	}()
	runIterations(t, k, 200)
	mu.Lock()
	calls := 0
	for parent, n := range parents {
		calls += n
		// kernel_clone's callers in the guest (kernel/fork.c).
		if s, _, ok := k.Kallsyms().LookupAddr(parent); !ok || (s.Name != "do_fork" && s.Name != "__arm64_sys_clone" && s.Name != "user_mode_thread") {
			t.Errorf("parent %s", k.Kallsyms().Format(parent))
		}
	}
	mu.Unlock()
	if calls == 0 || p.Hits() == 0 {
		t.Fatalf("%d traced calls, %d probe hits", calls, p.Hits())
	}
	// Every call that hit the probe made it to the call site and past it
	// (the machine may stop between two of them, in one call).
	if h, h8, c := p.Hits(), off8.Hits(), uint64(calls); h < c || h > c+1 || h8 > c || h8+1 < c {
		t.Errorf("probe hits %d, +8 hits %d, traced calls %d", h, h8, c)
	}

	rp := &kprobes.Kretprobe{Kp: kprobes.Kprobe{Symbol: "do_fork"}, Handler: func(*kprobes.KretprobeInstance, *kprobes.Regs) {}}
	if err := kp.RegisterKretprobe(rp); err != nil {
		t.Fatal(err)
	}
	// A vCPU stopped between do_fork's first instruction (where the
	// kretprobe goes) and its call site would enter the tracer unprobed
	// once the site is patched: let any such call finish first.
	runIterations(t, k, 1)
	var fh kernel.FtraceHash
	fh.Add(symAddr(t, k, "do_fork") + kernel.MCountInsnSize)
	mu.Lock()
	parents = map[uint64]int{}
	mu.Unlock()
	if err := k.FtraceSetHash(ops, true, fh); err != nil {
		t.Fatal(err)
	}
	runIterations(t, k, 100)
	mu.Lock()
	defer mu.Unlock()
	tramp := symAddr(t, k, "__kretprobe_trampoline")
	if len(parents) != 1 || parents[tramp] == 0 {
		t.Errorf("under a kretprobe the parents are %v, want only __kretprobe_trampoline %#x (kretprobe missed %d)", parents, tramp, rp.Missed())
	}
}
