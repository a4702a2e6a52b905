// SPDX-License-Identifier: MIT
/*
 * /dev/kpemu-shadow: how this kernel replays the system calls of the host
 * processes that kpemu shadows, so that a probe on kernel_clone or
 * do_sys_openat2 sees the fork or open a host shell just made, as it would
 * if the shell ran on this kernel. kpemu's host stops the host process in
 * its system call (seccomp), queues the call in shadow_requests and rings
 * the kpemu,doorbell device; the doorbell's interrupt wakes the reader of
 * /dev/kpemu-shadow (/bin/shadowd, a SCHED_FIFO task), which reads one
 * request, makes the same system call from user space and writes the
 * request's seq back. That write tells the host (HC_SHADOW_DONE), which
 * then lets the host's call go on. kpemu's own device, not Linux's.
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
#define DOORBELL_ID_VALUE	0x6c656264	/* "dbel" */

struct shadow_ring shadow_requests;
static DECLARE_WAIT_QUEUE_HEAD(shadow_wait);
static DEFINE_SPINLOCK(shadow_lock);	/* readers taking requests */
static void *doorbell;

static bool shadow_pending(void)
{
	return READ_ONCE(shadow_requests.head) != READ_ONCE(shadow_requests.tail);
}

static irqreturn_t doorbell_interrupt(int irq, void *dev_id)
{
	u32 pending = readl(doorbell + DOORBELL_PENDING);

	if (!pending)
		return IRQ_NONE;
	writel(pending, doorbell + DOORBELL_ACK);
	wake_up_all(&shadow_wait);
	return IRQ_HANDLED;
}

/* One request per read, in order; sleeps until there is one. */
static ssize_t shadow_read(struct file *file, char *buf, size_t count, loff_t *ppos)
{
	struct shadow_req req;
	u64 tail;

	if (count < sizeof(req))
		return -EINVAL;
	for (;;) {
		wait_event(shadow_wait, shadow_pending());
		spin_lock(&shadow_lock);
		tail = shadow_requests.tail;
		if (tail != READ_ONCE(shadow_requests.head))
			break;
		spin_unlock(&shadow_lock);	/* another reader took it */
	}
	asm volatile("dmb ishld" : : : "memory");	/* the request before head */
	req = shadow_requests.req[tail % SHADOW_RING_SIZE];
	WRITE_ONCE(shadow_requests.tail, tail + 1);
	spin_unlock(&shadow_lock);
	if (copy_to_user(buf, &req, sizeof(req)))
		return -EFAULT;
	return sizeof(req);
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
}
