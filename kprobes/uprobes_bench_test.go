package kprobes_test

import (
	"bytes"
	"debug/elf"
	"testing"
	"time"

	"github.com/kpemu/kpemu/internal/waitfor"
	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/kernel/image"
	"github.com/kpemu/kpemu/kprobes"
)

// shSymbolOffset is the file offset of a function of the guest's /bin/sh.
func shSymbolOffset(t testing.TB, name string) uint64 {
	t.Helper()
	return symbolOffset(t, "/bin/sh", name)
}

// symbolOffset returns the file offset of symbol name in the initramfs's
// program at path.
func symbolOffset(t testing.TB, path, name string) uint64 {
	t.Helper()
	b, err := kernel.InitramfsFile(image.ELF(), path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if s.Name != name {
			continue
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_LOAD && s.Value >= p.Vaddr && s.Value < p.Vaddr+p.Filesz {
				return s.Value - p.Vaddr + p.Off
			}
		}
	}
	t.Fatalf("%s has no %s", path, name)
	return 0
}

// bootUser boots and steps the guest until a process runs /bin/sh.
func bootUser(t testing.TB) (*kernel.Kernel, *kprobes.Kprobes, kernel.GuestFile) {
	t.Helper()
	return bootUserConfig(t, kernel.Config{})
}

func bootUserConfig(t testing.TB, cfg kernel.Config) (*kernel.Kernel, *kprobes.Kprobes, kernel.GuestFile) {
	t.Helper()
	cfg.Logger, cfg.GuestWait = quiet(), waitfor.Bound
	k, err := kernel.Boot(cfg)
	if err != nil {
		t.Fatal(err)
	}
	kp, err := kprobes.New(k, quiet())
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5000; i++ {
		if err := k.Machine().Step(1_000_000); err != nil {
			t.Fatal(err)
		}
		f, err := k.LookupPath("/bin/sh")
		if err != nil {
			continue
		}
		mms, _ := k.UserMms()
		for _, mm := range mms {
			vmas, _ := k.MmVMAs(mm)
			for _, v := range vmas {
				if v.File == f.Inode {
					return k, kp, f
				}
			}
		}
	}
	t.Fatal("no process runs /bin/sh")
	return nil, nil, kernel.GuestFile{}
}

// BenchmarkUprobeHit measures the host cost of one hit of a uprobe (a
// BRK from EL0, the consumer, the step of the instruction in the
// [uprobes] page and its step exception: two hostcalls, and the guest's
// entry code twice) and of a uretprobe (the same, and a third exception
// at the trampoline), on /bin/sh's read(), as BenchmarkProbeHit does for
// kprobes: the same guest instruction count with and without the probe,
// the difference in host time divided by the hits. sh's hits are few
// (it sleeps 8 ms of guest time a round) and one run's time varies by
// some 10% on a shared machine, so each side keeps its fastest run: run
// it with -benchtime 5x or more.
func BenchmarkUprobeHit(b *testing.B) {
	off := shSymbolOffset(b, "read")
	kinds := []struct {
		name string
		c    func(hits *uint64) *kprobes.UprobeConsumer
	}{
		{"uprobe", func(hits *uint64) *kprobes.UprobeConsumer {
			return &kprobes.UprobeConsumer{Handler: func(*kprobes.UprobeConsumer, *kprobes.Regs) { *hits++ }}
		}},
		{"uretprobe", func(hits *uint64) *kprobes.UprobeConsumer {
			return &kprobes.UprobeConsumer{RetHandler: func(*kprobes.UprobeConsumer, uint64, *kprobes.Regs) { *hits++ }}
		}},
	}
	const insns = 150_000_000
	for _, kind := range kinds {
		b.Run(kind.name, func(b *testing.B) {
			plain, probed := time.Duration(1<<62), time.Duration(1<<62)
			var hits uint64
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				k, _, _ := bootUser(b)
				b.StartTimer()
				t0 := time.Now()
				if err := k.Machine().Step(insns); err != nil {
					b.Fatal(err)
				}
				plain = min(plain, time.Since(t0))

				b.StopTimer()
				k2, kp, sh := bootUser(b)
				hits = 0
				if err := kp.RegisterUprobe(sh, off, kind.c(&hits)); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				t0 = time.Now()
				if err := k2.Machine().Step(insns); err != nil {
					b.Fatal(err)
				}
				probed = min(probed, time.Since(t0))
			}
			if hits > 0 {
				b.ReportMetric(float64((probed-plain).Nanoseconds())/float64(hits), "ns/hit")
				b.ReportMetric(float64(hits), "hits/run")
				b.ReportMetric(float64(probed)/float64(plain), "probed/plain")
			}
		})
	}
}
