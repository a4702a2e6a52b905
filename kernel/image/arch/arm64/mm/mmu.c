// SPDX-License-Identifier: MIT
/*
 * The MMU, after arch/arm64/mm/mmu.c, proc.S (__cpu_setup) and context.c.
 *
 * paging_init() builds swapper_pg_dir, the kernel's identity map: level 1
 * entry 1 is one 1 GiB block of normal memory at 0x40000000 (RAM, the
 * image, the module area), level 1 entry 0 points to swapper_pmd, whose
 * 2 MiB Device-nGnRE blocks cover 0x08000000..0x0c000000. Every entry is
 * global and EL1-only (AP = 00, UXN), and VA == PA, so the host half of
 * kpemu, which reads guest memory by physical address, still finds every
 * kernel object at its symbol's address. cpu_enable_mmu() (each CPU, at
 * boot) sets MAIR_EL1 and TCR_EL1 as Linux does for 4K pages, TTBR0 to
 * swapper_pg_dir with ASID 0, and turns on SCTLR_EL1.{M,C,I}.
 *
 * A process's pgd (pgd_alloc) copies those kernel entries, level 1 entry
 * 0 pointing to a level 2 table of its own that repeats the device
 * blocks, so its user pages (level 3 tables under entries 2..63 and
 * 96..511 of that table) and the kernel share one TTBR0 walk: a
 * 32-bit-Linux-like split. TTBR1 is unused (TCR.EPD1 = 1). Moving the
 * kernel to 0xffff800008000000 in TTBR1 is the next step; it needs the
 * host half to translate kernel VAs.
 *
 * ASIDs (8 bits) are handed out round robin from 1, skipping those a
 * live mm holds (asid_map; mmput() gives them back), so two address
 * spaces never share one; a reused ASID is flushed from every TLB (TLBI
 * ASIDE1IS) before its new mm runs. ASID 0 is swapper_pg_dir's, which
 * kernel threads run on.
 */
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/spinlock.h>
#include <asm/pgtable.h>
#include <asm/smp.h>
#include <asm/sysreg.h>
#include <asm/tlbflush.h>

pteval_t swapper_pg_dir[PTRS_PER_TABLE] __aligned(PAGE_SIZE);
static pteval_t swapper_pmd[PTRS_PER_TABLE] __aligned(PAGE_SIZE);

#define NR_ASIDS	256
/* the mm whose tables each CPU's TTBR0 holds (NULL: swapper_pg_dir) */
static struct mm_struct *cpu_loaded_mm[NR_CPUS];
static unsigned long next_asid = 1;
static u64 asid_map[NR_ASIDS / 64];	/* ASIDs held by live mms */
static DEFINE_RAW_SPINLOCK(asid_lock);

static void fill_device_blocks(pteval_t *pmd)
{
	unsigned long pa;

	for (pa = DEVICE_START; pa < DEVICE_END; pa += PMD_SIZE)
		pmd[pmd_index(pa)] = pa | PROT_SECT_DEVICE;
}

void paging_init(void)
{
	fill_device_blocks(swapper_pmd);
	swapper_pg_dir[0] = (unsigned long)swapper_pmd | PTE_TYPE_TABLE;
	swapper_pg_dir[pud_index(PHYS_RAM_START)] = PHYS_RAM_START | PROT_SECT_KERNEL;
	cpu_enable_mmu();
	pr_info("MMU: on, 4K pages, %d-bit VAs, kernel identity-mapped at %016lx\n",
		VA_BITS, PHYS_RAM_START);
}

/* __cpu_setup + __enable_mmu, for the boot CPU and each secondary. */
void cpu_enable_mmu(void)
{
	unsigned long tcr = TCR_T0SZ(VA_BITS) | TCR_T1SZ(VA_BITS) |
			    TCR_IRGN0_WBWA | TCR_ORGN0_WBWA | TCR_SH0_INNER |
			    TCR_TG0_4K | TCR_EPD1 | TCR_IRGN1_WBWA |
			    TCR_ORGN1_WBWA | TCR_SH1_INNER | TCR_TG1_4K |
			    TCR_IPS_40BIT;

	write_sysreg(MAIR_EL1_SET, mair_el1);
	write_sysreg(tcr, tcr_el1);
	write_sysreg((unsigned long)swapper_pg_dir, ttbr0_el1);
	isb();
	asm volatile("tlbi vmalle1" : : : "memory");
	dsb(nsh);
	write_sysreg(read_sysreg(sctlr_el1) | SCTLR_ELx_M | SCTLR_ELx_C | SCTLR_ELx_I,
		     sctlr_el1);
	isb();
	asm volatile("ic iallu" : : : "memory");
	dsb(nsh);
	isb();
}

/* A process's level 1 table: the kernel's entries, and its own level 2. */
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
	fill_device_blocks(pmd);
	pgd[0] = (unsigned long)pmd | PTE_TYPE_TABLE;
	pgd[pud_index(PHYS_RAM_START)] = swapper_pg_dir[pud_index(PHYS_RAM_START)];
	return pgd;
}

/* Frees the user tables and the pages they map, then the pgd itself. */
void pgd_free(pteval_t *pgd)
{
	pteval_t *pmd = (pteval_t *)(pgd[0] & PTE_ADDR_MASK);
	unsigned long i, j;

	for (i = 0; i < PTRS_PER_TABLE; i++) {
		pteval_t *pte;

		if ((pmd[i] & 3) != PTE_TYPE_TABLE)
			continue;	/* empty, or a device block */
		pte = (pteval_t *)(pmd[i] & PTE_ADDR_MASK);
		for (j = 0; j < PTRS_PER_TABLE; j++)
			if (pte[j] & PTE_VALID)
				free_page((void *)(pte[j] & PTE_ADDR_MASK));
		free_page(pte);
	}
	free_page(pmd);
	free_page(pgd);
}

/* The level 3 entry for a user address; allocates the level 3 table. */
pteval_t *pte_lookup(struct mm_struct *mm, unsigned long addr, bool alloc)
{
	pteval_t *pmd = (pteval_t *)(mm->pgd[0] & PTE_ADDR_MASK);
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
		WRITE_ONCE(*pmdp, (unsigned long)pte | PTE_TYPE_TABLE);
	} else if ((*pmdp & 3) != PTE_TYPE_TABLE) {
		return NULL;		/* a kernel (device) block */
	}
	pte = (pteval_t *)(*pmdp & PTE_ADDR_MASK);
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

	if (mm)
		ttbr = (unsigned long)mm->pgd | (mm->asid << 48);
	else
		ttbr = (unsigned long)swapper_pg_dir;
	write_sysreg(ttbr, ttbr0_el1);
	isb();
}

/*
 * switch_mm(): on a context switch (IRQs off) or exit/exec (preemption
 * off). A CPU holds an mm only while it runs that mm's task: switching to
 * a kernel thread loads swapper_pg_dir, so an exited task's tables are
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
