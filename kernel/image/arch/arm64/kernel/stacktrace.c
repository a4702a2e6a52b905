// SPDX-License-Identifier: MIT
/*
 * Stack unwinding by frame records, as arch/arm64/kernel/stacktrace.c.
 * Every function keeps a frame record {fp, lr} at x29; kernel_entry adds a
 * synthetic one for the interrupted context, so the trace crosses
 * exceptions. The walk stays on init_stack (the only stack).
 */
#include <linux/kernel.h>
#include <asm/asm-offsets.h>
#include <linux/sched.h>
#include <asm/ptrace.h>

struct unwind_state {
	unsigned long fp;
	unsigned long pc;
};

static bool on_init_stack(unsigned long sp, unsigned long size)
{
	unsigned long low = (unsigned long)init_stack;
	unsigned long high = low + THREAD_SIZE;

	return sp >= low && sp + size <= high && sp + size > sp;
}

static int unwind_next(struct unwind_state *state)
{
	unsigned long fp = state->fp;

	if (fp & 0x7)
		return -EINVAL;
	if (!on_init_stack(fp, 16))
		return -EINVAL;
	state->fp = ((unsigned long *)fp)[0];
	state->pc = ((unsigned long *)fp)[1];
	/* the frame record of the first function (primary_entry's) is zero */
	if (!state->pc)
		return -ENOENT;
	return 0;
}

static void dump_backtrace_entry(const char *loglvl, unsigned long where)
{
	printk("%s %pSb\n", loglvl, (void *)where);
}

void dump_backtrace(struct pt_regs *regs, const char *loglvl)
{
	struct unwind_state state;
	int depth = 0;

	if (regs && user_mode(regs))
		return;

	printk("%sCall trace:\n", loglvl);
	if (regs) {
		state.fp = regs->regs[29];
		state.pc = regs->pc;
	} else {
		state.fp = (unsigned long)__builtin_frame_address(0);
		state.pc = (unsigned long)dump_backtrace;
	}
	do {
		dump_backtrace_entry(loglvl, state.pc);
	} while (++depth < 64 && unwind_next(&state) == 0);
}

/* notrace: Linux's dump_stack() is lib/'s, built without call sites */
notrace void dump_stack(void)
{
	extern void dump_stack_print_info(const char *log_lvl);

	dump_stack_print_info(KERN_DEFAULT);
	dump_backtrace(NULL, KERN_DEFAULT);
}
