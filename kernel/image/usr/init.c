// SPDX-License-Identifier: MIT
/*
 * /init, pid 1: first shows what the kernel's sysfs says about the RTC
 * and the interrupt lines, as "grep . <files>" would print them (one
 * "<file>:<line>" per non-empty line: /sys/class/rtc/rtc0/{name,date,
 * time,since_epoch}, then each of /sys/kernel/irq/<irq>/'s attributes;
 * nothing where there is no such file, as under QEMU without a device
 * tree). Then it runs /bin/segv once (it must die of SIGSEGV, after read(2)
 * into its unmapped buffer failed with EFAULT: wait status
 * 11, "exit code 139" to a shell), then starts /bin/sh, /bin/cron,
 * /bin/sshd and /bin/lockd and reaps children for ever, restarting them if they exit,
 * and /bin/shadowd, once (it exits where it has nothing to do). Its
 * stdio is /dev/console (kernel_init opened it); after the sysfs lines it
 * writes there only if something is wrong.
 */
#include <libc.h>

static const char *const irq_attrs[] = {
	"per_cpu_count", "chip_name", "hwirq", "type", "wakeup", "name", "actions",
};

/* grep . @path: each non-empty line as "<path>:<line>"; 16-byte reads. */
static void grep_dot(const char *path)
{
	char text[256], out[320], *line, *nl, *p;
	long n, len = 0;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return;
	while (len < (long)sizeof(text) - 1 &&
	       (n = read(fd, text + len, sizeof(text) - 1 - len < 16 ?
				       sizeof(text) - 1 - len : 16)) > 0)
		len += n;
	close(fd);
	text[len] = 0;
	for (line = text; *line; line = nl + 1) {
		for (nl = line; *nl && *nl != '\n'; nl++)
			;
		if (nl > line) {
			p = out;
			memcpy(p, path, strlen(path));
			p += strlen(path);
			*p++ = ':';
			memcpy(p, line, nl - line);
			p += nl - line;
			*p++ = '\n';
			write(1, out, p - out);
		}
		if (!*nl)
			break;
	}
}

static void show_sysfs(void)
{
	static const char *const rtc[] = {
		"/sys/class/rtc/rtc0/name", "/sys/class/rtc/rtc0/date",
		"/sys/class/rtc/rtc0/time", "/sys/class/rtc/rtc0/since_epoch",
	};
	unsigned int i;

	for (i = 0; i < sizeof(rtc) / sizeof(rtc[0]); i++)
		grep_dot(rtc[i]);
	for_each_leaf("/sys/kernel/irq", irq_attrs, sizeof(irq_attrs) / sizeof(irq_attrs[0]), grep_dot);
}

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
	pid_t segv, sh, cron, sshd, lockd, pid;
	int status = 0;

	show_sysfs();
	segv = spawn("/bin/segv", "segv");
	if (waitpid(segv, &status, 0) != segv || WIFEXITED(status) ||
	    128 + WTERMSIG(status) != 139)
		fputs(2, "init: segv: unexpected exit status\n");

	sh = spawn("/bin/sh", "sh");
	cron = spawn("/bin/cron", "cron");
	sshd = spawn("/bin/sshd", "sshd");
	lockd = spawn("/bin/lockd", "lockd");
	spawn("/bin/shadowd", "shadowd");
	for (;;) {
		pid = wait4(-1, &status, 0, NULL);
		if (pid == sh)
			sh = spawn("/bin/sh", "sh");
		else if (pid == cron)
			cron = spawn("/bin/cron", "cron");
		else if (pid == sshd)
			sshd = spawn("/bin/sshd", "sshd");
		else if (pid == lockd)
			lockd = spawn("/bin/lockd", "lockd");
		else if (pid < 0)
			msleep(100);
	}
}
