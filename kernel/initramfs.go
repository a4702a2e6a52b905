package kernel

import (
	"bytes"
	"debug/elf"
	"fmt"
	"strconv"
	"strings"
	"syscall"
)

// InitramfsFile returns the bytes of the regular file at path in the
// image's initramfs (the newc cpio archive between __initramfs_start and
// __initramfs_end that the guest unpacks at boot): the guest's programs,
// as kernel/image/usr builds them, for finding the file offsets that
// uprobe_events takes. It needs no boot. A path not in the archive (or
// not a regular file there) is an error wrapping ENOENT.
func InitramfsFile(img []byte, path string) ([]byte, error) {
	f, err := elf.NewFile(bytes.NewReader(img))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadImage, err)
	}
	syms, err := f.Symbols()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadImage, err)
	}
	var start, end uint64
	for _, s := range syms {
		switch s.Name {
		case "__initramfs_start":
			start = s.Value
		case "__initramfs_end":
			end = s.Value
		}
	}
	var archive []byte
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && start >= p.Vaddr && end <= p.Vaddr+p.Filesz && start < end {
			archive = make([]byte, end-start)
			if _, err := p.ReadAt(archive, int64(start-p.Vaddr)); err != nil {
				return nil, fmt.Errorf("%w: reading the initramfs: %w", ErrBadImage, err)
			}
		}
	}
	if archive == nil {
		return nil, fmt.Errorf("%w: no initramfs in the image", ErrBadImage)
	}
	return cpioFile(archive, strings.TrimPrefix(path, "/"))
}

// cpioFile finds name in a newc ("070701") archive.
func cpioFile(a []byte, name string) ([]byte, error) {
	const hdr = 110
	align := func(n int) int { return (n + 3) &^ 3 }
	for off := 0; off+hdr <= len(a); {
		h := a[off : off+hdr]
		if string(h[:6]) != "070701" {
			return nil, fmt.Errorf("%w: bad cpio header at %d", ErrBadImage, off)
		}
		field := func(i int) int {
			v, _ := strconv.ParseUint(string(h[6+8*i:14+8*i]), 16, 32)
			return int(v)
		}
		mode, size, nameLen := field(1), field(6), field(11)
		if off+hdr+nameLen > len(a) || nameLen == 0 {
			return nil, fmt.Errorf("%w: truncated cpio archive", ErrBadImage)
		}
		n := string(a[off+hdr : off+hdr+nameLen-1])
		data := align(off + hdr + nameLen)
		if n == "TRAILER!!!" {
			break
		}
		if data+size > len(a) {
			return nil, fmt.Errorf("%w: truncated cpio archive", ErrBadImage)
		}
		if strings.TrimPrefix(n, "/") == name && mode&sIFMT == sIFREG {
			return a[data : data+size], nil
		}
		off = align(data + size)
	}
	return nil, fmt.Errorf("%w: /%s is not a regular file of the initramfs", syscall.ENOENT, name)
}
