package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/kprobes"
	"github.com/kpemu/kpemu/machine"
)

func newExplainCmd() *cobra.Command {
	var budget uint64
	var step string
	cmd := &cobra.Command{
		Use:   "explain SPEC",
		Short: "Run the guest until one hit of a probe and explain each step of the mechanism",
		Long: `explain registers one probe (SPEC as for run --probe: SYM[+OFF], k:..., j:SYM[:HANDLER],
r[MAXACTIVE]:SYM; MOD:SYM loads the module MOD of the image first), runs the
embedded kernel until the probe has been hit once, and
prints what happened, step by step, as the emulated CPU did it: the instruction
and the BRK patched over it, the exception (ESR_EL1, ELR_EL1, SPSR_EL1, the
vector), the path through the guest kernel to the host, the pt_regs frame, the
handlers, the out-of-line slot or the simulation, and the return.
It mounts nothing and runs the guest in the deterministic mode, so the
same SPEC prints the same steps each time.`,
		Example: `  kpemu explain vfs_read
  kpemu explain r:vfs_read
  kpemu explain j:do_fork:jdo_fork
  kpemu explain e1000ish:vnet_rx
  kpemu explain --step hw vfs_read`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			mode, err := kprobes.ParseStepMode(step)
			if err != nil {
				return fmt.Errorf("--step: %w", err)
			}
			return explain(cmd.OutOrStdout(), args[0], budget, mode)
		},
	}
	cmd.Flags().Uint64Var(&budget, "max-instructions", 2_000_000_000, "give up if the probe is not hit within this many guest instructions")
	cmd.Flags().StringVar(&step, "step", "brk", "stepping mechanism: brk (Linux >= 5.10) or hw (software step, Linux <= 5.9)")
	return cmd
}

// snapshot is one observation with the CPU state that only holds while it
// happens.
type snapshot struct {
	kprobes.Observation
	esr, elr, spsr, vbar uint64
	trace                []string
}

func explain(out io.Writer, specText string, budget uint64, mode kprobes.StepMode) error {
	spec, err := kprobes.ParseSpec(specText)
	if err != nil {
		return err
	}
	k, err := kernel.Boot(kernel.Config{Logger: quietLogger()})
	if err != nil {
		return err
	}
	kp, err := kprobes.New(k, quietLogger())
	if err != nil {
		return err
	}
	kp.SetStepMode(mode)
	if mod, _, ok := strings.Cut(spec.Symbol, ":"); ok {
		if err := insmod(k, mod); err != nil {
			return err
		}
	}
	m := k.Machine()
	var steps []snapshot
	done := false
	kp.Observe(func(o kprobes.Observation) {
		if done {
			return
		}
		c := o.CPU
		s := snapshot{Observation: o,
			esr: c.SysReg(machine.ESR_EL1), elr: c.SysReg(machine.ELR_EL1), spsr: c.SysReg(machine.SPSR_EL1), vbar: c.SysReg(machine.VBAR_EL1)}
		if o.Kind == kprobes.ObsBreak || o.Kind == kprobes.ObsSSBreak || o.Kind == kprobes.ObsKretReturn {
			s.trace = k.Backtrace(c.X(29), 16)
		}
		steps = append(steps, s)
		switch {
		case o.Kind == kprobes.ObsKretReturn:
			done = true
		case o.Kind == kprobes.ObsPost && spec.Type != kprobes.TypeKretprobe:
			done = true
		}
	})
	// Register before the first instruction, so boot-time calls count too.
	reg, err := kp.RegisterSpec(spec)
	if err != nil {
		return err
	}
	for !done && m.Stats().Instructions < budget && !m.PoweredOff() {
		if err := m.Step(10_000); err != nil {
			return fmt.Errorf("running guest: %w", err)
		}
		if msg, ok := k.Panicked(); ok {
			return fmt.Errorf("guest panicked: %s", msg)
		}
	}
	if !done {
		return fmt.Errorf("%s was not hit in %d guest instructions", spec, m.Stats().Instructions)
	}
	e := explainer{w: out, k: k, d: &disassembler{}, hw: mode == kprobes.StepHW}
	e.registration(spec, reg)
	for i, s := range steps {
		var prev *snapshot
		if i > 0 {
			prev = &steps[i-1]
		}
		e.step(s, prev)
	}
	return nil
}

// insmod loads a module of the image for a MOD:SYM spec. init_module runs
// on a guest CPU, so the machine runs on another goroutine until the guest
// is ready and the module is in; explain then steps it on its own.
func insmod(k *kernel.Kernel, name string) error {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- k.Run(ctx) }()
	var err error
	select {
	case <-k.Ready():
		err = k.LoadEmbeddedModule(name)
	case err = <-done:
		if err == nil {
			err = errors.New("guest stopped before it was ready")
		}
		cancel()
		return fmt.Errorf("loading module %s: %w", name, err)
	}
	cancel()
	if runErr := <-done; runErr != nil && !errors.Is(runErr, context.Canceled) && err == nil {
		err = runErr
	}
	if err != nil {
		return fmt.Errorf("loading module %s: %w", name, err)
	}
	return nil
}

type explainer struct {
	w io.Writer
	k *kernel.Kernel
	d *disassembler
	n int

	inJprobe bool // a jprobe's guest handler is running
	hw       bool // stepping with the software step exception
}

func (e *explainer) printf(format string, args ...any) { fmt.Fprintf(e.w, format, args...) }

func (e *explainer) heading(title string) {
	e.n++
	e.printf("\n%d. %s\n", e.n, title)
}

func (e *explainer) insn(addr uint64) string {
	w, err := e.k.ReadInsn(addr)
	if err != nil {
		return "(unreadable)"
	}
	return fmt.Sprintf("%08x  %s", w, e.d.gnu(w, addr, e.k))
}

func (e *explainer) sym(addr uint64) string { return e.k.Kallsyms().Format(addr) }

func (e *explainer) registration(spec kprobes.Spec, r *kprobes.Registered) {
	p := r.Kprobe()
	kind := map[kprobes.Type]string{kprobes.TypeKprobe: "kprobe", kprobes.TypeJprobe: "jprobe", kprobes.TypeKretprobe: "kretprobe"}[p.Type()]
	e.printf("%s %s at %#x (%s), %c in kprobes/list\n", kind, spec, p.Addr, e.sym(p.Addr), p.Type())
	e.heading("Registration: the probe is armed")
	orig := p.Opcode()
	e.printf("   original instruction  %x: %08x  %s\n", p.Addr, orig, e.d.gnu(orig, p.Addr, e.k))
	e.printf("   patched with          %x: %s   (BRK #0x004, KPROBES_BRK_IMM), the machine stopped while it was written\n", p.Addr, e.insn(p.Addr))
	if slot := p.Slot(); slot != 0 {
		e.printf("   out-of-line slot      %x: %s\n", slot, e.insn(slot))
		e.printf("                         %x: %s   (BRK #0x006, KPROBES_BRK_SS_IMM)\n", slot+4, e.insn(slot+4))
	} else {
		e.printf("   no slot: the instruction uses the PC, so it will be simulated on the saved registers\n")
	}
}

// esrText decodes ESR_EL1 for a BRK.
func esrText(esr uint64) string {
	ec := esr >> 26 & 0x3f
	il := esr >> 25 & 1
	iss := esr & 0x1ffffff
	name := map[uint64]string{0x3c: "BRK64, BRK instruction in AArch64 state", 0x33: "software step, current EL", 0x32: "software step, lower EL", 0x15: "SVC64", 0x25: "data abort, current EL", 0x21: "instruction abort, current EL", 0x00: "unknown"}[ec]
	s := fmt.Sprintf("%#08x  EC=%#x (%s) IL=%d ISS=%#x", esr, ec, name, il, iss)
	if ec == 0x3c {
		imm := iss & 0xffff
		what := map[uint64]string{0x004: "KPROBES_BRK_IMM", 0x006: "KPROBES_BRK_SS_IMM", 0x800: "BUG_BRK_IMM"}[imm]
		s += fmt.Sprintf(": imm16 %#03x %s", imm, what)
	}
	return s
}

// spsrText decodes a saved PSTATE.
func spsrText(v uint64) string {
	flags := ""
	for i, f := range "NZCV" {
		if v>>(31-i)&1 == 1 {
			flags += string(f)
		} else {
			flags += "-"
		}
	}
	daif := ""
	for i, f := range "DAIF" {
		if v>>(9-i)&1 == 1 {
			daif += string(f)
		} else {
			daif += "-"
		}
	}
	mode := map[uint64]string{0: "EL0t", 4: "EL1t", 5: "EL1h"}[v&0xf]
	return fmt.Sprintf("%#x  NZCV=%s DAIF=%s M=%s", v, flags, daif, mode)
}

func (e *explainer) exception(s snapshot) {
	e.printf("   ESR_EL1   %s\n", esrText(s.esr))
	if s.esr>>26&0x3f == 0x33 {
		e.printf("   ELR_EL1   %#x  %s (the next instruction: the stepped one completed)\n", s.elr, e.sym(s.elr))
	} else {
		e.printf("   ELR_EL1   %#x  %s (where the exception happened: the BRK itself)\n", s.elr, e.sym(s.elr))
	}
	e.printf("   SPSR_EL1  %s\n", spsrText(s.spsr))
	off := uint64(0x200)
	group := "current EL with SP_ELx"
	switch s.spsr & 0xf {
	case 0:
		off, group = 0x400, "lower EL using AArch64"
	case 4:
		off, group = 0, "current EL with SP_EL0"
	}
	e.printf("   vector    VBAR_EL1 %#x + %#x (%s, synchronous) = %s; DAIF masked, EL1h\n", s.vbar, off, group, e.sym(s.vbar+off))
	if len(s.trace) > 0 {
		e.printf("   path through the guest kernel to the hostcall (frame records, innermost first):\n")
		for _, f := range s.trace {
			e.printf("     %s\n", f)
		}
	}
}

func (e *explainer) regs(s snapshot) {
	r := s.Regs
	e.printf("   struct pt_regs at %#x (kernel_entry saved it on the stack):\n", s.RegsAddr)
	for i := 0; i < 31; i += 3 {
		var parts []string
		for j := i; j < i+3 && j < 31; j++ {
			parts = append(parts, fmt.Sprintf("x%-2d %016x", j, r.X[j]))
		}
		e.printf("     %s\n", strings.Join(parts, "  "))
	}
	e.printf("     sp  %016x  pc  %016x  pstate %s\n", r.SP, r.PC, spsrText(r.Pstate))
}

func (e *explainer) step(s snapshot, prev *snapshot) {
	switch s.Kind {
	case kprobes.ObsBreak:
		if e.inJprobe {
			e.heading("jprobe_return(): the handler puts SP back and hits the kprobe BRK at jprobe_return_break")
		} else {
			e.heading(fmt.Sprintf("The hit: CPU %d executes BRK #0x004 at %s and takes a synchronous exception to EL1", s.CPU.Index(), e.sym(s.Regs.PC)))
		}
		e.exception(s)
		e.regs(s)
		if !e.inJprobe {
			e.heading("The break hook kprobe_breakpoint_handler passes the frame to the host (HVC #0x4b10); the pre handlers run there")
		}
	case kprobes.ObsPreHandlers:
	case kprobes.ObsKretEntry:
		e.printf("   kretprobe entry handler: instance taken, return address %s saved, x30 <- %s\n", e.sym(s.Target), e.sym(s.Regs.X[30]))
	case kprobes.ObsSetjmp:
		e.printf("   jprobe setjmp_pre_handler: registers saved, regs->pc <- the handler %s\n", e.sym(s.Target))
		e.heading(fmt.Sprintf("ERET into the jprobe handler %s, with %s's registers and stack:", e.sym(s.Target), e.sym(s.Addr)))
		e.printf("     x0 %#x  x1 %#x  x2 %#x  x3 %#x  sp %#x\n", s.Regs.X[0], s.Regs.X[1], s.Regs.X[2], s.Regs.X[3], s.Regs.SP)
		e.inJprobe = true
	case kprobes.ObsLongjmp:
		e.printf("   longjmp_break_handler: the probed function's registers restored (pc %s, sp %#x)\n", e.sym(s.Regs.PC), s.Regs.SP)
		e.inJprobe = false
	case kprobes.ObsStep:
		if e.hw {
			e.heading("Step out of line with the software step exception: regs->pc <- the slot, SPSR.SS and MDSCR_EL1.SS|KDE set, IRQs masked and debug unmasked; ERET")
			e.printf("   the CPU runs one instruction, %x: %s, then takes the step exception\n", s.Slot, e.insn(s.Slot))
		} else {
			e.heading("Step out of line: regs->pc <- the slot, DAIF masked; ret_to_kernel restores the frame and ERETs")
			e.printf("   the CPU runs %x: %s\n", s.Slot, e.insn(s.Slot))
		}
	case kprobes.ObsFault:
		e.heading(fmt.Sprintf("The stepped instruction at %x faulted: do_page_fault -> notify_page_fault -> kprobe_fault_handler puts regs->pc back at %s and clears the running probe; the fault is handled as any other, and the BRK is hit again", s.Target, e.sym(s.Addr)))
	case kprobes.ObsSimulate:
		e.heading("Simulation: the instruction is executed on the saved registers, no slot")
		e.printf("   %s -> pc %s\n", e.insn(s.Addr), e.sym(s.Regs.PC))
	case kprobes.ObsSSBreak:
		if e.hw {
			e.heading("The software step exception (EC 0x33) brings the CPU back; the step hook passes it to the host (HVC #0x4b17)")
		} else {
			e.heading("The slot's BRK #0x006 traps back")
		}
		e.exception(s)
	case kprobes.ObsPost:
		e.heading("Post handlers ran; regs->pc <- " + e.sym(s.Regs.PC) + ", DAIF restored; ERET, and the probed function goes on")
	case kprobes.ObsKretReturn:
		e.heading("The function returns into __kretprobe_trampoline")
		e.printf("   the trampoline saves a pt_regs and calls trampoline_probe_handler -> HVC #0x4b13 -> Go\n")
		if len(s.trace) > 0 {
			e.printf("   path: %s\n", strings.Join(s.trace, " <- "))
		}
		e.printf("   return value x0 = %#x; return handlers run with pc = the real return address %s\n", s.Regs.X[0], e.sym(s.Target))
		e.printf("   the trampoline restores the registers and returns there\n")
	}
}
