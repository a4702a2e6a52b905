// SPDX-License-Identifier: MIT
/*
 * Socket lookup, after net/ipv4/inet_hashtables.c: a tiny table of
 * listeners and a list of connected sockets (ehash); an exact (connected)
 * match wins over a listener on the port. tcp_hashinfo.lock covers both
 * and the listeners' accept queues; tcp_v4_rcv() holds it from the lookup
 * until the segment is queued, so a socket is not freed under it.
 */
#include <linux/kernel.h>
#include <linux/slab.h>
#include <net/checksum.h>
#include <net/sock.h>

struct inet_hashinfo tcp_hashinfo = {
	.ehash	= LIST_HEAD_INIT(tcp_hashinfo.ehash),
	.lock	= __RAW_SPIN_LOCK_UNLOCKED(tcp_hashinfo.lock),
};

/* sk_alloc(): a closed TCP socket, in no table. */
struct sock *sk_alloc(void)
{
	struct sock *sk = kzalloc(sizeof(*sk), GFP_ATOMIC);

	if (!sk)
		return NULL;
	sk->skc_state = TCP_CLOSE;
	sk->sk_rcvbuf = 8192;
	skb_queue_head_init(&sk->sk_receive_queue);
	init_waitqueue_head(&sk->sk_wq);
	INIT_LIST_HEAD(&sk->sk_accept_queue);
	INIT_LIST_HEAD(&sk->sk_accept_node);
	INIT_LIST_HEAD(&sk->sk_hash_node);
	return sk;
}

/* Hashes a listener; -EADDRINUSE if its port has one, -ENOSPC if full. */
int inet_hash(struct sock *sk)
{
	unsigned long flags;
	unsigned int i;
	int err = 0;

	if (!sk)
		return -ENOSPC;
	raw_spin_lock_irqsave(&tcp_hashinfo.lock, flags);
	for (i = 0; i < tcp_hashinfo.count; i++)
		if (tcp_hashinfo.listening[i]->skc_num == sk->skc_num)
			err = -EADDRINUSE;
	if (!err && tcp_hashinfo.count >= INET_LHTABLE_SIZE)
		err = -ENOSPC;
	if (!err)
		tcp_hashinfo.listening[tcp_hashinfo.count++] = sk;
	raw_spin_unlock_irqrestore(&tcp_hashinfo.lock, flags);
	return err;
}

/* Takes a listener or a connected socket out of the tables. Lock held. */
void inet_unhash(struct sock *sk)
{
	unsigned int i;

	if (sk->skc_state != TCP_LISTEN) {
		list_del_init(&sk->sk_hash_node);
		return;
	}
	for (i = 0; i < tcp_hashinfo.count; i++)
		if (tcp_hashinfo.listening[i] == sk) {
			tcp_hashinfo.listening[i] =
				tcp_hashinfo.listening[--tcp_hashinfo.count];
			tcp_hashinfo.listening[tcp_hashinfo.count] = NULL;
			break;
		}
}

struct sock *inet_create_listener(__be32 addr, u16 port, int rcvbuf)
{
	struct sock *sk = sk_alloc();

	if (!sk)
		return NULL;
	sk->skc_rcv_saddr = addr;
	sk->skc_num = port;
	sk->skc_state = TCP_LISTEN;
	sk->sk_rcvbuf = rcvbuf;
	return sk;
}

/* The listener on local port @port, or NULL. */
struct sock *inet_lookup_listener(u16 port)
{
	unsigned int i;

	for (i = 0; i < tcp_hashinfo.count; i++)
		if (tcp_hashinfo.listening[i]->skc_num == port)
			return tcp_hashinfo.listening[i];
	return NULL;
}

static inline int compute_score(struct sock *sk, __be32 saddr, __be16 sport,
				__be32 daddr, unsigned short hnum)
{
	int score = -1;

	if (sk->skc_num != hnum)
		return -1;
	if (sk->skc_rcv_saddr && sk->skc_rcv_saddr != daddr)
		return -1;
	score = 1;
	if (sk->skc_daddr) {
		if (sk->skc_daddr != saddr || sk->skc_dport != sport)
			return -1;
		score += 4;
	}
	return score;
}

/* The best match for a segment; the caller holds hashinfo->lock. */
struct sock *__inet_lookup(struct inet_hashinfo *hashinfo, struct sk_buff *skb,
			   int doff, __be32 saddr, __be16 sport,
			   __be32 daddr, __be16 dport, int dif)
{
	unsigned short hnum = ntohs(dport);
	struct sock *sk, *result = NULL;
	int hiscore = 0;
	unsigned int i;

	/* __inet_lookup_established() */
	list_for_each_entry(sk, &hashinfo->ehash, sk_hash_node)
		if (compute_score(sk, saddr, sport, daddr, hnum) > 1)
			return sk;
	/* __inet_lookup_listener() */
	for (i = 0; i < hashinfo->count; i++) {
		int score;

		sk = hashinfo->listening[i];
		score = compute_score(sk, saddr, sport, daddr, hnum);
		if (score > hiscore) {
			result = sk;
			hiscore = score;
		}
	}
	return result;
}
