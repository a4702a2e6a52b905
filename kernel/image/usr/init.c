// SPDX-License-Identifier: MIT
/*
 * /init, pid 1: runs /bin/segv once (it must die of SIGSEGV, after read(2)
 * into its unmapped buffer failed with EFAULT: wait status
 * 11, "exit code 139" to a shell), then starts /bin/sh, /bin/cron and
 * /bin/sshd and reaps children for ever, restarting them if they exit. Its
 * stdio is /dev/console (kernel_init opened it); it writes there only
 * if something is wrong.
 */
#include <libc.h>

static pid_t spawn(const char *path, const char *name)
{
	char *argv[] = { (char *)name, NULL };
	char *envp[] = { "HOME=/", "PATH=/bin", NULL };
	pid_t pid = fork();

	if (pid == 0) {
		execve(path, argv, envp);
		fputs(2, "init: cannot exec ");
		fputs(2, path);
		fputs(2, "\n");
		exit(127);
	}
	return pid;
}

int main(int argc, char **argv)
{
	pid_t segv, sh, cron, sshd, pid;
	int status = 0;

	segv = spawn("/bin/segv", "segv");
	if (waitpid(segv, &status, 0) != segv || WIFEXITED(status) ||
	    128 + WTERMSIG(status) != 139)
		fputs(2, "init: segv: unexpected exit status\n");

	sh = spawn("/bin/sh", "sh");
	cron = spawn("/bin/cron", "cron");
	sshd = spawn("/bin/sshd", "sshd");
	for (;;) {
		pid = wait4(-1, &status, 0, NULL);
		if (pid == sh)
			sh = spawn("/bin/sh", "sh");
		else if (pid == cron)
			cron = spawn("/bin/cron", "cron");
		else if (pid == sshd)
			sshd = spawn("/bin/sshd", "sshd");
		else if (pid < 0)
			msleep(100);
	}
}
