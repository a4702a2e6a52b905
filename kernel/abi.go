package kernel

import "github.com/kpemu/kpemu/machine"

// The guest ABI: hostcall immediates and the pt_regs layout. These mirror
// kernel/image/include/asm/hostcall.h and Linux arm64's struct pt_regs
// (arch/arm64/include/asm/ptrace.h, 6.1); change both sides together.

// Hostcall immediates (HVC #imm from EL1).
const (
	HCKernelReady = 0x4b01 // boot finished, workload starts
	HCPanic       = 0x4b02 // x0 = message, x1 = pt_regs or 0
	HCKprobeBrk   = 0x4b10 // x0 = pt_regs, x1 = esr; returns DBG_HOOK_*
	HCKprobeSSBrk = 0x4b11 // x0 = pt_regs, x1 = esr; returns DBG_HOOK_*
	HCKprobeFault = 0x4b12 // x0 = pt_regs, x1 = esr; returns 1 if handled

	HCKretprobeTrampoline = 0x4b13 // x0 = pt_regs; returns the real return address
	HCKprobeFlushTask     = 0x4b14 // x0 = task_struct that is gone
	HCKprobeAPI           = 0x4b15 // x0 = KPROBE_API_* op, x1 = struct kprobe/kretprobe/jprobe
	HCKprobeCallDone      = 0x4b16 // x0 = what the requested guest call returned
	HCKprobeSoftStep      = 0x4b17 // x0 = pt_regs, x1 = esr: a software step exception; returns DBG_HOOK_*

	HCUprobeBrk   = 0x4b18 // x0 = pt_regs, x1 = esr, x2 = mm: BRK #0x005 from EL0; returns DBG_HOOK_* or Uprobe*
	HCUprobeSS    = 0x4b19 // x0 = pt_regs, x1 = esr, x2 = mm: a step from EL0; returns DBG_HOOK_* or Uprobe*
	HCUprobeMmap  = 0x4b1a // x0 = mm: exec mapped a program's segments
	HCUprobeClear = 0x4b1b // x0 = mm: the address space is freed
	HCUprobeFork  = 0x4b1c // x0 = child task, x1 = its mm, x2 = the parent's mm; returns the [uprobes] address the child needs, or 0

	HCModuleDone  = 0x4b20 // x0 = mailbox cookie, x1 = what init/cleanup returned
	HCTracefsDone = 0x4b21 // x0 = tracefs_requests.tail after applying requests
	HCShadowDone  = 0x4b22 // x0 = a shadow request's seq: replayed (shadow.go)
	HCTracePrintk = 0x4b31 // x0 = ip, x1 = trace_printk()'s formatted text

	HCFtraceCall   = 0x4b30 // x0 = ip, x1 = parent_ip, x2 = ftrace_ops, x3 = pt_regs: a traced function's call (ftrace.go)
	HCFgraphReturn = 0x4b33 // x0 = the frame pointer at return_to_handler; returns the real return address (fgraph.go)
	HCTracepoint   = 0x4b32 // x0 = struct tracepoint, x1 = its record (struct trace_entry first), x2 = the record's size (jumplabel.go)
)

// TracepointKeyOff is offsetof(struct tracepoint, key) (the guest's
// linux/tracepoint.h): the static key a tracepoint's __jump_table
// entries name.
const TracepointKeyOff = 8

// HCCallRequest is a gate's answer "call x1(x2, x3, x4) on this CPU, then
// make HC_KPROBE_CALL_DONE with its return value" (HC_CALL_REQUEST): how
// the host runs guest functions (a module's kprobe handlers) inside an
// exception while its own state stays in the host.
const HCCallRequest = 0x4b43414c

// The kernel's virtual memory layout, Linux arm64's with VA_BITS = 48 and
// 4 KiB pages: the kernel lives in the TTBR1 half, from PageOffset up. The
// host reaches guest kernel memory through it (Kernel.Phys); each constant
// mirrors the guest header named beside it (under kernel/image/include/),
// so change both sides together. kimage_voffset is not here: the host reads it from the
// image's program headers (Layout.KimageVoffset).
const (
	VABits      = 48                 // VA_BITS (guest asm/memory.h)
	PageOffset  = 0xffff000000000000 // PAGE_OFFSET: the linear map of all RAM starts here (guest asm/memory.h)
	PhysOffset  = machine.RAMBase    // PHYS_OFFSET: the PA that PAGE_OFFSET maps (guest asm/memory.h)
	KimageVaddr = 0xffff800008000000 // KIMAGE_VADDR: where _text is linked (guest asm/memory.h)
	TaskSize    = 0x40000000         // TASK_SIZE: user addresses, in TTBR0, are below it (guest linux/mm.h)
)

// The module area: modules are loaded at [ModulesVaddr, ModulesEnd), 16 MiB
// that the guest maps at boot (2 MiB blocks) onto RAM from ModulesPhys,
// which nothing else uses. The image ends below ModulesPhys, the device tree
// sits in the last 2 MiB of RAM, above the area with the default 128 MiB,
// and the area is within the ±128 MiB of a BL from kernel text, so that a
// module's calls into the kernel need no veneers (CALL26 and JUMP26
// relocate directly).
const (
	ModulesVaddr = 0xffff800001000000          // MODULES_VADDR (guest asm/memory.h)
	ModulesVsize = 16 << 20                    // MODULES_VSIZE (guest asm/memory.h)
	ModulesEnd   = ModulesVaddr + ModulesVsize // MODULES_END (guest asm/memory.h)
	ModulesPhys  = 0x41000000                  // MODULES_PHYS: the RAM behind the area; kpemu's, Linux vmallocs modules (guest asm/memory.h)
)

// The workload's module mailbox (struct kmod_mailbox, kernel/module.c):
// the host writes fn and cookie, then op = KMOD_OP_CALL, with every vCPU
// stopped; the workload calls fn and reports with HC_MODULE_DONE.
const (
	KmodMailboxOp     = 0
	KmodMailboxFn     = 8
	KmodMailboxCookie = 16
	KmodOpCall        = 1
)

// Break hook results, as arch/arm64/include/asm/debug-monitors.h, and
// kpemu's answer for a probe hit while another is being stepped, on which
// the guest's break hook BUG()s (Linux: reenter_kprobe).
const (
	DbgHookHandled      = 0
	DbgHookError        = 1
	KprobeUnrecoverable = 2
)

// The uprobe gates' answers beside DbgHookHandled and DbgHookError (the
// guest's linux/uprobes.h).
const (
	UprobeStep    = 2 // handled: step the slot (user_enable_single_step)
	UprobeNeedXol = 3 // map the [uprobes] page (xol_add_vma) and ask again
	UprobeRewind  = 4 // the slot's instruction has not run yet: step it again
)

// struct pt_regs offsets (bytes) and size, Linux 6.1 arm64.
const (
	PtRegsX0     = 0   // regs[0..30], 8 bytes each
	PtRegsSP     = 248 // aborted SP
	PtRegsPC     = 256 // ELR_EL1 at entry
	PtRegsPstate = 264 // SPSR_EL1 at entry
	PtRegsOrigX0 = 272
	PtRegsSize   = 336 // PT_REGS_SIZE / S_FRAME_SIZE
)
