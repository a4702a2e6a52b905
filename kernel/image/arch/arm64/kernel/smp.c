// SPDX-License-Identifier: MIT
/*
 * SMP bring-up and IPIs, after arch/arm64/kernel/smp.c and
 * psci.c: the boot CPU (pid 1, from kernel_init) finds the other CPUs by
 * asking PSCI AFFINITY_INFO about MPIDR 1..NR_CPUS-1 (kpemu and QEMU virt
 * number them by Aff0) and starts each with CPU_ON at secondary_entry
 * (head.S), passing its idle task; the secondary sets up its GIC
 * interface and tick, marks itself online and enters the idle loop.
 */
#include <linux/kernel.h>
#include <asm/debug-monitors.h>
#include <linux/irq_work.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/irqchip/arm-gic.h>
#include <asm/asm-offsets.h>
#include <asm/hostcall.h>
#include <asm/smp.h>
#include <asm/sysreg.h>

#define PSCI_0_2_FN64_CPU_ON		0xc4000003UL
#define PSCI_0_2_FN64_AFFINITY_INFO	0xc4000004UL
#define PSCI_RET_SUCCESS		0
#define PSCI_0_2_AFFINITY_LEVEL_OFF	1

unsigned long cpu_online_mask = 1;
unsigned int nr_cpu_ids = 1;

/* The secondaries' idle tasks and stacks (Linux: fork_idle()). */
static struct task_struct idle_threads[NR_CPUS];
static struct thread_stack idle_stacks[NR_CPUS] __stack;

void secondary_entry(void);

static unsigned long invoke_psci_fn(unsigned long fn, unsigned long a0,
				    unsigned long a1, unsigned long a2)
{
	register unsigned long x0 asm("x0") = fn;
	register unsigned long x1 asm("x1") = a0;
	register unsigned long x2 asm("x2") = a1;
	register unsigned long x3 asm("x3") = a2;

	asm volatile("hvc #0" : "+r" (x0), "+r" (x1), "+r" (x2), "+r" (x3)
		     : : "memory");
	return x0;
}

unsigned int num_online_cpus(void)
{
	return __builtin_popcountl(READ_ONCE(cpu_online_mask));
}

static void set_cpu_online(unsigned int cpu)
{
	/* only the CPU itself sets its bit; the LDAXR/STXR loop keeps the others' */
	unsigned long bit = 1UL << cpu, tmp, old;

	asm volatile(
	"1:	ldaxr	%0, %2\n"
	"	orr	%1, %0, %3\n"
	"	stlxr	%w0, %1, %2\n"
	"	cbnz	%w0, 1b\n"
	: "=&r" (old), "=&r" (tmp), "+Q" (cpu_online_mask)
	: "r" (bit)
	: "memory");
}

/*
 * Called from __secondary_switched on the new CPU, at the kernel's VA with
 * its idle task current.
 */
asmlinkage notrace __noreturn void secondary_start_kernel(void)
{
	unsigned int cpu = smp_processor_id();

	cpu_set_reserved_ttbr0();	/* the idmap is no longer needed */
	gic_cpu_init();
	arch_timer_starting_cpu();
	debug_monitors_starting_cpu();
	pr_info("CPU%u: Booted secondary processor 0x%010lx [0x%08lx]\n", cpu,
		read_sysreg(mpidr_el1) & 0xff00ffffffUL, read_sysreg(midr_el1));
	set_cpu_online(cpu);
	local_irq_enable();
	cpu_startup_entry();
}

static int __cpu_up(unsigned int cpu)
{
	struct task_struct *idle = &idle_threads[cpu];
	unsigned long ret;
	long spins;

	idle->stack = idle_stacks[cpu].stack;
	init_idle(idle, cpu);
	ret = invoke_psci_fn(PSCI_0_2_FN64_CPU_ON, cpu,
			     __pa_symbol(secondary_entry), (unsigned long)idle);
	if (ret != PSCI_RET_SUCCESS) {
		pr_err("CPU%u: failed to boot: %ld\n", cpu, (long)ret);
		return -EIO;
	}
	/* wait for the CPU to come online (Linux: wait_for_completion_timeout) */
	for (spins = 0; !cpu_online(cpu); spins++)
		if (spins > 100000000L) {
			pr_crit("CPU%u: failed to come online\n", cpu);
			return -EIO;
		}
	return 0;
}

void smp_init(void)
{
	unsigned int cpu;

	pr_info("smp: Bringing up secondary CPUs ...\n");
	for (cpu = 1; cpu < NR_CPUS; cpu++) {
		/* INVALID_PARAMETERS (-2) for an MPIDR no CPU has */
		long aff = invoke_psci_fn(PSCI_0_2_FN64_AFFINITY_INFO, cpu, 0, 0);

		if (aff != PSCI_0_2_AFFINITY_LEVEL_OFF)
			break;
		nr_cpu_ids = cpu + 1;
		__cpu_up(cpu);
	}
	pr_info("smp: Brought up 1 node, %u CPU%s\n", num_online_cpus(),
		num_online_cpus() > 1 ? "s" : "");
}

void smp_send_reschedule(int cpu)
{
	gic_raise_softirq(cpu, IPI_RESCHEDULE);
}

/* Main handler for inter-processor interrupts (scheduler_ipi). */
void handle_IPI(int ipinr)
{
	switch (ipinr) {
	case IPI_RESCHEDULE:
		/* the sender set TIF_NEED_RESCHED; the IRQ return preempts */
		break;
	case IPI_IRQ_WORK:
		irq_work_run();
		break;
	default:
		pr_crit("CPU%u: Unknown IPI message 0x%x\n", smp_processor_id(), ipinr);
		break;
	}
}
