// SPDX-License-Identifier: MIT
/*
 * Accepting connections, after net/ipv4/inet_connection_sock.c and
 * tcp_minisocks.c. kpemu's TCP has no handshake: the first data segment
 * of a new flow to an accepting listener (one that listen(2) made) makes
 * the connection's child socket at once (tcp_create_openreq_child), which
 * goes on the listener's accept queue (inet_csk_reqsk_queue_add) and
 * wakes the listener's wait queue; inet_csk_accept() sleeps there until a
 * child is queued and takes it.
 */
#include <linux/kernel.h>
#include <linux/fs.h>
#include <linux/ip.h>
#include <linux/sched.h>
#include <linux/tcp.h>
#include <linux/wait.h>
#include <net/sock.h>

/*
 * The child for the flow of @skb to listener @sk, hashed and queued for
 * accept(), or NULL (a full accept queue, no memory). Called by
 * tcp_v4_rcv() with tcp_hashinfo.lock held.
 */
struct sock *tcp_create_openreq_child(struct sock *sk, struct sk_buff *skb)
{
	const struct iphdr *iph = ip_hdr(skb);
	const struct tcphdr *th = tcp_hdr(skb);
	struct sock *child;

	if (sk->sk_ack_backlog >= sk->sk_max_ack_backlog)
		return NULL;	/* sk_acceptq_is_full(): LINUX_MIB_LISTENOVERFLOWS */
	child = sk_alloc();
	if (!child)
		return NULL;
	child->skc_daddr = iph->saddr;
	child->skc_dport = th->source;
	child->skc_rcv_saddr = iph->daddr;
	child->skc_num = sk->skc_num;
	child->skc_state = TCP_ESTABLISHED;
	child->sk_rcvbuf = sk->sk_rcvbuf;
	child->peer_addr = iph->saddr;
	child->peer_port = th->source;
	child->snd_nxt = skb->seq ^ 0x6b70656d;	/* our ISN, as if chosen at SYN-ACK */
	list_add_tail(&child->sk_hash_node, &tcp_hashinfo.ehash);
	/* inet_csk_reqsk_queue_add() */
	list_add_tail(&child->sk_accept_node, &sk->sk_accept_queue);
	sk->sk_ack_backlog++;
	return child;
}

static bool reqsk_queue_empty(struct sock *sk)
{
	return READ_ONCE(sk->sk_accept_queue.next) == &sk->sk_accept_queue;
}

/*
 * inet_csk_accept - wait for a connection on listener @sk and take it.
 * Sleeps on the listener's wait queue (unless @flags has O_NONBLOCK)
 * until tcp_v4_rcv() queues a child; returns the child, or NULL with
 * *err set (-EINVAL: not listening, -EAGAIN: none and non-blocking).
 */
struct sock *inet_csk_accept(struct sock *sk, int flags, int *err, bool kern)
{
	struct sock *child = NULL;
	unsigned long irqflags;

	for (;;) {
		if (sk->skc_state != TCP_LISTEN) {
			*err = -EINVAL;
			return NULL;
		}
		raw_spin_lock_irqsave(&tcp_hashinfo.lock, irqflags);
		if (!list_empty(&sk->sk_accept_queue)) {
			child = list_first_entry(&sk->sk_accept_queue, struct sock,
						 sk_accept_node);
			list_del_init(&child->sk_accept_node);
			sk->sk_ack_backlog--;
		}
		raw_spin_unlock_irqrestore(&tcp_hashinfo.lock, irqflags);
		if (child) {
			*err = 0;
			return child;
		}
		if (flags & O_NONBLOCK) {
			*err = -EAGAIN;
			return NULL;
		}
		/* inet_csk_wait_for_connect() */
		wait_event(sk->sk_wq, !reqsk_queue_empty(sk) ||
			   sk->skc_state != TCP_LISTEN);
	}
}
