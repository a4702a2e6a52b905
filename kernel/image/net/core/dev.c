// SPDX-License-Identifier: MIT
/*
 * The receive path's entry, after net/core/dev.c: netif_receive_skb()
 * hands a packet to the packet_type registered for its protocol
 * (ip_rcv() for ETH_P_IP).
 */
#include <linux/kernel.h>
#include <linux/netdevice.h>
#include <net/checksum.h>

#define PTYPE_HASH_SIZE	4

static struct packet_type *ptype_base[PTYPE_HASH_SIZE];

struct net_device loopback_dev = {
	.name		= "eth0",
	.ifindex	= 2,
};

void dev_add_pack(struct packet_type *pt)
{
	ptype_base[ntohs(pt->type) & (PTYPE_HASH_SIZE - 1)] = pt;
}

static noinline int __netif_receive_skb(struct sk_buff *skb)
{
	struct net_device *orig_dev = skb->dev;
	struct packet_type *pt;

	skb_reset_network_header(skb);
	pt = ptype_base[ntohs(skb->protocol) & (PTYPE_HASH_SIZE - 1)];
	if (pt && pt->type == skb->protocol)
		return pt->func(skb, skb->dev, pt, orig_dev);

	skb->dev->stats.rx_dropped++;
	kfree_skb(skb);
	return NET_RX_DROP;
}

/**
 *	netif_receive_skb - process receive buffer from network
 *	@skb: buffer to process
 *
 *	Return values (usually ignored):
 *	NET_RX_SUCCESS: no congestion
 *	NET_RX_DROP: packet was dropped
 */
int netif_receive_skb(struct sk_buff *skb)
{
	skb->dev->stats.rx_packets++;
	skb->dev->stats.rx_bytes += skb->len;
	return __netif_receive_skb(skb);
}

void net_dev_init(void)
{
	loopback_dev.ip_addr = htonl(0x0a00020f);	/* 10.0.2.15 */
}
