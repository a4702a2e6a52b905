// Package procmem reads another process's memory, as a system call reads
// its caller's arguments: with process_vm_readv(2), or through
// /proc/PID/mem where that is refused. The seal reads the calls it stops
// with it, and tracing the filter a perf ioctl names.
package procmem

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// ErrUnterminated is ReadString's error for a string with no NUL within
// its limit.
var ErrUnterminated = errors.New("no NUL within the limit")

// Reader reads the memory of process (or thread) PID.
type Reader struct {
	PID int
	mem *os.File // /proc/PID/mem, opened on the first fallback
}

// Close closes what the reader opened; it can read again after.
func (r *Reader) Close() {
	if r.mem != nil {
		r.mem.Close()
		r.mem = nil
	}
}

// Read fills b from addr.
func (r *Reader) Read(addr uint64, b []byte) error {
	if len(b) == 0 {
		return nil
	}
	local := []unix.Iovec{{Base: &b[0]}}
	local[0].SetLen(len(b))
	remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(b)}}
	n, err := unix.ProcessVMReadv(r.PID, local, remote, 0)
	switch {
	case err == nil && n == len(b):
		return nil
	case err == nil:
		return fmt.Errorf("process_vm_readv at %#x: short read %d of %d", addr, n, len(b))
	case err != unix.ENOSYS && err != unix.EPERM:
		return fmt.Errorf("process_vm_readv at %#x: %w", addr, err)
	}
	if r.mem == nil {
		f, err := os.Open("/proc/" + strconv.Itoa(r.PID) + "/mem")
		if err != nil {
			return err
		}
		r.mem = f
	}
	if _, err := r.mem.ReadAt(b, int64(addr)); err != nil {
		return fmt.Errorf("/proc/%d/mem at %#x: %w", r.PID, addr, err)
	}
	return nil
}

// ReadString reads the NUL-terminated string at addr, of at most max
// bytes with its NUL (ErrUnterminated past that), page by page: it may
// end right before an unmapped page.
func (r *Reader) ReadString(addr uint64, max int) (string, error) {
	page := uint64(os.Getpagesize())
	var out []byte
	for len(out) < max {
		chunk := min(int(page-addr%page), max-len(out))
		b := make([]byte, chunk)
		if err := r.Read(addr, b); err != nil {
			return "", err
		}
		if i := bytes.IndexByte(b, 0); i >= 0 {
			return string(append(out, b[:i]...)), nil
		}
		out = append(out, b...)
		addr += uint64(chunk)
	}
	return "", ErrUnterminated
}
