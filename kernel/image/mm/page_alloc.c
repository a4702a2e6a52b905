// SPDX-License-Identifier: MIT
/*
 * Kernel pages (the slab's, large kmallocs'): first a static arena of
 * NR_PAGES pages in .bss, enough for boot, then the free RAM above the
 * modules' area up to the device tree, which the host puts in the last
 * 2 MiB of RAM: what memblock would hand Linux's buddy allocator, found
 * in mem_init. Without it, 256 KiB held about 1,000 tracefs directories
 * and every later allocation failed. Each zone hands pages out in order;
 * a freed block (a large kmalloc's) goes on a free list of its order for
 * the next request of that order. Slabs are never returned. Both zones
 * are handed out through the linear map (lm_alias, __va), so kernel
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
#include <asm/memory.h>

#define DIV_ROUND_UP(n, d)	(((n) + (d) - 1) / (d))

#define NR_PAGES	64	/* 256 KiB */
#define MAX_ORDER	11

static char page_arena_image[NR_PAGES * PAGE_SIZE] __aligned(PAGE_SIZE);
static struct page mem_map[NR_PAGES];

/* A run of pages handed out in order, with a struct page for each. */
struct zone {
	char *start;
	unsigned long nr_pages, next_pfn;
	struct page *map;
};

/* the arena, then high RAM (empty until mem_init finds it) */
static struct zone zones[2];
static void *free_blocks[MAX_ORDER];	/* freed blocks by order, linked through their first word */
static unsigned long nr_free_pages;	/* in both zones, never handed out */

extern u64 __fdt_pointer;

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
	unsigned long n = 1UL << order, flags;
	void *p = NULL;
	int i;

	if (order >= MAX_ORDER)
		return NULL;
	raw_spin_lock_irqsave(&page_alloc_lock, flags);
	if (free_blocks[order]) {
		p = free_blocks[order];
		free_blocks[order] = *(void **)p;
	}
	for (i = 0; !p && i < (int)ARRAY_SIZE(zones); i++) {
		struct zone *z = &zones[i];

		if (z->nr_pages - z->next_pfn >= n) {
			p = z->start + z->next_pfn * PAGE_SIZE;
			z->next_pfn += n;
			nr_free_pages -= n;
		}
	}
	raw_spin_unlock_irqrestore(&page_alloc_lock, flags);
	if (p && (gfp_mask & __GFP_ZERO))
		memset(p, 0, n * PAGE_SIZE);
	return p;
}

/* free_pages - give back a block that __get_free_pages(order) returned. */
void free_pages(void *addr, unsigned int order)
{
	unsigned long flags;

	if (!addr)
		return;
	if (!virt_to_page(addr) || order >= MAX_ORDER)
		panic("free_pages: %px (order %u) is not a kernel page", addr, order);
	raw_spin_lock_irqsave(&page_alloc_lock, flags);
	*(void **)addr = free_blocks[order];
	free_blocks[order] = addr;
	raw_spin_unlock_irqrestore(&page_alloc_lock, flags);
}

struct page *virt_to_page(const void *addr)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(zones); i++) {
		const struct zone *z = &zones[i];
		unsigned long off = (const char *)addr - z->start;

		if ((const char *)addr >= z->start && off < z->nr_pages * PAGE_SIZE)
			return &z->map[off >> PAGE_SHIFT];
	}
	return NULL;
}

/*
 * The high zone: RAM from the end of the modules' area to the device tree,
 * its struct pages at its start (as Linux's memmap comes from memblock).
 * RAM starts zeroed and nothing reads a struct page before its page is
 * handed out, so they need no clearing.
 */
static void high_zone_init(struct zone *z)
{
	unsigned long start = MODULES_PHYS + MODULES_VSIZE, end = __fdt_pointer & ~(PAGE_SIZE - 1);
	unsigned long n, map_pages;

	if (end <= start)
		return;
	n = (end - start) >> PAGE_SHIFT;
	map_pages = DIV_ROUND_UP(n * sizeof(struct page), PAGE_SIZE);
	if (n <= map_pages)
		return;
	z->map = __va(start);
	z->start = (char *)__va(start) + map_pages * PAGE_SIZE;
	z->nr_pages = n - map_pages;
}

void mem_init(void)
{
	zones[0] = (struct zone){ .start = lm_alias(page_arena_image), .nr_pages = NR_PAGES, .map = mem_map };
	high_zone_init(&zones[1]);
	nr_free_pages = zones[0].nr_pages + zones[1].nr_pages;
	/* Linux's mem_init_print_info shape: available/total, then what */
	pr_info("Memory: %luK/%luK available (%luK slab arena at %px, %luK high RAM at %px)\n",
		nr_free_pages * (PAGE_SIZE / 1024), nr_free_pages * (PAGE_SIZE / 1024),
		zones[0].nr_pages * (PAGE_SIZE / 1024), zones[0].start,
		zones[1].nr_pages * (PAGE_SIZE / 1024), zones[1].start);
	pr_info("Memory: %luK user page pool at %px\n",
		(unsigned long)NR_POOL_PAGES * (PAGE_SIZE / 1024), page_pool);
}
