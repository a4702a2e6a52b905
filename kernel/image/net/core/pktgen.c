// SPDX-License-Identifier: MIT
/*
 * A receive-side packet generator (named after net/core/pktgen.c, which
 * transmits): builds IPv4/TCP segments from a deterministic PRNG, with
 * varying ports, sequence numbers, flags and payload, valid IP and TCP
 * checksums, and every PKTGEN_CORRUPT_EVERY-th segment corrupted after
 * the checksum was computed. The workload feeds them to netif_receive_skb().
 */
#include <linux/kernel.h>
#include <linux/ip.h>
#include <linux/netdevice.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/tcp.h>
#include <net/checksum.h>
#include <net/pktgen.h>

static const char pktgen_text[] =
	"GET /index.html HTTP/1.1\r\nHost: 10.0.2.15\r\nUser-Agent: kpemu\r\n\r\n"
	"SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n"
	"The quick brown fox jumps over the lazy dog. 0123456789\n";

void pktgen_init(struct pktgen_dev *pkt_dev, u64 seed)
{
	memset(pkt_dev, 0, sizeof(*pkt_dev));
	prandom_seed_state(&pkt_dev->rnd, seed);
	pkt_dev->saddr = htonl(0x0a000202);	/* 10.0.2.2 */
	pkt_dev->daddr = htonl(0x0a00020f);	/* 10.0.2.15 */
	pkt_dev->seq = 1000;
}

struct sk_buff *pktgen_fill_skb(struct pktgen_dev *pkt_dev, struct net_device *dev)
{
	static const u16 dports[] = { 22, 80, 443, 8080, 5000 };
	struct sk_buff *skb;
	struct iphdr *iph;
	struct tcphdr *th;
	u32 r = prandom_u32_state(&pkt_dev->rnd);
	unsigned int plen = (r >> 8) % 96;
	unsigned int off = (r >> 16) % (sizeof(pktgen_text) - 1);
	unsigned int tcplen = sizeof(*th) + plen;
	unsigned int i, n;
	u16 flags;

	skb = alloc_skb(sizeof(*iph) + tcplen, GFP_ATOMIC);
	if (!skb)
		return NULL;
	skb->dev = dev;
	skb->protocol = htons(ETH_P_IP);

	iph = (struct iphdr *)skb_put(skb, sizeof(*iph));
	iph->version = 4;
	iph->ihl = 5;
	iph->tos = 0;
	iph->tot_len = htons(sizeof(*iph) + tcplen);
	iph->id = htons((u16)pkt_dev->sequence);
	iph->frag_off = htons(IP_DF);
	iph->ttl = 64;
	iph->protocol = IPPROTO_TCP;
	iph->check = 0;
	iph->saddr = pkt_dev->saddr;
	iph->daddr = pkt_dev->daddr;
	iph->check = ip_fast_csum(iph, iph->ihl);

	th = (struct tcphdr *)skb_put(skb, tcplen);
	memset(th, 0, sizeof(*th));
	th->source = htons(32768 + (r & 0x3fff));
	th->dest = htons(dports[(r >> 24) % ARRAY_SIZE(dports)]);
	th->seq = htonl(pkt_dev->seq);
	th->ack_seq = htonl(r);
	th->doff = sizeof(*th) / 4;
	flags = TCPHDR_ACK | (plen ? TCPHDR_PSH : 0);
	if ((r & 0xff) == 0)
		flags = TCPHDR_SYN;
	th->syn = !!(flags & TCPHDR_SYN);
	th->ack = !!(flags & TCPHDR_ACK);
	th->psh = !!(flags & TCPHDR_PSH);
	th->window = htons(64240);
	/* the text from off, wrapping round to its start */
	for (i = 0; i < plen; i += n, off = 0) {
		n = min(plen - i, (unsigned int)(sizeof(pktgen_text) - 1) - off);
		memcpy((u8 *)(th + 1) + i, pktgen_text + off, n);
	}
	th->check = csum_tcpudp_magic(iph->saddr, iph->daddr, tcplen, IPPROTO_TCP,
				      csum_partial(th, tcplen, 0));

	pkt_dev->seq += plen;
	pkt_dev->sequence++;
	if (pkt_dev->sequence % PKTGEN_CORRUPT_EVERY == 0) {
		/* flip a bit the checksum covers */
		if (plen)
			((u8 *)(th + 1))[plen / 2] ^= 0x10;
		else
			th->window ^= htons(0x0100);
		pkt_dev->corrupted++;
	}
	return skb;
}
