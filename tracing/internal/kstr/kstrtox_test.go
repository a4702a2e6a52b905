package kstr

import (
	"syscall"
	"testing"
)

// Strtoull and Strtoll accept and refuse what Linux's lib/kstrtox.c
// does, with its errnos.
func TestKstrto(t *testing.T) {
	for _, tt := range []struct {
		s    string
		u    uint64
		uerr error
		l    int64
		lerr error
	}{
		{"10", 10, nil, 10, nil},
		{"0x1f", 0x1f, nil, 0x1f, nil},
		{"0X1F", 0x1f, nil, 0x1f, nil},
		{"010", 8, nil, 8, nil},
		{"0", 0, nil, 0, nil},
		{"+5", 5, nil, 5, nil},
		{"-5", 0, syscall.EINVAL, -5, nil},
		{"-0x10", 0, syscall.EINVAL, -16, nil},
		{"++5", 0, syscall.EINVAL, 0, syscall.EINVAL},
		{"10\n", 10, nil, 10, nil},
		{"10\n\n", 0, syscall.EINVAL, 0, syscall.EINVAL},
		{"", 0, syscall.EINVAL, 0, syscall.EINVAL},
		{"+", 0, syscall.EINVAL, 0, syscall.EINVAL},
		{"0x", 0, syscall.EINVAL, 0, syscall.EINVAL},
		{"0xg", 0, syscall.EINVAL, 0, syscall.EINVAL},
		{"0b1", 0, syscall.EINVAL, 0, syscall.EINVAL},
		{"0o7", 0, syscall.EINVAL, 0, syscall.EINVAL},
		{"1_0", 0, syscall.EINVAL, 0, syscall.EINVAL},
		{"08", 0, syscall.EINVAL, 0, syscall.EINVAL},
		{"10a", 0, syscall.EINVAL, 0, syscall.EINVAL},
		{" 1", 0, syscall.EINVAL, 0, syscall.EINVAL},
		{"18446744073709551615", 1<<64 - 1, nil, 0, syscall.ERANGE},
		{"18446744073709551616", 0, syscall.ERANGE, 0, syscall.ERANGE},
		{"99999999999999999999999x", 0, syscall.ERANGE, 0, syscall.ERANGE},
		{"9223372036854775807", 1<<63 - 1, nil, 1<<63 - 1, nil},
		{"-9223372036854775808", 0, syscall.EINVAL, -1 << 63, nil},
		{"-9223372036854775809", 0, syscall.EINVAL, 0, syscall.ERANGE},
	} {
		u, err := Strtoull(tt.s, 0)
		if err != tt.uerr || err == nil && u != tt.u {
			t.Errorf("Strtoull(%q) = %d, %v; want %d, %v", tt.s, u, err, tt.u, tt.uerr)
		}
		l, err := Strtoll(tt.s, 0)
		if err != tt.lerr || err == nil && l != tt.l {
			t.Errorf("Strtoll(%q) = %d, %v; want %d, %v", tt.s, l, err, tt.l, tt.lerr)
		}
	}
}
