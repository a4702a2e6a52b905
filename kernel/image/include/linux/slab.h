/* SPDX-License-Identifier: MIT */
/*
 * A small slab allocator with Linux's interface (include/linux/slab.h):
 * caches of fixed-size objects carved from 4 KiB pages that mm/page_alloc.c
 * hands out. Slabs are never returned; objects are. A kmalloc larger than
 * the largest cache gets whole pages (kmalloc_large), returned by kfree.
 */
#ifndef _LINUX_SLAB_H
#define _LINUX_SLAB_H

#include <linux/types.h>

#define PAGE_SHIFT	12
#define PAGE_SIZE	(1UL << PAGE_SHIFT)

#define GFP_KERNEL	0x0cc0u
#define GFP_ATOMIC	0x0a20u
#define __GFP_ZERO	0x100u

#define SLAB_HWCACHE_ALIGN	0x00002000U
#define SLAB_PANIC		0x00040000U

struct kmem_cache {
	const char *name;
	unsigned int object_size;	/* as requested */
	unsigned int size;		/* with alignment */
	unsigned int align;
	unsigned int flags;
	void *freelist;			/* free objects, linked through their first word */
	unsigned long nr_slabs;
	unsigned long nr_objs;		/* objects carved so far */
	unsigned long nr_active;	/* objects in use */
	struct list_head list;		/* slab_caches */
};

/* struct page: one per arena page, as mm_types.h (the part kpemu needs). */
struct page {
	unsigned long flags;
	struct kmem_cache *slab_cache;	/* set while the page is a slab */
	unsigned int order;		/* a large kmalloc's first page: its block's order */
};

#define PG_large	1UL	/* flags: the first page of a large kmalloc */

void *__get_free_pages(gfp_t gfp_mask, unsigned int order);
void free_pages(void *addr, unsigned int order);
struct page *virt_to_page(const void *addr);
void mem_init(void);

struct kmem_cache *kmem_cache_create(const char *name, unsigned int size,
				     unsigned int align, unsigned int flags,
				     void (*ctor)(void *));
void *kmem_cache_alloc(struct kmem_cache *s, gfp_t gfpflags);
void kmem_cache_free(struct kmem_cache *s, void *x);
void *kmalloc(size_t size, gfp_t flags);
void *kzalloc(size_t size, gfp_t flags);
void kfree(const void *objp);
void kmem_cache_init(void);

#endif /* _LINUX_SLAB_H */
