// SPDX-License-Identifier: MIT
/*
 * Reading a socket's receive queue, after net/ipv4/tcp.c. kpemu's
 * tcp_recvmsg() copies into a kernel buffer (Linux's takes a msghdr).
 */
#include <linux/kernel.h>
#include <linux/slab.h>
#include <net/sock.h>

int tcp_recvmsg(struct sock *sk, void *buf, size_t len, int flags, int *addr_len)
{
	size_t copied = 0;
	struct sk_buff *skb;

	while (copied < len && (skb = skb_dequeue(&sk->sk_receive_queue))) {
		size_t n = min_t(size_t, skb->len, len - copied);

		memcpy((char *)buf + copied, skb->data, n);
		copied += n;
		sk->bytes_received += n;
		sk->sk_rmem_alloc -= skb->truesize;
		kfree_skb(skb);	/* any rest of the segment is dropped */
	}
	if (addr_len)
		*addr_len = 0;
	return copied;
}
