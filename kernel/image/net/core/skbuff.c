// SPDX-License-Identifier: MIT
/* Socket buffers, after net/core/skbuff.c. */
#include <linux/kernel.h>
#include <linux/skbuff.h>
#include <linux/slab.h>

static struct kmem_cache *skbuff_head_cache;

struct sk_buff *alloc_skb(unsigned int size, gfp_t gfp_mask)
{
	struct sk_buff *skb;
	unsigned char *data;

	skb = kmem_cache_alloc(skbuff_head_cache, gfp_mask);
	if (!skb)
		return NULL;
	size = ALIGN(size, 16);
	data = kmalloc(size, gfp_mask);
	if (!data) {
		kmem_cache_free(skbuff_head_cache, skb);
		return NULL;
	}
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
	if (!skb)
		return;
	kfree(skb->head);
	kmem_cache_free(skbuff_head_cache, skb);
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

unsigned char *skb_pull(struct sk_buff *skb, unsigned int len)
{
	if (unlikely(len > skb->len))
		return NULL;
	skb->len -= len;
	return skb->data += len;
}

void skb_queue_head_init(struct sk_buff_head *list)
{
	list->prev = list->next = (struct sk_buff *)list;
	list->qlen = 0;
}

void skb_queue_tail(struct sk_buff_head *list, struct sk_buff *newsk)
{
	struct sk_buff *prev = list->prev;

	newsk->next = (struct sk_buff *)list;
	newsk->prev = prev;
	prev->next = newsk;
	list->prev = newsk;
	list->qlen++;
}

struct sk_buff *skb_dequeue(struct sk_buff_head *list)
{
	struct sk_buff *skb = list->next;

	if (skb == (struct sk_buff *)list)
		return NULL;
	list->next = skb->next;
	skb->next->prev = (struct sk_buff *)list;
	skb->next = skb->prev = NULL;
	list->qlen--;
	return skb;
}

void skb_init(void)
{
	skbuff_head_cache = kmem_cache_create("skbuff_head_cache",
					      sizeof(struct sk_buff), 16,
					      SLAB_HWCACHE_ALIGN | SLAB_PANIC,
					      NULL);
}
