/* SPDX-License-Identifier: MIT */
/*
 * Compiler attributes, named and defined as in Linux's
 * include/linux/compiler_types.h, compiler_attributes.h and compiler.h.
 */
#ifndef _LINUX_COMPILER_H
#define _LINUX_COMPILER_H

#ifndef __ASSEMBLY__

#define noinline		__attribute__((__noinline__))
#define __noreturn		__attribute__((__noreturn__))
#define __used			__attribute__((__used__))
#define __maybe_unused		__attribute__((__unused__))
#define __aligned(x)		__attribute__((__aligned__(x)))
#define __packed		__attribute__((__packed__))
#define __section(s)		__attribute__((__section__(s)))
#define __printf(a, b)		__attribute__((__format__(printf, a, b)))
#define __weak			__attribute__((__weak__))
/*
 * notrace: no ftrace call site. The kernel is built with
 * -fpatchable-function-entry=2 (the Makefile's CC_FLAGS_FTRACE, as Linux
 * arm64 with DYNAMIC_FTRACE_WITH_REGS), and clang's
 * no_instrument_function does not drop patchable entries, so notrace is
 * what Linux's compiler_types.h makes it for that case.
 */
#define notrace			__attribute__((patchable_function_entry(0, 0)))
#define asmlinkage

/*
 * As Linux's compiler_types.h: an inline function is never traced, even
 * where the compiler emits it out of line.
 */
#define inline			inline notrace
#define __always_inline		inline __attribute__((__always_inline__))

/* Functions that kprobes must never probe (include/linux/compiler.h). */
#define __kprobes	__attribute__((__section__(".kprobes.text")))

/*
 * Linux 5.8+ puts the entry code in .noinstr.text, which kprobes blacklists
 * as a whole. kpemu's linker script places .noinstr.text inside the
 * __kprobes_text_start..__kprobes_text_end bracket (and brackets it again with
 * __noinstr_text_start/__noinstr_text_end), so either range keeps it unprobed.
 */
/* Interrupt entry code (Linux: linux/interrupt.h __irq_entry); kprobes
 * blacklists __irqentry_text_start..__irqentry_text_end. */
#define __irq_entry	__section(".irqentry.text")
#define __sched		noinline
#define noinstr		noinline notrace __section(".noinstr.text")

#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)
#define unreachable()	__builtin_unreachable()
#define barrier()	__asm__ __volatile__("" : : : "memory")

#define READ_ONCE(x)		(*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, val)	(*(volatile __typeof__(x) *)&(x) = (val))

#define __stringify_1(x...)	#x
#define __stringify(x...)	__stringify_1(x)

#define ARRAY_SIZE(arr)		(sizeof(arr) / sizeof((arr)[0]))

#define offsetof(TYPE, MEMBER)	__builtin_offsetof(TYPE, MEMBER)

#define container_of(ptr, type, member) ({				\
	void *__mptr = (void *)(ptr);					\
	((type *)(__mptr - offsetof(type, member))); })

#endif /* !__ASSEMBLY__ */
#endif /* _LINUX_COMPILER_H */
