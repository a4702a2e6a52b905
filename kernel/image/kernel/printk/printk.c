// SPDX-License-Identifier: MIT
/*
 * printk(), as kernel/printk/printk.c: each line goes into __log_buf with a
 * "[    s.uuuuuu] " timestamp (CNTVCT_EL0 / CNTFRQ_EL0), and from there to
 * the console, printed by whoever holds the console lock.
 *
 * __log_buf is a plain-text ring of LOG_BUF_LEN bytes (Linux keeps
 * structured records there; kpemu keeps the console text). log_next_idx
 * counts every byte ever written: the host reads the last
 * min(log_next_idx, LOG_BUF_LEN) bytes, ending at log_next_idx % LOG_BUF_LEN.
 */
#include <linux/kernel.h>
#include <linux/console.h>
#include <asm/sysreg.h>

char __log_buf[LOG_BUF_LEN] __aligned(8);
u64 log_next_idx;

static bool log_line_start = true;

static void log_store_char(char c)
{
	__log_buf[log_next_idx % LOG_BUF_LEN] = c;
	log_next_idx++;
}

static void log_output(const char *s, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		log_store_char(s[i]);
}

/*
 * console_sem, as a flag: whoever holds it prints the log to the console,
 * from console_seq on. A printk that finds it held leaves its text to the
 * holder, whose console_unlock() looks again before it goes.
 */
static int console_sem;
static u64 console_seq;

int console_trylock(void)
{
	return !__atomic_exchange_n(&console_sem, 1, __ATOMIC_ACQUIRE);
}

void console_unlock(void)
{
	for (;;) {
		u64 next = READ_ONCE(log_next_idx);

		while (console_seq < next) {
			u64 off, n;

			if (next - console_seq > LOG_BUF_LEN)	/* overwritten */
				console_seq = next - LOG_BUF_LEN;
			off = console_seq % LOG_BUF_LEN;
			n = next - console_seq;
			if (n > LOG_BUF_LEN - off)
				n = LOG_BUF_LEN - off;
			pl011_early_write(__log_buf + off, n);
			console_seq += n;
		}
		__atomic_store_n(&console_sem, 0, __ATOMIC_RELEASE);
		if (console_seq == READ_ONCE(log_next_idx) || !console_trylock())
			break;
	}
}

/* local_clock(): nanoseconds from the generic timer's virtual counter. */
static void print_time(char *buf, size_t size)
{
	u64 cnt = read_sysreg(cntvct_el0);
	u64 frq = read_sysreg(cntfrq_el0) & 0xffffffff;
	u64 sec = 0, usec = 0;

	if (frq) {
		sec = cnt / frq;
		usec = (cnt % frq) * 1000000 / frq;
	}
	snprintf(buf, size, "[%5lu.%06lu] ", (unsigned long)sec, (unsigned long)usec);
}

int vprintk(const char *fmt, va_list args)
{
	char text[512];
	char prefix[32];
	const char *s = text;
	bool cont = false;
	int len, i, start;

	len = vsnprintf(text, sizeof(text), fmt, args);
	if (len > (int)sizeof(text) - 1)
		len = sizeof(text) - 1;

	/* Strip the KERN_<LEVEL> header; KERN_CONT continues the line. */
	while (len >= 2 && s[0] == KERN_SOH[0] && s[1]) {
		if (s[1] == 'c')
			cont = true;
		s += 2;
		len -= 2;
	}
	if (!cont && !log_line_start) {
		log_output("\n", 1);
		log_line_start = true;
	}

	start = 0;
	for (i = 0; i < len; i++) {
		if (log_line_start) {
			print_time(prefix, sizeof(prefix));
			log_output(prefix, strlen(prefix));
			log_line_start = false;
		}
		if (s[i] == '\n') {
			log_output(s + start, i + 1 - start);
			start = i + 1;
			log_line_start = true;
		}
	}
	if (start < len)
		log_output(s + start, len - start);
	if (console_trylock())
		console_unlock();
	return len;
}

int printk(const char *fmt, ...)
{
	va_list args;
	int r;

	va_start(args, fmt);
	r = vprintk(fmt, args);
	va_end(args);
	return r;
}
