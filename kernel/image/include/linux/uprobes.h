/* SPDX-License-Identifier: MIT */
/*
 * User-space probes, the guest half (Linux: include/linux/uprobes.h).
 *
 * kpemu's uprobes are Go, in the host (kprobes/uprobes.go), attached where
 * Linux attaches them: exec tells the host about a new address space
 * (uprobe_mmap) so that it writes BRK #0x005 into the probed pages, and
 * mmput about a gone one (uprobe_clear_state); the EL0 BRK and
 * software-step exceptions reach the host through the user break and step
 * hooks (arch/arm64/kernel/probes/uprobes.c). The [uprobes] page, where
 * instructions are stepped out of line and uretprobes return to, is a
 * guest VMA that xol_add_vma() maps when the host first asks for it.
 */
#ifndef _LINUX_UPROBES_H
#define _LINUX_UPROBES_H

struct mm_struct;
struct task_struct;

/* UPROBE_SWBP_INSN: BRK #0x005 (asm/uprobes.h) */
#define UPROBE_SWBP_INSN	0xd42000a0U

/* The host's answers beside DBG_HOOK_HANDLED and DBG_HOOK_ERROR. */
#define UPROBE_HC_STEP		2	/* handled: step the slot (user_enable_single_step) */
#define UPROBE_HC_NEED_XOL	3	/* map the [uprobes] page (xol_add_vma) and ask again */
#define UPROBE_HC_REWIND	4	/* the slot's instruction has not run yet: step it again */

void uprobe_mmap(struct mm_struct *mm);
void uprobe_clear_state(struct mm_struct *mm);
int xol_add_vma(struct mm_struct *mm);
void uprobe_copy_process(struct task_struct *t, struct mm_struct *oldmm);

#endif /* _LINUX_UPROBES_H */
