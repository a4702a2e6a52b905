/* SPDX-License-Identifier: MIT */
/* Sockets, as include/net/sock.h + inet_sock.h (the part kpemu needs). */
#ifndef _NET_SOCK_H
#define _NET_SOCK_H

#include <linux/types.h>
#include <linux/skbuff.h>
#include <linux/list.h>
#include <linux/wait.h>

/* Linux's values; guarded, as linux/errno.h may grow them. */
#ifndef ENOBUFS
#define ENOBUFS		105
#endif
#ifndef ENOTCONN
#define ENOTCONN	107
#endif
#ifndef ENOTSOCK
#define ENOTSOCK	88
#endif
#ifndef EPROTONOSUPPORT
#define EPROTONOSUPPORT	93
#endif
#ifndef EOPNOTSUPP
#define EOPNOTSUPP	95
#endif
#ifndef EAFNOSUPPORT
#define EAFNOSUPPORT	97
#endif
#ifndef EADDRINUSE
#define EADDRINUSE	98
#endif
#ifndef EISCONN
#define EISCONN		106
#endif

#define TCP_ESTABLISHED	1
#define TCP_CLOSE	7
#define TCP_LISTEN	10

/* sk_shutdown */
#define RCV_SHUTDOWN	1
#define SEND_SHUTDOWN	2

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
	/* Accepting listeners (listen(2) on a socket file) and the
	 * connections they make, after inet_connection_sock.h: a segment
	 * of a new flow to such a listener makes a child socket for the
	 * flow (its handshake stands done), hashed in tcp_hashinfo.ehash and
	 * queued on the listener's sk_accept_queue until inet_csk_accept()
	 * takes it. All three lists are under tcp_hashinfo.lock. */
	u32			sk_max_ack_backlog;	/* 0: a kernel listener */
	u32			sk_ack_backlog;		/* children on the queue */
	struct list_head	sk_accept_queue;	/* a listener's children */
	struct list_head	sk_accept_node;		/* a child on that queue */
	struct list_head	sk_hash_node;		/* a child in ehash */
	unsigned char		sk_shutdown;		/* RCV_/SEND_SHUTDOWN */
};

/* struct inet_hashinfo: a tiny table of bound sockets. */
#define INET_LHTABLE_SIZE	8
struct inet_hashinfo {
	struct sock	*listening[INET_LHTABLE_SIZE];
	unsigned int	count;
	struct list_head ehash;		/* connected children (sk_hash_node) */
	raw_spinlock_t	lock;		/* the table, ehash, accept queues */
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
void inet_unhash(struct sock *sk);
struct sock *inet_csk_accept(struct sock *sk, int flags, int *err, bool kern);
struct sock *tcp_create_openreq_child(struct sock *sk, struct sk_buff *skb);
void tcp_close(struct sock *sk, long timeout);
struct sock *sk_alloc(void);

/* sk->sk_data_ready for TCP (sock_def_readable): wake the readers. */
void sock_def_readable(struct sock *sk);
void tcp_v4_init(void);

#endif /* _NET_SOCK_H */
