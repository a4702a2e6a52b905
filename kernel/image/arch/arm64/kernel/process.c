// SPDX-License-Identifier: MIT
/* Register dumps, as arch/arm64/kernel/process.c and lib/dump_stack.c. */
#include <linux/kernel.h>
#include <linux/sched.h>
#include <asm/ptrace.h>

#define UTS_RELEASE	"6.1.0-kpemu"
#define UTS_VERSION	"#1 SMP"

int taint_die;	/* TAINT_DIE: set once an oops has been printed */

/* notrace: lib/dump_stack.c in Linux, built without call sites */
notrace void dump_stack_print_info(const char *log_lvl)
{
	printk("%sCPU: %d PID: %d Comm: %.20s %s %s %.*s\n",
	       log_lvl, smp_processor_id(), current->pid, current->comm,
	       taint_die ? "Tainted: G      D           " : "Not tainted",
	       UTS_RELEASE, 2, UTS_VERSION);
	printk("%sHardware name: kpemu virt (DT)\n", log_lvl);
}

static const char *const btypes[] = {
	"--",
	"jc",
	"-c",
	"j-"
};

static void print_pstate(struct pt_regs *regs)
{
	u64 pstate = regs->pstate;
	const char *btype_str = btypes[(pstate & PSR_BTYPE_MASK) >> PSR_BTYPE_SHIFT];

	printk("pstate: %08llx (%c%c%c%c %c%c%c%c %cPAN %cUAO %cTCO %cDIT %cSSBS BTYPE=%s)\n",
	       pstate,
	       pstate & PSR_N_BIT ? 'N' : 'n',
	       pstate & PSR_Z_BIT ? 'Z' : 'z',
	       pstate & PSR_C_BIT ? 'C' : 'c',
	       pstate & PSR_V_BIT ? 'V' : 'v',
	       pstate & PSR_D_BIT ? 'D' : 'd',
	       pstate & PSR_A_BIT ? 'A' : 'a',
	       pstate & PSR_I_BIT ? 'I' : 'i',
	       pstate & PSR_F_BIT ? 'F' : 'f',
	       pstate & PSR_PAN_BIT ? '+' : '-',
	       pstate & PSR_UAO_BIT ? '+' : '-',
	       pstate & PSR_TCO_BIT ? '+' : '-',
	       pstate & PSR_DIT_BIT ? '+' : '-',
	       pstate & PSR_SSBS_BIT ? '+' : '-',
	       btype_str);
}

void __show_regs(struct pt_regs *regs)
{
	int i, top_reg;
	u64 lr, sp;

	lr = regs->regs[30];
	sp = regs->sp;
	top_reg = 29;

	dump_stack_print_info(KERN_DEFAULT);
	print_pstate(regs);

	printk("pc : %pS\n", (void *)regs->pc);
	printk("lr : %pS\n", (void *)lr);
	printk("sp : %016llx\n", sp);

	i = top_reg;

	while (i >= 0) {
		printk("x%-2d: %016llx", i, regs->regs[i]);

		while (i % 3) {
			i--;
			pr_cont(" x%-2d: %016llx", i, regs->regs[i]);
		}

		pr_cont("\n");
		i--;
	}
}

void show_regs(struct pt_regs *regs)
{
	__show_regs(regs);
	dump_backtrace(regs, KERN_DEFAULT);
}
