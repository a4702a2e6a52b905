//go:build linux && (amd64 || arm64)

package shadow

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// readComm is /proc/PID/comm without its newline, "" if unreadable.
func readComm(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(string(b), "\n")
}

// procCaller reads a caller through process_vm_readv, or /proc/PID/mem
// where that is unavailable, and /proc/PID/{cwd,fd}.
type procCaller struct {
	pid      int
	pageSize int
	mem      *os.File // /proc/PID/mem, opened on the first fallback
}

func (c *procCaller) close() {
	if c.mem != nil {
		c.mem.Close()
		c.mem = nil
	}
}

// pathMax is Linux's PATH_MAX, the most a path argument may take.
const pathMax = 4096

func (c *procCaller) readString(addr uint64) (string, error) {
	var out []byte
	for len(out) < pathMax {
		// Page by page: the string may end right before an unmapped page.
		chunk := c.pageSize - int(addr%uint64(c.pageSize))
		chunk = min(chunk, pathMax-len(out))
		b := make([]byte, chunk)
		if err := c.read(addr, b); err != nil {
			return "", err
		}
		if i := bytes.IndexByte(b, 0); i >= 0 {
			return string(append(out, b[:i]...)), nil
		}
		out = append(out, b...)
		addr += uint64(chunk)
	}
	return "", unix.ENAMETOOLONG
}

func (c *procCaller) read(addr uint64, b []byte) error {
	if len(b) == 0 {
		return nil
	}
	local := []unix.Iovec{{Base: &b[0]}}
	local[0].SetLen(len(b))
	remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(b)}}
	n, err := unix.ProcessVMReadv(c.pid, local, remote, 0)
	switch {
	case err == nil && n == len(b):
		return nil
	case err == nil:
		return fmt.Errorf("process_vm_readv at %#x: short read %d of %d", addr, n, len(b))
	case err != unix.ENOSYS && err != unix.EPERM:
		return fmt.Errorf("process_vm_readv at %#x: %w", addr, err)
	}
	if c.mem == nil {
		f, err := os.Open("/proc/" + strconv.Itoa(c.pid) + "/mem")
		if err != nil {
			return err
		}
		c.mem = f
	}
	if _, err := c.mem.ReadAt(b, int64(addr)); err != nil {
		return fmt.Errorf("/proc/%d/mem at %#x: %w", c.pid, addr, err)
	}
	return nil
}

func (c *procCaller) dir(dirfd int32) (string, error) {
	link := "/proc/" + strconv.Itoa(c.pid) + "/cwd"
	if dirfd != atFDCWD {
		if dirfd < 0 {
			return "", fmt.Errorf("dirfd %d: %w", dirfd, unix.EBADF)
		}
		link = "/proc/" + strconv.Itoa(c.pid) + "/fd/" + strconv.Itoa(int(dirfd))
	}
	return os.Readlink(link)
}
