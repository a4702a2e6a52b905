/* SPDX-License-Identifier: MIT */
/*
 * Spinlocks, interrupt masking and the preemption count, after Linux's
 * linux/spinlock.h, asm/spinlock.h, asm/irqflags.h and linux/preempt.h.
 *
 * arch_spin_lock is a test-and-set lock on LDAXR/STXR (Armv8.0: QEMU's
 * cortex-a57 has no LSE). While the lock is held it waits in WFE, as
 * Linux's arm64 locks do: the holder's release clears the exclusive
 * monitor LDAXR armed, which wakes it (and an emulator may run the
 * holder meanwhile). Taking a lock disables preemption, as on Linux,
 * so that a task is never switched out while a lock it holds spins other
 * CPUs; the _irqsave forms also mask IRQs, for locks the tick takes.
 */
#ifndef _LINUX_SPINLOCK_H
#define _LINUX_SPINLOCK_H

#include <linux/compiler.h>
#include <linux/types.h>

typedef struct {
	volatile unsigned int lock;
} arch_spinlock_t;

typedef struct {
	arch_spinlock_t raw_lock;
} raw_spinlock_t;

typedef raw_spinlock_t spinlock_t;

#define __RAW_SPIN_LOCK_UNLOCKED(name)	{ .raw_lock = { 0 } }
#define DEFINE_SPINLOCK(x)	spinlock_t x = __RAW_SPIN_LOCK_UNLOCKED(x)
#define DEFINE_RAW_SPINLOCK(x)	raw_spinlock_t x = __RAW_SPIN_LOCK_UNLOCKED(x)

static __always_inline void arch_spin_lock(arch_spinlock_t *lock)
{
	unsigned int tmp;

	asm volatile(
	"1:	ldaxr	%w0, %1\n"
	"	cbz	%w0, 2f\n"
	"	wfe\n"
	"	b	1b\n"
	"2:	stxr	%w0, %w2, %1\n"
	"	cbnz	%w0, 1b\n"
	: "=&r" (tmp), "+Q" (lock->lock)
	: "r" (1)
	: "memory");
}

static __always_inline void arch_spin_unlock(arch_spinlock_t *lock)
{
	asm volatile("stlr	wzr, %0" : "=Q" (lock->lock) : : "memory");
}

static inline void raw_spin_lock_init(raw_spinlock_t *lock)
{
	lock->raw_lock.lock = 0;
}
#define spin_lock_init(l)	raw_spin_lock_init(l)

/* DAIF.I: asm/irqflags.h */
static __always_inline unsigned long arch_local_save_flags(void)
{
	unsigned long flags;

	asm volatile("mrs %0, daif" : "=r" (flags) : : "memory");
	return flags;
}

static __always_inline void arch_local_irq_enable(void)
{
	asm volatile("msr daifclr, #2" : : : "memory");
}

static __always_inline void arch_local_irq_disable(void)
{
	asm volatile("msr daifset, #2" : : : "memory");
}

static __always_inline unsigned long arch_local_irq_save(void)
{
	unsigned long flags = arch_local_save_flags();

	arch_local_irq_disable();
	return flags;
}

static __always_inline void arch_local_irq_restore(unsigned long flags)
{
	asm volatile("msr daif, %0" : : "r" (flags) : "memory");
}

#define local_irq_enable()	arch_local_irq_enable()
#define local_irq_disable()	arch_local_irq_disable()
#define local_irq_save(f)	do { (f) = arch_local_irq_save(); } while (0)
#define local_irq_restore(f)	arch_local_irq_restore(f)
#define irqs_disabled()		((arch_local_save_flags() & (1UL << 7)) != 0)

/* The preemption count lives in current's thread_info (linux/sched.h). */
void preempt_count_add(int val);
void preempt_count_sub(int val);
#define preempt_disable()	do { preempt_count_add(1); barrier(); } while (0)
#define preempt_enable()	do { barrier(); preempt_count_sub(1); } while (0)
#define sched_preempt_enable_no_resched()	preempt_enable()

static __always_inline void raw_spin_lock(raw_spinlock_t *lock)
{
	preempt_disable();
	arch_spin_lock(&lock->raw_lock);
}

static __always_inline void raw_spin_unlock(raw_spinlock_t *lock)
{
	arch_spin_unlock(&lock->raw_lock);
	preempt_enable();
}

#define raw_spin_lock_irqsave(lock, flags)			\
	do {							\
		local_irq_save(flags);				\
		raw_spin_lock(lock);				\
	} while (0)

#define raw_spin_unlock_irqrestore(lock, flags)			\
	do {							\
		raw_spin_unlock(lock);				\
		local_irq_restore(flags);			\
	} while (0)

#define spin_lock(l)			raw_spin_lock(l)
#define spin_unlock(l)			raw_spin_unlock(l)
#define spin_lock_irqsave(l, f)		raw_spin_lock_irqsave(l, f)
#define spin_unlock_irqrestore(l, f)	raw_spin_unlock_irqrestore(l, f)

#endif /* _LINUX_SPINLOCK_H */
