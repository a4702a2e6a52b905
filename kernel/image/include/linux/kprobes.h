/* SPDX-License-Identifier: MIT */
/*
 * The guest side of kprobes. The probe subsystem itself runs in the host
 * (kpemu's kprobes/ package); see arch/arm64/kernel/probes/kprobes.c.
 */
#ifndef _LINUX_KPROBES_H
#define _LINUX_KPROBES_H

#include <linux/compiler.h>
#include <asm-generic/kprobes.h>

struct pt_regs;
struct task_struct;

int arch_init_kprobes(void);
int kprobe_fault_handler(struct pt_regs *regs, unsigned int fsr);
int notify_page_fault(struct pt_regs *regs, unsigned int esr);
void kprobe_flush_task(struct task_struct *tk);

/*
 * jprobes (Linux <= 4.14): a jprobe handler has the probed function's
 * prototype and must end with jprobe_return(). The host saves the probed
 * function's registers when it enters the handler, and stores the stack
 * pointer to restore in jprobe_saved_sp[cpu].
 */
extern unsigned long jprobe_saved_sp[];
void __noreturn jprobe_return(void);

#endif /* _LINUX_KPROBES_H */
