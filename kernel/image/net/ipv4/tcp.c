// SPDX-License-Identifier: MIT
/*
 * Reading and writing a socket, after net/ipv4/tcp.c. kpemu's
 * tcp_recvmsg() copies into a kernel buffer and tcp_sendmsg() sends one
 * segment from one (Linux's take a msghdr); a listener stands in for the
 * connection it would have accepted, and answers the peer of the last
 * segment it queued.
 */
#include <linux/kernel.h>
#include <linux/ip.h>
#include <linux/mm.h>
#include <linux/netdevice.h>
#include <linux/slab.h>
#include <linux/tcp.h>
#include <net/checksum.h>
#include <net/sock.h>

/*
 * tcp_recvmsg - copy queued segments to the user buffer @buf. A segment
 * that faults stays queued: the bytes before it are returned, or -EFAULT
 * if there are none, as Linux's skb_copy_datagram_msg() failing does.
 */
int tcp_recvmsg(struct sock *sk, void *buf, size_t len, int flags, int *addr_len)
{
	size_t copied = 0;
	struct sk_buff *skb;
	unsigned long irqflags;

	while (copied < len && (skb = skb_dequeue(&sk->sk_receive_queue))) {
		size_t n = min_t(size_t, skb->len, len - copied);

		if (copy_to_user((char *)buf + copied, skb->data, n)) {
			skb_queue_head(&sk->sk_receive_queue, skb);
			if (!copied)
				return -EFAULT;
			break;
		}
		copied += n;
		spin_lock_irqsave(&sk->sk_receive_queue.lock, irqflags);
		sk->bytes_received += n;
		sk->sk_rmem_alloc -= skb->truesize;
		spin_unlock_irqrestore(&sk->sk_receive_queue.lock, irqflags);
		kfree_skb(skb);	/* any rest of the segment is dropped */
	}
	if (addr_len)
		*addr_len = 0;
	return copied;
}

#define MAX_TCP_HEADER	(sizeof(struct iphdr) + sizeof(struct tcphdr))

/*
 * tcp_sendmsg - send @size bytes of the user buffer @buf to the socket's
 * peer, as one ACK|PSH segment (tcp_write_xmit -> tcp_transmit_skb ->
 * ip_queue_xmit). Returns the bytes queued (those before a fault), or
 * -errno (-EFAULT if the first byte faults).
 */
int tcp_sendmsg(struct sock *sk, const void *buf, size_t size)
{
	struct sk_buff *skb;
	struct tcphdr *th;
	unsigned long flags;
	__be32 daddr;
	__be16 dport;
	u32 seq, ack;
	unsigned long left;

	if (size > SKB_MAX_ALLOC - MAX_TCP_HEADER)
		size = SKB_MAX_ALLOC - MAX_TCP_HEADER;
	if (!sk->peer_addr)
		return -ENOTCONN;
	skb = alloc_skb(MAX_TCP_HEADER + size, GFP_KERNEL);
	if (!skb)
		return -ENOBUFS;
	skb_reserve(skb, MAX_TCP_HEADER);
	left = copy_from_user(skb->data, buf, size);
	if (left == size && size) {
		kfree_skb(skb);
		return -EFAULT;
	}
	size -= left;
	skb_put(skb, size);

	spin_lock_irqsave(&sk->sk_receive_queue.lock, flags);
	daddr = sk->peer_addr;
	dport = sk->peer_port;
	ack = sk->rcv_nxt;
	seq = sk->snd_nxt;
	sk->snd_nxt += size;
	spin_unlock_irqrestore(&sk->sk_receive_queue.lock, flags);
	if (!daddr) {
		kfree_skb(skb);
		return -ENOTCONN;
	}

	/* tcp_transmit_skb(): the header, checksummed over the pseudo-header */
	th = (struct tcphdr *)skb_push(skb, sizeof(*th));
	memset(th, 0, sizeof(*th));
	th->source = htons(sk->skc_num);
	th->dest = dport;
	th->seq = htonl(seq);
	th->ack_seq = htonl(ack);
	th->doff = sizeof(*th) / 4;
	th->ack = 1;
	th->psh = size != 0;
	th->window = htons(sk->sk_rcvbuf);
	th->check = csum_tcpudp_magic(sk->skc_rcv_saddr, daddr, skb->len, IPPROTO_TCP,
				      csum_partial(th, skb->len, 0));
	skb->sk = sk;
	skb->protocol = htons(ETH_P_IP);
	skb->dev = &loopback_dev;
	sk->segs_out++;
	sk->bytes_sent += size;
	if (ip_queue_xmit(sk, skb) != NET_XMIT_SUCCESS)
		return -ENOBUFS;
	return size;
}

/*
 * tcp_close - the last reference to a socket file went: unhash the socket
 * (a listener's unaccepted children go with it), drop what it queued and
 * free it. kpemu sends no FIN; the peer's next segment finds no socket,
 * or the listener again.
 */
void tcp_close(struct sock *sk, long timeout)
{
	struct sock *child, *tmp;
	struct sk_buff *skb;
	unsigned long flags;
	LIST_HEAD(orphans);

	raw_spin_lock_irqsave(&tcp_hashinfo.lock, flags);
	inet_unhash(sk);
	if (sk->skc_state == TCP_LISTEN) {
		/* inet_csk_listen_stop() */
		list_for_each_entry_safe(child, tmp, &sk->sk_accept_queue, sk_accept_node) {
			list_del_init(&child->sk_accept_node);
			inet_unhash(child);
			list_add_tail(&child->sk_accept_node, &orphans);
		}
		sk->sk_ack_backlog = 0;
	}
	sk->skc_state = TCP_CLOSE;
	raw_spin_unlock_irqrestore(&tcp_hashinfo.lock, flags);

	list_for_each_entry_safe(child, tmp, &orphans, sk_accept_node)
		tcp_close(child, 0);
	while ((skb = skb_dequeue(&sk->sk_receive_queue)))
		kfree_skb(skb);
	kfree(sk);
}
