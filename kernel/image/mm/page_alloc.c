// SPDX-License-Identifier: MIT
/*
 * Pages for the slab allocator: a static arena of NR_PAGES pages in .bss,
 * handed out in order and never returned (slabs stay with their cache).
 */
#include <linux/kernel.h>
#include <linux/slab.h>

#define NR_PAGES	64	/* 256 KiB */

static char page_arena[NR_PAGES * PAGE_SIZE] __aligned(PAGE_SIZE);
static struct page mem_map[NR_PAGES];
static unsigned long nr_free_pages = NR_PAGES;
static unsigned long next_free_pfn;

void *__get_free_pages(gfp_t gfp_mask, unsigned int order)
{
	unsigned long n = 1UL << order;
	void *p;

	if (n > nr_free_pages)
		return NULL;
	p = page_arena + next_free_pfn * PAGE_SIZE;
	next_free_pfn += n;
	nr_free_pages -= n;
	if (gfp_mask & __GFP_ZERO)
		memset(p, 0, n * PAGE_SIZE);
	return p;
}

struct page *virt_to_page(const void *addr)
{
	unsigned long off = (const char *)addr - page_arena;

	if ((const char *)addr < page_arena || off >= sizeof(page_arena))
		return NULL;
	return &mem_map[off >> PAGE_SHIFT];
}

void mem_init(void)
{
	pr_info("Memory: %luK/%luK available (slab arena at %px)\n",
		nr_free_pages * (PAGE_SIZE / 1024),
		(unsigned long)NR_PAGES * (PAGE_SIZE / 1024), page_arena);
}
