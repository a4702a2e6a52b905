package kprobes

import (
	"io"
	"log/slog"
	"testing"

	"github.com/kpemu/kpemu/kernel"
)

func TestSimulate(t *testing.T) {
	const addr = kernel.KimageVaddr + 0x81000 // kernel text
	const (
		flagN = 1 << 31
		flagZ = 1 << 30
		flagC = 1 << 29
		flagV = 1 << 28
	)
	tests := []struct {
		name  string
		insn  uint32
		setup func(r *Regs)
		pc    uint64
		check func(r *Regs) bool
	}{
		{"b .+0x40", 0x14000010, nil, addr + 0x40, nil},
		{"b .-4", 0x17ffffff, nil, addr - 4, nil},
		{"bl .+0x40", 0x94000010, nil, addr + 0x40, func(r *Regs) bool { return r.X[30] == addr+4 }},
		{"b.eq taken", 0x54000040, func(r *Regs) { r.Pstate = flagZ }, addr + 8, nil},
		{"b.eq not taken", 0x54000040, nil, addr + 4, nil},
		{"b.ne taken", 0x54000041, nil, addr + 8, nil},
		{"b.ge with N==V", 0x5400004a, func(r *Regs) { r.Pstate = flagN | flagV }, addr + 8, nil},
		{"b.lt with N!=V", 0x5400004b, func(r *Regs) { r.Pstate = flagN }, addr + 8, nil},
		{"b.hi needs C and !Z", 0x54000048, func(r *Regs) { r.Pstate = flagC | flagZ }, addr + 4, nil},
		{"b.gt", 0x5400004c, func(r *Regs) { r.Pstate = 0 }, addr + 8, nil},
		{"b.al", 0x5400004e, nil, addr + 8, nil},
		{"b.eq backwards", 0x54ffffe0, func(r *Regs) { r.Pstate = flagZ }, addr - 4, nil},
		{"cbz x0 taken", 0xb4000040, nil, addr + 8, nil},
		{"cbz w0 sees only 32 bits", 0x34000040, func(r *Regs) { r.X[0] = 1 << 32 }, addr + 8, nil},
		{"cbnz x0 taken", 0xb5000040, func(r *Regs) { r.X[0] = 1 << 32 }, addr + 8, nil},
		{"cbnz w0 not taken", 0x35000040, func(r *Regs) { r.X[0] = 1 << 32 }, addr + 4, nil},
		{"tbz w0, #0 taken", 0x36000040, func(r *Regs) { r.X[0] = 2 }, addr + 8, nil},
		{"tbnz x0, #63 taken", 0xb7f80040, func(r *Regs) { r.X[0] = 1 << 63 }, addr + 8, nil},
		{"tbnz x0, #63 not taken", 0xb7f80040, nil, addr + 4, nil},
		{"adr x1, .+8", 0x10000041, nil, addr + 4, func(r *Regs) bool { return r.X[1] == addr+8 }},
		{"adr x1, .-4", 0x10ffffe1, nil, addr + 4, func(r *Regs) bool { return r.X[1] == addr-4 }},
		{"adrp x2, .+0x1000", 0xb0000002, nil, addr + 4, func(r *Regs) bool { return r.X[2] == addr&^0xfff+0x1000 }},
		{"adr xzr is dropped", 0x1000005f, nil, addr + 4, nil},
		{"br x3", 0xd61f0060, func(r *Regs) { r.X[3] = addr + 0xf000 }, addr + 0xf000, func(r *Regs) bool { return r.X[30] == 0 }},
		{"blr x3", 0xd63f0060, func(r *Regs) { r.X[3] = addr + 0xf000 }, addr + 0xf000, func(r *Regs) bool { return r.X[30] == addr+4 }},
		{"blr x30 uses the old x30", 0xd63f03c0, func(r *Regs) { r.X[30] = addr + 0xf000 }, addr + 0xf000, func(r *Regs) bool { return r.X[30] == addr+4 }},
		{"ret", 0xd65f03c0, func(r *Regs) { r.X[30] = addr + 0xf008 }, addr + 0xf008, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if decodeInsn(tt.insn) != insnGoodNoSlot {
				t.Fatalf("%#08x is not a simulated instruction", tt.insn)
			}
			r := &Regs{PC: addr}
			if tt.setup != nil {
				tt.setup(r)
			}
			if !simulatorFor(tt.insn)(nil, tt.insn, addr, r) {
				t.Fatal("simulation failed")
			}
			if r.PC != tt.pc {
				t.Errorf("pc = %#x, want %#x", r.PC, tt.pc)
			}
			if tt.check != nil && !tt.check(r) {
				t.Errorf("registers after: x0-3 %#x lr %#x", r.X[:4], r.X[30])
			}
		})
	}
}

func TestSimulateLiteralLoads(t *testing.T) {
	k, err := kernel.Boot(kernel.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	kp := &Kprobes{k: k}
	addr := k.Layout().InsnSlots.Start // writable, executable RAM
	if err := k.Write64(addr+8, 0xfedcba9887654321); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		insn uint32
		want uint64
	}{
		{"ldr x5, .+8", 0x58000045, 0xfedcba9887654321},
		{"ldr w5, .+8", 0x18000045, 0x87654321},
		{"ldrsw x5, .+8", 0x98000045, 0xffffffff87654321},
	}
	for _, tt := range tests {
		r := &Regs{PC: addr}
		if !simulatorFor(tt.insn)(kp, tt.insn, addr, r) {
			t.Fatalf("%s: failed", tt.name)
		}
		if r.X[5] != tt.want || r.PC != addr+4 {
			t.Errorf("%s: x5 = %#x pc = %#x, want %#x", tt.name, r.X[5], r.PC, tt.want)
		}
	}
	// A literal outside the kernel's address space faults instead of
	// reading garbage: a user address, and one past the image's end.
	for _, at := range []uint64{0x1000, k.Layout().End} {
		if simulatorFor(0x58000045)(kp, 0x58000045, at-8, &Regs{}) {
			t.Errorf("literal load at %#x succeeded", at)
		}
	}
}

// The instances of a task that exits go back to their pool
// (kprobe_flush_task), so a kretprobe does not run dry.
func TestFlushTaskRecyclesInstances(t *testing.T) {
	k, err := kernel.Boot(kernel.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	kp, err := New(k, nil)
	if err != nil {
		t.Fatal(err)
	}
	rp := &Kretprobe{Kp: Kprobe{Symbol: "vfs_read"}, MaxActive: 1}
	if err := kp.RegisterKretprobe(rp); err != nil {
		t.Fatal(err)
	}
	const task = kernel.PageOffset + 0x123000 // a task_struct in the linear map
	regs := &Regs{X: [31]uint64{29: 0x1000, 30: 0x2000}}
	// Pretend a task entered vfs_read and never returned.
	kp.instances.tasks[task] = nil
	if kp.preHandlerKretprobe(rp, regs); rp.free.Load() != 0 {
		t.Fatalf("free = %d after one entry", rp.free.Load())
	}
	cur := k.CurrentTask(0)
	kp.instances.tasks[task] = kp.instances.tasks[cur]
	delete(kp.instances.tasks, cur)
	kp.preHandlerKretprobe(rp, regs)
	if rp.Missed() != 1 {
		t.Fatalf("missed = %d with the pool empty", rp.Missed())
	}
	kp.flushTask(task)
	if rp.free.Load() != 1 || len(kp.instances.tasks[task]) != 0 {
		t.Fatalf("after flush: free %d, instances %d", rp.free.Load(), len(kp.instances.tasks[task]))
	}
}
