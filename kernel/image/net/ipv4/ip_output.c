// SPDX-License-Identifier: MIT
/*
 * The IP output path, after net/ipv4/ip_output.c: ip_queue_xmit() puts the
 * IPv4 header in front of a transport segment (one route: everything goes
 * out of eth0 to the peer) and hands the packet to dev_queue_xmit().
 */
#include <linux/kernel.h>
#include <linux/ip.h>
#include <linux/netdevice.h>
#include <net/checksum.h>
#include <net/sock.h>

static u16 ip_ident;	/* IP ID counter (ip_select_ident) */

int ip_queue_xmit(struct sock *sk, struct sk_buff *skb)
{
	unsigned int len = skb->len + sizeof(struct iphdr);
	struct iphdr *iph;

	skb_reset_transport_header(skb);
	iph = (struct iphdr *)skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	iph->version = 4;
	iph->ihl = 5;
	iph->tos = 0;
	iph->tot_len = htons(len);
	iph->id = htons(__atomic_fetch_add(&ip_ident, 1, __ATOMIC_RELAXED));
	iph->frag_off = htons(IP_DF);
	iph->ttl = 64;
	iph->protocol = IPPROTO_TCP;
	iph->check = 0;
	iph->saddr = skb->dev->ip_addr;
	iph->daddr = sk->peer_addr;
	iph->check = ip_fast_csum(iph, iph->ihl);
	ip_statistics.OutRequests++;
	return dev_queue_xmit(skb);
}
