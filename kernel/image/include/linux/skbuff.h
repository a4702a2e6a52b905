/* SPDX-License-Identifier: MIT */
/* Socket buffers, as include/linux/skbuff.h (the part kpemu needs). */
#ifndef _LINUX_SKBUFF_H
#define _LINUX_SKBUFF_H

#include <linux/types.h>
#include <linux/spinlock.h>

struct sock;
struct net_device;

struct sk_buff {
	struct sk_buff		*next;
	struct sk_buff		*prev;
	struct sock		*sk;
	struct net_device	*dev;
	unsigned int		len;		/* bytes from data to tail */
	unsigned int		truesize;
	__be16			protocol;
	u16			transport_header;	/* offsets from head */
	u16			network_header;
	u16			mac_header;
	u8			pkt_type;
	u8			ip_summed;
	u16			_pad;
	u32			seq;		/* TCP_SKB_CB(skb)->seq */
	u32			end_seq;
	unsigned char		*head;
	unsigned char		*data;
	unsigned char		*tail;
	unsigned char		*end;
	struct sk_buff		*pool_next;	/* the skb pool's free list */
};

/* A queue of skbs; skb_queue_tail/skb_dequeue take its lock, IRQs off,
 * since a NIC's interrupt handler queues while a reader dequeues. */
struct sk_buff_head {
	struct sk_buff	*next;
	struct sk_buff	*prev;
	u32		qlen;
	spinlock_t	lock;
};

#define CHECKSUM_NONE		0
#define CHECKSUM_UNNECESSARY	1

struct sk_buff *alloc_skb(unsigned int size, gfp_t priority);
void kfree_skb(struct sk_buff *skb);
void skb_init(void);
unsigned char *skb_put(struct sk_buff *skb, unsigned int len);
unsigned char *skb_pull(struct sk_buff *skb, unsigned int len);
unsigned char *skb_push(struct sk_buff *skb, unsigned int len);
void skb_reserve(struct sk_buff *skb, int len);
void skb_queue_head_init(struct sk_buff_head *list);
void skb_queue_tail(struct sk_buff_head *list, struct sk_buff *newsk);
void skb_queue_head(struct sk_buff_head *list, struct sk_buff *newsk);
struct sk_buff *skb_dequeue(struct sk_buff_head *list);

static inline int skb_queue_empty(const struct sk_buff_head *list)
{
	return READ_ONCE(list->next) == (const struct sk_buff *)list;
}

/* Largest alloc_skb(): skbs come from a fixed pool (net/core/skbuff.c). */
#define SKB_MAX_ALLOC	512

static inline unsigned char *skb_network_header(const struct sk_buff *skb)
{
	return skb->head + skb->network_header;
}

static inline unsigned char *skb_transport_header(const struct sk_buff *skb)
{
	return skb->head + skb->transport_header;
}

static inline void skb_reset_network_header(struct sk_buff *skb)
{
	skb->network_header = skb->data - skb->head;
}

static inline void skb_reset_transport_header(struct sk_buff *skb)
{
	skb->transport_header = skb->data - skb->head;
}

static inline int pskb_may_pull(struct sk_buff *skb, unsigned int len)
{
	return len <= skb->len;
}

#endif /* _LINUX_SKBUFF_H */
