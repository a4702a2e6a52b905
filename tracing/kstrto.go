package tracing

import "syscall"

// Linux's lib/kstrtox.c, for the parsers whose errno is the conversion's
// own (the uprobe offset and reference counter, @+FILE_OFFSET): Go's
// strconv differs from it at the edges (it takes "0b", "0o" and "_", and
// refuses a leading '+'), and the writer sees EINVAL or ERANGE as Linux
// returns them.

// kstrtoull is kstrtoull(s, base): an optional '+', digits in base (0
// picks it C's way: "0x" with a hex digit after it is hex, a leading "0"
// octal, else decimal), an optional trailing newline. EINVAL for anything
// else, ERANGE when the value does not fit in 64 bits.
func kstrtoull(s string, base int) (uint64, error) {
	if s != "" && s[0] == '+' {
		s = s[1:]
	}
	return parseKstrtoull(s, base)
}

// kstrtoll is kstrtoll(s, base) (kstrtol on arm64): kstrtoull with an
// optional '-', ERANGE outside the int64 range.
func kstrtoll(s string, base int) (int64, error) {
	if s != "" && s[0] == '-' {
		v, err := parseKstrtoull(s[1:], base)
		if err != nil {
			return 0, err
		}
		if int64(-v) > 0 {
			return 0, syscall.ERANGE
		}
		return int64(-v), nil
	}
	v, err := kstrtoull(s, base)
	if err != nil {
		return 0, err
	}
	if int64(v) < 0 {
		return 0, syscall.ERANGE
	}
	return int64(v), nil
}

// parseKstrtoull is _kstrtoull: _parse_integer_fixup_radix, then
// _parse_integer, whose overflow wins over trailing junk.
func parseKstrtoull(s string, base int) (uint64, error) {
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
