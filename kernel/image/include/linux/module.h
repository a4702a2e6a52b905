/* SPDX-License-Identifier: MIT */
/*
 * Loadable modules, after Linux's include/linux/module.h and init.h.
 *
 * A module is an ELF relocatable object (kernel/image/modules/<name>/) that
 * the host loads into the module area (MODULES_VADDR, 16 MiB; see
 * asm/memory.h and kernel/abi.go), relocates against kallsyms, and runs: init_module() when
 * it loads, cleanup_module() when it unloads. The host asks the workload to
 * make those calls through kmod_mailbox (kernel/module.c), and the workload
 * reports each result with HC_MODULE_DONE.
 */
#ifndef _LINUX_MODULE_H
#define _LINUX_MODULE_H

#include <linux/compiler.h>
#include <linux/types.h>
#include <asm/memory.h>

#define __init		__section(".init.text")
#define __exit		__section(".exit.text")
#define __initdata	__section(".init.data")

#define module_init(initfn)						\
	int init_module(void) __attribute__((alias(#initfn)));
#define module_exit(exitfn)						\
	void cleanup_module(void) __attribute__((alias(#exitfn)));

#define MODULE_LICENSE(_license)
#define MODULE_AUTHOR(_author)
#define MODULE_DESCRIPTION(_desc)

/* The host's requests to the workload (kernel/module.c). */
#define KMOD_OP_NONE	0
#define KMOD_OP_CALL	1

struct kmod_mailbox {
	unsigned long op;	/* KMOD_OP_* */
	unsigned long fn;	/* int (*)(void) to call */
	unsigned long cookie;	/* echoed back in HC_MODULE_DONE */
};

extern struct kmod_mailbox kmod_mailbox;
void kmod_poll(void);

#endif /* _LINUX_MODULE_H */
