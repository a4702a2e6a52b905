/* SPDX-License-Identifier: MIT */
#ifndef _LINUX_TCP_H
#define _LINUX_TCP_H

#include <linux/types.h>
#include <linux/skbuff.h>

/* Little-endian bitfield order, as include/uapi/linux/tcp.h. */
struct tcphdr {
	__be16	source;
	__be16	dest;
	__be32	seq;
	__be32	ack_seq;
	u16	res1:4,
		doff:4,
		fin:1,
		syn:1,
		rst:1,
		psh:1,
		ack:1,
		urg:1,
		ece:1,
		cwr:1;
	__be16	window;
	__sum16	check;
	__be16	urg_ptr;
};

#define TCPHDR_FIN	0x01
#define TCPHDR_SYN	0x02
#define TCPHDR_RST	0x04
#define TCPHDR_PSH	0x08
#define TCPHDR_ACK	0x10

static inline struct tcphdr *tcp_hdr(const struct sk_buff *skb)
{
	return (struct tcphdr *)skb_transport_header(skb);
}

static inline unsigned int __tcp_hdrlen(const struct tcphdr *th)
{
	return th->doff * 4;
}

/* TCP MIB counters (a few of /proc/net/snmp's Tcp: fields). */
struct tcp_mib {
	unsigned long InSegs;
	unsigned long InErrs;
	unsigned long OutRsts;
	unsigned long InCsumErrors;
};
extern struct tcp_mib tcp_statistics;

extern u64 nr_tcp_rcv;
extern u64 nr_tcp_csum_bad;

#endif /* _LINUX_TCP_H */
