/* SPDX-License-Identifier: MIT */
/* Sockets, as include/net/sock.h + inet_sock.h (the part kpemu needs). */
#ifndef _NET_SOCK_H
#define _NET_SOCK_H

#include <linux/types.h>
#include <linux/skbuff.h>

#define TCP_ESTABLISHED	1
#define TCP_LISTEN	10

struct sock {
	/* struct sock_common */
	__be32			skc_daddr;	/* foreign address (0: listener) */
	__be32			skc_rcv_saddr;	/* bound local address */
	__be16			skc_dport;
	u16			skc_num;	/* local port, host order */
	unsigned char		skc_state;
	int			sk_rcvbuf;
	int			sk_rmem_alloc;
	unsigned long		sk_drops;
	struct sk_buff_head	sk_receive_queue;
	/* struct tcp_sock */
	u32			rcv_nxt;
	u64			bytes_received;
	u32			segs_in;
};

/* struct inet_hashinfo: a tiny table of bound sockets. */
#define INET_LHTABLE_SIZE	8
struct inet_hashinfo {
	struct sock	*listening[INET_LHTABLE_SIZE];
	unsigned int	count;
};

extern struct inet_hashinfo tcp_hashinfo;

struct sock *__inet_lookup(struct inet_hashinfo *hashinfo, struct sk_buff *skb,
			   int doff, __be32 saddr, __be16 sport,
			   __be32 daddr, __be16 dport, int dif);
int inet_hash(struct sock *sk);
struct sock *inet_create_listener(__be32 addr, u16 port, int rcvbuf);
int tcp_v4_rcv(struct sk_buff *skb);
int tcp_v4_do_rcv(struct sock *sk, struct sk_buff *skb);
int tcp_recvmsg(struct sock *sk, void *buf, size_t len, int flags, int *addr_len);
void tcp_v4_init(void);

#endif /* _NET_SOCK_H */
