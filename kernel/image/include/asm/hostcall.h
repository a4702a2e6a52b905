/* SPDX-License-Identifier: MIT */
/*
 * Hostcalls: the guest's gates into kpemu's Go half.
 *
 * A hostcall is "hvc #imm" from EL1. kpemu's machine models no EL2; it routes
 * HVC #0 to its PSCI implementation (function id in x0, as SMCCC) and every
 * other immediate to a Go handler that the host registered. Arguments go in
 * x0..x7, the result comes back in x0; all other registers are preserved.
 * The numbers here are mirrored by kernel/abi.go: change both together.
 */
#ifndef __ASM_HOSTCALL_H
#define __ASM_HOSTCALL_H

#define HC_PSCI			0x0000	/* SMCCC/PSCI: x0 = function id */

#define HC_KERNEL_READY		0x4b01	/* boot finished, workload starts */
#define HC_PANIC		0x4b02	/* x0 = message (NUL-terminated), x1 = pt_regs or 0 */

#define HC_KPROBE_BRK		0x4b10	/* x0 = pt_regs, x1 = esr; returns DBG_HOOK_* */
#define HC_KPROBE_SS_BRK	0x4b11	/* x0 = pt_regs, x1 = esr; returns DBG_HOOK_* */
#define HC_KPROBE_FAULT		0x4b12	/* x0 = pt_regs, x1 = esr; returns 1 if handled */
#define HC_KRETPROBE_TRAMPOLINE	0x4b13	/* x0 = pt_regs; returns the real return address */
#define HC_KPROBE_FLUSH_TASK	0x4b14	/* x0 = task_struct that is gone */

#define PSCI_0_2_FN_PSCI_VERSION	0x84000000
#define PSCI_0_2_FN_SYSTEM_OFF		0x84000008
#define PSCI_0_2_FN_SYSTEM_RESET	0x84000009

#ifndef __ASSEMBLY__
#define __hostcall_str(x) #x
#define hostcall_str(x) __hostcall_str(x)


#define HOSTCALL2(imm, a0, a1) ({					\
	register unsigned long __x0 asm("x0") = (unsigned long)(a0);	\
	register unsigned long __x1 asm("x1") = (unsigned long)(a1);	\
	asm volatile("hvc #" hostcall_str(imm)				\
		     : "+r"(__x0) : "r"(__x1) : "memory");		\
	__x0;								\
})
#endif

#endif /* __ASM_HOSTCALL_H */
