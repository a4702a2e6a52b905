/* SPDX-License-Identifier: MIT */
/*
 * The guest side of kprobes. The probe subsystem itself runs in the host
 * (kpemu's kprobes/ package); see arch/arm64/kernel/probes/kprobes.c.
 */
#ifndef _LINUX_KPROBES_H
#define _LINUX_KPROBES_H

#include <linux/compiler.h>
#include <asm-generic/kprobes.h>

#include <linux/types.h>

struct pt_regs;
struct task_struct;

/*
 * The kprobes API for modules (Linux's include/linux/kprobes.h, 6.1 field
 * names; jprobes as Linux <= 4.14). Registration is a gate into the host's
 * probe subsystem (HC_KPROBE_API); the host resolves, arms and keeps all
 * state, and calls the handlers below on the CPU that hit the probe,
 * inside the debug exception. The layouts are mirrored by kprobes/guest.go
 * (and checked by _Static_assert in arch/arm64/kernel/probes/kprobes.c).
 */
typedef u32 kprobe_opcode_t;
struct kprobe;

typedef int (*kprobe_pre_handler_t) (struct kprobe *, struct pt_regs *);
typedef void (*kprobe_post_handler_t) (struct kprobe *, struct pt_regs *,
				       unsigned long flags);

#define KPROBE_FLAG_GONE	1	/* breakpoint has already gone */
#define KPROBE_FLAG_DISABLED	2	/* probe is temporarily disabled */

struct kprobe {
	unsigned long nmissed;		/* written back by the host */
	kprobe_opcode_t *addr;		/* in: address, or out: resolved */
	const char *symbol_name;	/* "sym" or "mod:sym" */
	unsigned int offset;		/* offset into the symbol */
	u32 flags;			/* KPROBE_FLAG_DISABLED at register */
	kprobe_pre_handler_t pre_handler;
	kprobe_post_handler_t post_handler;
	kprobe_opcode_t opcode;		/* written back by the host */
	u32 __pad;
};

struct kretprobe;

struct kretprobe_instance {
	struct kretprobe *rp;		/* Linux: rph->rp */
	kprobe_opcode_t *ret_addr;
	void *fp;
	char data[];
};

typedef int (*kretprobe_handler_t) (struct kretprobe_instance *,
				    struct pt_regs *);

struct kretprobe {
	struct kprobe kp;
	kretprobe_handler_t handler;
	kretprobe_handler_t entry_handler;
	int maxactive;			/* 0: max(10, 2 * NR_CPUS) */
	int nmissed;			/* written back by the host */
	size_t data_size;
	/* private: the instances, allocated by register_kretprobe() */
	void *__pool;
	unsigned long __pool_stride;
};

struct jprobe {
	struct kprobe kp;
	void *entry;	/* probe handling code to jump to */
};

/* HC_KPROBE_API operations; mirrored by kprobes/guest.go */
#define KPROBE_API_REGISTER_KPROBE	1
#define KPROBE_API_UNREGISTER_KPROBE	2
#define KPROBE_API_REGISTER_KRETPROBE	3
#define KPROBE_API_UNREGISTER_KRETPROBE	4
#define KPROBE_API_REGISTER_JPROBE	5
#define KPROBE_API_UNREGISTER_JPROBE	6
#define KPROBE_API_ENABLE_KPROBE	7
#define KPROBE_API_DISABLE_KPROBE	8
/* the host's "busy, ask again" answer: never an errno */
#define KPROBE_API_RETRY		1

int register_kprobe(struct kprobe *p);
void unregister_kprobe(struct kprobe *p);
int register_kretprobe(struct kretprobe *rp);
void unregister_kretprobe(struct kretprobe *rp);
int register_jprobe(struct jprobe *p);
void unregister_jprobe(struct jprobe *p);
int enable_kprobe(struct kprobe *kp);
int disable_kprobe(struct kprobe *kp);

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
