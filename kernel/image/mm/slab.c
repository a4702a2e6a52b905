// SPDX-License-Identifier: MIT
/*
 * A simple slab allocator (after mm/slab_common.c and mm/slob.c): each cache
 * carves whole pages into objects and keeps freed objects on a free list
 * linked through their first word. kmalloc() picks the smallest fitting
 * kmalloc-<size> cache, or, above the largest, whole pages
 * (kmalloc_large); kfree() finds the cache, or the block's order, from the
 * page.
 */
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <trace/events/kmem.h>

static LIST_HEAD(slab_caches);
/* one lock for every cache: system calls allocate on every CPU */
static DEFINE_RAW_SPINLOCK(slab_lock);

#define KMALLOC_SHIFT_LOW	5	/* 32 bytes */
#define KMALLOC_SHIFT_HIGH	11	/* 2048 bytes */

static struct kmem_cache kmem_cache_boot = {
	.name = "kmem_cache",
	.object_size = sizeof(struct kmem_cache),
	.size = ALIGN(sizeof(struct kmem_cache), 16),
	.align = 16,
};

static struct kmem_cache *kmalloc_caches[KMALLOC_SHIFT_HIGH + 1];

static const char *const kmalloc_names[KMALLOC_SHIFT_HIGH + 1] = {
	[5] = "kmalloc-32", [6] = "kmalloc-64", [7] = "kmalloc-128",
	[8] = "kmalloc-256", [9] = "kmalloc-512", [10] = "kmalloc-1k",
	[11] = "kmalloc-2k",
};

static int cache_grow(struct kmem_cache *s)
{
	char *page = __get_free_pages(GFP_KERNEL, 0);
	unsigned long off;

	if (!page)
		return -ENOMEM;
	*virt_to_page(page) = (struct page){ .slab_cache = s };
	s->nr_slabs++;
	for (off = 0; off + s->size <= PAGE_SIZE; off += s->size) {
		void **obj = (void **)(page + off);

		*obj = s->freelist;
		s->freelist = obj;
		s->nr_objs++;
	}
	return 0;
}

void *kmem_cache_alloc(struct kmem_cache *s, gfp_t gfpflags)
{
	unsigned long flags;
	void **obj;

	raw_spin_lock_irqsave(&slab_lock, flags);
	if (!s->freelist && cache_grow(s)) {
		raw_spin_unlock_irqrestore(&slab_lock, flags);
		return NULL;
	}
	obj = s->freelist;
	s->freelist = *obj;
	s->nr_active++;
	raw_spin_unlock_irqrestore(&slab_lock, flags);
	if (gfpflags & __GFP_ZERO)
		memset(obj, 0, s->object_size);
	return obj;
}

void kmem_cache_free(struct kmem_cache *s, void *x)
{
	void **obj = x;
	unsigned long flags;

	if (!x)
		return;
	raw_spin_lock_irqsave(&slab_lock, flags);
	*obj = s->freelist;
	s->freelist = obj;
	s->nr_active--;
	raw_spin_unlock_irqrestore(&slab_lock, flags);
}

struct kmem_cache *kmem_cache_create(const char *name, unsigned int size,
				     unsigned int align, unsigned int flags,
				     void (*ctor)(void *))
{
	struct kmem_cache *s = kmem_cache_alloc(&kmem_cache_boot, __GFP_ZERO);

	if (!s) {
		if (flags & SLAB_PANIC)
			panic("kmem_cache_create: Failed to create slab '%s'", name);
		return NULL;
	}
	if (align < 16)
		align = 16;
	if (size < sizeof(void *))
		size = sizeof(void *);
	s->name = name;
	s->object_size = size;
	s->align = align;
	s->size = ALIGN(size, align);
	s->flags = flags;
	list_add_tail(&s->list, &slab_caches);
	return s;
}

/* kmalloc_large: a block of whole pages, its order kept in its first page. */
static void *kmalloc_large(size_t size, gfp_t flags, unsigned long caller)
{
	unsigned int order = 0;
	void *p;

	while ((PAGE_SIZE << order) < size)
		order++;
	p = __get_free_pages(flags, order);
	if (p)
		*virt_to_page(p) = (struct page){ .flags = PG_large, .order = order };
	trace_kmalloc(caller, p, size, PAGE_SIZE << order, flags, NUMA_NO_NODE);
	return p;
}

/*
 * kmalloc's work, with the caller its kmalloc event names (Linux's
 * _RET_IP_ of the kmalloc that its kzalloc inlines).
 */
static void *__kmalloc(size_t size, gfp_t flags, unsigned long caller)
{
	unsigned int i;
	void *p;

	for (i = KMALLOC_SHIFT_LOW; i <= KMALLOC_SHIFT_HIGH; i++)
		if (size <= (1UL << i)) {
			p = kmem_cache_alloc(kmalloc_caches[i], flags);
			trace_kmalloc(caller, p, size, kmalloc_caches[i]->size, flags, NUMA_NO_NODE);
			return p;
		}
	return kmalloc_large(size, flags, caller);
}

void *kmalloc(size_t size, gfp_t flags)
{
	return __kmalloc(size, flags, (unsigned long)__builtin_return_address(0));
}

void *kzalloc(size_t size, gfp_t flags)
{
	return __kmalloc(size, flags | __GFP_ZERO, (unsigned long)__builtin_return_address(0));
}

void kfree(const void *objp)
{
	struct page *page;

	trace_kfree((unsigned long)__builtin_return_address(0), objp);
	if (!objp)
		return;
	page = virt_to_page(objp);
	if (page && (page->flags & PG_large) && !((unsigned long)objp & (PAGE_SIZE - 1))) {
		page->flags = 0;
		free_pages((void *)objp, page->order);
		return;
	}
	if (!page || !page->slab_cache)
		panic("kfree: bad pointer %px", objp);
	kmem_cache_free(page->slab_cache, (void *)objp);
}

void kmem_cache_init(void)
{
	unsigned int i;

	list_add_tail(&kmem_cache_boot.list, &slab_caches);
	for (i = KMALLOC_SHIFT_LOW; i <= KMALLOC_SHIFT_HIGH; i++)
		kmalloc_caches[i] = kmem_cache_create(kmalloc_names[i], 1U << i,
						      16, SLAB_PANIC, NULL);
}
