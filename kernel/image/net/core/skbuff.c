// SPDX-License-Identifier: MIT
/*
 * Socket buffers, after net/core/skbuff.c.
 *
 * skbs come from a fixed pool of NR_SKBS heads with SKB_MAX_ALLOC bytes of
 * data each, under a spinlock with IRQs off, not from the slab: a NIC's
 * interrupt handler allocates them and the readers free them on any CPU,
 * while the slab allocator serves pid 1 alone and has no lock. (Linux's
 * page_pool and per-CPU skb caches serve the same end.)
 */
#include <linux/kernel.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>

#define NR_SKBS		512

static struct sk_buff skb_pool[NR_SKBS];
static unsigned char skb_data_pool[NR_SKBS][SKB_MAX_ALLOC] __aligned(64);
static struct sk_buff *skb_free_list;
static DEFINE_SPINLOCK(skb_pool_lock);
u64 nr_skb_alloc_fail;		/* alloc_skb() found the pool empty or the size too big */

struct sk_buff *alloc_skb(unsigned int size, gfp_t gfp_mask)
{
	struct sk_buff *skb;
	unsigned char *data;
	unsigned long flags;

	size = ALIGN(size, 16);
	spin_lock_irqsave(&skb_pool_lock, flags);
	skb = skb_free_list;
	if (skb && size <= SKB_MAX_ALLOC)
		skb_free_list = skb->pool_next;
	else
		skb = NULL;
	spin_unlock_irqrestore(&skb_pool_lock, flags);
	if (!skb) {
		__atomic_fetch_add(&nr_skb_alloc_fail, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	data = skb_data_pool[skb - skb_pool];
	memset(skb, 0, sizeof(*skb));
	skb->truesize = size + sizeof(struct sk_buff);
	skb->head = data;
	skb->data = data;
	skb->tail = data;
	skb->end = data + size;
	return skb;
}

void kfree_skb(struct sk_buff *skb)
{
	unsigned long flags;

	if (!skb)
		return;
	spin_lock_irqsave(&skb_pool_lock, flags);
	skb->pool_next = skb_free_list;
	skb_free_list = skb;
	spin_unlock_irqrestore(&skb_pool_lock, flags);
}

void skb_reserve(struct sk_buff *skb, int len)
{
	skb->data += len;
	skb->tail += len;
}

unsigned char *skb_put(struct sk_buff *skb, unsigned int len)
{
	unsigned char *tmp = skb->tail;

	skb->tail += len;
	skb->len  += len;
	if (unlikely(skb->tail > skb->end))
		panic("skb_put: over: %px:%u put:%u", skb->head, skb->len, len);
	return tmp;
}

unsigned char *skb_push(struct sk_buff *skb, unsigned int len)
{
	skb->data -= len;
	skb->len  += len;
	if (unlikely(skb->data < skb->head))
		panic("skb_push: under: %px:%u put:%u", skb->head, skb->len, len);
	return skb->data;
}

unsigned char *skb_pull(struct sk_buff *skb, unsigned int len)
{
	if (unlikely(len > skb->len))
		return NULL;
	skb->len -= len;
	return skb->data += len;
}

void skb_queue_head_init(struct sk_buff_head *list)
{
	spin_lock_init(&list->lock);
	list->prev = list->next = (struct sk_buff *)list;
	list->qlen = 0;
}

void skb_queue_tail(struct sk_buff_head *list, struct sk_buff *newsk)
{
	struct sk_buff *prev;
	unsigned long flags;

	spin_lock_irqsave(&list->lock, flags);
	prev = list->prev;
	newsk->next = (struct sk_buff *)list;
	newsk->prev = prev;
	prev->next = newsk;
	list->prev = newsk;
	list->qlen++;
	spin_unlock_irqrestore(&list->lock, flags);
}

/* Puts @newsk back at the front (a reader that could not consume it). */
void skb_queue_head(struct sk_buff_head *list, struct sk_buff *newsk)
{
	struct sk_buff *next;
	unsigned long flags;

	spin_lock_irqsave(&list->lock, flags);
	next = list->next;
	newsk->prev = (struct sk_buff *)list;
	newsk->next = next;
	next->prev = newsk;
	list->next = newsk;
	list->qlen++;
	spin_unlock_irqrestore(&list->lock, flags);
}

struct sk_buff *skb_dequeue(struct sk_buff_head *list)
{
	struct sk_buff *skb;
	unsigned long flags;

	spin_lock_irqsave(&list->lock, flags);
	skb = list->next;
	if (skb == (struct sk_buff *)list) {
		spin_unlock_irqrestore(&list->lock, flags);
		return NULL;
	}
	list->next = skb->next;
	skb->next->prev = (struct sk_buff *)list;
	skb->next = skb->prev = NULL;
	list->qlen--;
	spin_unlock_irqrestore(&list->lock, flags);
	return skb;
}

void skb_init(void)
{
	int i;

	for (i = NR_SKBS - 1; i >= 0; i--) {
		skb_pool[i].pool_next = skb_free_list;
		skb_free_list = &skb_pool[i];
	}
}
