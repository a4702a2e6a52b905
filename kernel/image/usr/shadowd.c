// SPDX-License-Identifier: MIT
/*
 * /bin/shadowd: replays here the system calls of the host processes that
 * kpemu shadows (drivers/char/kpemu_shadow.c). It and its twins read
 * requests from /dev/kpemu-shadow (the device names the reader after the
 * host process), make the same call (an open that they close again, a
 * symlink, a mkdir, an unlink) and write the request's seq back; the
 * host's call goes on only then. A fork makes the child's twin, with the
 * host child's pid (clone3's set_tid), which goes on reading requests for
 * that process until its exit request ends it in the kernel; its parent
 * (twin) reaps it when its read returns 0, as wait4 would. Where a pid
 * is taken here, the fork's child exits at once and shadowd itself
 * replays that process's calls. A real-time task, so that it runs as soon
 * as the doorbell wakes it. Where there is no device (under QEMU) it
 * exits, and init does not restart it.
 */
#include <libc.h>

#define SCHED_FIFO		1
#define WNOHANG			1

/* as include/linux/kpemu_shadow.h */
#define SHADOW_OP_FORK		1
#define SHADOW_OP_OPEN		2
#define SHADOW_OP_SYMLINK	3
#define SHADOW_OP_MKDIR		4
#define SHADOW_OP_UNLINK	5
#define SHADOW_OP_ADOPT	6
#define SHADOW_OP_KILL		8

struct shadow_req {
	unsigned long	seq;
	unsigned int	op;
	unsigned int	flags;
	unsigned int	mode;
	int		pid;
	int		child;
	unsigned int	reserved;
	char		comm[16];
	char		path[256];
	char		target[256];
};

/* include/uapi/linux/sched.h, up to set_tid_size (CLONE_ARGS_SIZE_VER1) */
struct clone_args {
	unsigned long	flags, pidfd, child_tid, parent_tid, exit_signal;
	unsigned long	stack, stack_size, tls, set_tid, set_tid_size;
};

/* Forks the twin of process pid: 0 in the twin, its pid or an error here. */
static long twin(int pid)
{
	struct clone_args args = {
		.exit_signal = SIGCHLD, .set_tid = (unsigned long)&pid, .set_tid_size = 1,
	};

	return syscall6(__NR_clone3, (long)&args, sizeof(args), 0, 0, 0, 0);
}

/* Replays req; returns 1 in a new twin, which leaves the reply to its parent. */
static int replay(const struct shadow_req *req)
{
	int status, fd;
	pid_t pid;

	switch (req->op) {
	case SHADOW_OP_FORK:
		if (req->child > 0) {
			pid = twin(req->child);
			if (pid == 0)
				return 1;
			if (pid > 0)
				break;
		}
		/* no twin: the fork is still seen, and its child goes */
		pid = fork();
		if (pid == 0)
			exit(0);
		if (pid > 0)
			waitpid(pid, &status, 0);
		break;
	case SHADOW_OP_ADOPT:
		if (req->child > 0 && twin(req->child) == 0)
			return 1;
		break;
	case SHADOW_OP_OPEN:
		fd = syscall6(__NR_openat, AT_FDCWD, (long)req->path, req->flags, req->mode, 0, 0);
		if (fd >= 0)
			close(fd);
		break;
	case SHADOW_OP_SYMLINK:
		symlink(req->target, req->path);
		break;
	case SHADOW_OP_MKDIR:
		syscall6(__NR_mkdirat, AT_FDCWD, (long)req->path, req->mode, 0, 0, 0);
		break;
	case SHADOW_OP_UNLINK:
		syscall6(__NR_unlinkat, AT_FDCWD, (long)req->path, req->flags, 0, 0, 0);
		break;
	case SHADOW_OP_KILL:	/* signals no one here: the host delivers */
		syscall6(__NR_kill, req->child, req->flags, 0, 0, 0, 0);
		break;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct shadow_req req;
	int prio = 50, status, fd = open("/dev/kpemu-shadow", O_RDWR);

	if (fd < 0)
		return 0;
	syscall6(__NR_sched_setscheduler, 0, SCHED_FIFO, (long)&prio, 0, 0, 0);
	for (;;) {
		/* the twins of children that exited, as their parent's wait4 would */
		while (waitpid(-1, &status, WNOHANG) > 0)
			;
		switch (read(fd, &req, sizeof(req))) {
		case sizeof(req):
			break;
		case 0:		/* a child's twin exited: wait until it can be reaped */
			waitpid(-1, &status, 0);
			continue;
		default:
			continue;
		}
		req.path[sizeof(req.path) - 1] = 0;
		req.target[sizeof(req.target) - 1] = 0;
		if (replay(&req))
			continue;
		write(fd, &req.seq, sizeof(req.seq));
	}
}
