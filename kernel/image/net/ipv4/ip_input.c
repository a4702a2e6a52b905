// SPDX-License-Identifier: MIT
/*
 * The IP input path, after net/ipv4/ip_input.c: ip_rcv() validates the
 * header (ip_rcv_core), ip_local_deliver() hands the payload to the
 * registered transport protocol (tcp_v4_rcv() for IPPROTO_TCP).
 */
#include <linux/kernel.h>
#include <linux/ip.h>
#include <linux/netdevice.h>
#include <net/checksum.h>
#include <net/sock.h>

struct net_protocol {
	int	(*handler)(struct sk_buff *skb);
};

#define MAX_INET_PROTOS	256
static const struct net_protocol *inet_protos[MAX_INET_PROTOS];

struct ipstats_mib ip_statistics;

static const struct net_protocol tcp_protocol = {
	.handler	= tcp_v4_rcv,
};

static int ip_local_deliver_finish(struct sk_buff *skb)
{
	const struct iphdr *iph = ip_hdr(skb);
	const struct net_protocol *ipprot;

	skb_pull(skb, iph->ihl * 4);
	skb_reset_transport_header(skb);

	ipprot = inet_protos[iph->protocol];
	if (ipprot) {
		ip_statistics.InDelivers++;
		return ipprot->handler(skb);
	}
	ip_statistics.InUnknownProtos++;
	kfree_skb(skb);
	return 0;
}

/*
 * 	Deliver IP Packets to the higher protocol layers.
 */
int ip_local_deliver(struct sk_buff *skb)
{
	return ip_local_deliver_finish(skb);
}

static noinline struct sk_buff *ip_rcv_core(struct sk_buff *skb)
{
	const struct iphdr *iph;
	u32 len;

	ip_statistics.InReceives++;

	if (!pskb_may_pull(skb, sizeof(struct iphdr)))
		goto inhdr_error;

	iph = ip_hdr(skb);

	/*
	 *	RFC1122: 3.2.1.2 MUST silently discard any IP frame that fails the checksum.
	 *
	 *	Is the datagram acceptable?
	 *
	 *	1.	Length at least the size of an ip header
	 *	2.	Version of 4
	 *	3.	Checksums correctly. [Speed optimisation for later, skip loopback checksums]
	 *	4.	Doesn't have a bogus length
	 */
	if (iph->ihl < 5 || iph->version != 4)
		goto inhdr_error;

	if (!pskb_may_pull(skb, iph->ihl * 4))
		goto inhdr_error;

	if (unlikely(ip_fast_csum((u8 *)iph, iph->ihl)))
		goto csum_error;

	len = ntohs(iph->tot_len);
	if (skb->len < len) {
		goto drop;
	} else if (len < (iph->ihl * 4))
		goto inhdr_error;

	/* Trim to the datagram's length (pskb_trim_rcsum) */
	skb->len = len;
	skb->tail = skb->data + len;

	if (iph->daddr != skb->dev->ip_addr) {
		ip_statistics.InAddrErrors++;
		goto drop;
	}
	return skb;

csum_error:
	ip_statistics.InCsumErrors++;
inhdr_error:
	ip_statistics.InHdrErrors++;
drop:
	kfree_skb(skb);
	return NULL;
}

/*
 * IP receive entry point
 */
int ip_rcv(struct sk_buff *skb, struct net_device *dev, struct packet_type *pt,
	   struct net_device *orig_dev)
{
	skb = ip_rcv_core(skb);
	if (skb == NULL)
		return NET_RX_DROP;

	return ip_local_deliver(skb);
}

static struct packet_type ip_packet_type = {
	.type = htons(ETH_P_IP),
	.func = ip_rcv,
};

void ip_init(void)
{
	inet_protos[IPPROTO_TCP] = &tcp_protocol;
	dev_add_pack(&ip_packet_type);
}
