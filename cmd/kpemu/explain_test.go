package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/kprobes"
)

// firstBL is the offset of the first bl in fn.
func firstBL(t *testing.T, fn string) uint64 {
	t.Helper()
	k, err := kernel.Boot(kernel.Config{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := k.Kallsyms().LookupName(fn)
	for off := uint64(0); off < s.Size; off += 4 {
		if w, _ := k.ReadInsn(s.Addr + off); w&0xfc000000 == 0x94000000 {
			return off
		}
	}
	t.Fatalf("%s has no bl", fn)
	return 0
}

func TestExplain(t *testing.T) {
	tests := []struct {
		spec string
		want []string
	}{
		{"vfs_read", []string{
			"kprobe vfs_read at 0x",
			"original instruction",
			"brk #0x4   (BRK #0x004, KPROBES_BRK_IMM)",
			"ESR_EL1   0xf2000004  EC=0x3c (BRK64",
			"= vectors+0x200/0x800",
			"el1h_64_sync_handler+",
			"struct pt_regs at 0x",
			"Step out of line",
			"ESR_EL1   0xf2000006",
			"regs->pc <- vfs_read+0x4/",
		}},
		{fmt.Sprintf("do_fork+%#x", firstBL(t, "do_fork")), []string{ // bl kernel_clone
			"no slot: the instruction uses the PC",
			"Simulation: the instruction is executed on the saved registers",
			"-> pc kernel_clone+0x0/",
			"regs->pc <- kernel_clone+0x0/",
		}},
		{"e1000ish:vnet_rx", []string{ // the module is loaded first
			"kprobe e1000ish:vnet_rx at 0x",
			"The hit: CPU ",
			"at vnet_rx+0x0/0x", " [e1000ish]",
			"Step out of line",
			"regs->pc <- vnet_rx+0x4/0x",
		}},
		{"r:vfs_read", []string{
			"kretprobe r:vfs_read",
			"x30 <- __kretprobe_trampoline+0x0/",
			"The function returns into __kretprobe_trampoline",
			"real return address workload_run+",
		}},
		{"j:do_fork:jdo_fork", []string{
			"jprobe j:do_fork:jdo_fork",
			"ERET into the jprobe handler jdo_fork+0x0/",
			"jprobe_return(): the handler puts SP back",
			"ELR_EL1   0x", "jprobe_return_break+0x0/",
			"longjmp_break_handler: the probed function's registers restored (pc do_fork+0x0/",
			"regs->pc <- do_fork+0x4/",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			var out bytes.Buffer
			if err := explain(&out, tt.spec, 50_000_000, kprobes.StepBRK); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
					break
				}
			}
		})
	}
	var out bytes.Buffer
	if err := explain(&out, "vfs_read", 50_000_000, kprobes.StepHW); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"with the software step exception", "EC=0x33 (software step, current EL)", "regs->pc <- vfs_read+0x4/"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("--step=hw output lacks %q:\n%s", w, out.String())
		}
	}
	if err := explain(&out, "notify_page_fault", 1000, kprobes.StepBRK); err == nil || !strings.Contains(err.Error(), "invalid argument") {
		t.Errorf("explaining a blacklisted function: %v", err)
	}
	// +0x4 is the ftrace call site, which kprobes refuses as arm64 Linux
	// 6.1 does; +0x8 is the function's first own instruction.
	if err := explain(&out, "tcp_v4_rcv+0x4", 1000, kprobes.StepBRK); err == nil || !strings.Contains(err.Error(), "invalid argument") {
		t.Errorf("explaining an ftrace call site: %v", err)
	}
	if err := explain(&out, "tcp_v4_rcv+0x8", 1000, kprobes.StepBRK); err == nil || !strings.Contains(err.Error(), "not hit") {
		t.Errorf("a probe that is not hit in time: %v", err)
	}
}
