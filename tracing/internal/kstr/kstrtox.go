// Package kstr is the string parsing of the kernel's lib/ that the
// tracing files take their input with: kstrtox.c's kstrto* and
// kstrtoul_from_user, vsprintf.c's simple_strtoul and glob.c's
// glob_match, with Linux's edges and errnos where Go's strconv and
// path.Match differ from them.
package kstr

import (
	"errors"
	"strconv"
	"strings"
	"syscall"
)

// Linux's lib/kstrtox.c, for the parsers whose errno is the conversion's
// own (the uprobe offset and reference counter, @+FILE_OFFSET): Go's
// strconv differs from it at the edges (it takes "0b", "0o" and "_", and
// refuses a leading '+'), and the writer sees EINVAL or ERANGE as Linux
// returns them.

// Strtoull is Strtoull(s, base): an optional '+', digits in base (0
// picks it C's way: "0x" with a hex digit after it is hex, a leading "0"
// octal, else decimal), an optional trailing newline. EINVAL for anything
// else, ERANGE when the value does not fit in 64 bits.
func Strtoull(s string, base int) (uint64, error) {
	if s != "" && s[0] == '+' {
		s = s[1:]
	}
	return parseStrtoull(s, base)
}

// Strtoll is Strtoll(s, base) (kstrtol on arm64): Strtoull with an
// optional '-', ERANGE outside the int64 range.
func Strtoll(s string, base int) (int64, error) {
	if s != "" && s[0] == '-' {
		v, err := parseStrtoull(s[1:], base)
		if err != nil {
			return 0, err
		}
		if int64(-v) > 0 {
			return 0, syscall.ERANGE
		}
		return int64(-v), nil
	}
	v, err := Strtoull(s, base)
	if err != nil {
		return 0, err
	}
	if int64(v) < 0 {
		return 0, syscall.ERANGE
	}
	return int64(v), nil
}

// parseStrtoull is _kstrtoull: _parse_integer_fixup_radix, then
// _parse_integer, whose overflow wins over trailing junk.
func parseStrtoull(s string, base int) (uint64, error) {
	if base == 0 {
		switch {
		case len(s) > 2 && s[0] == '0' && s[1]|0x20 == 'x' && isHexDigit(s[2]):
			base = 16
		case s != "" && s[0] == '0':
			base = 8
		default:
			base = 10
		}
	}
	if base == 16 && len(s) > 1 && s[0] == '0' && s[1]|0x20 == 'x' {
		s = s[2:]
	}
	var v uint64
	n, overflow := 0, false
	for ; n < len(s); n++ {
		c := s[n]
		var d uint64
		switch lc := c | 0x20; {
		case c >= '0' && c <= '9':
			d = uint64(c - '0')
		case lc >= 'a' && lc <= 'f':
			d = uint64(lc-'a') + 10
		default:
			d = 16 // not a digit
		}
		if d >= uint64(base) {
			break
		}
		if v > (^uint64(0)-d)/uint64(base) {
			overflow = true
		}
		v = v*uint64(base) + d
	}
	switch rest := s[n:]; {
	case overflow:
		return 0, syscall.ERANGE
	case n == 0:
		return 0, syscall.EINVAL
	case rest != "" && rest != "\n":
		return 0, syscall.EINVAL
	}
	return v, nil
}

// StrtoulFromUser is kstrtoul_from_user(buf, count, 10): the first 22
// bytes at most, an optional '+', decimal digits, an optional newline.
func StrtoulFromUser(p []byte) (uint64, error) {
	const bufLen = 1 + 64/3 + 1 // 1 + sizeof(unsigned long) * 8 / 3 + 1
	s := string(p[:min(len(p), bufLen-1)])
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimSuffix(s, "\n")
	s = strings.TrimPrefix(s, "+")
	v, err := strconv.ParseUint(s, 10, 64)
	if errors.Is(err, strconv.ErrRange) {
		return 0, syscall.ERANGE
	}
	if err != nil {
		return 0, syscall.EINVAL
	}
	return v, nil
}

// SimpleStrtoul is simple_strtoul(s, NULL, 0): the longest prefix that is
// a number in C's notation (0x hex, 0 octal, else decimal).
func SimpleStrtoul(s string) uint64 {
	base := uint64(10)
	switch {
	case len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && isHexDigit(s[2]):
		base, s = 16, s[2:]
	case len(s) > 1 && s[0] == '0':
		base, s = 8, s[1:]
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		d, err := strconv.ParseUint(s[i:i+1], 16, 8)
		if err != nil || d >= base {
			break
		}
		v = v*base + d
	}
	return v
}

func isHexDigit(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
