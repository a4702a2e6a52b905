// Package mountinfo reads what the kernel's mount tables (/proc/mounts,
// /proc/PID/mountinfo) write.
package mountinfo

import (
	"strconv"
	"strings"
)

// Unescape undoes the octal escapes (\040 for a space) of a mount table's
// paths.
func Unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Device returns the device (major:minor, the third field) of the mount
// at dir in a mountinfo table, the one on top where several are stacked;
// ok is false if nothing is mounted there.
func Device(table, dir string) (major, minor uint32, ok bool) {
	for line := range strings.Lines(table) {
		f := strings.Fields(line)
		if len(f) < 5 || Unescape(f[4]) != dir {
			continue
		}
		maj, min, found := strings.Cut(f[2], ":")
		a, err1 := strconv.ParseUint(maj, 10, 32)
		b, err2 := strconv.ParseUint(min, 10, 32)
		if found && err1 == nil && err2 == nil {
			major, minor, ok = uint32(a), uint32(b), true // later lines are mounted on top
		}
	}
	return major, minor, ok
}
