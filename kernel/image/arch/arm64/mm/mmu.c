// SPDX-License-Identifier: MIT
/*
 * The MMU, after arch/arm64/mm/mmu.c, proc.S and context.c.
 *
 * head.S builds the boot tables with the MMU off (asm/memory.h has the
 * layout): swapper_pg_dir in TTBR1 maps the linear map of RAM at
 * PAGE_OFFSET, the modules area, the image at KIMAGE_VADDR and the device
 * window; init_idmap_pg_dir in TTBR0 maps the image's gigabyte at VA ==
 * PA for the instructions that turn the MMU on. Kernel mappings are
 * global and EL1-only (AP = 00, UXN), so every CPU and every address
 * space shares them. Once at its link address a CPU drops the idmap:
 * TTBR0 holds reserved_pg_dir (empty) whenever no user mm is loaded
 * (cpu_set_reserved_ttbr0), as Linux does for kernel threads.
 *
 * A process's pgd (pgd_alloc) is a level 1 table of the 39-bit user half
 * with one level 2 table under entry 0: user memory lives below TASK_SIZE
 * (1 GiB), in level 3 tables under it. Table entries hold physical
 * addresses; the kernel reaches the tables through the linear map.
 *
 * ASIDs (8 bits) are handed out round robin from 1, skipping those a
 * live mm holds (asid_map; mmput() gives them back), so two address
 * spaces never share one; a reused ASID is flushed from every TLB (TLBI
 * ASIDE1IS) before its new mm runs. ASID 0 goes with reserved_pg_dir.
 */
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/spinlock.h>
#include <asm/pgtable.h>
#include <asm/smp.h>
#include <asm/sysreg.h>
#include <asm/tlbflush.h>

u64 kimage_voffset;		/* written by head.S */

#define NR_ASIDS	256
/* the mm whose tables each CPU's TTBR0 holds (NULL: reserved_pg_dir) */
static struct mm_struct *cpu_loaded_mm[NR_CPUS];
static unsigned long next_asid = 1;
static u64 asid_map[NR_ASIDS / 64];	/* ASIDs held by live mms */
static DEFINE_RAW_SPINLOCK(asid_lock);

/*
 * cpu_set_reserved_ttbr0 + local_flush_tlb_all: no user (or idmap)
 * translation stays reachable from this CPU.
 */
void cpu_set_reserved_ttbr0(void)
{
	write_sysreg(__pa_symbol(reserved_pg_dir), ttbr0_el1);
	isb();
	asm volatile("tlbi vmalle1" : : : "memory");
	dsb(nsh);
	isb();
}

void paging_init(void)
{
	cpu_set_reserved_ttbr0();
	pr_info("MMU: on, 4K pages, %d-bit kernel VAs, kernel at %px (phys 0x%llx), linear map at %px\n",
		VA_BITS, _text, __pa_symbol(_text), (void *)PAGE_OFFSET);
}

/* A process's level 1 table, with the level 2 table for its gigabyte. */
pteval_t *pgd_alloc(void)
{
	pteval_t *pgd = get_zeroed_page(GFP_KERNEL);
	pteval_t *pmd;

	if (!pgd)
		return NULL;
	pmd = get_zeroed_page(GFP_KERNEL);
	if (!pmd) {
		free_page(pgd);
		return NULL;
	}
	pgd[0] = __pa(pmd) | PTE_TYPE_TABLE;
	return pgd;
}

static inline pteval_t *table_va(pteval_t entry)
{
	return __va(entry & PTE_ADDR_MASK);
}

/*
 * Frees the user tables and the pages they own (not the shared text,
 * PTE_SPECIAL), then the pgd itself.
 */
void pgd_free(pteval_t *pgd)
{
	pteval_t *pmd = table_va(pgd[0]);
	unsigned long i, j;

	for (i = 0; i < PTRS_PER_TABLE; i++) {
		pteval_t *pte;

		if ((pmd[i] & 3) != PTE_TYPE_TABLE)
			continue;
		pte = table_va(pmd[i]);
		for (j = 0; j < PTRS_PER_TABLE; j++)
			if ((pte[j] & PTE_VALID) && !(pte[j] & PTE_SPECIAL))
				free_page(table_va(pte[j]));
		free_page(pte);
	}
	free_page(pmd);
	free_page(pgd);
}

/* The level 3 entry for a user address; allocates the level 3 table. */
pteval_t *pte_lookup(struct mm_struct *mm, unsigned long addr, bool alloc)
{
	pteval_t *pmd = table_va(mm->pgd[0]);
	pteval_t *pmdp, *pte;

	if (addr >= TASK_SIZE)
		return NULL;
	pmdp = &pmd[pmd_index(addr)];
	if (!(*pmdp & PTE_VALID)) {
		if (!alloc)
			return NULL;
		pte = get_zeroed_page(GFP_KERNEL);
		if (!pte)
			return NULL;
		dsb(ishst);
		WRITE_ONCE(*pmdp, __pa(pte) | PTE_TYPE_TABLE);
	}
	pte = table_va(*pmdp);
	return &pte[pte_index(addr)];
}

/* A fresh ASID for a new mm; its stale TLB entries are dropped first. */
unsigned long asid_alloc(void)
{
	unsigned long flags, asid = 0;
	int n;

	raw_spin_lock_irqsave(&asid_lock, flags);
	for (n = 1; n < NR_ASIDS; n++) {
		asid = next_asid++;
		if (next_asid == NR_ASIDS)
			next_asid = 1;
		if (!(asid_map[asid / 64] & (1ULL << (asid % 64))))
			break;
	}
	if (n == NR_ASIDS)
		panic("mm: out of ASIDs (%d live address spaces)", NR_ASIDS - 1);
	asid_map[asid / 64] |= 1ULL << (asid % 64);
	raw_spin_unlock_irqrestore(&asid_lock, flags);
	flush_tlb_asid(asid);
	return asid;
}

/* mmput(): the mm is gone and its ASID flushed; it may be handed out again. */
void asid_free(unsigned long asid)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&asid_lock, flags);
	asid_map[asid / 64] &= ~(1ULL << (asid % 64));
	raw_spin_unlock_irqrestore(&asid_lock, flags);
}

/* check_and_switch_context(): TTBR0 := the mm's tables and ASID. */
void cpu_switch_mm(struct mm_struct *mm)
{
	unsigned long ttbr;

	if (!mm) {
		write_sysreg(__pa_symbol(reserved_pg_dir), ttbr0_el1);
		isb();
		return;
	}
	ttbr = __pa(mm->pgd) | (mm->asid << 48);
	write_sysreg(ttbr, ttbr0_el1);
	isb();
}

/*
 * switch_mm(): on a context switch (IRQs off) or exit/exec (preemption
 * off). A CPU holds an mm only while it runs that mm's task: switching to
 * a kernel thread loads reserved_pg_dir, so an exited task's tables are
 * never left in a TTBR0 when they are freed.
 */
void switch_mm(struct mm_struct *next)
{
	unsigned int cpu = smp_processor_id();

	if (cpu_loaded_mm[cpu] == next)
		return;
	cpu_loaded_mm[cpu] = next;
	cpu_switch_mm(next);
}
