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

// Mount is one line of a mountinfo table (proc(5)): the fields kpemu
// reads, paths unescaped.
type Mount struct {
	Dev    string // major:minor, the third field
	Point  string // the mount point
	FSType string // after the "-" separator: the type, then the source
	Source string
}

// Parse returns the mounts of a mountinfo table in its order (a later
// mount on the same point covers an earlier one); malformed lines are
// skipped.
func Parse(table string) []Mount {
	var ms []Mount
	for line := range strings.Lines(table) {
		f := strings.Fields(line)
		sep := -1
		for i := 6; i < len(f); i++ {
			if f[i] == "-" {
				sep = i
				break
			}
		}
		if sep < 0 || sep+2 >= len(f) {
			continue
		}
		ms = append(ms, Mount{Dev: f[2], Point: Unescape(f[4]), FSType: f[sep+1], Source: f[sep+2]})
	}
	return ms
}

// Device returns the device (major:minor) of the mount at dir in a
// mountinfo table, the one on top where several are stacked; ok is false
// if nothing is mounted there.
func Device(table, dir string) (major, minor uint32, ok bool) {
	for _, m := range Parse(table) {
		if m.Point != dir {
			continue
		}
		maj, min, found := strings.Cut(m.Dev, ":")
		a, err1 := strconv.ParseUint(maj, 10, 32)
		b, err2 := strconv.ParseUint(min, 10, 32)
		if found && err1 == nil && err2 == nil {
			major, minor, ok = uint32(a), uint32(b), true // later lines are mounted on top
		}
	}
	return major, minor, ok
}
