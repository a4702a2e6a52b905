// SPDX-License-Identifier: MIT
/*
 * /bin/sshd: not an SSH server, a server's system call pattern on port
 * 22. It listens (socket, bind, listen), then for ever accepts a
 * connection (accept4, which sleeps in inet_csk_accept until a segment of
 * a new flow arrives), reads what the peer sent (recvfrom: the first read
 * has data, the next ones MSG_DONTWAIT until nothing is left), answers
 * each read with one line (sendto), and hangs up (shutdown, close). A
 * peer that sends again opens a new connection. init restarts it if it
 * exits (2: it could not listen).
 */
#include <libc.h>

static char buf[512];

int main(int argc, char **argv)
{
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons(22) };
	unsigned long total = 0;
	int s = socket(AF_INET, SOCK_STREAM, 0);

	if (s < 0 || bind(s, &addr, sizeof(addr)) < 0 || listen(s, 8) < 0) {
		fputs(2, "sshd: cannot listen on port 22\n");
		msleep(100);
		exit(2);
	}
	for (;;) {
		struct sockaddr_in peer;
		int len = sizeof(peer), flags = 0;
		int c = accept4(s, &peer, &len, SOCK_CLOEXEC);
		long n;

		if (c < 0)
			continue;
		while ((n = recvfrom(c, buf, sizeof(buf), flags, NULL, NULL)) > 0) {
			char reply[64], *p = reply;

			total += n;
			memcpy(p, "sshd: ", 6);
			p = utoa(n, p + 6);
			memcpy(p, " bytes, ", 8);
			p = utoa(total, p + 8);
			memcpy(p, " so far\r\n", 9);
			p += 9;
			sendto(c, reply, p - reply, 0, NULL, 0);
			flags = MSG_DONTWAIT;
		}
		shutdown(c, SHUT_RDWR);
		close(c);
	}
}
