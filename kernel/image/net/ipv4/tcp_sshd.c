// SPDX-License-Identifier: MIT
/*
 * "sshd": the reader of port 22, as a kernel thread. It stands in for the
 * sshd-like user task of a system with socket system calls: it sleeps on
 * the socket's wait queue (sk_sleep(sk)), is woken by tcp_v4_rcv()'s
 * sk_data_ready when a segment is queued, reads what arrived with
 * tcp_recvmsg() and answers each read with tcp_sendmsg(), which goes out
 * through ip_queue_xmit() -> dev_queue_xmit() -> the NIC driver.
 *
 * The workload starts it (tcp_sshd_start(), from pid 1, which alone forks)
 * once a NIC driver has eth0's link, and it stays for the rest of the run;
 * from then on pid 1 no longer drains port 22 itself.
 *
 * Counters the host reads by symbol (u64): sshd_wakeups (reads that found
 * data), sshd_bytes_in, sshd_replies (tcp_sendmsg() calls that queued).
 */
#include <linux/kernel.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/wait.h>
#include <net/sock.h>

#define SSHD_PORT	22

u64 sshd_wakeups;
u64 sshd_bytes_in;
u64 sshd_replies;
static struct task_struct *sshd_task;
static char sshd_buf[512] __aligned(16);

static int sshd_thread(void *arg)
{
	struct sock *sk = arg;
	char reply[64];
	int n, len;

	for (;;) {
		wait_event(sk->sk_wq, !skb_queue_empty(&sk->sk_receive_queue));
		n = tcp_recvmsg(sk, sshd_buf, sizeof(sshd_buf), 0, NULL);
		if (n <= 0)
			continue;
		WRITE_ONCE(sshd_wakeups, sshd_wakeups + 1);
		WRITE_ONCE(sshd_bytes_in, sshd_bytes_in + n);
		len = snprintf(reply, sizeof(reply), "sshd: %d bytes, %llu so far\r\n",
			       n, sshd_bytes_in);
		if (tcp_sendmsg(sk, reply, len) > 0)
			WRITE_ONCE(sshd_replies, sshd_replies + 1);
	}
	return 0;
}

/* Starts sshd on port 22 if it is not running; 0 or -errno. Pid 1 only. */
int tcp_sshd_start(void)
{
	struct sock *sk;
	struct task_struct *p;

	if (likely(sshd_task))
		return 0;
	sk = inet_lookup_listener(SSHD_PORT);
	if (!sk)
		return -ENOENT;
	p = kthread_run(sshd_thread, sk, "sshd");
	if (IS_ERR(p))
		return PTR_ERR(p);
	WRITE_ONCE(sk->sk_reader, p);
	sshd_task = p;
	return 0;
}
