package kprobes_test

import (
	"slices"
	"testing"

	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/kprobes"
)

// uprobeHit is what a consumer saw of one hit.
type uprobeHit struct {
	ret           bool
	pc, x0, x30   uint64
	fn, sp, steps uint64
}

// runUprobes boots with cfg, places a uprobe and a uretprobe on /bin/sh's
// open() and a uprobe on its fork(), steps the guest a fixed number of
// instructions and returns what the consumers saw, in order, and where
// the vCPU stopped.
func runUprobes(t *testing.T, cfg kernel.Config) ([]uprobeHit, uint64) {
	t.Helper()
	k, kp, sh := bootUserConfig(t, cfg)
	var hits []uprobeHit
	for _, p := range []struct {
		sym string
		c   *kprobes.UprobeConsumer
	}{
		{"open", &kprobes.UprobeConsumer{
			Handler: func(_ *kprobes.UprobeConsumer, r *kprobes.Regs) {
				hits = append(hits, uprobeHit{pc: r.PC, x0: r.X[0], x30: r.X[30], sp: r.SP, steps: k.Machine().Stats().Instructions})
			},
			RetHandler: func(_ *kprobes.UprobeConsumer, fn uint64, r *kprobes.Regs) {
				hits = append(hits, uprobeHit{ret: true, pc: r.PC, x0: r.X[0], fn: fn, sp: r.SP, steps: k.Machine().Stats().Instructions})
			},
		}},
		{"fork", &kprobes.UprobeConsumer{Handler: func(_ *kprobes.UprobeConsumer, r *kprobes.Regs) {
			hits = append(hits, uprobeHit{pc: r.PC, x30: r.X[30], sp: r.SP, steps: k.Machine().Stats().Instructions})
		}}},
	} {
		if err := kp.RegisterUprobe(sh, shSymbolOffset(t, p.sym), p.c); err != nil {
			t.Fatal(err)
		}
	}
	if err := k.Machine().Step(60_000_000); err != nil {
		t.Fatal(err)
	}
	if msg, dead := k.Panicked(); dead {
		t.Fatalf("guest panicked: %s", msg)
	}
	return hits, k.Machine().CPU(0).PC()
}

// TestUprobeEnginesAgree: the interpreter and the block translator retire
// the same instructions through the uprobes' BRKs, slot steps and
// trampoline returns, so the consumers see the same hits, at the same
// instruction counts, and the guest ends where it ends.
func TestUprobeEnginesAgree(t *testing.T) {
	interp, pcI := runUprobes(t, kernel.Config{Interpret: true})
	jit, pcJ := runUprobes(t, kernel.Config{})
	var rets int
	for _, h := range interp {
		if h.ret {
			rets++
		}
	}
	if len(interp) == 0 || rets == 0 {
		t.Fatalf("%d hits, %d of them returns: the guest did not get there", len(interp), rets)
	}
	if !slices.Equal(interp, jit) || pcI != pcJ {
		n := min(len(interp), len(jit))
		for i := 0; i < n; i++ {
			if interp[i] != jit[i] {
				t.Errorf("hit %d: interpreted %+v, translated %+v", i, interp[i], jit[i])
				break
			}
		}
		t.Errorf("interpreted: %d hits, pc %#x; translated: %d hits, pc %#x", len(interp), pcI, len(jit), pcJ)
	}
	t.Logf("%d hits, %d returns", len(interp), rets)
}
