// SPDX-License-Identifier: MIT
/*
 * The socket system calls, after net/socket.c and net/ipv4/af_inet.c:
 * AF_INET SOCK_STREAM only, with arm64's numbers. A socket is a file
 * (sock_alloc_file(): f_op socket_file_ops, private_data its struct sock,
 * one shared S_IFSOCK inode as sockfs's) so it lives in the fd table,
 * is inherited by fork and goes with its last close (sock_close ->
 * tcp_close). bind(2) sets the local address, listen(2) hashes an
 * accepting listener, accept(2)/accept4(2) take a connection with
 * inet_csk_accept(), recvfrom(2)/read(2) go to tcp_recvmsg() (sleeping on
 * the socket's wait queue until data or shutdown), sendto(2)/write(2) to
 * tcp_sendmsg(); shutdown(2) stops either direction. connect(2) is not
 * there: kpemu has no active opens.
 *
 * Counters the host reads (u64): sock_accepts (connections accept
 * returned), sock_bytes_in (bytes recvfrom/read returned),
 * sock_sends (sendto/write calls whose segment was queued).
 */
#include <linux/kernel.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <asm/ptrace.h>
#include <net/checksum.h>
#include <net/sock.h>

#define AF_INET		2
#define SOCK_STREAM	1
#define SOCK_TYPE_MASK	0xf
#define SOCK_NONBLOCK	O_NONBLOCK
#define IPPROTO_TCP_	6
#define MSG_DONTWAIT	0x40
#define SOMAXCONN	16		/* kpemu's accept queues are short */
#ifndef EPIPE
#define EPIPE		32
#endif

struct sockaddr_in {
	u16		sin_family;
	__be16		sin_port;
	__be32		sin_addr;
	u8		sin_zero[8];
};

u64 sock_accepts;
u64 sock_bytes_in;
u64 sock_sends;

static const struct file_operations socket_file_ops;
static struct inode sock_inode = {
	.i_mode	= S_IFSOCK | 0777,
	.i_nlink = 1,
	.i_fop	= &socket_file_ops,
};

static struct file *sock_alloc_file(struct sock *sk, int flags)
{
	struct file *f = ramfs_open(&sock_inode, FMODE_READ | FMODE_WRITE, "socket:");

	if (!f)
		return ERR_PTR(-ENOMEM);
	f->f_mode &= ~FMODE_LSEEK;
	f->f_flags = O_RDWR | (flags & O_NONBLOCK);
	f->f_count = 1;
	f->private_data = sk;
	return f;
}

/* A new socket file's fd, or -errno (the socket is freed then). */
static long sock_map_fd(struct sock *sk, int flags)
{
	struct file *f = sock_alloc_file(sk, flags);
	int fd;

	if (IS_ERR(f)) {
		tcp_close(sk, 0);
		return PTR_ERR(f);
	}
	fd = get_unused_fd(f);
	if (fd < 0)
		fput(f);	/* sock_close() frees the socket */
	return fd;
}

static struct sock *sockfd_lookup(int fd, struct file **filep, long *err)
{
	struct file *f = fget(fd);

	if (!f) {
		*err = -EBADF;
		return NULL;
	}
	if (f->f_op != &socket_file_ops) {
		*err = -ENOTSOCK;
		return NULL;
	}
	if (filep)
		*filep = f;
	return f->private_data;
}

static void put_sockaddr(struct sock *sk, void *uaddr, int *ulen)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_port = sk->skc_dport,
		.sin_addr = sk->skc_daddr,
	};
	int len;

	if (!uaddr || !ulen || copy_from_user(&len, ulen, sizeof(len)) || len < 0)
		return;
	if (len > (int)sizeof(sin))
		len = sizeof(sin);
	if (!copy_to_user(uaddr, &sin, len)) {
		len = sizeof(sin);
		copy_to_user(ulen, &len, sizeof(len));
	}
}

/* tcp_recvmsg() for a process: wait for data or shutdown, then copy. */
static long sock_recvmsg(struct file *file, struct sock *sk, char *buf, size_t len,
			 int flags)
{
	long n;

	if (sk->skc_state != TCP_ESTABLISHED)
		return -ENOTCONN;
	if (!len)
		return 0;
	while (skb_queue_empty(&sk->sk_receive_queue)) {
		if (READ_ONCE(sk->sk_shutdown) & RCV_SHUTDOWN)
			return 0;
		if ((flags & MSG_DONTWAIT) || (file->f_flags & O_NONBLOCK))
			return -EAGAIN;
		/* sk_wait_data() */
		wait_event(sk->sk_wq, !skb_queue_empty(&sk->sk_receive_queue) ||
			   (READ_ONCE(sk->sk_shutdown) & RCV_SHUTDOWN));
	}
	if (len > MAX_RW_COUNT)
		len = MAX_RW_COUNT;
	if (!access_ok(buf, len))
		return -EFAULT;
	n = tcp_recvmsg(sk, buf, len, flags, NULL);
	if (n > 0)
		__atomic_fetch_add(&sock_bytes_in, n, __ATOMIC_RELAXED);
	return n;
}

static long sock_sendmsg(struct sock *sk, const char *buf, size_t len)
{
	long n;

	if (sk->skc_state != TCP_ESTABLISHED)
		return -ENOTCONN;
	if (READ_ONCE(sk->sk_shutdown) & SEND_SHUTDOWN)
		return -EPIPE;
	if (len > MAX_RW_COUNT)
		len = MAX_RW_COUNT;
	if (!access_ok(buf, len))
		return -EFAULT;
	n = tcp_sendmsg(sk, buf, len);
	if (n >= 0)
		__atomic_fetch_add(&sock_sends, 1, __ATOMIC_RELAXED);
	return n;
}

static ssize_t sock_read_iter(struct file *file, char *buf, size_t count, loff_t *ppos)
{
	return sock_recvmsg(file, file->private_data, buf, count, 0);
}

static ssize_t sock_write_iter(struct file *file, const char *buf, size_t count, loff_t *ppos)
{
	return sock_sendmsg(file->private_data, buf, count);
}

static int sock_close(struct inode *inode, struct file *file)
{
	tcp_close(file->private_data, 0);
	return 0;
}

static const struct file_operations socket_file_ops = {
	.read		= sock_read_iter,
	.write		= sock_write_iter,
	.release	= sock_close,
};

/* __sys_socket(): inet_create() for SOCK_STREAM/IPPROTO_TCP */
long __arm64_sys_socket(const struct pt_regs *regs)
{
	int family = regs->regs[0], type = regs->regs[1], protocol = regs->regs[2];
	struct sock *sk;

	if (family != AF_INET)
		return -EAFNOSUPPORT;
	if ((type & SOCK_TYPE_MASK) != SOCK_STREAM ||
	    (protocol && protocol != IPPROTO_TCP_))
		return -EPROTONOSUPPORT;
	sk = sk_alloc();
	if (!sk)
		return -ENOMEM;
	return sock_map_fd(sk, type & SOCK_NONBLOCK);
}

/* __sys_bind() -> inet_bind() */
long __arm64_sys_bind(const struct pt_regs *regs)
{
	int addrlen = regs->regs[2];
	struct sockaddr_in sin;
	struct sock *sk;
	long err;

	sk = sockfd_lookup(regs->regs[0], NULL, &err);
	if (!sk)
		return err;
	if (addrlen < (int)sizeof(sin))
		return -EINVAL;
	if (copy_from_user(&sin, (void *)regs->regs[1], sizeof(sin)))
		return -EFAULT;
	if (sin.sin_family != AF_INET)
		return -EAFNOSUPPORT;
	if (sk->skc_state != TCP_CLOSE || sk->skc_num)
		return -EINVAL;
	if (!sin.sin_port)
		return -EINVAL;	/* no ephemeral ports */
	if (inet_lookup_listener(ntohs(sin.sin_port)))
		return -EADDRINUSE;
	sk->skc_rcv_saddr = sin.sin_addr;
	sk->skc_num = ntohs(sin.sin_port);
	return 0;
}

/* __sys_listen() -> inet_listen() -> inet_csk_listen_start() */
long __arm64_sys_listen(const struct pt_regs *regs)
{
	int backlog = regs->regs[1];
	struct sock *sk;
	long err;

	sk = sockfd_lookup(regs->regs[0], NULL, &err);
	if (!sk)
		return err;
	if (backlog <= 0 || backlog > SOMAXCONN)
		backlog = SOMAXCONN;
	if (sk->skc_state == TCP_LISTEN) {
		WRITE_ONCE(sk->sk_max_ack_backlog, backlog);
		return 0;
	}
	if (sk->skc_state != TCP_CLOSE || !sk->skc_num)
		return -EINVAL;
	sk->sk_max_ack_backlog = backlog;
	sk->sk_reader = current;
	sk->skc_state = TCP_LISTEN;
	err = inet_hash(sk);
	if (err) {
		sk->skc_state = TCP_CLOSE;
		sk->sk_max_ack_backlog = 0;
		sk->sk_reader = NULL;
	}
	return err;
}

/* __sys_accept4() -> inet_accept() -> inet_csk_accept() */
static long do_accept4(int fd, void *upeer, int *upeer_len, int flags)
{
	struct file *file;
	struct sock *sk, *newsk;
	long err;

	if (flags & ~(SOCK_NONBLOCK | 02000000))	/* SOCK_CLOEXEC */
		return -EINVAL;
	sk = sockfd_lookup(fd, &file, &err);
	if (!sk)
		return err;
	if (sk->skc_state != TCP_LISTEN)
		return -EINVAL;
	newsk = inet_csk_accept(sk, file->f_flags, (int *)&err, false);
	if (!newsk)
		return (int)err;
	__atomic_fetch_add(&sock_accepts, 1, __ATOMIC_RELAXED);
	put_sockaddr(newsk, upeer, upeer_len);
	return sock_map_fd(newsk, flags & SOCK_NONBLOCK);
}

long __arm64_sys_accept(const struct pt_regs *regs)
{
	return do_accept4(regs->regs[0], (void *)regs->regs[1], (int *)regs->regs[2], 0);
}

long __arm64_sys_accept4(const struct pt_regs *regs)
{
	return do_accept4(regs->regs[0], (void *)regs->regs[1], (int *)regs->regs[2],
			  regs->regs[3]);
}

/* __sys_sendto(): a stream socket ignores the address */
long __arm64_sys_sendto(const struct pt_regs *regs)
{
	struct sock *sk;
	long err;

	sk = sockfd_lookup(regs->regs[0], NULL, &err);
	if (!sk)
		return err;
	return sock_sendmsg(sk, (const char *)regs->regs[1], regs->regs[2]);
}

/* __sys_recvfrom() */
long __arm64_sys_recvfrom(const struct pt_regs *regs)
{
	struct file *file;
	struct sock *sk;
	long err, n;

	sk = sockfd_lookup(regs->regs[0], &file, &err);
	if (!sk)
		return err;
	n = sock_recvmsg(file, sk, (char *)regs->regs[1], regs->regs[2], regs->regs[3]);
	if (n >= 0)
		put_sockaddr(sk, (void *)regs->regs[4], (int *)regs->regs[5]);
	return n;
}

/* __sys_shutdown() -> inet_shutdown(): SHUT_RD 0, SHUT_WR 1, SHUT_RDWR 2 */
long __arm64_sys_shutdown(const struct pt_regs *regs)
{
	int how = regs->regs[1];
	struct sock *sk;
	long err;

	sk = sockfd_lookup(regs->regs[0], NULL, &err);
	if (!sk)
		return err;
	if (how < 0 || how > 2)
		return -EINVAL;
	if (sk->skc_state != TCP_ESTABLISHED)
		return -ENOTCONN;
	__atomic_fetch_or(&sk->sk_shutdown, how + 1, __ATOMIC_RELAXED);
	wake_up(&sk->sk_wq);
	return 0;
}
