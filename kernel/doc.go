// Package kernel is the host half of kpemu's emulated kernel.
//
// It loads the guest image (an AArch64 ELF built from kernel/image) into a
// machine.Machine at its physical addresses, builds kallsyms from the
// image's symbol table, finds the sections that the probe subsystem must
// know about (.kprobes.text, the entry text, the kprobe blacklist, the
// out-of-line instruction slots), routes the guest's hostcalls (HVC #imm)
// to Go handlers, and patches kernel text with every vCPU stopped, as Linux's aarch64_insn_patch_text does with
// stop_machine. It loads modules (module.go: ELF relocatable objects laid
// out in the module area, relocated by reloc.go, their symbols added to
// kallsyms, init and cleanup run on a guest CPU through the workload's
// mailbox) and tells module notifiers when they come and go. It is the
// ftrace core (ftrace.go): the records of the image's and modules'
// patchable function entries, ftrace_location, and the ops whose filters
// decide which call sites call the guest's ftrace_caller, with the calls
// delivered through a hostcall. It resolves paths in the guest's file
// system (path.go) by walking its dentry tree with the machine stopped,
// reads its address spaces (usermm.go: every task's mm, its VMAs with the
// file each maps, its page tables) for uprobes, and reads the guest's
// programs out of the image's initramfs (initramfs.go). It knows nothing
// of probes or files.
//
// The guest runs with Linux arm64's layout (abi.go): its addresses are
// virtual, in the TTBR1 half. Kernel.Phys translates them, and the Kernel's
// ReadMem, WriteMem, Read32, ... take kernel addresses, where the machine's
// accessors of the same names take physical ones.
package kernel
