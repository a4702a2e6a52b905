// SPDX-License-Identifier: MIT
/*
 * Kprobes support for ARM64, the guest half (Linux:
 * arch/arm64/kernel/probes/kprobes.c).
 *
 * kpemu's probe subsystem is Go, in the host. The guest keeps Linux's shape:
 * arch_init_kprobes() registers the two kernel break hooks, for BRK #0x004
 * (a probe hit) and BRK #0x006 (the BRK that follows the instruction in an
 * out-of-line slot), and the page-fault path calls kprobe_fault_handler().
 * Each handler is a gate that passes the pt_regs frame and ESR to the host
 * with a hostcall; the host reads and writes the frame (regs->pc, pstate,
 * x0..x30) and returns DBG_HOOK_HANDLED (0) or DBG_HOOK_ERROR (1), and for
 * faults 1 if it handled the fault. Anything else (e.g. -1 when no host
 * handler exists, as under QEMU) counts as not handled.
 *
 * Handlers of probes that modules register (register_kprobe() below) are
 * guest functions. The host calls them through the gates: a gate's
 * hostcall may answer HC_CALL_REQUEST, and hc_run_calls() then makes the
 * requested call on this CPU, inside the exception, and hands the result
 * back with HC_KPROBE_CALL_DONE until the host gives its real answer.
 */
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <asm/bug.h>
#include <asm/debug-monitors.h>
#include <asm/hostcall.h>
#include <asm/ptrace.h>
#include <asm/smp.h>

/* The host's answer for a probe hit while another is being stepped. */
#define KPROBE_UNRECOVERABLE	2

/* The layouts kprobes/guest.go reads and writes. */
_Static_assert(offsetof(struct kprobe, addr) == 8, "kprobe.addr");
_Static_assert(offsetof(struct kprobe, symbol_name) == 16, "kprobe.symbol_name");
_Static_assert(offsetof(struct kprobe, offset) == 24, "kprobe.offset");
_Static_assert(offsetof(struct kprobe, flags) == 28, "kprobe.flags");
_Static_assert(offsetof(struct kprobe, pre_handler) == 32, "kprobe.pre_handler");
_Static_assert(offsetof(struct kprobe, post_handler) == 40, "kprobe.post_handler");
_Static_assert(offsetof(struct kprobe, opcode) == 48, "kprobe.opcode");
_Static_assert(sizeof(struct kprobe) == 56, "sizeof(struct kprobe)");
_Static_assert(offsetof(struct kretprobe, handler) == 56, "kretprobe.handler");
_Static_assert(offsetof(struct kretprobe, entry_handler) == 64, "kretprobe.entry_handler");
_Static_assert(offsetof(struct kretprobe, maxactive) == 72, "kretprobe.maxactive");
_Static_assert(offsetof(struct kretprobe, nmissed) == 76, "kretprobe.nmissed");
_Static_assert(offsetof(struct kretprobe, data_size) == 80, "kretprobe.data_size");
_Static_assert(offsetof(struct kretprobe, __pool) == 88, "kretprobe.__pool");
_Static_assert(offsetof(struct kretprobe, __pool_stride) == 96, "kretprobe.__pool_stride");
_Static_assert(offsetof(struct jprobe, entry) == 56, "jprobe.entry");
_Static_assert(offsetof(struct kretprobe_instance, data) == 24, "kretprobe_instance.data");

/*
 * Make the guest calls the host asks for until it answers for real. The
 * called handlers run with this exception's DAIF masked, as Linux's do; a
 * probe they hit is missed (the host sees its kprobe still current).
 */
static unsigned long __kprobes hc_run_calls(unsigned long ret, struct hc_call *c)
{
	while (ret == HC_CALL_REQUEST) {
		long r = ((long (*)(unsigned long, unsigned long, unsigned long))c->fn)(c->a0, c->a1, c->a2);

		ret = HOSTCALL2_CALL(HC_KPROBE_CALL_DONE, r, 0, c);
	}
	return ret;
}

static int __kprobes
kprobe_breakpoint_handler(struct pt_regs *regs, unsigned long esr)
{
	struct hc_call c;
	unsigned long ret = hc_run_calls(HOSTCALL2_CALL(HC_KPROBE_BRK, regs, esr, &c), &c);

	if (ret == KPROBE_UNRECOVERABLE) {
		/* reenter_kprobe(): the host logged dump_kprobe() */
		pr_warn("Unrecoverable kprobe detected.\n");
		BUG();
	}
	return ret == DBG_HOOK_HANDLED ? DBG_HOOK_HANDLED : DBG_HOOK_ERROR;
}

static struct break_hook kprobes_break_hook = {
	.imm = KPROBES_BRK_IMM,
	.fn = kprobe_breakpoint_handler,
};

static int __kprobes
kprobe_breakpoint_ss_handler(struct pt_regs *regs, unsigned long esr)
{
	struct hc_call c;
	unsigned long ret = hc_run_calls(HOSTCALL2_CALL(HC_KPROBE_SS_BRK, regs, esr, &c), &c);

	return ret == DBG_HOOK_HANDLED ? DBG_HOOK_HANDLED : DBG_HOOK_ERROR;
}

static struct break_hook kprobes_break_ss_hook = {
	.imm = KPROBES_BRK_SS_IMM,
	.fn = kprobe_breakpoint_ss_handler,
};

/*
 * The software step exception after an out-of-line instruction, when the
 * host steps with MDSCR_EL1.SS (kpemu run --step=hw), as Linux did before
 * 5.10 (kprobe_single_step_handler behind a step hook).
 */
static int __kprobes
kprobe_single_step_handler(struct pt_regs *regs, unsigned long esr)
{
	struct hc_call c;
	unsigned long ret = hc_run_calls(HOSTCALL2_CALL(HC_KPROBE_SS_STEP, regs, esr, &c), &c);

	return ret == DBG_HOOK_HANDLED ? DBG_HOOK_HANDLED : DBG_HOOK_ERROR;
}

static struct step_hook kprobes_step_hook = {
	.fn = kprobe_single_step_handler,
};

int __kprobes kprobe_fault_handler(struct pt_regs *regs, unsigned int fsr)
{
	unsigned long ret = HOSTCALL2(HC_KPROBE_FAULT, regs, fsr);

	return ret == 1;
}

/*
 * The C half of __kretprobe_trampoline: the host runs the return handlers
 * of the kretprobe instances of this frame (__kretprobe_trampoline_handler),
 * sets regs->pc to the real return address and returns it.
 */
void __kprobes *trampoline_probe_handler(struct pt_regs *regs)
{
	struct hc_call c;

	return (void *)hc_run_calls(HOSTCALL2_CALL(HC_KRETPROBE_TRAMPOLINE, regs, 0, &c), &c);
}

/*
 * jprobe_return: end of a jprobe handler, as Linux 4.14's arm64
 * kprobes.c. It goes back to the stack pointer the probed function had
 * at the probe (which the handler's frame sat below), then hits the kprobe
 * BRK at jprobe_return_break, where no probe is registered: the host sees
 * a jprobe returning, restores the probed function's registers and steps
 * its first instruction.
 */
unsigned long jprobe_saved_sp[NR_CPUS];

void __kprobes __noreturn jprobe_return(void)
{
	asm volatile("	mov	sp, %0\n"
		     "	.globl	jprobe_return_break\n"
		     "jprobe_return_break:\n"
		     "	brk	%1\n"
		     :
		     : "r" (jprobe_saved_sp[smp_processor_id()]),
		       "I" (KPROBES_BRK_IMM)
		     : "memory");
	unreachable();
}

/*
 * kprobe_flush_task: a task is gone; the host recycles the kretprobe
 * instances it still held (returns that will never happen). As Linux's
 * finds the task's list empty, this finds no instances mostly, and then
 * needs no trap.
 */
void __kprobes kprobe_flush_task(struct task_struct *tk)
{
	if (!READ_ONCE(tk->kretprobe_instances))
		return;
	HOSTCALL2(HC_KPROBE_FLUSH_TASK, tk, 0);
}

/*
 * The kprobes API for modules: gates into the host's register_kprobe()
 * and friends, which return Linux's errnos. The host may be busy changing
 * probes for another user (kpemu's files); it then answers
 * KPROBE_API_RETRY, and the gate asks again.
 */
static long kprobe_api(unsigned long op, void *p)
{
	long ret;

	while ((ret = HOSTCALL2(HC_KPROBE_API, op, p)) == KPROBE_API_RETRY)
		asm volatile("yield" ::: "memory");
	return ret;
}

int register_kprobe(struct kprobe *p)
{
	return kprobe_api(KPROBE_API_REGISTER_KPROBE, p);
}

void unregister_kprobe(struct kprobe *p)
{
	kprobe_api(KPROBE_API_UNREGISTER_KPROBE, p);
}

int enable_kprobe(struct kprobe *kp)
{
	return kprobe_api(KPROBE_API_ENABLE_KPROBE, kp);
}

int disable_kprobe(struct kprobe *kp)
{
	return kprobe_api(KPROBE_API_DISABLE_KPROBE, kp);
}

int register_jprobe(struct jprobe *jp)
{
	return kprobe_api(KPROBE_API_REGISTER_JPROBE, jp);
}

void unregister_jprobe(struct jprobe *jp)
{
	kprobe_api(KPROBE_API_UNREGISTER_JPROBE, jp);
}

/*
 * The instances live in guest memory, so that handlers can use ri->data;
 * the host hands them out and takes them back.
 */
int register_kretprobe(struct kretprobe *rp)
{
	int n = rp->maxactive > 0 ? rp->maxactive : max(10, 2 * NR_CPUS);
	unsigned long stride = ALIGN(sizeof(struct kretprobe_instance) + rp->data_size, 16UL);
	long ret;

	if (rp->maxactive < 0 || rp->maxactive > 4096 || rp->data_size > 4096)
		return kprobe_api(KPROBE_API_REGISTER_KRETPROBE, rp);	/* the host's errno */
	rp->__pool = kzalloc(n * stride, GFP_KERNEL);
	if (!rp->__pool)
		return -ENOMEM;
	rp->__pool_stride = stride;
	if (!rp->maxactive)
		rp->maxactive = n;
	ret = kprobe_api(KPROBE_API_REGISTER_KRETPROBE, rp);
	if (ret) {
		kfree(rp->__pool);
		rp->__pool = NULL;
	}
	return ret;
}

void unregister_kretprobe(struct kretprobe *rp)
{
	kprobe_api(KPROBE_API_UNREGISTER_KRETPROBE, rp);
	/*
	 * The host keeps what a pending return needs (its return address)
	 * and runs no handler for it once the probe is unregistered, so no
	 * one touches the instances again: they go, as Linux frees them.
	 */
	kfree(rp->__pool);
	rp->__pool = NULL;
}

int arch_init_kprobes(void)
{
	register_kernel_break_hook(&kprobes_break_hook);
	register_kernel_break_hook(&kprobes_break_ss_hook);
	register_kernel_step_hook(&kprobes_step_hook);

	return 0;
}
