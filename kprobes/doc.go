// Package kprobes is kpemu's probe subsystem, after Linux's kernel/kprobes.c
// and arch/arm64/kernel/probes.
//
// A probe is armed by patching BRK #0x004 over a kernel instruction. The
// guest takes the debug exception through its own vector table and entry
// code; its break hook is a gate that traps to this package through a
// hostcall, with a pointer to the guest's pt_regs frame. The handler reads
// and writes that frame exactly as Linux's C handler would: it runs the
// pre handlers, points the frame's PC at an out-of-line slot holding the
// original instruction followed by BRK #0x006, and masks DAIF; the second
// BRK brings it back here for the post handlers and the return to the
// instruction after the probe.
//
// As arm64 Linux 6.1 without KPROBES_ON_FTRACE, a function's ftrace call
// site (its second instruction, kernel.Kernel.FtraceLocation) cannot be
// probed; its first instruction, MOV X9, LR since ftrace_init, can.
//
// Locking: the probe table is changed only with kp.mu held and, for
// whatever arms or disarms a point, with every vCPU stopped
// (kernel.StopMachine). The hit path runs on a vCPU, so it reads the table
// without kp.mu, as Linux relies on stop_machine and RCU. A disabled probe
// comes and goes without stopping the machine: a point's probe list is
// replaced atomically (RCU's list_add_rcu), and the address map has a
// read-write lock of its own. One change is made without kp.mu: probes
// registered before the guest can take a BRK are armed in its
// HC_KERNEL_READY hostcall (armDeferred), with every vCPU stopped, which
// only flips armed states.
//
// Modules (module.go): probes may sit on module text ("mod:sym"); when
// the module goes they turn [GONE] (kill_kprobe), and the module's
// .kprobes.text and NOKPROBE_SYMBOLs are blacklisted while it is loaded.
// Modules register probes with guest handlers through the guest kprobes
// API (guest.go), whose handlers the hit path calls on the guest CPU.
//
// User-space probes (uprobes.go, after kernel/events/uprobes.c and
// arch/arm64/kernel/probes/uprobes.c): RegisterUprobe places BRK #0x005 at
// a file offset in every process that maps it (and at exec in new ones);
// the guest's EL0 break and step hooks gate into the hit path, which runs
// the consumers on the user pt_regs, steps the instruction in the
// process's [uprobes] page or simulates it, and hijacks x30 to the
// trampoline there for uretprobes. Their state has its own mutex, taken by
// the hit path; registration takes it inside a stop of the machine.
//
// The debugfs files kprobes/list, kprobes/enabled and kprobes/blacklist are
// registered into a debugfs.Tree by RegisterFiles.
package kprobes
