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
/* 0x4b03 was HC_FDT_POINTER, before head.S kept the boot x0 in __fdt_pointer */

#define HC_KPROBE_BRK		0x4b10	/* x0 = pt_regs, x1 = esr; returns DBG_HOOK_* */
#define HC_KPROBE_SS_BRK	0x4b11	/* x0 = pt_regs, x1 = esr; returns DBG_HOOK_* */
#define HC_KPROBE_FAULT		0x4b12	/* x0 = pt_regs, x1 = esr; returns 1 if handled */
#define HC_KRETPROBE_TRAMPOLINE	0x4b13	/* x0 = pt_regs; returns the real return address */
#define HC_KPROBE_FLUSH_TASK	0x4b14	/* x0 = task_struct that is gone */
#define HC_KPROBE_API		0x4b15	/* x0 = KPROBE_API_* op, x1 = struct kprobe/kretprobe/jprobe */
#define HC_KPROBE_CALL_DONE	0x4b16	/* x0 = what the requested guest call returned */
#define HC_KPROBE_SS_STEP	0x4b17	/* x0 = pt_regs, x1 = esr: software step; returns DBG_HOOK_* */

#define HC_UPROBE_BRK		0x4b18	/* x0 = pt_regs, x1 = esr, x2 = mm: BRK #0x005 from EL0; returns DBG_HOOK_* or UPROBE_HC_* */
#define HC_UPROBE_SS		0x4b19	/* x0 = pt_regs, x1 = esr, x2 = mm: a step from EL0; returns DBG_HOOK_* or UPROBE_HC_* */
#define HC_UPROBE_MMAP		0x4b1a	/* x0 = mm: exec mapped a program's segments */
#define HC_UPROBE_CLEAR		0x4b1b	/* x0 = mm: the address space is freed */
#define HC_UPROBE_FORK		0x4b1c	/* x0 = child task, x1 = its mm, x2 = the parent's mm; returns the [uprobes] address the child needs, or 0 */

#define HC_MODULE_DONE		0x4b20	/* x0 = mailbox cookie, x1 = what the called function returned */
#define HC_TRACEFS_DONE		0x4b21	/* x0 = tracefs_requests.tail after applying requests */
#define HC_SHADOW_DONE		0x4b22	/* x0 = a shadow request's seq: replayed */

#define HC_TRACE_PRINTK		0x4b31	/* x0 = ip, x1 = the formatted text (NUL-terminated) */
#define HC_FTRACE_CALL		0x4b30	/* x0 = ip, x1 = parent_ip, x2 = ftrace_ops, x3 = pt_regs: a traced function's call */
#define HC_TRACEPOINT		0x4b32	/* x0 = struct tracepoint, x1 = its record (struct trace_entry first), x2 = the record's size: an enabled tracepoint hit */
#define HC_FGRAPH_RETURN	0x4b33	/* x0 = the frame pointer at return_to_handler; returns the real return address */

/*
 * A gate's hostcall may answer HC_CALL_REQUEST in x0 instead of its result:
 * "call x1(x2, x3, x4) on this CPU, then make HC_KPROBE_CALL_DONE with its
 * return value", which answers the same way again. This is how the host
 * runs a guest module's kprobe handlers inside the exception while its own
 * state (the kprobe control block) stays in the host. The value is no
 * errno and no DBG_HOOK_* code, and under QEMU (x0 = -1) it never appears.
 */
#define HC_CALL_REQUEST		0x4b43414cUL	/* "KCAL" */

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

#define HOSTCALL3(imm, a0, a1, a2) ({					\
	register unsigned long __x0 asm("x0") = (unsigned long)(a0);	\
	register unsigned long __x1 asm("x1") = (unsigned long)(a1);	\
	register unsigned long __x2 asm("x2") = (unsigned long)(a2);	\
	asm volatile("hvc #" hostcall_str(imm)				\
		     : "+r"(__x0) : "r"(__x1), "r"(__x2) : "memory");	\
	__x0;								\
})

struct hc_call {
	unsigned long fn, a0, a1, a2;
};

/* A hostcall whose answer may be HC_CALL_REQUEST: x1..x4 fill *call. */
#define HOSTCALL2_CALL(imm, arg0, arg1, call) ({			\
	register unsigned long __x0 asm("x0") = (unsigned long)(arg0);	\
	register unsigned long __x1 asm("x1") = (unsigned long)(arg1);	\
	register unsigned long __x2 asm("x2");				\
	register unsigned long __x3 asm("x3");				\
	register unsigned long __x4 asm("x4");				\
	asm volatile("hvc #" hostcall_str(imm)				\
		     : "+r"(__x0), "+r"(__x1), "=r"(__x2), "=r"(__x3),	\
		       "=r"(__x4) : : "memory");			\
	(call)->fn = __x1;						\
	(call)->a0 = __x2;						\
	(call)->a1 = __x3;						\
	(call)->a2 = __x4;						\
	__x0;								\
})
#endif

#endif /* __ASM_HOSTCALL_H */
