package kernel_test

import (
	"bytes"
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/kernel/image"
)

// LookupPath walks the guest's dentry tree as the guest's path_lookup()
// with LOOKUP_FOLLOW does, while the guest runs: the initramfs's programs
// are regular files, /sys a directory, and the symlinks the guest made
// (tracefs's /sys/kernel/debug/tracing -> ../tracing, sysfs's
// /sys/class/rtc/rtc0 -> ../../devices/...) lead where their targets do.
func TestLookupPath(t *testing.T) {
	k := running(t)
	lookup := func(p string) kernel.GuestFile {
		t.Helper()
		f, err := k.LookupPath(p)
		if err != nil {
			t.Fatalf("LookupPath(%q) = %v", p, err)
		}
		return f
	}
	sh := lookup("/bin/sh")
	if !sh.IsRegular() || sh.IsDir() || sh.Mode&0o777 != 0o755 || sh.Dentry == 0 || sh.Inode == 0 {
		t.Errorf("/bin/sh = %+v (mode %o), want a regular file, mode 0755", sh, sh.Mode)
	}
	if cat := lookup("/bin/cat"); cat.Inode == sh.Inode {
		t.Errorf("/bin/cat and /bin/sh have the same inode %#x", cat.Inode)
	}
	if sys := lookup("/sys"); !sys.IsDir() || sys.IsRegular() {
		t.Errorf("/sys = %+v (mode %o), want a directory", sys, sys.Mode)
	}
	for _, same := range []string{"//bin//sh", "/bin/./sh", "/bin/../bin/sh", "/sys/../bin/sh", "/../bin/sh", "/bin/sh/"} {
		if f := lookup(same); f != sh {
			t.Errorf("%s = %+v, want /bin/sh's %+v", same, f, sh)
		}
	}
	if root := lookup("/"); !root.IsDir() || lookup("/..") != root {
		t.Errorf("/ = %+v, /.. = %+v, want the root directory for both", root, lookup("/.."))
	}

	tracing := lookup("/sys/kernel/tracing")
	if got := lookup("/sys/kernel/debug/tracing"); got != tracing || !got.IsDir() {
		t.Errorf("/sys/kernel/debug/tracing = %+v, want its target /sys/kernel/tracing %+v", got, tracing)
	}
	rtc := lookup("/sys/devices/platform/9010000.pl031/rtc/rtc0")
	if got := lookup("/sys/class/rtc/rtc0"); got != rtc {
		t.Errorf("/sys/class/rtc/rtc0 = %+v, want %+v", got, rtc)
	}
	if got, want := lookup("/sys/class/rtc/rtc0/name"), lookup("/sys/devices/platform/9010000.pl031/rtc/rtc0/name"); got != want || !got.IsRegular() {
		t.Errorf("a file through the symlink = %+v, want %+v", got, want)
	}

	for _, tt := range []struct {
		path string
		want syscall.Errno
	}{
		{"/non_exist_file", syscall.ENOENT},
		{"/bin/nosuch", syscall.ENOENT},
		{"/bin/sh/x", syscall.ENOTDIR},
		{"/sys/class/rtc/rtc0/nosuch", syscall.ENOENT},
		{"", syscall.ENOENT},
		{"bin/sh", syscall.ENOENT}, // relative: as the guest's name syscalls
		{"/" + strings.Repeat("a", 255), syscall.ENAMETOOLONG},
		{"/" + strings.Repeat("a", 254), syscall.ENOENT},
	} {
		if _, err := k.LookupPath(tt.path); !errors.Is(err, tt.want) {
			t.Errorf("LookupPath(%.20q) = %v, want %v", tt.path, err, tt.want)
		}
	}
}

// An image whose DWARF does not describe the dentry tree boots, and
// LookupPath refuses cleanly rather than guess a layout.
func TestLookupPathNeedsDWARF(t *testing.T) {
	img := bytes.Clone(image.ELF())
	// Rename the section so that debug/elf finds no DWARF at all.
	if n := bytes.Count(img, []byte(".debug_info\x00")); n != 1 {
		t.Fatalf("%d .debug_info section names in the image", n)
	}
	img = bytes.Replace(img, []byte(".debug_info\x00"), []byte(".nodbg_info\x00"), 1)
	k, err := kernel.Boot(kernel.Config{Image: img, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = k.LookupPath("/bin/sh")
	if !errors.Is(err, kernel.ErrBadImage) || !errors.Is(err, syscall.EOPNOTSUPP) {
		t.Errorf("LookupPath = %v, want ErrBadImage and EOPNOTSUPP", err)
	}
}

// A CPU stopped inside dcache_lock may be half-way through changing the
// tree: LookupPath does not walk it then. With the guest not running,
// nothing will drop the lock, so it fails at once with EAGAIN.
func TestLookupPathWaitsForDcacheLock(t *testing.T) {
	k := boot(t)
	stepUntilReady(t, k)
	lock, ok := k.Kallsyms().LookupName("dcache_lock")
	if !ok {
		t.Fatal("no dcache_lock")
	}
	// The lock word opens raw_spinlock_t (linux/spinlock.h).
	set := func(v uint32) {
		t.Helper()
		var err error
		k.StopMachine(func() { err = k.Write32(lock.Addr, v) })
		if err != nil {
			t.Fatal(err)
		}
	}
	var held uint32
	k.StopMachine(func() { held, _ = k.Read32(lock.Addr) })
	if held != 0 {
		t.Skip("the guest stopped inside dcache_lock")
	}
	set(1)
	if _, err := k.LookupPath("/bin/sh"); !errors.Is(err, syscall.EAGAIN) {
		t.Errorf("LookupPath with dcache_lock held = %v, want EAGAIN", err)
	}
	set(0)
	if f, err := k.LookupPath("/bin/sh"); err != nil || !f.IsRegular() {
		t.Errorf("LookupPath after the lock was dropped = %+v, %v", f, err)
	}
}
