// SPDX-License-Identifier: MIT
/*
 * die(), undefined instructions and BUG(), as arch/arm64/kernel/traps.c.
 */
#include <linux/kernel.h>
#include <trace/events/signal.h>
#include <linux/kprobes.h>
#include <linux/sched.h>
#include <asm/bug.h>
#include <asm/debug-monitors.h>
#include <asm/esr.h>
#include <asm/ptrace.h>

extern char _text[], _end[];
extern struct pt_regs *panic_regs;
extern int taint_die;
void show_regs(struct pt_regs *regs);

static const char *esr_class_str[] = {
	[0 ... ESR_ELx_EC_MAX]		= "UNRECOGNIZED EC",
	[ESR_ELx_EC_UNKNOWN]		= "Unknown/Uncategorized",
	[ESR_ELx_EC_WFx]		= "WFI/WFE",
	[ESR_ELx_EC_FP_ASIMD]		= "ASIMD",
	[ESR_ELx_EC_BTI]		= "BTI",
	[ESR_ELx_EC_ILL]		= "PSTATE.IL",
	[ESR_ELx_EC_SVC64]		= "SVC (AArch64)",
	[ESR_ELx_EC_HVC64]		= "HVC (AArch64)",
	[ESR_ELx_EC_SMC64]		= "SMC (AArch64)",
	[ESR_ELx_EC_SYS64]		= "MSR/MRS (AArch64)",
	[ESR_ELx_EC_FPAC]		= "FPAC",
	[ESR_ELx_EC_IABT_LOW]		= "IABT (lower EL)",
	[ESR_ELx_EC_IABT_CUR]		= "IABT (current EL)",
	[ESR_ELx_EC_PC_ALIGN]		= "PC Alignment",
	[ESR_ELx_EC_DABT_LOW]		= "DABT (lower EL)",
	[ESR_ELx_EC_DABT_CUR]		= "DABT (current EL)",
	[ESR_ELx_EC_SP_ALIGN]		= "SP Alignment",
	[ESR_ELx_EC_FP_EXC64]		= "FP (AArch64)",
	[ESR_ELx_EC_SERROR]		= "SError",
	[ESR_ELx_EC_BREAKPT_LOW]	= "Breakpoint (lower EL)",
	[ESR_ELx_EC_BREAKPT_CUR]	= "Breakpoint (current EL)",
	[ESR_ELx_EC_SOFTSTP_LOW]	= "Software Step (lower EL)",
	[ESR_ELx_EC_SOFTSTP_CUR]	= "Software Step (current EL)",
	[ESR_ELx_EC_WATCHPT_LOW]	= "Watchpoint (lower EL)",
	[ESR_ELx_EC_WATCHPT_CUR]	= "Watchpoint (current EL)",
	[ESR_ELx_EC_BKPT32]		= "BKPT (AArch32)",
	[ESR_ELx_EC_VECTOR32]		= "Vector catch (AArch32)",
	[ESR_ELx_EC_BRK64]		= "BRK (AArch64)",
};

const char *esr_get_class_string(unsigned long esr)
{
	return esr_class_str[ESR_ELx_EC(esr)];
}

/* Instructions are only read from the image, so a bad PC cannot fault again. */
static bool kernel_text_address(unsigned long addr)
{
	return addr >= (unsigned long)_text && addr + 4 <= (unsigned long)_end &&
	       !(addr & 3);
}

static void dump_kernel_instr(const char *lvl, struct pt_regs *regs)
{
	unsigned long addr = instruction_pointer(regs);
	char str[sizeof("00000000 ") * 5 + 2 + 1], *p = str;
	int i;

	if (user_mode(regs))
		return;

	for (i = -4; i < 1; i++) {
		unsigned long a = addr + i * 4;

		if (kernel_text_address(a)) {
			unsigned int val = *(unsigned int *)a;

			p += snprintf(p, str + sizeof(str) - p,
				      i == 0 ? "(%08x) " : "%08x ", val);
		} else {
			p += snprintf(p, str + sizeof(str) - p, "bad PC value");
			break;
		}
	}

	printk("%sCode: %s\n", lvl, str);
}

static int __die(const char *str, long err, struct pt_regs *regs)
{
	static int die_counter;

	pr_emerg("Internal error: %s: %016lx [#%d] SMP\n",
		 str, err, ++die_counter);

	printk("Modules linked in:\n");
	show_regs(regs);

	dump_kernel_instr(KERN_EMERG, regs);

	return 0;
}

/*
 * This function is protected against re-entrancy.
 */
void die(const char *str, struct pt_regs *regs, long err)
{
	oops_in_progress++;
	panic_regs = regs;

	__die(str, err, regs);

	taint_die = 1;
	/* kpemu has no process to kill: every oops is fatal (panic_on_oops=1). */
	panic("%s: Fatal exception", str);
}

/*
 * Each CPU's stack for reporting a kernel stack overflow (kernel_ventry
 * indexes it by MPIDR.Aff0, as smp_processor_id()).
 */
unsigned long overflow_stack[NR_CPUS][OVERFLOW_STACK_SIZE / sizeof(long)]
	__aligned(16);

void panic_bad_stack(struct pt_regs *regs, unsigned long esr, unsigned long far)
{
	unsigned long tsk_stk = (unsigned long)current->stack;
	unsigned long ovf_stk = (unsigned long)overflow_stack[smp_processor_id()];

	pr_emerg("Insufficient stack space to handle exception!\n");

	pr_emerg("ESR: 0x%016lx -- %s\n", esr, esr_get_class_string(esr));
	pr_emerg("FAR: 0x%016lx\n", far);

	pr_emerg("Task stack:     [0x%016lx..0x%016lx]\n",
		 tsk_stk, tsk_stk + THREAD_SIZE);
	pr_emerg("Overflow stack: [0x%016lx..0x%016lx]\n",
		 ovf_stk, ovf_stk + OVERFLOW_STACK_SIZE);

	__show_regs(regs);

	panic_regs = regs;
	panic("kernel stack overflow");
}

u64 nr_segv_kills;

/*
 * A fatal signal for a user task (arm64_force_sig_fault() with the
 * default action): kpemu has no signal handlers, so the task is killed
 * where the fault was taken, and says why as Linux's
 * show_unhandled_signals does. Its wait status is the signal number.
 */
void arm64_force_sig_fault(int signo, int code, unsigned long far,
			   const char *str, unsigned long esr)
{
	struct task_struct *tsk = current;
	struct kernel_siginfo info = { .si_signo = signo, .si_code = code };
	struct k_sigaction ka = { .sa_handler = 0 };	/* SIG_DFL */
	unsigned long flags;

	pr_info("%s[%d]: unhandled %s (%d) at 0x%016lx, esr 0x%08lx\n",
		tsk->comm, tsk->pid, str, signo, far, esr);
	/*
	 * Linux: force_sig_fault() -> __send_signal_locked() generates it
	 * under the siglock, and get_signal() delivers it on the way back
	 * to user space, then do_group_exit(); here both at once.
	 */
	local_irq_save(flags);
	trace_signal_generate(signo, &info, tsk, 0, TRACE_SIGNAL_DELIVERED);
	trace_signal_deliver(signo, &info, &ka);
	local_irq_restore(flags);
	if (signo == SIGSEGV)
		__atomic_add_fetch(&nr_segv_kills, 1, __ATOMIC_RELAXED);
	do_exit(signo);
}

void arm64_notify_die(const char *str, struct pt_regs *regs, int signo,
		      int sicode, unsigned long far, unsigned long err)
{
	if (user_mode(regs)) {
		arm64_force_sig_fault(signo, sicode, far, str, err);
		return;
	}
	die(str, regs, err);
}

void arm64_skip_faulting_instruction(struct pt_regs *regs, unsigned long size)
{
	regs->pc += size;
}

void do_undefinstr(struct pt_regs *regs, unsigned long esr)
{
	if (!user_mode(regs))
		die("Oops - Undefined instruction", regs, esr);
	arm64_notify_die("Oops - Undefined instruction", regs, SIGILL, 0,
			 regs->pc, esr);
}
NOKPROBE_SYMBOL(do_undefinstr);

/* lib/bug.c: find the __bug_table entry of a BUG() */
extern const struct bug_entry __start___bug_table[], __stop___bug_table[];

static const struct bug_entry *find_bug(unsigned long bugaddr)
{
	const struct bug_entry *bug;

	for (bug = __start___bug_table; bug < __stop___bug_table; ++bug)
		if ((unsigned long)&bug->bug_addr_disp + bug->bug_addr_disp == bugaddr)
			return bug;
	return NULL;
}

static int bug_handler(struct pt_regs *regs, unsigned long esr)
{
	const struct bug_entry *bug = find_bug(regs->pc);

	printk(KERN_DEFAULT "------------[ cut here ]------------\n");
	if (bug)
		pr_crit("kernel BUG at %s:%u!\n",
			(const char *)&bug->file_disp + bug->file_disp,
			bug->line);
	else
		pr_crit("kernel BUG at %pS [verbose debug info unavailable]\n",
			(void *)regs->pc);

	die("Oops - BUG", regs, esr);

	/* If thread survives, skip over the BUG instruction and continue: */
	arm64_skip_faulting_instruction(regs, BREAK_INSTR_SIZE);
	return DBG_HOOK_HANDLED;
}

static struct break_hook bug_break_hook = {
	.fn = bug_handler,
	.imm = BUG_BRK_IMM,
};

void trap_init(void)
{
	register_kernel_break_hook(&bug_break_hook);
}
