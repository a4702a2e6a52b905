/* SPDX-License-Identifier: MIT */
/*
 * Name hashing for the dentry cache, after include/linux/stringhash.h and
 * include/linux/hash.h: the hash of a name is salted with its parent, so
 * one table holds every directory's entries.
 */
#ifndef _LINUX_STRINGHASH_H
#define _LINUX_STRINGHASH_H

#include <linux/types.h>

#define GOLDEN_RATIO_64 0x61C8864680B583EBull

/* hash_64 - the top @bits of @val scrambled by the golden ratio. */
static inline u32 hash_64(u64 val, unsigned int bits)
{
	return val * GOLDEN_RATIO_64 >> (64 - bits);
}

/* full_name_hash - a hash of @len bytes of @name, salted with @salt. */
static inline u64 full_name_hash(const void *salt, const char *name, unsigned int len)
{
	u64 hash = (unsigned long)salt;

	while (len--)
		hash = (hash + (unsigned char)*name++) * GOLDEN_RATIO_64;
	return hash ^ (hash >> 29);
}

#endif /* _LINUX_STRINGHASH_H */
