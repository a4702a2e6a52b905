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
