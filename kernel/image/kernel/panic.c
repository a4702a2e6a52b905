// SPDX-License-Identifier: MIT
/*
 * panic(), as kernel/panic.c: print, tell the host (HC_PANIC with the
 * message and the oops' pt_regs, if any), then stop this CPU for good.
 */
#include <linux/kernel.h>
#include <asm/hostcall.h>
#include <asm/ptrace.h>
#include <asm/sysreg.h>

int oops_in_progress;
struct pt_regs *panic_regs;	/* set by die() for HC_PANIC */

static char panic_buf[1024];

void panic(const char *fmt, ...)
{
	va_list args;

	local_daif_mask();

	va_start(args, fmt);
	vsnprintf(panic_buf, sizeof(panic_buf), fmt, args);
	va_end(args);
	pr_emerg("Kernel panic - not syncing: %s\n", panic_buf);
	/* Avoid nested stack-dumping if a panic occurs during oops processing */
	if (oops_in_progress <= 1 && !panic_regs)
		dump_stack();
	pr_emerg("---[ end Kernel panic - not syncing: %s ]---\n", panic_buf);

	/* The host's answer does not matter: there is no way back. */
	HOSTCALL2(HC_PANIC, panic_buf, panic_regs);

	for (;;) {
		local_daif_mask();
		wfi();
	}
}
