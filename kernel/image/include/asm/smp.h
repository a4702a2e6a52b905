/* SPDX-License-Identifier: MIT */
#ifndef __ASM_SMP_H
#define __ASM_SMP_H

#define NR_CPUS		8

/*
 * The CPU number, from MPIDR_EL1.Aff0 (kpemu and QEMU virt number CPUs
 * 0..N-1 there). Linux keeps it in a per-cpu variable; this kernel has no
 * per-cpu areas yet.
 */
static inline unsigned int smp_processor_id(void)
{
	unsigned long mpidr;

	asm volatile("mrs %0, mpidr_el1" : "=r" (mpidr));
	return mpidr & 0xff;
}

#endif /* __ASM_SMP_H */
