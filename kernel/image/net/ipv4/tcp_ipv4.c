// SPDX-License-Identifier: MIT
/*
 * TCP receive, after net/ipv4/tcp_ipv4.c: tcp_v4_rcv() checks the header
 * and the checksum over the pseudo-header, finds the socket with
 * __inet_lookup() and queues the payload (tcp_v4_do_rcv()), then wakes
 * the socket's readers (sk_data_ready). It runs in pid 1's context (the
 * packet generator) or in a NIC's interrupt handler, under
 * tcp_hashinfo.lock from the lookup on (the socket is not freed under
 * it; see inet_hashtables.c). A new flow to an accepting listener gets its
 * own socket (inet_connection_sock.c). The queue's lock covers the queue
 * and sk_rmem_alloc, and the two counters the host reads
 * are updated atomically.
 */
#include <linux/kernel.h>
#include <linux/ip.h>
#include <linux/netdevice.h>
#include <linux/tcp.h>
#include <net/checksum.h>
#include <linux/sched.h>
#include <net/sock.h>

struct tcp_mib tcp_statistics;

u64 nr_tcp_rcv;		/* segments tcp_v4_rcv() was given */
u64 nr_tcp_csum_bad;	/* of those, failed the checksum */

static __sum16 tcp_v4_check(int len, __be32 saddr, __be32 daddr, __wsum base)
{
	return csum_tcpudp_magic(saddr, daddr, len, IPPROTO_TCP, base);
}

/*
 * tcp_v4_checksum_init(): verify the full checksum now (no offload).
 * Its symbol is the name GCC's IPA-SRA gives such a static helper when it
 * clones it with fewer parameters (tcp_v4_checksum_init.isra.0, as
 * arm64 distribution kernels show many of); clang does not clone, so the
 * label spells it, and kallsyms and kprobe_events meet a dotted name as
 * they do on Linux (the "p_<name with dots as _>_0" event name).
 */
static noinline int tcp_v4_checksum_init(struct sk_buff *skb)
	__asm__("tcp_v4_checksum_init.isra.0");
static noinline int tcp_v4_checksum_init(struct sk_buff *skb)
{
	const struct iphdr *iph = ip_hdr(skb);

	if (tcp_v4_check(skb->len, iph->saddr, iph->daddr,
			 csum_partial(skb->data, skb->len, 0)))
		return -EINVAL;
	skb->ip_summed = CHECKSUM_UNNECESSARY;
	return 0;
}

void sock_def_readable(struct sock *sk)
{
	wake_up(&sk->sk_wq);
}

/* The socket must have it's spinlock held when we get
 * here, unless it is a TCP_LISTEN socket.
 */
int tcp_v4_do_rcv(struct sock *sk, struct sk_buff *skb)
{
	const struct tcphdr *th = tcp_hdr(skb);
	unsigned int hdrlen = __tcp_hdrlen(th);
	unsigned int payload = skb->len - hdrlen;
	unsigned long flags;

	sk->segs_in++;
	if (payload == 0 || th->rst || th->syn) {
		kfree_skb(skb);
		return 0;
	}
	spin_lock_irqsave(&sk->sk_receive_queue.lock, flags);
	if (sk->sk_rmem_alloc + (int)skb->truesize > sk->sk_rcvbuf) {
		sk->sk_drops++;
		spin_unlock_irqrestore(&sk->sk_receive_queue.lock, flags);
		kfree_skb(skb);
		return 0;
	}
	sk->sk_rmem_alloc += skb->truesize;
	sk->rcv_nxt = skb->end_seq;
	sk->peer_addr = ip_hdr(skb)->saddr;
	sk->peer_port = th->source;
	spin_unlock_irqrestore(&sk->sk_receive_queue.lock, flags);

	/* tcp_queue_rcv(): the payload stays in the skb on the queue */
	skb_pull(skb, hdrlen);
	skb->sk = sk;
	skb_queue_tail(&sk->sk_receive_queue, skb);
	sock_def_readable(sk);
	return 0;
}

/*
 *	From tcp_input.c
 */
int tcp_v4_rcv(struct sk_buff *skb)
{
	const struct iphdr *iph;
	const struct tcphdr *th;
	unsigned long flags;
	struct sock *sk;
	int ret;

	__atomic_fetch_add(&nr_tcp_rcv, 1, __ATOMIC_RELAXED);
	tcp_statistics.InSegs++;

	if (!pskb_may_pull(skb, sizeof(struct tcphdr)))
		goto discard_it;

	th = tcp_hdr(skb);

	if (unlikely(th->doff < sizeof(struct tcphdr) / 4))
		goto bad_packet;
	if (!pskb_may_pull(skb, th->doff * 4))
		goto discard_it;

	/* An explanation is required here, I think.
	 * Packet length and doff are validated by header prediction,
	 * provided case of th->doff==0 is eliminated.
	 * So, we defer the checks. */

	if (tcp_v4_checksum_init(skb))
		goto csum_error;

	iph = ip_hdr(skb);
	skb->seq = ntohl(th->seq);
	skb->end_seq = skb->seq + th->syn + th->fin + skb->len - th->doff * 4;

	raw_spin_lock_irqsave(&tcp_hashinfo.lock, flags);
	sk = __inet_lookup(&tcp_hashinfo, skb, __tcp_hdrlen(th),
			   iph->saddr, th->source, iph->daddr, th->dest,
			   skb->dev->ifindex);
	if (!sk) {
		raw_spin_unlock_irqrestore(&tcp_hashinfo.lock, flags);
		goto no_tcp_socket;
	}
	if (sk->skc_state == TCP_LISTEN && sk->sk_max_ack_backlog) {
		/* tcp_v4_hnd_req(): a new flow to an accepting listener */
		struct sock *nsk = NULL;

		if (skb->len > th->doff * 4 && !th->rst && !th->syn)
			nsk = tcp_create_openreq_child(sk, skb);
		if (!nsk) {
			sk->segs_in++;
			if (skb->len > th->doff * 4)
				sk->sk_drops++;
			raw_spin_unlock_irqrestore(&tcp_hashinfo.lock, flags);
			goto discard_it;
		}
		tcp_v4_do_rcv(nsk, skb);
		sock_def_readable(sk);	/* sk_data_ready: the accept queue grew */
		raw_spin_unlock_irqrestore(&tcp_hashinfo.lock, flags);
		return 0;
	}
	ret = tcp_v4_do_rcv(sk, skb);
	raw_spin_unlock_irqrestore(&tcp_hashinfo.lock, flags);
	return ret;

no_tcp_socket:
	/* tcp_v4_send_reset() */
	tcp_statistics.OutRsts++;
	goto discard_it;

csum_error:
	__atomic_fetch_add(&nr_tcp_csum_bad, 1, __ATOMIC_RELAXED);
	tcp_statistics.InCsumErrors++;
bad_packet:
	tcp_statistics.InErrs++;
discard_it:
	/* Discard frame. */
	kfree_skb(skb);
	return 0;
}

/*
 * The kernel's own listeners, drained by the workload (init/workload.c);
 * port 22 is user space's: /bin/sshd listens there.
 */
void tcp_v4_init(void)
{
	static const u16 ports[] = { 80, 443, 8080 };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ports); i++)
		inet_hash(inet_create_listener(loopback_dev.ip_addr, ports[i], 8192));
}
