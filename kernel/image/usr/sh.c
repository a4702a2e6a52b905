// SPDX-License-Identifier: MIT
/*
 * /bin/sh: not a shell, a shell's system call pattern. Each round it
 * points the link /tmp/cur at the next file (symlink(2), as "ln -s"),
 * forks, and the child sends its stdout to /dev/null (close(1) + open,
 * as "> /dev/null") and execs /bin/cat on /tmp/cur, which the kernel
 * follows to the file; the parent waits for it, removes the link
 * (unlink(2), as "rm"), appends "cat <file>: <status>" to /tmp/sh.log, lists /bin with
 * getdents64 every 8th round, takes and gives back heap (brk) and
 * anonymous memory (mmap/munmap), touching it so that pages fault in (one
 * of them first by the kernel: read(2) into a page never touched, so
 * copy_to_user() takes the fault), and sleeps 8 ms. While
 * /sys/kernel/workload_forks (kpemu's, read every 8th round) says 0, a
 * round forks no cat: the host wants the guest quiet. Every 8th round it
 * also reads sysfs as a monitoring script would: the RTC's name and time
 * and every attribute of every /sys/kernel/irq/<irq>/ (quietly when there
 * are none, as under QEMU; a read that fails is reported on the console).
 */
#include <libc.h>

static const char *const files[] = {
	"/etc/passwd", "/proc/version", "/etc/motd", "/tmp/sh.log",
};

static void ls_bin(void)
{
	char buf[512];
	long n, off;
	int fd = open("/bin", O_RDONLY | O_DIRECTORY);

	if (fd < 0)
		return;
	while ((n = getdents64(fd, buf, sizeof(buf))) > 0)
		for (off = 0; off < n; off += ((struct linux_dirent64 *)(buf + off))->d_reclen)
			;
	close(fd);
}

/* Reads @path to its end; complains only if it exists and a read fails. */
static void read_file(const char *path)
{
	char buf[64];
	long n;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		;
	close(fd);
	if (n < 0) {
		fputs(2, "sh: cannot read ");
		fputs(2, path);
		fputs(2, "\n");
	}
}

/* /sys/kernel/workload_forks: 0 while the host wants a quiet guest */
static int forks = 1;

static void read_sysfs(void)
{
	char c = '1';
	int fd = open("/sys/kernel/workload_forks", O_RDONLY);

	if (fd >= 0) {
		read(fd, &c, 1);
		close(fd);
	}
	forks = c != '0';
	static const char *const attrs[] = {
		"per_cpu_count", "chip_name", "hwirq", "type", "wakeup", "name", "actions",
	};
	read_file("/sys/class/rtc/rtc0/name");
	read_file("/sys/class/rtc/rtc0/time");
	for_each_leaf("/sys/kernel/irq", attrs, sizeof(attrs) / sizeof(attrs[0]), read_file);
}

static void touch_memory(unsigned long round)
{
	char *heap = sbrk(4096);
	char *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (heap != (char *)-1)
		heap[round & 4095] = (char)round;
	if (p != (char *)-1) {
		int fd = open("/etc/motd", O_RDONLY);

		if (fd >= 0) {
			read(fd, p + 4096, 64);
			close(fd);
		}
		p[0] = 1;
		p[4096] = 2;
		munmap(p, 8192);
	}
	if ((round & 15) == 15)
		sbrk(-16 * 4096);	/* give the heap back */
}

int main(int argc, char **argv)
{
	int log = open("/tmp/sh.log", O_WRONLY | O_CREAT | O_APPEND, 0644);
	unsigned long round;

	for (round = 0; ; round++) {
		const char *file = files[round % (sizeof(files) / sizeof(files[0]))];
		char *cargv[] = { "cat", "/tmp/cur", NULL };
		char line[96], *p;
		int status = 0;
		pid_t pid;

		if (!forks) {	/* quiet: the rest of the round only */
			if ((round & 7) == 0)
				read_sysfs();
			touch_memory(round);
			msleep(8);
			continue;
		}
		symlink(file, "/tmp/cur");
		pid = fork();

		if (pid == 0) {
			close(1);
			open("/dev/null", O_WRONLY);
			execve("/bin/cat", cargv, NULL);
			exit(127);
		}
		if (pid > 0)
			waitpid(pid, &status, 0);
		unlink("/tmp/cur");
		p = line;
		memcpy(p, "cat ", 4);
		p += 4;
		memcpy(p, file, strlen(file));
		p += strlen(file);
		*p++ = ':';
		*p++ = ' ';
		p = utoa(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), p);
		*p++ = '\n';
		write(log, line, p - line);
		if (status)	/* as a shell reports a failed command */
			write(2, line, p - line);

		if ((round & 7) == 0) {
			ls_bin();
			read_sysfs();
		}
		touch_memory(round);
		msleep(8);
	}
}
