/*
 * Differential program: PSCI and SMP on 4 CPUs (-smp 4). CPU 0 brings up
 * the secondaries one at a time with CPU_ON, sends them SGIs, lets each
 * print in turn, waits for CPU_OFF through AFFINITY_INFO, restarts one
 * that sends an SGI back, and checks PSCI's error codes. Only one CPU
 * prints at a time and each waits for a handshake, so the output is
 * deterministic by construction.
 */
#include "../common/lib.h"

#define NCPU 4
#define PSCI_VERSION 0x84000000UL
#define PSCI_CPU_OFF 0x84000002UL
#define PSCI_CPU_ON 0xc4000003UL
#define PSCI_CPU_ON32 0x84000003UL
#define PSCI_AFFINITY_INFO 0xc4000004UL
#define PSCI_MIGRATE_INFO_TYPE 0x84000006UL
#define PSCI_FEATURES 0x8400000aUL

static volatile u32 up[NCPU];
static volatile u32 done[NCPU];
static volatile u32 turn;
static volatile u32 phase;
static volatile u32 sgi_count[NCPU];
static volatile u32 sgi_last[NCPU];

static u64 cpu_index(void) { return read_sysreg(mpidr_el1) & 0xff; }

static void irq_handler(void)
{
	u64 cpu = cpu_index();
	u32 iar = REG(GICC + GICC_IAR);
	sgi_last[cpu] = iar;
	sgi_count[cpu]++;
	REG(GICC + GICC_EOIR) = iar;
	dsb();
}

/* Sleep until this CPU took an interrupt. */
static void wait_sgi(u64 cpu)
{
	irq_disable();
	wait_irq(sgi_count[cpu], 0);
}

static void show(const char *what, u64 cpu, u64 v)
{
	puts("cpu");
	putc('0' + cpu);
	puts(" ");
	line(what, v);
}

/* The secondaries enter here (start.S), with the index CPU_ON gave them. */
void secondary_main(u64 cpu)
{
	gicc_init();
	show("up mpidr", cpu, read_sysreg(mpidr_el1));
	show("el", cpu, read_sysreg(currentel));
	show("daif", cpu, read_sysreg(daif));
	show("sctlr.m", cpu, read_sysreg(sctlr_el1) & 1);
	dsb();
	up[cpu] = 1;
	dsb();
	if (phase == 2) {
		/* Restarted: send SGI 7 to CPU 0 and leave. */
		REG(GICD + GICD_SGIR) = 1u << 16 | 7;
		psci(PSCI_CPU_OFF, 0, 0, 0);
	}
	wait_sgi(cpu);
	while (turn != cpu)
		dsb();
	show("sgi", cpu, sgi_last[cpu]);
	done[cpu] = 1;
	dsb();
	psci(PSCI_CPU_OFF, 0, 0, 0);
	puts("cpu_off returned\n");
}

int main(void)
{
	g_irq = irq_handler;
	/* QEMU 7.2 reports 1.1, machine 1.0: compare the major version. */
	line("version major", psci(PSCI_VERSION, 0, 0, 0) >> 16);
	line("features cpu_on", psci(PSCI_FEATURES, PSCI_CPU_ON, 0, 0));
	line("features migrate", psci(PSCI_FEATURES, 0xc4000005, 0, 0));
	line("migrate_info_type", psci(PSCI_MIGRATE_INFO_TYPE, 0, 0, 0));
	line("affinity 0", psci(PSCI_AFFINITY_INFO, 0, 0, 0));
	line("affinity 1", psci(PSCI_AFFINITY_INFO, 1, 0, 0));
	line("affinity 9", psci(PSCI_AFFINITY_INFO, 9, 0, 0));
	line("cpu_on 9", psci(PSCI_CPU_ON, 9, (u64)secondary_start, 9));
	line("cpu_on 0", psci(PSCI_CPU_ON, 0, (u64)secondary_start, 0));
	line("mpidr", read_sysreg(mpidr_el1));

	REG(GICD + GICD_CTLR) = 1;
	gicc_init();
	line("gic cpus", (REG(GICD + GICD_TYPER) >> 5) & 7);
	line("sgi target self", ((volatile u8 *)(GICD + GICD_ITARGETSR))[0]);

	phase = 1;
	dsb();
	for (u64 i = 1; i < NCPU; i++) {
		u64 r = i == 1 ? psci(PSCI_CPU_ON32, i, (u64)secondary_start, i)
			       : psci(PSCI_CPU_ON, i, (u64)secondary_start, i);
		while (!up[i])
			dsb();
		show("cpu_on", i, r); /* after the secondary's lines */
	}
	line("cpu_on 1 again", psci(PSCI_CPU_ON, 1, (u64)secondary_start, 1));
	line("affinity 2", psci(PSCI_AFFINITY_INFO, 2, 0, 0));

	/* SGI 5 to CPUs 1..3 by target list, then SGI 6 to all but self. */
	REG(GICD + GICD_SGIR) = 0xeu << 16 | 5;
	for (u64 i = 1; i < NCPU; i++) {
		turn = i;
		dsb();
		while (!done[i])
			dsb();
	}
	for (u64 i = 1; i < NCPU; i++) {
		while (psci(PSCI_AFFINITY_INFO, i, 0, 0) != 1)
			;
		show("off", i, psci(PSCI_AFFINITY_INFO, i, 0, 0));
	}

	/* Restart CPU 1; it sends SGI 7 here and powers off again. */
	phase = 2;
	up[1] = 0;
	dsb();
	u64 r = psci(PSCI_CPU_ON, 1, (u64)secondary_start, 1);
	while (!up[1])
		dsb();
	show("cpu_on", 1, r);
	wait_sgi(0);
	line("cpu0 sgi", sgi_last[0]);
	while (psci(PSCI_AFFINITY_INFO, 1, 0, 0) != 1)
		;
	line("cpu1 off again", psci(PSCI_AFFINITY_INFO, 1, 0, 0));
	puts("done\n");
	return 0;
}
