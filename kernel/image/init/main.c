// SPDX-License-Identifier: MIT
/*
 * start_kernel(), as init/main.c: banner, allocators, scheduler, GIC and
 * tick, traps and kprobes' break hooks, the workload's data; then pid 1
 * ("init") is created with user_mode_thread() and the boot CPU becomes its
 * idle task (swapper/0). pid 1 brings up the secondary CPUs (smp_init),
 * sets up the device model and the drivers (do_basic_setup: sysfs's
 * /sys/kernel/irq, the RTC), starts the workload's kernel threads, tells the host the kernel is
 * ready and runs the workload for ever.
 */
#include <linux/kernel.h>
#include <linux/fs.h>
#include <linux/tracefs.h>
#include <linux/kprobes.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/timer.h>
#include <linux/device.h>
#include <linux/irqdesc.h>
#include <linux/rtc.h>
#include <linux/sysfs.h>
#include <linux/irqchip/arm-gic.h>
#include <asm/asm-offsets.h>
#include <asm/debug-monitors.h>
#include <asm/hostcall.h>
#include <asm/sysreg.h>

/* The boot stack, 16 KiB in .bss, and its guard (Linux: init_thread_union.stack). */
struct thread_stack init_thread_union __stack;

static const char linux_banner[] =
	"Linux version 6.1.0-kpemu (kpemu@kpemu) (clang 14) #1 SMP\n";

void trap_init(void);
void workload_init(void);
void workload_start_threads(void);
__noreturn void workload_run(void);
void net_dev_init(void);
void ip_init(void);
void tcp_v4_init(void);
void skb_init(void);
int ksysfs_init(void);
void pl031_driver_init(void);
void kpemu_shadow_init(void);

/* The kernel's own workload (init/workload.c) runs in a kernel thread. */
static int kworkload(void *unused)
{
	workload_run();
}

/* console_on_rootfs(): fds 0, 1 and 2 of pid 1 are /dev/console. */
static void console_on_rootfs(void)
{
	int i;

	current->files = dup_fd(NULL);
	if (!current->files)
		panic("init: no files_struct");
	for (i = 0; i < 3; i++) {
		struct file *f = do_filp_open("/dev/console", O_RDWR, 0);

		if (IS_ERR(f) || get_unused_fd(f) != i)
			panic("Warning: unable to open an initial console.");
	}
}

/*
 * do_basic_setup(): the device model, then what Linux runs as initcalls,
 * in the order of their levels: /sys/kernel/irq (postcore), the RTC
 * class (subsys), the PL031's driver and kpemu's shadow device (device).
 * /sys/kernel (a core
 * initcall) is made in start_kernel, before tracefs makes its directory
 * there.
 */
static void do_basic_setup(void)
{
	driver_init();
	irq_sysfs_init();
	rtc_init();
	pl031_driver_init();
	kpemu_shadow_init();
}

/*
 * pid 1: bring up the other CPUs, start the kernel threads, then exec
 * /init from the initramfs; returning 0 goes to it (ret_from_fork).
 */
static int kernel_init(void *unused)
{
	static const char *const argv_init[] = { "init", NULL };
	struct task_struct *workload;
	int ret;

	smp_init();
	do_basic_setup();
	workload_start_threads();
	/* on the boot CPU, where pid 1 used to run it */
	workload = kthread_create(kworkload, NULL, "kworkload");
	if (IS_ERR(workload))
		panic("workload: cannot start kworkload");
	kthread_bind(workload, 0);
	wake_up_new_task(workload);

	console_on_rootfs();
	pr_info("Run /init as init process\n");

	/* The host's answer is ignored (under QEMU it is -1). */
	HOSTCALL2(HC_KERNEL_READY, 0, 0);

	/* let kworkload start before user space: yield this timeslice */
	schedule();
	ret = kernel_execve("/init", argv_init);
	if (ret)
		panic("Requested init /init failed (error %d).", ret);
	return 0;
}

/* rest_init(): create pid 1, then become the boot CPU's idle task. */
static __noreturn void rest_init(void)
{
	struct task_struct *init;
	pid_t pid;

	pid = user_mode_thread(kernel_init, NULL, 0);
	init = find_task_by_pid_ns(pid);
	if (!init)
		panic("No init found.");
	__set_task_comm(init, "init", false);
	/* Call into cpu_idle with preempt disabled: pid 1 runs at the first schedule() */
	cpu_startup_entry();
}

asmlinkage __noreturn void start_kernel(void)
{
	unsigned long mpidr = read_sysreg(mpidr_el1) & 0xff00ffffffUL;
	unsigned long midr = read_sysreg(midr_el1);

	printk(KERN_INFO "Booting Linux on physical CPU 0x%010lx [0x%08lx]\n",
	       mpidr, midr);
	printk(KERN_NOTICE "%s", linux_banner);
	pr_info("Machine model: kpemu virt\n");

	mem_init();
	paging_init();
	kmem_cache_init();
	vfs_caches_init();
	proc_root_init();
	sysfs_init();
	if (ksysfs_init())
		panic("ksysfs: cannot make /sys/kernel");
	event_trace_init();
	populate_rootfs();
	sched_init();
	fork_init();
	init_timers();
	gic_init();
	gic_cpu_init();
	arch_timer_starting_cpu();

	trap_init();
	debug_traps_init();
	arch_init_kprobes();
	arch_init_uprobes();

	skb_init();
	net_dev_init();
	ip_init();
	tcp_v4_init();

	workload_init();

	local_irq_enable();
	rest_init();
}
