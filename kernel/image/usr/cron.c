// SPDX-License-Identifier: MIT
/*
 * /bin/cron: wakes every 20 ms (nanosleep), checks who it is, and every
 * 16th wakeup appends a line to /tmp/cron.log.
 */
#include <libc.h>

int main(int argc, char **argv)
{
	int log = open("/tmp/cron.log", O_WRONLY | O_CREAT | O_APPEND, 0644);
	unsigned long n;

	for (n = 1; ; n++) {
		msleep(20);
		if (getppid() != 1 || getpid() <= 1)
			exit(2);
		if ((n & 15) == 0 && log >= 0)
			fputs(log, "cron: run-parts /etc/cron.hourly\n");
	}
}
