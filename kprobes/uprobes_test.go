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

// textMappers returns the physical pages through which the processes
// mapping file's text at offset off fetch it.
func textMappers(t *testing.T, k *kernel.Kernel, file, off uint64) []uint64 {
	t.Helper()
	mms, err := k.UserMms()
	if err != nil {
		t.Fatal(err)
	}
	var pas []uint64
	for _, mm := range mms {
		vmas, err := k.MmVMAs(mm)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vmas {
			start := v.Pgoff * 4096
			if v.File != file || v.Flags&kernel.VMExec == 0 || off < start || off-start >= v.End-v.Start {
				continue
			}
			pa, ok, err := k.UserPhys(mm, v.Start+off-start)
			if err != nil || !ok {
				t.Fatalf("mm %#x: %#x not mapped (%v)", mm, v.Start+off-start, err)
			}
			pas = append(pas, pa&^4095)
		}
	}
	return pas
}

// TestUprobeSharedText: a program's text is one set of pages that every
// process running it maps (fs/exec.c's text_page, Linux's page cache),
// so a uprobe's BRK is in the page each of them fetches, while the file's
// data, which read(2) gives, keep the instruction. When the probe goes,
// the page has the instruction back, also when no process that ran the
// program is left to find it through (/bin/cat, which runs and exits).
func TestUprobeSharedText(t *testing.T) {
	k, kp, _ := bootUser(t)
	cat, err := k.LookupPath("/bin/cat")
	if err != nil {
		t.Fatal(err)
	}
	off := symbolOffset(t, "/bin/cat", "main")
	data, _, err := k.FileData(cat.Inode)
	if err != nil {
		t.Fatal(err)
	}
	orig, err := k.Read32(data + off)
	if err != nil {
		t.Fatal(err)
	}
	hits := 0
	c := &kprobes.UprobeConsumer{Handler: func(*kprobes.UprobeConsumer, *kprobes.Regs) { hits++ }}
	if err := kp.RegisterUprobe(cat, off, c); err != nil {
		t.Fatal(err)
	}
	// Until a cat has hit it, and is still running.
	var mappers []uint64
	for n := 0; n < 2000 && (hits == 0 || len(mappers) == 0); n++ {
		if err := k.Machine().Step(100_000); err != nil {
			t.Fatal(err)
		}
		mappers = textMappers(t, k, cat.Inode, off)
	}
	if hits == 0 || len(mappers) == 0 {
		t.Fatalf("%d hits, %d processes running /bin/cat: the guest did not get there", hits, len(mappers))
	}
	page, err := k.FilePage(cat.Inode, off/4096)
	if err != nil || page == 0 {
		t.Fatalf("no shared page of /bin/cat at %#x: %#x, %v", off, page, err)
	}
	pa, err := k.Phys(page, 4096)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mappers {
		if m != pa {
			t.Errorf("a process runs /bin/cat's page at %#x from %#x, not the shared page %#x", off, m, pa)
		}
	}
	at := page + off%4096
	if w, _ := k.Read32(at); w == orig {
		t.Errorf("the shared page has the instruction %#08x, not the BRK", w)
	}
	if w, _ := k.Read32(data + off); w != orig {
		t.Errorf("the file's data have %#08x at %#x, not the instruction %#08x", w, off, orig)
	}
	for n := 0; n < 2000 && len(mappers) > 0; n++ {
		if err := k.Machine().Step(20_000); err != nil {
			t.Fatal(err)
		}
		mappers = textMappers(t, k, cat.Inode, off)
	}
	if len(mappers) > 0 {
		t.Fatal("/bin/cat never stopped running")
	}
	if err := kp.UnregisterUprobe(cat, off, c); err != nil {
		t.Fatal(err)
	}
	if w, _ := k.Read32(at); w != orig {
		t.Errorf("after the probe went, the shared page has %#08x, not the instruction %#08x", w, orig)
	}
	before := hits
	if err := k.Machine().Step(20_000_000); err != nil {
		t.Fatal(err)
	}
	if msg, dead := k.Panicked(); dead || hits != before {
		t.Errorf("after the probe went: %d more hits, panicked %v %s", hits-before, dead, msg)
	}
	t.Logf("%d hits", before)
}
