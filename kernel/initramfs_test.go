package kernel_test

import (
	"bytes"
	"errors"
	"syscall"
	"testing"

	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/kernel/image"
)

// TestInitramfsFile reads the guest's programs out of the image's
// initramfs, as kpemu usymbols does.
func TestInitramfsFile(t *testing.T) {
	tests := []struct {
		path string
		elf  bool          // an ELF program
		err  syscall.Errno // 0: found
	}{
		{"/bin/sh", true, 0},
		{"/init", true, 0},
		{"/bin/cron", true, 0},
		{"bin/sshd", true, 0},
		{"/etc/passwd", false, 0},
		{"/bin", false, syscall.ENOENT},
		{"/bin/nope", false, syscall.ENOENT},
		{"", false, syscall.ENOENT},
	}
	for _, tt := range tests {
		b, err := kernel.InitramfsFile(image.ELF(), tt.path)
		switch {
		case tt.err != 0:
			if !errors.Is(err, tt.err) {
				t.Errorf("%q: err = %v, want %v", tt.path, err, tt.err)
			}
		case err != nil:
			t.Errorf("%q: %v", tt.path, err)
		case tt.elf != bytes.HasPrefix(b, []byte("\x7fELF")):
			t.Errorf("%q: starts %q", tt.path, b[:min(len(b), 4)])
		case len(b) == 0:
			t.Errorf("%q: empty", tt.path)
		}
	}
	if _, err := kernel.InitramfsFile([]byte("not an ELF"), "/bin/sh"); !errors.Is(err, kernel.ErrBadImage) {
		t.Errorf("a bad image: %v", err)
	}
}
