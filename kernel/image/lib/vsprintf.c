// SPDX-License-Identifier: MIT
/*
 * A small vsnprintf(), after lib/vsprintf.c: flags "-0 +#", field width and
 * precision (also '*'), length modifiers hh h l ll z t, conversions
 * d i u x X o c s p %. Pointer extensions: %px prints the raw address as 16
 * hex digits; %pS/%ps/%pSb/%pB print "0x" and 16 hex digits, which is what
 * Linux prints for them without CONFIG_KALLSYMS (the host symbolises the
 * console log); plain %p prints like %px (no hashing); %ptR[d|t][r] prints
 * a struct rtc_time as Linux's does ("2000-01-01T00:00:00"). Also
 * sprintf(), scnprintf() and vscnprintf().
 */
#include <linux/kernel.h>
#include <linux/rtc.h>

#define ZEROPAD	1		/* pad with zero */
#define SIGN	2		/* unsigned/signed long */
#define PLUS	4		/* show plus */
#define SPACE	8		/* space if plus */
#define LEFT	16		/* left justified */
#define SMALL	32		/* use lowercase in hex (must be 32 == 0x20) */
#define SPECIAL	64		/* prefix hex with "0x", octal with "0" */

struct printf_spec {
	unsigned int	flags;
	int		field_width;
	int		precision;
	unsigned int	base;
};

static void emit(char **pos, char *end, char c)
{
	if (*pos < end)
		**pos = c;
	(*pos)++;
}

static void number(char **pos, char *end, unsigned long long num,
		   struct printf_spec spec)
{
	static const char digits[] = "0123456789ABCDEF";
	char tmp[24];
	char sign = 0;
	char locase = (spec.flags & SMALL);
	int i = 0, size = spec.field_width, precision = spec.precision;
	int prefix = 0;

	if (spec.flags & LEFT)
		spec.flags &= ~ZEROPAD;
	if (spec.flags & SIGN) {
		if ((long long)num < 0) {
			sign = '-';
			num = -(long long)num;
			size--;
		} else if (spec.flags & PLUS) {
			sign = '+';
			size--;
		} else if (spec.flags & SPACE) {
			sign = ' ';
			size--;
		}
	}
	if (spec.flags & SPECIAL) {
		if (spec.base == 16)
			prefix = 2;
		else if (spec.base == 8 && num)
			prefix = 1;
		size -= prefix;
	}

	if (num == 0)
		tmp[i++] = '0';
	while (num) {
		tmp[i++] = digits[num % spec.base] | locase;
		num /= spec.base;
	}
	if (i > precision)
		precision = i;
	size -= precision;

	if (!(spec.flags & (ZEROPAD | LEFT)))
		while (size-- > 0)
			emit(pos, end, ' ');
	if (sign)
		emit(pos, end, sign);
	if (prefix) {
		emit(pos, end, '0');
		if (spec.base == 16)
			emit(pos, end, 'X' | locase);
	}
	if (!(spec.flags & LEFT)) {
		char c = (spec.flags & ZEROPAD) ? '0' : ' ';

		while (size-- > 0)
			emit(pos, end, c);
	}
	while (i < precision--)
		emit(pos, end, '0');
	while (i-- > 0)
		emit(pos, end, tmp[i]);
	while (size-- > 0)
		emit(pos, end, ' ');
}

static void string(char **pos, char *end, const char *s, struct printf_spec spec)
{
	int len = 0, lim = spec.precision < 0 ? INT_MAX : spec.precision;

	if (!s)
		s = "(null)";
	while (len < lim && s[len])
		len++;
	if (!(spec.flags & LEFT))
		while (len < spec.field_width--)
			emit(pos, end, ' ');
	for (int i = 0; i < len; i++)
		emit(pos, end, s[i]);
	while (len < spec.field_width--)
		emit(pos, end, ' ');
}

/* %ptR[d|t][r], as rtc_str(): the date, 'T', the time; 'r': tm_year and tm_mon raw */
static void rtc_str(char **pos, char *end, const struct rtc_time *tm, const char *fmt)
{
	struct printf_spec dec02 = { .flags = ZEROPAD, .field_width = 2, .precision = -1, .base = 10 };
	struct printf_spec dec04 = { .flags = ZEROPAD, .field_width = 4, .precision = -1, .base = 10 };
	bool have_t = true, have_d = true, raw = false;

	fmt += 2;	/* "tR" */
	if (*fmt == 'd') {
		have_t = false;
		fmt++;
	} else if (*fmt == 't') {
		have_d = false;
		fmt++;
	}
	if (*fmt == 'r')
		raw = true;
	if (have_d) {
		number(pos, end, tm->tm_year + (raw ? 0 : 1900), dec04);
		emit(pos, end, '-');
		number(pos, end, tm->tm_mon + (raw ? 0 : 1), dec02);
		emit(pos, end, '-');
		number(pos, end, tm->tm_mday, dec02);
	}
	if (have_d && have_t)
		emit(pos, end, 'T');
	if (have_t) {
		number(pos, end, tm->tm_hour, dec02);
		emit(pos, end, ':');
		number(pos, end, tm->tm_min, dec02);
		emit(pos, end, ':');
		number(pos, end, tm->tm_sec, dec02);
	}
}

static const char *pointer(char **pos, char *end, const char *fmt, void *ptr,
			   struct printf_spec spec)
{
	if (fmt[0] == 't' && fmt[1] == 'R') {
		if (ptr)
			rtc_str(pos, end, ptr, fmt);
		else
			string(pos, end, "(null)", spec);
		while ((*fmt >= 'a' && *fmt <= 'z') || (*fmt >= 'A' && *fmt <= 'Z'))
			fmt++;
		return fmt;
	}
	spec.base = 16;
	spec.flags |= SMALL;
	if (*fmt == 'S' || *fmt == 's' || *fmt == 'B') {
		/* special_hex_number(): 0x + 16 digits */
		spec.flags |= SPECIAL | ZEROPAD;
		spec.field_width = 2 + 2 * sizeof(void *);
	} else if (spec.field_width == -1) {
		spec.field_width = 2 * sizeof(void *);
		spec.flags |= ZEROPAD;
	}
	number(pos, end, (unsigned long)ptr, spec);
	while ((*fmt >= 'a' && *fmt <= 'z') || (*fmt >= 'A' && *fmt <= 'Z'))
		fmt++;
	return fmt;
}

int vsnprintf(char *buf, size_t size, const char *fmt, va_list args)
{
	char *pos = buf, *end = buf + size;
	struct printf_spec spec;
	int qualifier;

	while (*fmt) {
		unsigned long long num;

		if (*fmt != '%') {
			emit(&pos, end, *fmt++);
			continue;
		}
		fmt++;

		spec.flags = 0;
		for (;;) {
			if (*fmt == '-')
				spec.flags |= LEFT;
			else if (*fmt == '+')
				spec.flags |= PLUS;
			else if (*fmt == ' ')
				spec.flags |= SPACE;
			else if (*fmt == '#')
				spec.flags |= SPECIAL;
			else if (*fmt == '0')
				spec.flags |= ZEROPAD;
			else
				break;
			fmt++;
		}

		spec.field_width = -1;
		if (*fmt == '*') {
			spec.field_width = va_arg(args, int);
			if (spec.field_width < 0) {
				spec.field_width = -spec.field_width;
				spec.flags |= LEFT;
			}
			fmt++;
		} else if (*fmt >= '0' && *fmt <= '9') {
			spec.field_width = 0;
			while (*fmt >= '0' && *fmt <= '9')
				spec.field_width = spec.field_width * 10 + (*fmt++ - '0');
		}

		spec.precision = -1;
		if (*fmt == '.') {
			fmt++;
			spec.precision = 0;
			if (*fmt == '*') {
				spec.precision = va_arg(args, int);
				if (spec.precision < 0)
					spec.precision = -1;
				fmt++;
			} else {
				while (*fmt >= '0' && *fmt <= '9')
					spec.precision = spec.precision * 10 + (*fmt++ - '0');
			}
		}

		qualifier = 0;
		if (*fmt == 'h' || *fmt == 'l' || *fmt == 'z' || *fmt == 't') {
			qualifier = *fmt++;
			if (qualifier == fmt[0] && (qualifier == 'l' || qualifier == 'h')) {
				qualifier = (qualifier == 'l') ? 'L' : 'H';
				fmt++;
			}
		}

		spec.base = 10;
		switch (*fmt) {
		case 'c': {
			char c = (char)va_arg(args, int);

			if (!(spec.flags & LEFT))
				while (--spec.field_width > 0)
					emit(&pos, end, ' ');
			emit(&pos, end, c);
			while (--spec.field_width > 0)
				emit(&pos, end, ' ');
			fmt++;
			continue;
		}
		case 's':
			string(&pos, end, va_arg(args, const char *), spec);
			fmt++;
			continue;
		case 'p':
			fmt = pointer(&pos, end, fmt + 1, va_arg(args, void *), spec);
			continue;
		case '%':
			emit(&pos, end, '%');
			fmt++;
			continue;
		case 'o':
			spec.base = 8;
			break;
		case 'x':
			spec.flags |= SMALL;
			/* fall through */
		case 'X':
			spec.base = 16;
			break;
		case 'd':
		case 'i':
			spec.flags |= SIGN;
			break;
		case 'u':
			break;
		default:
			/* unknown conversion: print it as it is */
			emit(&pos, end, '%');
			if (*fmt)
				emit(&pos, end, *fmt++);
			continue;
		}
		fmt++;

		if (qualifier == 'L')
			num = va_arg(args, unsigned long long);
		else if (qualifier == 'l' || qualifier == 'z' || qualifier == 't')
			num = va_arg(args, unsigned long);
		else
			num = va_arg(args, unsigned int);

		if (spec.flags & SIGN) {
			if (qualifier == 'H')
				num = (signed char)num;
			else if (qualifier == 'h')
				num = (short)num;
			else if (qualifier == 0)
				num = (int)num;
			else if (qualifier != 'L')
				num = (long)num;
		} else {
			if (qualifier == 'H')
				num = (unsigned char)num;
			else if (qualifier == 'h')
				num = (unsigned short)num;
		}
		number(&pos, end, num, spec);
	}

	if (size > 0) {
		if (pos < end)
			*pos = '\0';
		else
			end[-1] = '\0';
	}
	return pos - buf;
}

int snprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list args;
	int i;

	va_start(args, fmt);
	i = vsnprintf(buf, size, fmt, args);
	va_end(args);
	return i;
}

/* sprintf(): no bound; the buffer must be large enough (sysfs shows write a page). */
int sprintf(char *buf, const char *fmt, ...)
{
	va_list args;
	int i;

	va_start(args, fmt);
	i = vsnprintf(buf, INT_MAX, fmt, args);
	va_end(args);
	return i;
}

/* vscnprintf(): as vsnprintf, but returns what was written, without the NUL */
int vscnprintf(char *buf, size_t size, const char *fmt, va_list args)
{
	int i;

	if (!size)
		return 0;
	i = vsnprintf(buf, size, fmt, args);
	if (likely(i < (int)size))
		return i;
	return size - 1;
}

int scnprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list args;
	int i;

	va_start(args, fmt);
	i = vscnprintf(buf, size, fmt, args);
	va_end(args);
	return i;
}
