// SPDX-License-Identifier: MIT
/*
 * /dev/kpemu-shadow: how this kernel replays the system calls of the host
 * processes that kpemu shadows, so that a probe on kernel_clone or
 * do_sys_openat2 sees the fork or open a host shell just made, as it would
 * if the shell ran on this kernel. kpemu's host stops the host process in
 * its system call (seccomp), queues the call in shadow_requests and rings
 * the kpemu,doorbell device; the doorbell's interrupt wakes the readers of
 * /dev/kpemu-shadow, /bin/shadowd and its twins (SCHED_FIFO tasks).
 *
 * Each host process has a twin: a task forked by its parent's twin with
 * clone3(set_tid) when the host process forked, so that it has the host
 * process's pid, and the pid that set_event_pid or a probe's $pid sees is
 * the one the host's shell printed. A request names its process (pid);
 * only that process's twin takes it, under the process's comm, makes the
 * same system call from user space and writes the request's seq back,
 * which tells the host (HC_SHADOW_DONE), which then lets the host's call
 * go on. An exit request makes the twin exit here, with the host
 * process's status; its seq is reported once the twin is gone
 * (kpemu_shadow_exit). A request whose process has no twin (its pid was
 * taken here) is taken by the first reader, shadowd itself. So that a
 * pid is not taken here, the doorbell tells the host's pid_max, and this
 * kernel's own tasks take pids above it (pid_leave_to_host()).
 * kpemu's own device, not Linux's.
 */
#include <linux/kernel.h>
#include <linux/fs.h>
#include <linux/interrupt.h>
#include <linux/kpemu_shadow.h>
#include <linux/mm.h>
#include <linux/of_fdt.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <asm/hostcall.h>
#include <asm/io.h>
#include <asm/memory.h>

/* the doorbell's registers (machine/doorbell.go) */
#define DOORBELL_ID		0x000
#define DOORBELL_PENDING	0x004
#define DOORBELL_ACK		0x008
#define DOORBELL_HOST_PID_MAX	0x00c
#define DOORBELL_ID_VALUE	0x6c656264	/* "dbel" */

struct shadow_ring shadow_requests;
static DECLARE_WAIT_QUEUE_HEAD(shadow_wait);
static DEFINE_SPINLOCK(shadow_lock);	/* readers taking requests */
static void *doorbell;
static pid_t shadow_replayer;		/* the first reader's tgid: /bin/shadowd */

static irqreturn_t doorbell_interrupt(int irq, void *dev_id)
{
	u32 pending = readl(doorbell + DOORBELL_PENDING);

	if (!pending)
		return IRQ_NONE;
	writel(pending, doorbell + DOORBELL_ACK);
	wake_up_all(&shadow_wait);
	return IRQ_HANDLED;
}

/* Whether process pid has a live twin here. */
static bool shadow_has_twin(pid_t pid)
{
	struct task_struct *p;
	unsigned long flags;
	bool twin;

	if (pid <= 0)
		return false;
	raw_spin_lock_irqsave(&tasklist_lock, flags);
	p = find_task_by_pid_ns(pid);
	twin = p && p->shadow && p->tgid == pid && !READ_ONCE(p->exit_state) &&
	       !(p->flags & PF_EXITING);
	raw_spin_unlock_irqrestore(&tasklist_lock, flags);
	return twin;
}

/* Whether the request at tail, if any, is current's to take. */
static bool shadow_mine(void)
{
	u64 tail = READ_ONCE(shadow_requests.tail);
	pid_t pid;

	if (tail == READ_ONCE(shadow_requests.head))
		return false;
	asm volatile("dmb ishld" : : : "memory");	/* the request before head */
	pid = READ_ONCE(shadow_requests.req[tail % SHADOW_RING_SIZE].pid);
	if (pid > 0 && pid == current->tgid)
		return true;
	return current->tgid == shadow_replayer && !shadow_has_twin(pid);
}

/* Whether one of current's children (a twin) exited: its parent reaps it. */
static bool shadow_child_exited(void)
{
	struct task_struct *p;
	unsigned long flags;
	bool exited = false;

	raw_spin_lock_irqsave(&tasklist_lock, flags);
	list_for_each_entry(p, &current->children, sibling)
		if (READ_ONCE(p->exit_state) == EXIT_ZOMBIE) {
			exited = true;
			break;
		}
	raw_spin_unlock_irqrestore(&tasklist_lock, flags);
	return exited;
}

/*
 * One request per read, in order; sleeps until there is one for current.
 * An exit request does not return: its twin exits. A read that returns 0
 * says that a child exited, for the reader to reap (twins make no other
 * children).
 */
static ssize_t shadow_read(struct file *file, char *buf, size_t count, loff_t *ppos)
{
	struct shadow_req req;
	u64 tail;

	if (count < sizeof(req))
		return -EINVAL;
	if (!current->shadow) {
		current->shadow = 1;
		if (!shadow_replayer)
			shadow_replayer = current->tgid;
	}
	for (;;) {
		/* S, not D, in sched_switch: as the host process waits */
		wait_event_interruptible(shadow_wait, shadow_mine() || shadow_child_exited());
		spin_lock(&shadow_lock);
		if (!shadow_mine()) {
			spin_unlock(&shadow_lock);	/* none, or another reader took it */
			if (shadow_child_exited())
				return 0;
			continue;
		}
		tail = shadow_requests.tail;
		req = shadow_requests.req[tail % SHADOW_RING_SIZE];
		WRITE_ONCE(shadow_requests.tail, tail + 1);
		spin_unlock(&shadow_lock);
		wake_up_all(&shadow_wait);	/* the next request may be another's */
		req.comm[sizeof(req.comm) - 1] = 0;
		__set_task_comm(current, req.comm, false);
		if (req.op == SHADOW_OP_KILL)
			current->shadow_kill_errno = req.mode;	/* kill(2) answers it */
		if (req.op != SHADOW_OP_EXIT)
			break;
		if (req.pid == current->tgid) {
			current->shadow_exit_seq = req.seq;
			do_exit(req.flags);
		}
		HOSTCALL2(HC_SHADOW_DONE, req.seq, 0);	/* no twin to end */
	}
	if (copy_to_user(buf, &req, sizeof(req)))
		return -EFAULT;
	return sizeof(req);
}

/* do_exit() of a shadowd task: a twin that an exit request ended reports it. */
void kpemu_shadow_exit(struct task_struct *tsk)
{
	if (!tsk->shadow)
		return;
	if (tsk->shadow_exit_seq)
		HOSTCALL2(HC_SHADOW_DONE, tsk->shadow_exit_seq, 0);
	/* requests for its process, if any more come, are shadowd's now */
	wake_up_all(&shadow_wait);
}

/* A request's seq, written back when it was replayed. */
static ssize_t shadow_write(struct file *file, const char *buf, size_t count, loff_t *ppos)
{
	u64 seq;

	if (count != sizeof(seq))
		return -EINVAL;
	if (copy_from_user(&seq, buf, sizeof(seq)))
		return -EFAULT;
	HOSTCALL2(HC_SHADOW_DONE, seq, 0);
	return count;
}

static const struct file_operations shadow_fops = {
	.read	= shadow_read,
	.write	= shadow_write,
};

/* The device, if the board has a doorbell (kpemu's; QEMU's virt has none). */
void kpemu_shadow_init(void)
{
	struct of_device_res res;
	u32 host_pid_max;

	if (of_find_compatible_device("kpemu,doorbell", &res) || !res.irq)
		return;
	doorbell = ioremap(res.base, res.size);
	if (!doorbell || readl(doorbell + DOORBELL_ID) != DOORBELL_ID_VALUE) {
		pr_info("kpemu-shadow: no doorbell at 0x%08llx\n", res.base);
		doorbell = NULL;
		return;
	}
	if (request_irq(res.irq, doorbell_interrupt, IRQF_TRIGGER_HIGH, "kpemu-doorbell", NULL)) {
		doorbell = NULL;
		return;
	}
	make_special("/dev/kpemu-shadow", S_IFCHR | 0600, &shadow_fops);
	/* before user space and the workload's threads start */
	host_pid_max = readl(doorbell + DOORBELL_HOST_PID_MAX);
	if (host_pid_max)
		pid_leave_to_host(host_pid_max);
}
