// SPDX-License-Identifier: MIT
/*
 * Pages for the slab allocator: a static arena of NR_PAGES pages in .bss,
 * handed out in order and never returned (slabs stay with their cache).
 * Both arenas are handed out through the linear map (lm_alias), so kernel
 * objects have Linux's 0xffff0000... addresses.
 *
 * Pages for user memory and page tables: a pool of NR_POOL_PAGES in
 * .bss..pgpool (kpemu.lds places it after .bss; head.S does not clear it,
 * so boot does not pay for 6 MiB of stores: get_zeroed_page() zeroes what
 * it hands out). Freed pages go on a LIFO free list linked through their
 * first word, so that a run's allocations depend only on the order of
 * allocations and frees. page_alloc_lock guards both.
 */
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#define NR_PAGES	64	/* 256 KiB */

static char page_arena_image[NR_PAGES * PAGE_SIZE] __aligned(PAGE_SIZE);
/* pages are handed out at their linear-map address, as Linux's are */
#define page_arena	((char *)lm_alias(page_arena_image))
static struct page mem_map[NR_PAGES];
static unsigned long nr_free_pages = NR_PAGES;
static unsigned long next_free_pfn;

#define NR_POOL_PAGES	1536	/* 6 MiB */

static char page_pool_image[NR_POOL_PAGES * PAGE_SIZE] __aligned(PAGE_SIZE)
	__section(".bss..pgpool");
#define page_pool	((char *)lm_alias(page_pool_image))
static unsigned long next_pool_pfn;
static void *pool_free_list;
u64 nr_free_user_pages = NR_POOL_PAGES;
static DEFINE_RAW_SPINLOCK(page_alloc_lock);

void *get_zeroed_page(gfp_t gfp_mask)
{
	unsigned long flags;
	void *p = NULL;

	raw_spin_lock_irqsave(&page_alloc_lock, flags);
	if (pool_free_list) {
		p = pool_free_list;
		pool_free_list = *(void **)p;
	} else if (next_pool_pfn < NR_POOL_PAGES) {
		p = page_pool + next_pool_pfn++ * PAGE_SIZE;
	}
	if (p)
		nr_free_user_pages--;
	raw_spin_unlock_irqrestore(&page_alloc_lock, flags);
	if (p)
		memset(p, 0, PAGE_SIZE);
	return p;
}

void free_page(void *addr)
{
	unsigned long flags;

	if (!addr)
		return;
	if ((char *)addr < page_pool || (char *)addr >= page_pool + sizeof(page_pool_image))
		panic("free_page: %px is not a pool page", addr);
	raw_spin_lock_irqsave(&page_alloc_lock, flags);
	*(void **)addr = pool_free_list;
	pool_free_list = addr;
	nr_free_user_pages++;
	raw_spin_unlock_irqrestore(&page_alloc_lock, flags);
}

void *__get_free_pages(gfp_t gfp_mask, unsigned int order)
{
	unsigned long n = 1UL << order;
	unsigned long flags;
	void *p;

	raw_spin_lock_irqsave(&page_alloc_lock, flags);
	if (n > nr_free_pages) {
		raw_spin_unlock_irqrestore(&page_alloc_lock, flags);
		return NULL;
	}
	p = page_arena + next_free_pfn * PAGE_SIZE;
	next_free_pfn += n;
	nr_free_pages -= n;
	raw_spin_unlock_irqrestore(&page_alloc_lock, flags);
	if (gfp_mask & __GFP_ZERO)
		memset(p, 0, n * PAGE_SIZE);
	return p;
}

struct page *virt_to_page(const void *addr)
{
	unsigned long off = (const char *)addr - page_arena;

	if ((const char *)addr < page_arena || off >= sizeof(page_arena_image))
		return NULL;
	return &mem_map[off >> PAGE_SHIFT];
}

void mem_init(void)
{
	pr_info("Memory: %luK/%luK available (slab arena at %px)\n",
		nr_free_pages * (PAGE_SIZE / 1024),
		(unsigned long)NR_PAGES * (PAGE_SIZE / 1024), page_arena);
	pr_info("Memory: %luK user page pool at %px\n",
		(unsigned long)NR_POOL_PAGES * (PAGE_SIZE / 1024), page_pool);
}
