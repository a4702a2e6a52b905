/* SPDX-License-Identifier: MIT */
#ifndef _LINUX_IP_H
#define _LINUX_IP_H

#include <linux/types.h>
#include <linux/skbuff.h>

#define IPPROTO_TCP	6
#define IPPROTO_UDP	17
#define IPVERSION	4
#define IP_DF		0x4000

/* Little-endian bitfield order, as include/uapi/linux/ip.h. */
struct iphdr {
	u8	ihl:4,
		version:4;
	u8	tos;
	__be16	tot_len;
	__be16	id;
	__be16	frag_off;
	u8	ttl;
	u8	protocol;
	__sum16	check;
	__be32	saddr;
	__be32	daddr;
};

static inline struct iphdr *ip_hdr(const struct sk_buff *skb)
{
	return (struct iphdr *)skb_network_header(skb);
}

struct net_device;
struct packet_type;

int ip_rcv(struct sk_buff *skb, struct net_device *dev, struct packet_type *pt,
	   struct net_device *orig_dev);
int ip_local_deliver(struct sk_buff *skb);
void ip_init(void);

/* IPv4 MIB counters (a few of /proc/net/snmp's Ip: fields). */
struct ipstats_mib {
	unsigned long InReceives;
	unsigned long InHdrErrors;
	unsigned long InAddrErrors;
	unsigned long InUnknownProtos;
	unsigned long InDelivers;
	unsigned long InCsumErrors;
	unsigned long OutRequests;
};
extern struct ipstats_mib ip_statistics;

#endif /* _LINUX_IP_H */
