/* SPDX-License-Identifier: MIT */
#ifndef _NET_PKTGEN_H
#define _NET_PKTGEN_H

#include <linux/random.h>
#include <linux/types.h>

#define PKTGEN_CORRUPT_EVERY	16

struct sk_buff;
struct net_device;

struct pktgen_dev {
	struct rnd_state rnd;
	__be32 saddr;
	__be32 daddr;
	u32 seq;
	u64 sequence;	/* segments built */
	u64 corrupted;	/* of those, corrupted on purpose */
};

void pktgen_init(struct pktgen_dev *pkt_dev, u64 seed);
struct sk_buff *pktgen_fill_skb(struct pktgen_dev *pkt_dev, struct net_device *dev);

#endif /* _NET_PKTGEN_H */
