/* SPDX-License-Identifier: MIT */
/* Sockets, as include/net/sock.h + inet_sock.h (the part kpemu needs). */
#ifndef _NET_SOCK_H
#define _NET_SOCK_H

#include <linux/types.h>
#include <linux/skbuff.h>
#include <linux/wait.h>

/* Linux's values; guarded, as linux/errno.h may grow them. */
#ifndef ENOBUFS
#define ENOBUFS		105
#endif
#ifndef ENOTCONN
#define ENOTCONN	107
#endif

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
	struct sk_buff_head	sk_receive_queue;	/* its lock also covers sk_rmem_alloc */
	struct wait_queue_head	sk_wq;		/* readers sleep here (sk_sleep()) */
	struct task_struct	*sk_reader;	/* a task that reads it, else NULL */
	/* struct tcp_sock */
	u32			rcv_nxt;
	u64			bytes_received;
	u32			segs_in;
	/* The peer of the last segment queued: where tcp_sendmsg() answers
	 * (a listener stands in for the connection it would have accepted). */
	__be32			peer_addr;
	__be16			peer_port;
	u32			snd_nxt;
	u64			bytes_sent;
	u32			segs_out;
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
int tcp_sendmsg(struct sock *sk, const void *buf, size_t size);
int ip_queue_xmit(struct sock *sk, struct sk_buff *skb);
struct sock *inet_lookup_listener(u16 port);
int tcp_sshd_start(void);

/* sk->sk_data_ready for TCP (sock_def_readable): wake the readers. */
void sock_def_readable(struct sock *sk);
void tcp_v4_init(void);

#endif /* _NET_SOCK_H */
