// SPDX-License-Identifier: MIT
/*
 * panic(), as kernel/panic.c: print, tell the host (HC_PANIC with the
 * message and the oops' pt_regs, if any), then stop this CPU for good.
 */
#include <linux/kernel.h>
#include <asm/hostcall.h>
#include <asm/smp.h>
#include <asm/ptrace.h>
#include <asm/sysreg.h>

int oops_in_progress;
struct pt_regs *panic_regs;	/* set by die() for HC_PANIC */

static char panic_buf[1024];

#define PANIC_CPU_INVALID	-1
/* The CPU that panics first; the others stop silently (panic_smp_self_stop). */
static int panic_cpu = PANIC_CPU_INVALID;

void panic(const char *fmt, ...)
{
	va_list args;
	int old_cpu = PANIC_CPU_INVALID;
	int this_cpu = smp_processor_id();

	local_daif_mask();

	/*
	 * Only one CPU is allowed to execute the panic code from here: two
	 * CPUs that recurse into a stack overflow at once would print over
	 * each other and share panic_buf.
	 */
	if (!__atomic_compare_exchange_n(&panic_cpu, &old_cpu, this_cpu, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) &&
	    old_cpu != this_cpu)
		for (;;)
			wfi();

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
