package kernel

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
)

// Break hook results, as arch/arm64/include/asm/debug-monitors.h, and
// kpemu's answer for a probe hit while another is being stepped, on which
// the guest's break hook BUG()s (Linux: reenter_kprobe).
const (
	DbgHookHandled      = 0
	DbgHookError        = 1
	KprobeUnrecoverable = 2
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
