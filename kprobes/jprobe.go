package kprobes

import (
	"fmt"
	"syscall"
)

// jprobes, the interface Linux removed in 4.15, on the same mechanism as
// then (Linux 4.14 arm64: setjmp_pre_handler, longjmp_break_handler,
// jprobe_return). kpemu keeps them because the seeds describe them.

// JprobeArg is one argument of the probed function as a Go jprobe
// handler receives it: named and typed from the image's DWARF.
type JprobeArg struct {
	Name  string
	Type  string
	Size  int64  // bytes
	Value uint64 // the register the AAPCS64 passes it in
}

// Jprobe is a probe on a function's entry whose handler runs with the
// function's arguments (struct jprobe). Kp.Symbol names the function
// (offset 0). Exactly one of Entry and Handler is set:
//
//   - Entry is a guest function with the probed function's prototype that
//     ends in jprobe_return(); it is entered with the probed function's
//     exact registers and stack, and afterwards those are restored and the
//     function runs.
//   - Handler is a Go function called with the arguments.
type Jprobe struct {
	Kp      Kprobe
	Entry   string
	Handler func(args []JprobeArg, regs *Regs)

	entry  uint64
	params []JprobeArg // names and types; values filled per hit
}

// jprobeState is the per-CPU state of a jprobe in flight: the registers
// saved at the probe (kcb->jprobe_saved_regs).
type jprobeState struct {
	saved Regs
}

// RegisterJprobe registers jp (register_jprobe): EINVAL when the entry is
// not a function start or the probe is not at a function entry, EEXIST
// when the address already has a jprobe.
func (kp *Kprobes) RegisterJprobe(jp *Jprobe) error {
	return kp.registerJprobe(jp, kp.Register)
}

// isFuncStart: addr is the start of a function in kernel or module text.
func (kp *Kprobes) isFuncStart(addr uint64) bool {
	_, off, ok := kp.k.Kallsyms().LookupAddr(addr)
	return ok && off == 0 && (kp.k.IsText(addr) || kp.k.IsModuleText(addr))
}

// registerJprobe is RegisterJprobe with the kprobe registered by register.
// A jprobe whose entry is already resolved (jp.entry, the guest API's) needs
// no Entry name.
func (kp *Kprobes) registerJprobe(jp *Jprobe, register func(*Kprobe) error) error {
	syms := kp.k.Kallsyms()
	if jp.entry != 0 && jp.Entry == "" && jp.Handler == nil {
		if !kp.isFuncStart(jp.entry) {
			return einval("handler %#x is not a function start", jp.entry)
		}
		jp.Kp.PreHandler = func(p *Kprobe, regs *Regs) bool { return kp.setjmpPreHandler(jp, regs) }
		jp.Kp.breakHandler = kp.longjmpBreakHandler
	} else if (jp.Entry == "") == (jp.Handler == nil) {
		return einval("a jprobe needs exactly one of Entry and Handler")
	}
	if jp.Kp.Offset != 0 {
		return einval("jprobe at %s+%#x is not a function entry", jp.Kp.Symbol, jp.Kp.Offset)
	}
	if jp.entry != 0 && jp.Entry == "" && jp.Handler == nil {
		if _, ok := syms.LookupName("jprobe_return_break"); !ok {
			return fmt.Errorf("%w: the kernel image has no jprobe_return", syscall.EOPNOTSUPP)
		}
	} else if jp.Entry != "" {
		s, ok := syms.LookupName(jp.Entry)
		if !ok {
			return fmt.Errorf("%w: no handler symbol %q", syscall.ENOENT, jp.Entry)
		}
		if !kp.isFuncStart(s.Addr) {
			return einval("handler %s is not a function start", jp.Entry)
		}
		if _, ok := syms.LookupName("jprobe_return_break"); !ok {
			return fmt.Errorf("%w: the kernel image has no jprobe_return", syscall.EOPNOTSUPP)
		}
		jp.entry = s.Addr
		jp.Kp.PreHandler = func(p *Kprobe, regs *Regs) bool { return kp.setjmpPreHandler(jp, regs) }
		jp.Kp.breakHandler = kp.longjmpBreakHandler
	} else {
		jp.params = nil
		fn := jp.Kp.Symbol
		if fn == "" {
			if s, _, ok := syms.LookupAddr(jp.Kp.Addr); ok {
				fn = s.Name
			}
		}
		if ps, err := kp.k.FuncParams(fn); err == nil {
			for _, p := range ps {
				jp.params = append(jp.params, JprobeArg{Name: p.Name, Type: p.Type, Size: p.Size})
			}
		}
		jp.Kp.PreHandler = func(p *Kprobe, regs *Regs) bool {
			args := append([]JprobeArg(nil), jp.params...)
			for i := range args {
				if i < 8 {
					args[i].Value = regs.X[i]
				}
			}
			jp.Handler(args, regs)
			return false
		}
	}
	jp.Kp.typ = TypeJprobe
	jp.Kp.PostHandler = nil
	// Checked before registering (Linux checks after, then unregisters),
	// so that the guest API's lock-held path needs no unregister here.
	if jp.Kp.Symbol != "" {
		if s, ok := syms.LookupName(jp.Kp.Symbol); ok {
			if _, off, _ := syms.LookupAddr(s.Addr); off != 0 {
				return einval("jprobe at %s is not a function entry", syms.Format(s.Addr))
			}
		}
	}
	return register(&jp.Kp)
}

// UnregisterJprobe removes jp.
func (kp *Kprobes) UnregisterJprobe(jp *Jprobe) { kp.Unregister(&jp.Kp) }

// setjmpPreHandler saves the registers and enters the guest handler with
// them; returning true keeps the probe current until jprobe_return.
func (kp *Kprobes) setjmpPreHandler(jp *Jprobe, regs *Regs) bool {
	js := &kp.jprobes[regs.CPU]
	js.saved = *regs
	// The guest's jprobe_return puts the stack back here.
	if s, ok := kp.k.Kallsyms().LookupName("jprobe_saved_sp"); ok {
		if err := kp.k.Write64(s.Addr+8*uint64(regs.CPU), regs.SP); err != nil {
			kp.log.Error("jprobe: saving sp", "err", err)
		}
	}
	regs.PC = jp.entry
	// Linux's setjmp_pre_handler runs the handler with preemption off
	// (preempt_disable; longjmp_break_handler re-enables it): preempted
	// there, the task would return into a module that may be gone, and
	// the per-CPU saved registers would belong to whoever probed next.
	if err := kp.k.AddPreemptCount(regs.CPU, 1); err != nil {
		kp.log.Error("jprobe: preempt_disable", "err", err)
	}
	kp.observe(ObsSetjmp, kp.cpu(regs), 0, regs, kp.pointAt(js.saved.PC), jp.entry)
	return true
}

// longjmpBreakHandler is hit at jprobe_return_break: restore the probed
// function's registers so that its first instruction is stepped next.
func (kp *Kprobes) longjmpBreakHandler(_ *Kprobe, regs *Regs) bool {
	brk, _ := kp.k.Kallsyms().LookupName("jprobe_return_break")
	if regs.PC != brk.Addr {
		return false
	}
	js := &kp.jprobes[regs.CPU]
	if regs.SP != js.saved.SP {
		kp.log.Error(fmt.Sprintf("jprobe: current sp %x does not match saved sp %x", regs.SP, js.saved.SP))
		return false
	}
	cpu := regs.CPU
	*regs = js.saved
	regs.CPU = cpu
	if err := kp.k.AddPreemptCount(cpu, -1); err != nil { // preempt_enable_no_resched
		kp.log.Error("jprobe: preempt_enable", "err", err)
	}
	return true
}
