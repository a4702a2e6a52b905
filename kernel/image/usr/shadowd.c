// SPDX-License-Identifier: MIT
/*
 * /bin/shadowd: replays here the system calls of the host processes that
 * kpemu shadows (drivers/char/kpemu_shadow.c). It reads a request from
 * /dev/kpemu-shadow, takes the host process's name (prctl PR_SET_NAME),
 * makes the same call (a fork whose child exits at once, an open that it
 * closes again, a symlink, a mkdir, an unlink), and writes the request's
 * seq back; the host's call goes on only then. A real-time task, so that
 * it runs as soon as the doorbell wakes it. Where there is no device (under
 * QEMU) it exits, and init does not restart it.
 */
#include <libc.h>

#define PR_SET_NAME		15
#define SCHED_FIFO		1

/* as include/linux/kpemu_shadow.h */
#define SHADOW_OP_FORK		1
#define SHADOW_OP_OPEN		2
#define SHADOW_OP_SYMLINK	3
#define SHADOW_OP_MKDIR		4
#define SHADOW_OP_UNLINK	5

struct shadow_req {
	unsigned long	seq;
	unsigned int	op;
	unsigned int	flags;
	unsigned int	mode;
	unsigned int	reserved;
	char		comm[16];
	char		path[256];
	char		target[256];
};

static void replay(const struct shadow_req *req)
{
	int status, fd;
	pid_t pid;

	switch (req->op) {
	case SHADOW_OP_FORK:
		pid = fork();
		if (pid == 0)
			exit(0);
		if (pid > 0)
			waitpid(pid, &status, 0);
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
	}
}

int main(int argc, char **argv)
{
	struct shadow_req req;
	int prio = 50, fd = open("/dev/kpemu-shadow", O_RDWR);

	if (fd < 0)
		return 0;
	syscall6(__NR_sched_setscheduler, 0, SCHED_FIFO, (long)&prio, 0, 0, 0);
	for (;;) {
		if (read(fd, &req, sizeof(req)) != sizeof(req))
			continue;
		req.comm[sizeof(req.comm) - 1] = 0;
		req.path[sizeof(req.path) - 1] = 0;
		req.target[sizeof(req.target) - 1] = 0;
		syscall6(__NR_prctl, PR_SET_NAME, (long)req.comm, 0, 0, 0, 0);
		replay(&req);
		write(fd, &req.seq, sizeof(req.seq));
	}
}
