package procmem

import (
	"errors"
	"os"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The test reads its own memory: a string that ends on the last byte
// before an unreadable page, one with no NUL before its limit, and an
// address with nothing mapped.
func TestReadString(t *testing.T) {
	page := os.Getpagesize()
	mem, err := unix.Mmap(-1, 0, 2*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	if err := unix.Mprotect(mem[page:], unix.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	base := uint64(uintptr(unsafe.Pointer(&mem[0])))
	copy(mem[page-6:], "edge\x00")
	copy(mem, "hello\x00")
	for i := 16; i < 48; i++ {
		mem[i] = 'x'
	}
	r := Reader{PID: os.Getpid()}
	defer r.Close()
	for _, tt := range []struct {
		name    string
		addr    uint64
		max     int
		want    string
		wantErr error
	}{
		{"short", base, 64, "hello", nil},
		{"up to an unreadable page", base + uint64(page) - 6, 4096, "edge", nil},
		{"no NUL within max", base + 16, 8, "", ErrUnterminated},
		{"unreadable", base + uint64(page), 64, "", unix.EFAULT},
	} {
		got, err := r.ReadString(tt.addr, tt.max)
		if got != tt.want || !errors.Is(err, tt.wantErr) {
			t.Errorf("%s: ReadString = %q, %v; want %q, %v", tt.name, got, err, tt.want, tt.wantErr)
		}
	}
}
