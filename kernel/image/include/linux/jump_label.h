/* SPDX-License-Identifier: MIT */
/*
 * Static keys, as include/linux/jump_label.h with arm64's
 * arch/arm64/include/asm/jump_label.h: static_branch_unlikely(&key) is
 * a NOP in the text while the key is off, so a disabled branch costs
 * one instruction that does nothing and no load. Each site is
 * recorded in __jump_table (Linux 6.1's relative entry: the NOP's
 * offset, the target's, and the key's), which kpemu.lds brackets with
 * __start___jump_table/__stop___jump_table. Turning a key on is the
 * host's job (kernel/jumplabel.go): with every CPU stopped it writes
 * key->enabled and patches each of the key's NOPs into "B target",
 * as arch_jump_label_transform() does; off puts the NOPs back.
 */
#ifndef _LINUX_JUMP_LABEL_H
#define _LINUX_JUMP_LABEL_H

#include <linux/compiler.h>
#include <linux/types.h>

struct static_key {
	int enabled;	/* what the host last set: 0 or 1 (static_key_enabled) */
};

/* One __jump_table entry: offsets from the entry's own fields. */
struct jump_entry {
	s32 code;
	s32 target;
	long key;
};

#define JUMP_TABLE_ENTRY					\
	".pushsection	__jump_table, \"a\"	\n\t"		\
	".align		3			\n\t"		\
	".long		1b - ., %l[l_yes] - .	\n\t"		\
	".quad		%c0 - .			\n\t"		\
	".popsection				\n\t"

static __always_inline bool arch_static_branch(struct static_key *const key)
{
	asm goto("1:	nop		\n\t"
		 JUMP_TABLE_ENTRY
		 : : "i"(key) : : l_yes);
	return false;
l_yes:
	return true;
}

#define static_branch_unlikely(key)	__builtin_expect(arch_static_branch(key), 0)
#define static_key_enabled(key)		(READ_ONCE((key)->enabled) > 0)

#endif
