// SPDX-License-Identifier: MIT
/*
 * User-space probes, the guest half of Linux's kernel/events/uprobes.c:
 * the hooks into the address spaces' life (uprobe_mmap at exec,
 * uprobe_clear_state when an mm is freed) and xol_add_vma(), the
 * [uprobes] page. The probes themselves, which pages carry a BRK, the
 * out-of-line slots and the uretprobes' return instances are the host's
 * (kprobes/uprobes.go): it reads the mm's VMAs and page tables and writes
 * the BRKs and slots into the pages the mm maps. A program's text is one
 * set of pages shared by every process that runs it (fs/exec.c's
 * text_page), so a BRK reaches them all, as Linux's install_breakpoint()
 * in every mm does; the file's data, which read(2) gives, stay unchanged,
 * as Linux's copy-on-write of the probed page keeps the page cache's.
 */
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/uprobes.h>
#include <asm/hostcall.h>

/* uprobe_mmap(): exec mapped the program's segments into mm. */
void uprobe_mmap(struct mm_struct *mm)
{
	HOSTCALL2(HC_UPROBE_MMAP, mm, 0);
}

/* uprobe_clear_state(): mm is being freed; so is its XOL area. */
void uprobe_clear_state(struct mm_struct *mm)
{
	HOSTCALL2(HC_UPROBE_CLEAR, mm, 0);
}

/* __xol_add_vma(): map the [uprobes] page at addr. */
static int __xol_add_vma(struct mm_struct *mm, unsigned long addr)
{
	struct vm_area_struct *vma;
	u32 *page;

	vma = insert_vma(mm, addr, addr + PAGE_SIZE, VM_EXEC | VM_DONTCOPY);
	if (!vma)
		return -ENOMEM;
	page = map_user_page(mm, addr, VM_EXEC);
	if (!page) {
		vma->vm_flags = 0;
		return -ENOMEM;
	}
	page[0] = UPROBE_SWBP_INSN;
	/* written through the linear map, fetched through the user mapping */
	asm volatile("dsb ish; ic ialluis; dsb ish; isb" : : : "memory");
	mm->xol_vaddr = addr;
	return 0;
}

/*
 * xol_add_vma(): map the [uprobes] page, one page of execute-only slots
 * (kpemu's user mappings are readable too), with the uretprobe trampoline
 * (a BRK #0x005) in slot 0. Linux asks for it just under TASK_SIZE; the
 * stack is there in kpemu, so it takes the lowest free mmap() address.
 * Fork leaves it out (VM_DONTCOPY). Called from the user break hook, in
 * the task whose mm it is.
 */
int xol_add_vma(struct mm_struct *mm)
{
	unsigned long addr;

	if (mm->xol_vaddr)
		return 0;
	addr = get_unmapped_area(mm, PAGE_SIZE);
	if (IS_ERR_VALUE(addr))
		return addr;
	return __xol_add_vma(mm, addr);
}

/*
 * uprobe_copy_process(): a child forked inside uretprobed functions
 * returns through the trampoline too; the host copies the parent's
 * pending returns to it and names the address of the [uprobes] page the
 * child then needs (dup_xol_work), which fork did not copy.
 */
void uprobe_copy_process(struct task_struct *t, struct mm_struct *oldmm)
{
	long addr = HOSTCALL3(HC_UPROBE_FORK, t, t->mm, oldmm);

	if (addr > 0 && __xol_add_vma(t->mm, addr))
		pr_warn("uprobe: %s:%d failed to dup xol area\n", current->comm, current->pid);
}
