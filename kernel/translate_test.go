package kernel_test

import (
	"bytes"
	"slices"
	"testing"

	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/machine"
)

// TestTranslationInvisible boots the kernel and runs its workload (2
// vCPUs: user processes, system calls, interrupts, spinlocks between the
// CPUs) with block translation and with the interpreter alone, and
// requires the same console output, exceptions, hostcalls and system
// calls at the same instruction count: the deterministic machine must run
// the same guest either way.
func TestTranslationInvisible(t *testing.T) {
	type run struct {
		console bytes.Buffer
		stats   machine.Stats
		calls   []uint64
	}
	var runs [2]run
	for i, interpret := range []bool{false, true} {
		r := &runs[i]
		k, err := kernel.Boot(kernel.Config{NumCPUs: 2, Logger: quiet(), Console: &r.console, Interpret: interpret})
		if err != nil {
			t.Fatal(err)
		}
		if err := k.Machine().Step(150_000_000); err != nil {
			t.Fatal(err)
		}
		r.stats, r.calls = k.Machine().Stats(), syscallCounts(t, k)
	}
	tr, in := &runs[0], &runs[1]
	if tr.stats.TranslatedBlocks == 0 {
		t.Skip("no block translation on this host")
	}
	if !bytes.Equal(tr.console.Bytes(), in.console.Bytes()) {
		t.Errorf("console differs:\ntranslated:\n%s\ninterpreted:\n%s", tr.console.Bytes(), in.console.Bytes())
	}
	if tr.stats.Instructions != in.stats.Instructions || tr.stats.Exceptions != in.stats.Exceptions ||
		tr.stats.Hostcalls != in.stats.Hostcalls {
		t.Errorf("translated: %d instructions, %d exceptions, %d hostcalls; interpreted: %d, %d, %d",
			tr.stats.Instructions, tr.stats.Exceptions, tr.stats.Hostcalls,
			in.stats.Instructions, in.stats.Exceptions, in.stats.Hostcalls)
	}
	if !slices.Equal(tr.calls, in.calls) {
		t.Errorf("system calls by number differ:\ntranslated  %v\ninterpreted %v", tr.calls, in.calls)
	}
}
