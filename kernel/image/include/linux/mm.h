/* SPDX-License-Identifier: MIT */
/*
 * Address spaces, as include/linux/mm_types.h and mm.h (the part kpemu
 * needs): an mm_struct per process with its own level 1 table (pgd), an
 * ASID, and a small array of VMAs. User memory is demand-paged: a VMA says
 * what may be mapped, handle_mm_fault() maps a zeroed page on first touch.
 *
 * The user half of every address space (TTBR0; the kernel is in TTBR1,
 * asm/memory.h):
 *
 *   0x00400000 ..            the program (PT_LOAD segments), then brk
 *   0x10000000 ..            mmap()
 *   .. 0x40000000            the stack (STACK_TOP), demand-paged;
 *                            TASK_SIZE ends here
 */
#ifndef _LINUX_MM_H
#define _LINUX_MM_H

#include <linux/types.h>
#include <linux/slab.h>
#include <asm/pgtable.h>

#define TASK_SIZE		0x40000000UL
#define STACK_TOP		TASK_SIZE
#define STACK_SIZE_MAX		(2UL << 20)	/* the stack VMA */
#define TASK_UNMAPPED_BASE	0x10000000UL
#define ELF_ET_DYN_BASE		0x00400000UL

#define VM_READ			0x00000001
#define VM_WRITE		0x00000002
#define VM_EXEC			0x00000004
#define VM_GROWSDOWN		0x00000100
#define VM_DONTCOPY		0x00020000	/* fork leaves it out: the [uprobes] area */

#define FAULT_FLAG_WRITE	0x01
#define FAULT_FLAG_USER		0x40
#define FAULT_FLAG_INSTRUCTION	0x100

#define VM_FAULT_OOM		0x0001
#define VM_FAULT_SIGSEGV	0x0040

#define PROT_READ		0x1
#define PROT_WRITE		0x2
#define PROT_EXEC		0x4
#define MAP_PRIVATE		0x02
#define MAP_FIXED		0x10
#define MAP_ANONYMOUS		0x20
#define MAP_FAILED		((void *)-1)

#define NR_VMAS			16

struct inode;

struct vm_area_struct {
	unsigned long vm_start;
	unsigned long vm_end;		/* first byte after */
	unsigned long vm_flags;		/* 0: slot free */
	/* a program's segment: the file it maps (exec copies it in; the
	 * pages are private) and the page of the file at vm_start, which
	 * uprobes need to find a file offset's address */
	struct inode *vm_file;
	unsigned long vm_pgoff;
};

struct mm_struct {
	pteval_t *pgd;			/* level 1 table, TTBR0 */
	unsigned long asid;
	unsigned long start_code, end_code, start_data, end_data;
	unsigned long start_brk, brk, start_stack;
	unsigned long mmap_base;	/* next mmap() address */
	unsigned long total_vm;		/* pages mapped */
	struct vm_area_struct vmas[NR_VMAS];
	/* uprobes_state.xol_area: the [uprobes] page's address, 0 for none */
	unsigned long xol_vaddr;
};

/* the page allocator (mm/page_alloc.c): single zeroed pages for user memory and tables */
void *get_zeroed_page(gfp_t gfp_mask);
void free_page(void *addr);
extern u64 nr_free_user_pages;

/* arch/arm64/kernel/head.S: the boot tables */
extern pteval_t swapper_pg_dir[PTRS_PER_TABLE];
extern pteval_t reserved_pg_dir[PTRS_PER_TABLE];
extern char _text[];

/* arch/arm64/mm/mmu.c */
void paging_init(void);
void cpu_set_reserved_ttbr0(void);
pteval_t *pgd_alloc(void);
void pgd_free(pteval_t *pgd);
pteval_t *pte_lookup(struct mm_struct *mm, unsigned long addr, bool alloc);
unsigned long asid_alloc(void);
void asid_free(unsigned long asid);
void cpu_switch_mm(struct mm_struct *mm);

/* mm/memory.c, mm/mmap.c */
extern u64 nr_page_faults;		/* user faults that mapped a page */
struct mm_struct *mm_alloc(void);
void mmput(struct mm_struct *mm);
struct mm_struct *dup_mm(struct mm_struct *oldmm);
struct vm_area_struct *find_vma(struct mm_struct *mm, unsigned long addr);
unsigned long get_unmapped_area(struct mm_struct *mm, unsigned long len);
struct vm_area_struct *insert_vma(struct mm_struct *mm, unsigned long start,
				  unsigned long end, unsigned long flags);
int handle_mm_fault(struct vm_area_struct *vma, unsigned long address,
		    unsigned int flags);
void *map_user_page(struct mm_struct *mm, unsigned long addr, unsigned long vm_flags);
int map_shared_page(struct mm_struct *mm, unsigned long addr, void *page,
		    unsigned long vm_flags);
unsigned long copy_from_user(void *to, const void *from, unsigned long n);
unsigned long copy_to_user(void *to, const void *from, unsigned long n);
bool access_ok(const void *uaddr, unsigned long size);
unsigned long __arch_copy_from_user(void *to, const void *from, unsigned long n);
unsigned long __arch_copy_to_user(void *to, const void *from, unsigned long n);
long strncpy_from_user(char *dst, const char *src, long count);

#endif /* _LINUX_MM_H */
