/* SPDX-License-Identifier: MIT */
#ifndef _LINUX_RANDOM_H
#define _LINUX_RANDOM_H

#include <linux/types.h>

/* The Tausworthe generator of lib/random32.c, deterministic. */
struct rnd_state {
	u32 s1, s2, s3, s4;
};

u32 prandom_u32_state(struct rnd_state *state);
void prandom_seed_state(struct rnd_state *state, u64 seed);

#endif /* _LINUX_RANDOM_H */
