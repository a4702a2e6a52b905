// SPDX-License-Identifier: MIT
/*
 * execve(2), after fs/exec.c and fs/binfmt_elf.c: static AArch64 ELF
 * executables from the tree (the initramfs's /bin). The arguments are
 * copied into the kernel first (struct linux_binprm), then a fresh mm is
 * built: the read-only PT_LOAD segments (text, rodata) of a read-only
 * file mapped from its shared pages (text_page), the others copied into
 * pages of their own, brk after the last one, a demand-paged stack VMA
 * under STACK_TOP with argc, argv, envp and an auxv on it as the ELF ABI
 * wants. Only then is the old mm dropped (with its ASID's TLB entries),
 * so a failed exec returns to the old program. comm becomes the file's
 * basename, as __set_task_comm() in begin_new_exec().
 */
#include <linux/kernel.h>
#include <linux/elf.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/uprobes.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <asm/ptrace.h>

#define MAX_ARG_STRINGS	16
#define MAX_ARG_BYTES	1024

void switch_mm(struct mm_struct *next);

u64 nr_execs;

struct linux_binprm {
	char filename[PATH_MAX];
	int argc, envc;
	char *argv[MAX_ARG_STRINGS];	/* into strings */
	char *envp[MAX_ARG_STRINGS];
	char strings[MAX_ARG_BYTES];
	int used;
	unsigned long p;		/* the new stack pointer */
	unsigned long entry;
};

/* copy_strings(): from user (or kernel, for kernel_execve) memory. */
static int copy_strings(struct linux_binprm *bprm, const char *const *argv,
			char **out, int *count)
{
	int n;

	*count = 0;
	if (!argv)
		return 0;
	for (n = 0; ; n++) {
		const char *s;
		long len;

		if (copy_from_user(&s, &argv[n], sizeof(s)))
			return -EFAULT;
		if (!s)
			break;
		if (n == MAX_ARG_STRINGS)
			return -E2BIG;
		len = strncpy_from_user(bprm->strings + bprm->used, s,
					MAX_ARG_BYTES - bprm->used);
		if (len < 0)
			return len;
		if (len == MAX_ARG_BYTES - bprm->used)
			return -E2BIG;
		out[n] = bprm->strings + bprm->used;
		bprm->used += len + 1;
	}
	*count = n;
	return 0;
}

static int elf_check(const Elf64_Ehdr *eh, loff_t size)
{
	if (size < (loff_t)sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[4] != ELFCLASS64 || eh->e_type != ET_EXEC ||
	    eh->e_machine != EM_AARCH64 || eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    eh->e_phoff + (u64)eh->e_phnum * sizeof(Elf64_Phdr) > (u64)size)
		return -ENOEXEC;
	return 0;
}

static DEFINE_RAW_SPINLOCK(text_lock);

/*
 * text_page() is filemap_fault() finding the page cache's page: page idx
 * of a read-only file (the initramfs's, which never change), one copy
 * shared by every process that maps it, made on first use and kept while
 * the kernel runs (unlinking a file a process may still run leaves them:
 * no count of the mappers is kept). So a program's code is the same
 * physical page in every process that runs it, as on Linux; the BRKs that
 * uprobes place go into these pages, and read(2) of the file, from
 * i_private, never shows them (Linux's copy-on-write of the probed page).
 */
static void *text_page(struct inode *inode, unsigned long idx)
{
	unsigned long n = (inode->i_size + PAGE_SIZE - 1) >> PAGE_SHIFT;
	unsigned long flags;
	void *page = NULL;

	if (inode->i_capacity || idx >= n)
		return NULL;
	raw_spin_lock_irqsave(&text_lock, flags);
	if (!inode->i_pages)
		inode->i_pages = kzalloc(n * sizeof(void *), GFP_KERNEL);
	if (inode->i_pages) {
		page = inode->i_pages[idx];
		if (!page && (page = get_zeroed_page(GFP_KERNEL))) {
			memcpy(page, inode->i_private + (idx << PAGE_SHIFT),
			       min(PAGE_SIZE, (unsigned long)inode->i_size - (idx << PAGE_SHIFT)));
			inode->i_pages[idx] = page;
		}
	}
	raw_spin_unlock_irqrestore(&text_lock, flags);
	return page;
}

/* Whether another PT_LOAD segment than ph has bytes in the page at addr. */
static bool page_has_other(const Elf64_Ehdr *eh, const Elf64_Phdr *ph, unsigned long addr)
{
	const Elf64_Phdr *o = (const Elf64_Phdr *)((const char *)eh + eh->e_phoff);
	int i;

	for (i = 0; i < eh->e_phnum; i++, o++)
		if (o != ph && o->p_type == PT_LOAD && o->p_memsz &&
		    o->p_vaddr < addr + PAGE_SIZE && o->p_vaddr + o->p_memsz > addr)
			return true;
	return false;
}

/* load_elf_binary(): the segments into mm. */
static int load_elf_binary(struct linux_binprm *bprm, struct inode *inode,
			   struct mm_struct *mm)
{
	const char *data = inode->i_private;
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)data;
	const Elf64_Phdr *ph;
	unsigned long end = 0;
	int i;

	if (!data || elf_check(eh, inode->i_size))
		return -ENOEXEC;
	ph = (const Elf64_Phdr *)(data + eh->e_phoff);
	for (i = 0; i < eh->e_phnum; i++, ph++) {
		unsigned long start, stop, addr, vm_flags = 0;
		struct vm_area_struct *vma;
		bool shared;

		if (ph->p_type != PT_LOAD || !ph->p_memsz)
			continue;
		if (ph->p_filesz > ph->p_memsz || ph->p_offset + ph->p_filesz > (u64)inode->i_size ||
		    ph->p_vaddr < ELF_ET_DYN_BASE || ph->p_vaddr + ph->p_memsz > TASK_UNMAPPED_BASE)
			return -ENOEXEC;
		if (ph->p_flags & PF_W)
			vm_flags |= VM_WRITE;
		if (ph->p_flags & PF_X)
			vm_flags |= VM_EXEC;
		start = ph->p_vaddr & ~(PAGE_SIZE - 1);
		stop = ALIGN(ph->p_vaddr + ph->p_memsz, PAGE_SIZE);
		vma = insert_vma(mm, start, stop, vm_flags);
		if (!vma)
			return -ENOMEM;
		vma->vm_file = inode;
		vma->vm_pgoff = (ph->p_offset - (ph->p_vaddr - start)) >> PAGE_SHIFT;
		/* the file's own pages: read-only, no bss, file offsets that
		 * are page offsets too (as the ELF ABI wants) */
		shared = !(vm_flags & VM_WRITE) && ph->p_filesz == ph->p_memsz &&
			 !((ph->p_offset - ph->p_vaddr) & (PAGE_SIZE - 1));
		for (addr = start; addr < stop; addr += PAGE_SIZE) {
			unsigned long lo = max(addr, (unsigned long)ph->p_vaddr);
			unsigned long hi = min(addr + PAGE_SIZE,
					       (unsigned long)(ph->p_vaddr + ph->p_filesz));
			char *page;

			if (shared && !page_has_other(eh, ph, addr)) {
				page = text_page(inode, vma->vm_pgoff + ((addr - start) >> PAGE_SHIFT));
				if (page) {
					if (map_shared_page(mm, addr, page, vm_flags))
						return -ENOMEM;
					continue;
				}
			}
			page = map_user_page(mm, addr, vm_flags);
			if (!page)
				return -ENOMEM;
			if (lo < hi)
				memcpy(page + (lo - addr), data + ph->p_offset + (lo - ph->p_vaddr),
				       hi - lo);
		}
		if (vm_flags & VM_EXEC) {
			mm->start_code = start;
			mm->end_code = ph->p_vaddr + ph->p_filesz;
		} else if (vm_flags & VM_WRITE) {
			mm->start_data = start;
			mm->end_data = ph->p_vaddr + ph->p_filesz;
		}
		if (stop > end)
			end = stop;
	}
	if (!end)
		return -ENOEXEC;
	mm->start_brk = mm->brk = end;
	bprm->entry = eh->e_entry;
	/* the kernel wrote the code through the linear map; the CPU fetches
	 * it through the new user mapping */
	asm volatile("dsb ish; ic ialluis; dsb ish; isb" : : : "memory");
	return 0;
}

/* create_elf_tables(): strings at the top, then auxv, envp, argv, argc. */
static int setup_arg_pages(struct linux_binprm *bprm, struct mm_struct *mm)
{
	unsigned long top = STACK_TOP, sp, ustr;
	unsigned long *words;
	char *page;
	int i, nwords;

	if (!insert_vma(mm, STACK_TOP - STACK_SIZE_MAX, STACK_TOP, VM_WRITE | VM_GROWSDOWN))
		return -ENOMEM;
	page = map_user_page(mm, top - PAGE_SIZE, VM_WRITE);
	if (!page)
		return -ENOMEM;
	/* one page holds it all: MAX_ARG_BYTES of strings and 40 words */
	ustr = top - ALIGN(bprm->used, 16);
	memcpy(page + (ustr - (top - PAGE_SIZE)), bprm->strings, bprm->used);
	nwords = 1 + bprm->argc + 1 + bprm->envc + 1 + 6;
	sp = (ustr - nwords * sizeof(unsigned long)) & ~15UL;
	words = (unsigned long *)(page + (sp - (top - PAGE_SIZE)));
	*words++ = bprm->argc;
	for (i = 0; i < bprm->argc; i++)
		*words++ = ustr + (bprm->argv[i] - bprm->strings);
	*words++ = 0;
	for (i = 0; i < bprm->envc; i++)
		*words++ = ustr + (bprm->envp[i] - bprm->strings);
	*words++ = 0;
	*words++ = AT_PAGESZ;
	*words++ = PAGE_SIZE;
	*words++ = AT_ENTRY;
	*words++ = bprm->entry;
	*words++ = AT_NULL;
	*words++ = 0;
	mm->start_stack = sp;
	bprm->p = sp;
	return 0;
}

static int do_execveat_common(const char *filename, const char *const *argv,
			      const char *const *envp)
{
	struct linux_binprm *bprm = kzalloc(sizeof(*bprm), GFP_KERNEL);
	struct mm_struct *mm = NULL, *old;
	struct pt_regs *regs = current_pt_regs();
	s32 syscallno;
	struct dentry *d = NULL;
	const char *base, *p;
	long ret;

	if (!bprm)
		return -ENOMEM;
	ret = strncpy_from_user(bprm->filename, filename, sizeof(bprm->filename));
	if (ret < 0)
		goto out;
	if (ret == sizeof(bprm->filename)) {
		ret = -ENAMETOOLONG;
		goto out;
	}
	ret = copy_strings(bprm, argv, bprm->argv, &bprm->argc);
	if (!ret)
		ret = copy_strings(bprm, envp, bprm->envp, &bprm->envc);
	if (ret)
		goto out;
	d = bprm->filename[0] == '/' ? path_lookup(bprm->filename, LOOKUP_FOLLOW, NULL, NULL) :
				       ERR_PTR(-ENOENT);
	if (IS_ERR(d)) {
		ret = PTR_ERR(d);
		d = NULL;
		goto out;
	}
	ret = -EACCES;
	if (!S_ISREG(d->d_inode->i_mode) || !(d->d_inode->i_mode & 0111))
		goto out;
	ret = -ENOMEM;
	mm = mm_alloc();
	if (!mm)
		goto out;
	ret = load_elf_binary(bprm, d->d_inode, mm);
	if (!ret)
		ret = setup_arg_pages(bprm, mm);
	if (ret)
		goto out;

	/* the point of no return: begin_new_exec() */
	preempt_disable();
	old = current->mm;
	current->mm = mm;
	switch_mm(mm);
	/*
	 * uprobe_mmap(): the probes on the program go into its pages, now
	 * that the mm is current's, where a probe registered or removed
	 * from here on finds it (the hostcall and the machine stops that
	 * (un)registration makes exclude each other)
	 */
	uprobe_mmap(mm);
	preempt_enable();
	mm = NULL;
	mmput(old);

	for (base = p = bprm->filename; *p; p++)
		if (*p == '/')
			base = p + 1;
	__set_task_comm(current, base, true);
	current->flags &= ~PF_KTHREAD;

	/*
	 * start_thread(): EL0t, everything unmasked, zeroed registers but
	 * syscallno, which execve's sys_exit event still reports
	 */
	syscallno = regs->syscallno;
	memset(regs, 0, sizeof(*regs));
	regs->syscallno = syscallno;
	regs->pc = bprm->entry;
	regs->sp = bprm->p;
	regs->pstate = PSR_MODE_EL0t;
	__atomic_add_fetch(&nr_execs, 1, __ATOMIC_RELAXED);
	ret = 0;
out:
	if (mm)
		mmput(mm);
	dput(d);
	kfree(bprm);
	return ret;
}

long __arm64_sys_execve(const struct pt_regs *regs)
{
	return do_execveat_common((const char *)regs->regs[0],
				  (const char *const *)regs->regs[1],
				  (const char *const *)regs->regs[2]);
}

/* From a kernel thread (pid 1's kernel_init): its registers become the program's. */
int kernel_execve(const char *filename, const char *const *argv)
{
	return do_execveat_common(filename, argv, NULL);
}
