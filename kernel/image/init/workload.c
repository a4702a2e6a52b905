// SPDX-License-Identifier: MIT
/*
 * The workload, so that probes on the kernel's functions are hit.
 *
 * The kernel thread kworkload, bound to CPU 0, runs the main loop for
 * ever: each iteration reads a ramfs file with vfs_read() (seeking back to
 * 0 at EOF with vfs_llseek()), appends what it read to a log file with
 * vfs_write(), receives a generated TCP segment through netif_receive_skb()
 * -> ip_rcv() -> tcp_v4_rcv(), and forks two children with do_fork() ->
 * kernel_clone() (kernel_clone is what most probe examples and Linux's own
 * tracing selftests probe, so it is hit often); a child runs on the least
 * loaded CPU and exits at once. Once MAX_CHILDREN are alive, kworkload
 * waits (wait_event) for one to be a zombie off its CPU and reaps those
 * that are with release_task(). The sockets' queues are drained with
 * tcp_recvmsg(), and eth0's statistics read with dev_get_stats(). Each
 * iteration ends with kmod_poll(), which runs a loading or unloading
 * module's init or exit function, and trace_mirror_poll().
 *
 * NR_CRON "cron/N" kernel threads, spread over the CPUs, sleep in
 * msleep() -> schedule_timeout() (4 * (N + 1) ms) and count their wakeups
 * in cron_wakeups[N]: several tasks are asleep inside schedule_timeout()
 * at any time.
 *
 * Everything kworkload computes depends on its own iterations only, never
 * on where the tick falls: the other tasks share none of its data.
 *
 * It prints nothing. The host reads the counters by symbol:
 * workload_iterations, nr_vfs_read, nr_vfs_write, nr_forks, nr_tcp_rcv,
 * nr_tcp_csum_bad (all u64), cron_wakeups (u64[NR_CRON]).
 */
#include <linux/tracefs.h>
#include <linux/kernel.h>
#include <linux/fs.h>
#include <linux/kthread.h>
#include <linux/timer.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/sched.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/tcp.h>
#include <net/pktgen.h>
#include <net/sock.h>

#define MAX_CHILDREN	8
#define READ_CHUNK	64
#define NR_CRON		4

u64 workload_iterations;

/*
 * Set by the host (kpemu/workload_forks): kworkload makes no forks, so
 * that the guest is as quiet as an idle box for tests that compare two
 * reads of a fork histogram (Linux's trigger-multihist selftest).
 */
u32 workload_no_forks;

/*
 * The workload's own results, which do not depend on what user space or
 * the scheduler do around it: a digest of every byte it read and every
 * return value of its reads and writes, and how many of its forks
 * succeeded. Tests compare probed and unprobed runs with them.
 */
u64 workload_digest = 0xcbf29ce484222325ULL;	/* FNV-1a */
u64 workload_forks;

static void digest(const void *p, size_t n)
{
	const unsigned char *b = p;
	u64 h = workload_digest;

	/* FNV-1a over 64-bit words, then the bytes left */
	for (; n >= 8; n -= 8, b += 8)
		h = (h ^ *(const u64 *)b) * 0x100000001b3ULL;
	while (n--)
		h = (h ^ *b++) * 0x100000001b3ULL;
	workload_digest = h;
}
u64 cron_wakeups[NR_CRON];
static int nr_children;		/* kworkload's children, zombies included */

static struct file *motd_file;		/* read side: "/etc/motd" */
static struct file *log_file;		/* write side: "/var/log/messages" */
static struct pktgen_dev pktgen;
static char read_buf[READ_CHUNK] __aligned(16);
static char recv_buf[512] __aligned(16);
static int child_tid;
static struct rtnl_link_stats64 eth0_stats;

static const char motd[] =
	"\n"
	"The programs included with the kpemu system are free software;\n"
	"the exact distribution terms for each program are described in the\n"
	"individual files in /usr/share/doc/*/copyright.\n"
	"\n"
	"kpemu comes with ABSOLUTELY NO WARRANTY, to the extent\n"
	"permitted by applicable law.\n";

static const char *const child_comm[] = { "sh", "cat", "grep", "sleep" };

void workload_init(void)
{
	struct inode *motd_inode, *log_inode;
	loff_t pos = 0;

	motd_inode = ramfs_get_inode(S_IFREG | 0644, 1024);
	log_inode = ramfs_get_inode(S_IFREG | 0640, 2048);
	if (!motd_inode || !log_inode)
		panic("workload: out of memory");

	/* /etc/motd is written once through the VFS, then only read */
	motd_file = ramfs_open(motd_inode, FMODE_READ | FMODE_WRITE, "/etc/motd");
	if (vfs_write(motd_file, motd, sizeof(motd) - 1, &pos) != sizeof(motd) - 1)
		panic("workload: cannot write /etc/motd");
	motd_file->f_mode &= ~(FMODE_WRITE | FMODE_CAN_WRITE);
	vfs_llseek(motd_file, 0, SEEK_SET);

	log_file = ramfs_open(log_inode, FMODE_WRITE, "/var/log/messages");

	pktgen_init(&pktgen, 0x6b70656d75ULL);	/* "kpemu" */
}

static int cron_thread(void *arg)
{
	long n = (long)arg;

	for (;;) {
		msleep(4 * (n + 1));
		WRITE_ONCE(cron_wakeups[n], cron_wakeups[n] + 1);
	}
	return 0;
}

/* From pid 1 once every CPU is up, so that they spread over the CPUs. */
void workload_start_threads(void)
{
	long n;

	for (n = 0; n < NR_CRON; n++)
		if (IS_ERR(kthread_run(cron_thread, (void *)n, "cron/%ld", n)))
			panic("workload: cannot start cron/%ld", n);
}

static void workload_fs(void)
{
	loff_t pos = motd_file->f_pos;	/* as ksys_read(): a copy of f_pos */
	ssize_t n;

	n = vfs_read(motd_file, read_buf, sizeof(read_buf), &pos);
	digest(&n, sizeof(n));
	if (n > 0)
		digest(read_buf, n);
	if (n > 0)
		motd_file->f_pos = pos;
	else if (n == 0)
		vfs_llseek(motd_file, 0, SEEK_SET);

	if (n > 0) {
		ssize_t w;

		pos = log_file->f_pos;
		w = vfs_write(log_file, read_buf, n, &pos);
		digest(&w, sizeof(w));
		if (w > 0)
			log_file->f_pos = pos;
	}
}

/* The first of kworkload's children that has exited and is off its CPU. */
static struct task_struct *reapable_child(void)
{
	struct task_struct *p, *found = NULL;
	unsigned long flags;

	raw_spin_lock_irqsave(&tasklist_lock, flags);
	list_for_each_entry(p, &current->children, sibling)
		if (task_reapable(p)) {
			found = p;
			break;
		}
	raw_spin_unlock_irqrestore(&tasklist_lock, flags);
	return found;
}

static void workload_fork(void)
{
	struct task_struct *p;
	unsigned long flags;
	long pid;

	pid = do_fork(SIGCHLD | CLONE_CHILD_SETTID, 0, 0, NULL, &child_tid);
	if (pid > 0) {
		workload_forks++;
		nr_children++;
		/* under tasklist_lock: other CPUs' tasks leave the list */
		raw_spin_lock_irqsave(&tasklist_lock, flags);
		p = find_task_by_pid_ns(pid);
		if (p)
			__set_task_comm(p, child_comm[pid % ARRAY_SIZE(child_comm)], true);
		raw_spin_unlock_irqrestore(&tasklist_lock, flags);
	}

	if (nr_children <= MAX_CHILDREN)
		return;
	/*
	 * wait(): for any child to exit, then reap every one that has. Not
	 * the oldest: it may wait behind a busy CPU's timeslice while the
	 * children on this CPU are done.
	 */
	wait_event(current->wait_chldexit, reapable_child());
	while ((p = reapable_child())) {
		release_task(p);
		nr_children--;
	}
}

/*
 * With a NIC driver holding eth0's link (modules/virtnet), segments arrive
 * by its interrupt; without one (QEMU, or no driver loaded) kworkload makes
 * them itself with the packet generator. Either way it drains the kernel's
 * own listeners (80, 443, 8080); port 22 is /bin/sshd's, which accepts
 * its connections.
 */
static void workload_net(void)
{
	struct sk_buff *skb;
	unsigned long flags;
	unsigned int i;

	if (!netif_carrier_ok(&loopback_dev)) {
		skb = pktgen_fill_skb(&pktgen, &loopback_dev);
		if (skb)
			netif_receive_skb(skb);
	}

	if ((workload_iterations & 7) == 0) {
		raw_spin_lock_irqsave(&tcp_hashinfo.lock, flags);
		for (i = 0; i < tcp_hashinfo.count; i++)
			if (!tcp_hashinfo.listening[i]->sk_max_ack_backlog)
				tcp_recvmsg(tcp_hashinfo.listening[i], recv_buf,
					    sizeof(recv_buf), 0, NULL);
		raw_spin_unlock_irqrestore(&tcp_hashinfo.lock, flags);
		/* as a monitoring daemon reading /proc/net/dev */
		dev_get_stats(&loopback_dev, &eth0_stats);
	}
}

__noreturn void workload_run(void)
{
	for (;;) {
		workload_iterations++;
		workload_fs();
		if (!READ_ONCE(workload_no_forks)) {
			workload_fork();
			workload_fork();
		}
		workload_net();
		kmod_poll();	/* the host's module init/exit requests */
		trace_mirror_poll();	/* and its tracefs changes */
#ifdef WORKLOAD_DEBUG
		if ((workload_iterations % WORKLOAD_DEBUG) == 0)
			printk("workload: iter=%llu read=%llu write=%llu forks=%llu tcp=%llu bad=%llu threads=%d cron0=%llu jiffies=%llu\n",
			       workload_iterations, nr_vfs_read, nr_vfs_write,
			       nr_forks, nr_tcp_rcv, nr_tcp_csum_bad, nr_threads,
			       cron_wakeups[0], jiffies);
#endif
	}
}
