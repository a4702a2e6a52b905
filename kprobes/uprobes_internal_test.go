package kprobes

import (
	"slices"
	"testing"

	"github.com/kpemu/kpemu/kernel"
)

// TestUprobeAddrs: offset_to_vaddr over an mm's VMAs, only those that map
// the probed file at the offset (a program's text at pgoff 0, its data at
// a later page), never the [uprobes] page.
func TestUprobeAddrs(t *testing.T) {
	const sh, cat = 0xffff000012340000, 0xffff000012350000
	vmas := []kernel.VMA{
		{Start: 0x400000, End: 0x401000, Flags: 0x5, File: sh, Pgoff: 0},
		{Start: 0x401000, End: 0x402000, Flags: 0x1, File: sh, Pgoff: 1},
		{Start: 0x402000, End: 0x404000, Flags: 0x3, File: sh, Pgoff: 2},
		{Start: 0x10000000, End: 0x10001000, Flags: 0x5 | kernel.VMDontCopy},
		{Start: 0x3fe00000, End: 0x40000000, Flags: 0x103},
	}
	tests := []struct {
		inode, offset uint64
		want          []uint64
	}{
		{sh, 0x16c, []uint64{0x40016c}},
		{sh, 0, []uint64{0x400000}},
		{sh, 0xffc, []uint64{0x400ffc}},
		{sh, 0x1000, []uint64{0x401000}},
		{sh, 0x2abc, []uint64{0x402abc}},
		{sh, 0x3ffc, []uint64{0x403ffc}},
		{sh, 0x4000, nil},    // past the last page
		{cat, 0x16c, nil},    // another file
		{0, 0x10000000, nil}, // anonymous memory is no file
	}
	for _, tt := range tests {
		got := uprobeAddrs(vmas, uprobeKey{tt.inode, tt.offset})
		if !slices.Equal(got, tt.want) {
			t.Errorf("inode %#x offset %#x: %#x, want %#x", tt.inode, tt.offset, got, tt.want)
		}
	}
}

// TestUretprobeReturns: prepare_uretprobe's hijack of x30 and
// handle_trampoline's returns: nested calls, a tail call chained to its
// caller's return, frames a longjmp left, and the nesting limit.
func TestUretprobeReturns(t *testing.T) {
	const tramp = 0x10000000
	f, g := &uprobe{key: uprobeKey{1, 0x100}}, &uprobe{key: uprobeKey{1, 0x200}}
	type call struct {
		up     *uprobe
		bp, sp uint64
		lr     uint64 // x30 at the hit; tramp: a tail call from a uretprobed function
	}
	type ret struct {
		sp     uint64
		wantPC uint64   // where the task returns
		fired  []uint64 // the functions whose returns fire, in order
	}
	tests := []struct {
		name   string
		calls  []call
		rets   []ret
		result uretResult // of the last call
	}{
		{"one", []call{{f, 0x400100, 0x3ffff000, 0x400500}}, []ret{{0x3ffff000, 0x400500, []uint64{0x400100}}}, uretSet},
		{"nested", []call{{f, 0x400100, 0x3ffff000, 0x400500}, {g, 0x400200, 0x3fffef00, 0x400120}},
			[]ret{{0x3fffef00, 0x400120, []uint64{0x400200}}, {0x3ffff000, 0x400500, []uint64{0x400100}}}, uretSet},
		{"tail call", []call{{f, 0x400100, 0x3ffff000, 0x400500}, {g, 0x400200, 0x3ffff000, tramp}},
			[]ret{{0x3ffff000, 0x400500, []uint64{0x400200, 0x400100}}}, uretSet},
		// The inner function's frame is gone (a longjmp out of it): its
		// return is dropped, the outer one fires.
		{"longjmp", []call{{f, 0x400100, 0x3ffff000, 0x400500}, {g, 0x400200, 0x3fffef00, 0x400120}},
			[]ret{{0x3ffff000, 0x400500, []uint64{0x400100}}}, uretSet},
		{"trampoline with nothing pending", []call{{f, 0x400100, 0x3ffff000, tramp}}, nil, uretNoChain},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ut := &uprobeTask{mm: 1}
			var fired []uint64
			for _, up := range []*uprobe{f, g} {
				up.consumers = []*UprobeConsumer{{RetHandler: func(_ *UprobeConsumer, fn uint64, _ *Regs) { fired = append(fired, fn) }}}
			}
			var res uretResult
			for _, c := range tt.calls {
				regs := &Regs{SP: c.sp}
				regs.X[30] = c.lr
				res = prepareUretprobe(ut, c.up, c.bp, tramp, regs)
				if res == uretSet && regs.X[30] != tramp {
					t.Errorf("x30 = %#x after the hit, want the trampoline", regs.X[30])
				}
			}
			if res != tt.result {
				t.Errorf("last hit: %v, want %v", res, tt.result)
			}
			for _, r := range tt.rets {
				fired = nil
				regs := &Regs{SP: r.sp, PC: tramp}
				if got := handleTrampoline(ut, 1, regs); got != kernel.DbgHookHandled {
					t.Fatalf("return at sp %#x: %d", r.sp, got)
				}
				if regs.PC != r.wantPC || !slices.Equal(fired, r.fired) {
					t.Errorf("return at sp %#x: pc %#x fired %#x, want %#x %#x", r.sp, regs.PC, fired, r.wantPC, r.fired)
				}
			}
			if len(ut.rets) != 0 {
				t.Errorf("%d returns left pending", len(ut.rets))
			}
			if got := handleTrampoline(ut, 1, &Regs{PC: tramp}); got != kernel.DbgHookError {
				t.Errorf("a trampoline hit with nothing pending: %d, want DBG_HOOK_ERROR", got)
			}
		})
	}
	t.Run("depth", func(t *testing.T) {
		ut := &uprobeTask{mm: 1}
		for i := 0; i <= maxUretprobeDepth; i++ {
			regs := &Regs{SP: 0x3ffff000 - uint64(i)*0x20}
			regs.X[30] = 0x400500
			want := uretSet
			if i == maxUretprobeDepth {
				want = uretTooDeep
			}
			if got := prepareUretprobe(ut, f, 0x400100, tramp, regs); got != want {
				t.Fatalf("call %d: %v, want %v", i, got, want)
			}
			if want == uretTooDeep && regs.X[30] != 0x400500 {
				t.Errorf("x30 changed past the limit")
			}
		}
	})
	t.Run("another mm", func(t *testing.T) {
		ut := &uprobeTask{mm: 1}
		regs := &Regs{SP: 0x3ffff000}
		regs.X[30] = 0x400500
		prepareUretprobe(ut, f, 0x400100, tramp, regs)
		if got := handleTrampoline(ut, 2, &Regs{SP: 0x3ffff000}); got != kernel.DbgHookError {
			t.Errorf("a return in another mm: %d, want DBG_HOOK_ERROR", got)
		}
	})
}
