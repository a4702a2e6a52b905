package kprobes

import (
	"bytes"
	"debug/elf"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/kpemu/kpemu/internal/waitfor"
	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/kernel/image"
	"github.com/kpemu/kpemu/machine"
)

// BenchmarkUprobeHitPath times the host half of uprobe hits on /bin/sh's
// read(): the Go handlers of HC_UPROBE_BRK (handle_swbp: the consumer,
// the slot) and HC_UPROBE_SS (handle_singlestep), and, for a uretprobe,
// the trampoline's HC_UPROBE_BRK, per hit, over the hits of 150 million
// guest instructions. Unlike BenchmarkUprobeHit, which compares whole
// runs, it is exact but leaves out the guest's side: two (three)
// exception entries and returns through its entry code, and the
// instructions interpreted one by one while MDSCR_EL1.SS is set.
func BenchmarkUprobeHitPath(b *testing.B) {
	for _, ret := range []bool{false, true} {
		name := "uprobe"
		if ret {
			name = "uretprobe"
		}
		b.Run(name, func(b *testing.B) {
			var spent time.Duration
			var hits, calls uint64
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				log := slog.New(slog.NewTextHandler(io.Discard, nil))
				k, err := kernel.Boot(kernel.Config{Logger: log, GuestWait: waitfor.Bound})
				if err != nil {
					b.Fatal(err)
				}
				kp, err := New(k, log)
				if err != nil {
					b.Fatal(err)
				}
				timed := func(fn machine.HostcallFunc) machine.HostcallFunc {
					return func(cpu *machine.CPU) error {
						t0 := time.Now()
						err := fn(cpu)
						spent += time.Since(t0)
						calls++
						return err
					}
				}
				k.SetHostcall(kernel.HCUprobeBrk, timed(kp.hcUprobeBrk))
				k.SetHostcall(kernel.HCUprobeSS, timed(kp.hcUprobeSS))
				var sh kernel.GuestFile
				for n := 0; sh.Inode == 0 && n < 5000; n++ {
					if err := k.Machine().Step(1_000_000); err != nil {
						b.Fatal(err)
					}
					if f, err := k.LookupPath("/bin/sh"); err == nil {
						if mms, _ := k.UserMms(); len(mms) > 2 {
							sh = f
						}
					}
				}
				c := &UprobeConsumer{Handler: func(*UprobeConsumer, *Regs) { hits++ }}
				if ret {
					c = &UprobeConsumer{RetHandler: func(*UprobeConsumer, uint64, *Regs) { hits++ }}
				}
				if err := kp.RegisterUprobe(sh, readOffset(b), c); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if err := k.Machine().Step(150_000_000); err != nil {
					b.Fatal(err)
				}
			}
			if hits > 0 {
				b.ReportMetric(float64(spent.Nanoseconds())/float64(hits), "host-ns/hit")
				b.ReportMetric(float64(calls)/float64(hits), "hostcalls/hit")
				b.ReportMetric(float64(hits)/float64(b.N), "hits/run")
			}
		})
	}
}

// readOffset is the file offset of /bin/sh's read().
func readOffset(b *testing.B) uint64 {
	img, err := kernel.InitramfsFile(image.ELF(), "/bin/sh")
	if err != nil {
		b.Fatal(err)
	}
	f, err := elf.NewFile(bytes.NewReader(img))
	if err != nil {
		b.Fatal(err)
	}
	syms, _ := f.Symbols()
	for _, s := range syms {
		if s.Name == "read" {
			for _, p := range f.Progs {
				if p.Type == elf.PT_LOAD && s.Value >= p.Vaddr && s.Value < p.Vaddr+p.Filesz {
					return s.Value - p.Vaddr + p.Off
				}
			}
		}
	}
	b.Fatal("no read in /bin/sh")
	return 0
}
