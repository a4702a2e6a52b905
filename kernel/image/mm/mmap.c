// SPDX-License-Identifier: MIT
/*
 * brk(2), mmap(2) and munmap(2), after mm/mmap.c: anonymous private
 * memory only. Each call only records or trims VMAs; pages come on the
 * first touch (handle_mm_fault), and munmap frees them and their TLB
 * entries (TLBI VAE1IS with the mm's ASID).
 */
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <asm/ptrace.h>
#include <asm/tlbflush.h>

#define PAGE_ALIGN(x)	ALIGN((unsigned long)(x), PAGE_SIZE)
#define MMAP_END	(STACK_TOP - STACK_SIZE_MAX)

static void zap_page_range(struct mm_struct *mm, unsigned long start, unsigned long end)
{
	unsigned long addr;

	for (addr = start; addr < end; addr += PAGE_SIZE) {
		pteval_t *pte = pte_lookup(mm, addr, false);

		if (!pte || !(*pte & PTE_VALID))
			continue;
		if (!(*pte & PTE_SPECIAL))
			free_page(__va(*pte & PTE_ADDR_MASK));
		WRITE_ONCE(*pte, 0);
		flush_tlb_page_asid(mm->asid, addr);
		mm->total_vm--;
	}
}

static int do_munmap(struct mm_struct *mm, unsigned long start, unsigned long end)
{
	int i;

	for (i = 0; i < NR_VMAS; i++) {
		struct vm_area_struct *v = &mm->vmas[i];

		if (!v->vm_flags || v->vm_end <= start || v->vm_start >= end)
			continue;
		if (start <= v->vm_start && end >= v->vm_end) {
			v->vm_flags = 0;
			if (v->vm_start == mm->xol_vaddr)
				mm->xol_vaddr = 0;
		} else if (start <= v->vm_start) {
			v->vm_pgoff += (end - v->vm_start) >> PAGE_SHIFT;
			v->vm_start = end;
		} else if (end >= v->vm_end) {
			v->vm_end = start;
		} else {	/* a hole in the middle: split */
			struct vm_area_struct *n = insert_vma(mm, end, v->vm_end, v->vm_flags);

			if (!n)
				return -ENOMEM;
			n->vm_flags = v->vm_flags;
			n->vm_file = v->vm_file;
			n->vm_pgoff = v->vm_pgoff + ((end - v->vm_start) >> PAGE_SHIFT);
			v->vm_end = start;
		}
	}
	zap_page_range(mm, start, end);
	return 0;
}

static bool range_free(struct mm_struct *mm, unsigned long start, unsigned long end)
{
	int i;

	for (i = 0; i < NR_VMAS; i++) {
		struct vm_area_struct *v = &mm->vmas[i];

		if (v->vm_flags && v->vm_start < end && v->vm_end > start)
			return false;
	}
	return true;
}

/* get_unmapped_area(): the lowest gap at or above mmap_base. */
unsigned long get_unmapped_area(struct mm_struct *mm, unsigned long len)
{
	unsigned long addr = mm->mmap_base;
	int i, moved = 1;

	while (moved) {
		moved = 0;
		for (i = 0; i < NR_VMAS; i++) {
			struct vm_area_struct *v = &mm->vmas[i];

			if (v->vm_flags && v->vm_start < addr + len && v->vm_end > addr) {
				addr = v->vm_end;
				moved = 1;
			}
		}
	}
	if (addr + len > MMAP_END || addr + len < addr)
		return -ENOMEM;
	return addr;
}

long __arm64_sys_mmap(const struct pt_regs *regs)
{
	struct mm_struct *mm = current->mm;
	unsigned long len = PAGE_ALIGN(regs->regs[1]);
	unsigned long prot = regs->regs[2], flags = regs->regs[3];
	unsigned long addr, vm_flags = 0;

	if (!mm || !len)
		return -EINVAL;
	if (!(flags & MAP_ANONYMOUS) || (flags & MAP_FIXED))
		return -ENOSYS;	/* anonymous memory only */
	addr = get_unmapped_area(mm, len);
	if (IS_ERR_VALUE(addr))
		return addr;
	if (prot & PROT_WRITE)
		vm_flags |= VM_WRITE;
	if (prot & PROT_EXEC)
		vm_flags |= VM_EXEC;
	if (!insert_vma(mm, addr, addr + len, vm_flags))
		return -ENOMEM;
	return addr;
}

long __arm64_sys_munmap(const struct pt_regs *regs)
{
	struct mm_struct *mm = current->mm;
	unsigned long start = regs->regs[0], len = PAGE_ALIGN(regs->regs[1]);

	if (!mm || (start & (PAGE_SIZE - 1)) || !len || start + len > TASK_SIZE)
		return -EINVAL;
	return do_munmap(mm, start, start + len);
}

long __arm64_sys_brk(const struct pt_regs *regs)
{
	struct mm_struct *mm = current->mm;
	unsigned long brk = regs->regs[0];
	unsigned long oldbrk, newbrk;
	struct vm_area_struct *vma;

	if (!mm)
		return -EINVAL;
	if (brk < mm->start_brk || brk >= TASK_UNMAPPED_BASE)
		return mm->brk;
	newbrk = PAGE_ALIGN(brk);
	oldbrk = PAGE_ALIGN(mm->brk);
	if (newbrk < oldbrk) {
		if (do_munmap(mm, newbrk, oldbrk))
			return mm->brk;
	} else if (newbrk > oldbrk) {
		if (!range_free(mm, oldbrk, newbrk))
			return mm->brk;
		vma = oldbrk > mm->start_brk ? find_vma(mm, oldbrk - 1) : NULL;
		if (vma)
			vma->vm_end = newbrk;
		else if (!insert_vma(mm, oldbrk, newbrk, VM_WRITE))
			return mm->brk;
	}
	mm->brk = brk;
	return brk;
}
