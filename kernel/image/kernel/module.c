// SPDX-License-Identifier: MIT
/*
 * The guest half of module loading (Linux: kernel/module/main.c's
 * do_init_module() and delete_module() calls of mod->init and mod->exit).
 *
 * The host loads, relocates and links a module by itself; what must run on
 * a guest CPU is the module's code: init_module() and cleanup_module().
 * The host writes a request into kmod_mailbox with every vCPU stopped; the
 * workload polls it once per iteration, makes the call from process
 * context (pid 1, interrupts enabled, no probe in flight), and reports the
 * return value with HC_MODULE_DONE. One request is in flight at a time.
 */
#include <linux/kernel.h>
#include <linux/module.h>
#include <asm/hostcall.h>

struct kmod_mailbox kmod_mailbox;

void kmod_poll(void)
{
	unsigned long fn, cookie;
	int ret = 0;

	if (likely(READ_ONCE(kmod_mailbox.op) != KMOD_OP_CALL))
		return;
	fn = kmod_mailbox.fn;
	cookie = kmod_mailbox.cookie;
	WRITE_ONCE(kmod_mailbox.op, KMOD_OP_NONE);
	if (fn)
		ret = ((int (*)(void))fn)();
	HOSTCALL2(HC_MODULE_DONE, cookie, (long)ret);
}
