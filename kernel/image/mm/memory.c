// SPDX-License-Identifier: MIT
/*
 * User memory, after mm/memory.c, kernel/fork.c (dup_mm) and
 * lib/usercopy.c: address spaces, VMAs, demand paging
 * (handle_mm_fault() maps a zeroed page on the first touch of a VMA's
 * page), fork's eager copy of every private page (no copy-on-write yet;
 * a program's shared text pages are shared by the child too), and the
 * user-access helpers.
 *
 * The kernel touches user memory directly (PAN is off and user pages are
 * EL0-and-EL1 accessible). copy_{to,from}_user() go through
 * __arch_copy_*_user (arch/arm64/lib/copy_user.S), whose user accesses are
 * in the exception table: they take real faults, which demand-page as a
 * user fault does, and a bad address returns what was not copied.
 * An mm is only ever changed by its own task (no CLONE_VM user threads),
 * which therefore needs no lock.
 */
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/uprobes.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <asm/tlbflush.h>

u64 nr_page_faults;

struct mm_struct *mm_alloc(void)
{
	struct mm_struct *mm = kzalloc(sizeof(*mm), GFP_KERNEL);

	if (!mm)
		return NULL;
	mm->pgd = pgd_alloc();
	if (!mm->pgd) {
		kfree(mm);
		return NULL;
	}
	mm->asid = asid_alloc();
	mm->mmap_base = TASK_UNMAPPED_BASE;
	return mm;
}

/* Frees an address space that no CPU runs on any more. */
void mmput(struct mm_struct *mm)
{
	if (!mm)
		return;
	uprobe_clear_state(mm);
	pgd_free(mm->pgd);
	flush_tlb_asid(mm->asid);
	asid_free(mm->asid);
	kfree(mm);
}

struct vm_area_struct *find_vma(struct mm_struct *mm, unsigned long addr)
{
	int i;

	for (i = 0; i < NR_VMAS; i++) {
		struct vm_area_struct *v = &mm->vmas[i];

		if (v->vm_flags && addr >= v->vm_start && addr < v->vm_end)
			return v;
	}
	return NULL;
}

struct vm_area_struct *insert_vma(struct mm_struct *mm, unsigned long start,
				  unsigned long end, unsigned long flags)
{
	int i;

	for (i = 0; i < NR_VMAS; i++) {
		struct vm_area_struct *v = &mm->vmas[i];

		if (!v->vm_flags) {
			v->vm_start = start;
			v->vm_end = end;
			v->vm_flags = flags | VM_READ;
			v->vm_file = NULL;
			v->vm_pgoff = 0;
			return v;
		}
	}
	return NULL;
}

static pteval_t user_prot(unsigned long vm_flags)
{
	pteval_t prot = PROT_USER_BASE;

	if (!(vm_flags & VM_WRITE))
		prot |= PTE_RDONLY;
	if (!(vm_flags & VM_EXEC))
		prot |= PTE_UXN;
	return prot;
}

/*
 * Maps a zeroed page at addr (page aligned) and returns its kernel
 * address; an already mapped page is returned as it is.
 */
void *map_user_page(struct mm_struct *mm, unsigned long addr, unsigned long vm_flags)
{
	pteval_t *pte = pte_lookup(mm, addr, true);
	void *page;

	if (!pte)
		return NULL;
	if (*pte & PTE_VALID)
		return __va(*pte & PTE_ADDR_MASK);
	page = get_zeroed_page(GFP_KERNEL);
	if (!page)
		return NULL;
	dsb(ishst);	/* the zeroes before the mapping */
	WRITE_ONCE(*pte, __pa(page) | user_prot(vm_flags));
	dsb(ishst);
	isb();
	mm->total_vm++;
	return page;
}

/*
 * Maps page, which mm does not own (a program's text, fs/exec.c), at addr
 * (page aligned, not mapped yet). PTE_SPECIAL tells unmapping not to free
 * it and fork to share it.
 */
int map_shared_page(struct mm_struct *mm, unsigned long addr, void *page,
		    unsigned long vm_flags)
{
	pteval_t *pte = pte_lookup(mm, addr, true);

	if (!pte)
		return -ENOMEM;
	if (*pte & PTE_VALID)
		return -EEXIST;
	WRITE_ONCE(*pte, __pa(page) | user_prot(vm_flags) | PTE_SPECIAL);
	dsb(ishst);
	isb();
	mm->total_vm++;
	return 0;
}

/* mm/memory.c: the fault is inside vma; map the page. */
int handle_mm_fault(struct vm_area_struct *vma, unsigned long address,
		    unsigned int flags)
{
	struct mm_struct *mm = current->mm;

	if (!map_user_page(mm, address & ~(PAGE_SIZE - 1), vma->vm_flags))
		return VM_FAULT_OOM;
	nr_page_faults++;
	return 0;
}

/*
 * dup_mmap(): the same VMAs, and a copy of every mapped page, but for the
 * VM_DONTCOPY ones (the [uprobes] area: the child gets its own when it
 * first needs one) and the shared text pages, which the child shares
 * (with the BRKs uprobes placed there, as Linux's child shares the
 * parent's patched page).
 */
struct mm_struct *dup_mm(struct mm_struct *oldmm)
{
	struct mm_struct *mm = mm_alloc();
	pteval_t *opmd = __va(oldmm->pgd[0] & PTE_ADDR_MASK);
	unsigned long i, j;

	if (!mm)
		return NULL;
	mm->start_code = oldmm->start_code;
	mm->end_code = oldmm->end_code;
	mm->start_data = oldmm->start_data;
	mm->end_data = oldmm->end_data;
	mm->start_brk = oldmm->start_brk;
	mm->brk = oldmm->brk;
	mm->start_stack = oldmm->start_stack;
	mm->mmap_base = oldmm->mmap_base;
	memcpy(mm->vmas, oldmm->vmas, sizeof(mm->vmas));
	for (i = 0; i < NR_VMAS; i++)
		if (mm->vmas[i].vm_flags & VM_DONTCOPY)
			mm->vmas[i].vm_flags = 0;

	for (i = 0; i < PTRS_PER_TABLE; i++) {
		pteval_t *opte;

		if ((opmd[i] & 3) != PTE_TYPE_TABLE)
			continue;
		opte = __va(opmd[i] & PTE_ADDR_MASK);
		for (j = 0; j < PTRS_PER_TABLE; j++) {
			unsigned long addr = (i << PMD_SHIFT) | (j << 12);
			pteval_t *pte;
			void *page;

			if (!(opte[j] & PTE_VALID))
				continue;
			if (!find_vma(mm, addr))	/* a VM_DONTCOPY page */
				continue;
			pte = pte_lookup(mm, addr, true);
			if (pte && (opte[j] & PTE_SPECIAL)) {
				*pte = opte[j];
				mm->total_vm++;
				continue;
			}
			page = get_zeroed_page(GFP_KERNEL);
			if (!pte || !page) {
				free_page(page);
				mmput(mm);
				return NULL;
			}
			memcpy(page, __va(opte[j] & PTE_ADDR_MASK), PAGE_SIZE);
			*pte = __pa(page) | (opte[j] & ~PTE_ADDR_MASK);
			mm->total_vm++;
		}
	}
	dsb(ishst);
	return mm;
}

/*
 * The user-access helpers are notrace: in Linux access_ok() is inline and
 * the others are lib/'s (usercopy.c, strncpy_from_user.c), which is built
 * without call sites.
 */

/* Linux's access_ok(): the range lies below TASK_SIZE (kernel threads pass kernel buffers). */
notrace bool access_ok(const void *uaddr, unsigned long size)
{
	unsigned long addr = (unsigned long)uaddr;

	if (!current->mm)
		return true;
	return addr + size >= addr && addr + size <= TASK_SIZE;
}

/* As Linux's _copy_from_user(): what could not be read is zeroed. */
notrace unsigned long copy_from_user(void *to, const void *from, unsigned long n)
{
	unsigned long res = n;

	if (access_ok(from, n))
		res = __arch_copy_from_user(to, from, n);
	if (res)
		memset((char *)to + (n - res), 0, res);
	return res;
}

notrace unsigned long copy_to_user(void *to, const void *from, unsigned long n)
{
	if (!access_ok(to, n))
		return n;
	return __arch_copy_to_user(to, from, n);
}

/* Returns the string's length, count if it did not end, or -EFAULT. */
notrace long strncpy_from_user(char *dst, const char *src, long count)
{
	long i;

	for (i = 0; i < count; i++) {
		if (copy_from_user(&dst[i], src + i, 1))
			return -EFAULT;
		if (!dst[i])
			return i;
	}
	return count;
}
