//go:build linux && (amd64 || arm64)

package shadow

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/kpemu/kpemu/internal/procmem"
)

// readComm is /proc/PID/comm without its newline, "" if unreadable.
func readComm(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(string(b), "\n")
}

// procCaller reads a caller's memory (procmem) and its
// /proc/PID/{cwd,fd}.
type procCaller struct {
	procmem.Reader
}

// pathMax is Linux's PATH_MAX, the most a path argument may take.
const pathMax = 4096

// readString is a path argument: ENAMETOOLONG past PATH_MAX.
func (c *procCaller) readString(addr uint64) (string, error) {
	s, err := c.ReadString(addr, pathMax)
	if errors.Is(err, procmem.ErrUnterminated) {
		return "", unix.ENAMETOOLONG
	}
	return s, err
}

func (c *procCaller) dir(dirfd int32) (string, error) {
	link := "/proc/" + strconv.Itoa(c.PID) + "/cwd"
	if dirfd != atFDCWD {
		if dirfd < 0 {
			return "", fmt.Errorf("dirfd %d: %w", dirfd, unix.EBADF)
		}
		link = "/proc/" + strconv.Itoa(c.PID) + "/fd/" + strconv.Itoa(int(dirfd))
	}
	return os.Readlink(link)
}
