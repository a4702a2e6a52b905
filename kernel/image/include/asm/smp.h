/* SPDX-License-Identifier: MIT */
#ifndef __ASM_SMP_H
#define __ASM_SMP_H

#define NR_CPUS		8

#ifndef __ASSEMBLY__
#include <linux/compiler.h>

/*
 * The CPU number, from MPIDR_EL1.Aff0 (kpemu and QEMU virt number CPUs
 * 0..N-1 there). Linux keeps it in thread_info/per-cpu data; reading the
 * MPIDR is as cheap here and needs no per-cpu areas.
 */
static inline unsigned int smp_processor_id(void)
{
	unsigned long mpidr;

	asm volatile("mrs %0, mpidr_el1" : "=r" (mpidr));
	return mpidr & 0xff;
}

/* arch/arm64/kernel/smp.c */
extern unsigned long cpu_online_mask;
extern unsigned int nr_cpu_ids;
#define cpu_online(cpu)		((READ_ONCE(cpu_online_mask) >> (cpu)) & 1)
unsigned int num_online_cpus(void);
void smp_init(void);
void smp_send_reschedule(int cpu);
void handle_IPI(int ipinr);
#endif

#endif /* __ASM_SMP_H */
