// SPDX-License-Identifier: MIT
/*
 * Socket lookup, after net/ipv4/inet_hashtables.c: a tiny table of bound
 * sockets; an exact (connected) match wins over a listener on the port.
 */
#include <linux/kernel.h>
#include <linux/slab.h>
#include <net/checksum.h>
#include <net/sock.h>

struct inet_hashinfo tcp_hashinfo;

int inet_hash(struct sock *sk)
{
	if (!sk || tcp_hashinfo.count >= INET_LHTABLE_SIZE)
		return -ENOSPC;
	tcp_hashinfo.listening[tcp_hashinfo.count++] = sk;
	return 0;
}

struct sock *inet_create_listener(__be32 addr, u16 port, int rcvbuf)
{
	struct sock *sk = kzalloc(sizeof(*sk), GFP_KERNEL);

	if (!sk)
		return NULL;
	sk->skc_rcv_saddr = addr;
	sk->skc_num = port;
	sk->skc_state = TCP_LISTEN;
	sk->sk_rcvbuf = rcvbuf;
	skb_queue_head_init(&sk->sk_receive_queue);
	init_waitqueue_head(&sk->sk_wq);
	return sk;
}

/* The bound socket on local port @port, or NULL. */
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

struct sock *__inet_lookup(struct inet_hashinfo *hashinfo, struct sk_buff *skb,
			   int doff, __be32 saddr, __be16 sport,
			   __be32 daddr, __be16 dport, int dif)
{
	unsigned short hnum = ntohs(dport);
	struct sock *result = NULL;
	int hiscore = 0;
	unsigned int i;

	for (i = 0; i < hashinfo->count; i++) {
		struct sock *sk = hashinfo->listening[i];
		int score = compute_score(sk, saddr, sport, daddr, hnum);

		if (score > hiscore) {
			result = sk;
			hiscore = score;
		}
	}
	return result;
}
