package shadow

import (
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
)

func TestARM64OpenFlags(t *testing.T) {
	const (
		rdonly, wronly, creat, trunc, cloexec = 0, 0o1, 0o100, 0o1000, 0o2000000
		tmpfile                               = 0o20000000
	)
	tests := []struct {
		name        string
		arch, flags uint32
		want        uint32
	}{
		{"plain", auditArchX86_64, wronly | creat | trunc, wronly | creat | trunc},
		{"directory", auditArchX86_64, rdonly | 0o200000, 0o40000},
		{"nofollow", auditArchX86_64, 0o400000, 0o100000},
		{"direct", auditArchX86_64, 0o40000, 0o200000},
		{"largefile", auditArchX86_64, 0o100000, 0o400000},
		{"all four and others", auditArchX86_64, 0o740000 | cloexec | wronly, 0o740000 | cloexec | wronly},
		{"directory|nofollow|cloexec", auditArchX86_64, 0o600000 | cloexec, 0o140000 | cloexec},
		{"O_TMPFILE", auditArchX86_64, tmpfile | 0o200000 | 0o2, tmpfile | 0o40000 | 0o2},
		{"arm64 is native", auditArchAArch64, 0o200000 | 0o40000, 0o200000 | 0o40000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := arm64OpenFlags(tt.arch, tt.flags); got != tt.want {
				t.Errorf("arm64OpenFlags(%#x, %#o) = %#o, want %#o", tt.arch, tt.flags, got, tt.want)
			}
		})
	}
}

func TestResolvePath(t *testing.T) {
	dir := func(fd int32) (string, error) {
		switch fd {
		case atFDCWD:
			return "/home/u", nil
		case 3:
			return "/tmp/d", nil
		case 4:
			return "socket:[1234]", nil
		}
		return "", errors.New("EBADF")
	}
	tests := []struct {
		path    string
		dirfd   int32
		want    string
		wantErr bool
	}{
		{"/dev/null", atFDCWD, "/dev/null", false},
		{"/dev/null", 3, "/dev/null", false}, // absolute ignores dirfd
		{"rel", atFDCWD, "/home/u/rel", false},
		{"a/../b/", atFDCWD, "/home/u/b", false},
		{"bar", 3, "/tmp/d/bar", false},
		{".", 3, "/tmp/d", false},
		{"x", 4, "", true},      // not a directory
		{"x", 9, "", true},      // bad fd
		{"", atFDCWD, "", true}, // ENOENT on the host
	}
	for _, tt := range tests {
		got, err := resolvePath(tt.path, tt.dirfd, dir)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("resolvePath(%q, %d) = %q, %v; want %q, error %v", tt.path, tt.dirfd, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestClone3IsThread(t *testing.T) {
	tests := []struct {
		flags uint64
		want  bool
	}{
		{0, false},
		{cloneVM | cloneVFork, false}, // posix_spawn
		{0x01200000, false},           // fork: CHILD_SETTID|CHILD_CLEARTID
		{0x3d0f00, true},              // glibc pthread_create
		{cloneThread, true},
		{1 << 32, false}, // CLONE_CLEAR_SIGHAND
	}
	for _, tt := range tests {
		if got := clone3IsThread(tt.flags); got != tt.want {
			t.Errorf("clone3IsThread(%#x) = %v, want %v", tt.flags, got, tt.want)
		}
	}
}

// fakeCaller is a caller with strings and structs at made-up addresses.
type fakeCaller struct {
	mem  map[uint64][]byte
	dirs map[int32]string
}

func (f *fakeCaller) readString(addr uint64) (string, error) {
	b, ok := f.mem[addr]
	if !ok {
		return "", fmt.Errorf("EFAULT at %#x", addr)
	}
	return string(b), nil
}

func (f *fakeCaller) Read(addr uint64, b []byte) error {
	m, ok := f.mem[addr]
	if !ok || len(m) < len(b) {
		return fmt.Errorf("EFAULT at %#x", addr)
	}
	copy(b, m)
	return nil
}

func (f *fakeCaller) dir(fd int32) (string, error) {
	d, ok := f.dirs[fd]
	if !ok {
		return "", errors.New("EBADF")
	}
	return d, nil
}

func TestDecode(t *testing.T) {
	const (
		pRel, pAbs, pFoo, pHow, pHowShort, pClone3Thread, pClone3Spawn = 0x1000, 0x2000, 0x3000, 0x4000, 0x5000, 0x6000, 0x7000
		fdcwd                                                          = uint64(1<<64 - 100) // AT_FDCWD as a register holds it
	)
	u64s := func(vs ...uint64) []byte {
		b := make([]byte, 8*len(vs))
		for i, v := range vs {
			binary.LittleEndian.PutUint64(b[8*i:], v)
		}
		return b
	}
	c := &fakeCaller{
		mem: map[uint64][]byte{
			pRel: []byte("rel"), pAbs: []byte("/dev/null"), pFoo: []byte("foo"),
			pHow:          u64s(0o100|0o2|0o200000, 0o640, 0), // O_CREAT|O_RDWR|x86 O_DIRECTORY, 0640
			pClone3Thread: u64s(0x3d0f00),
			pClone3Spawn:  u64s(cloneVM | cloneVFork),
		},
		dirs: map[int32]string{atFDCWD: "/w", 5: "/d5"},
	}
	x86 := func(a ...uint64) *seccompData {
		d := &seccompData{Arch: auditArchX86_64}
		copy(d.Args[:], a)
		return d
	}
	tests := []struct {
		name    string
		kind    sysKind
		data    *seccompData
		want    Request
		replay  bool
		wantErr bool
	}{
		{"open", sysOpen, x86(pAbs, 0o1101, 0o666), Request{Op: Open, Path: "/dev/null", Flags: 0o1101, Mode: 0o666}, true, false},
		{"open no O_CREAT ignores mode", sysOpen, x86(pRel, 0, 0xdead), Request{Op: Open, Path: "/w/rel"}, true, false},
		{"openat dirfd", sysOpenat, x86(5, pRel, 0o200000, 0), Request{Op: Open, Path: "/d5/rel", Flags: 0o40000}, true, false},
		{"openat AT_FDCWD", sysOpenat, x86(fdcwd, pRel, 0o100000|0o100, 0o100644), Request{Op: Open, Path: "/w/rel", Flags: 0o400000 | 0o100, Mode: 0o644}, true, false},
		{"openat2", sysOpenat2, x86(5, pRel, pHow, 24), Request{Op: Open, Path: "/d5/rel", Flags: 0o100 | 0o2 | 0o40000, Mode: 0o640}, true, false},
		{"openat2 short size", sysOpenat2, x86(5, pRel, pHow, 8), Request{}, false, true},
		{"openat2 bad pointer", sysOpenat2, x86(5, pRel, pHowShort, 24), Request{}, false, true},
		{"creat", sysCreat, x86(pRel, 0o600), Request{Op: Open, Path: "/w/rel", Flags: 0o1101, Mode: 0o600}, true, false},
		{"symlink", sysSymlink, x86(pFoo, pRel), Request{Op: Symlink, Path: "/w/rel", Target: "foo"}, true, false},
		{"symlinkat", sysSymlinkat, x86(pFoo, 5, pRel), Request{Op: Symlink, Path: "/d5/rel", Target: "foo"}, true, false},
		{"symlink bad target", sysSymlink, x86(0x9999, pRel), Request{}, false, true},
		{"mkdir", sysMkdir, x86(pAbs, 0o40755), Request{Op: Mkdir, Path: "/dev/null", Mode: 0o755}, true, false},
		{"mkdirat", sysMkdirat, x86(fdcwd, pRel, 0o777), Request{Op: Mkdir, Path: "/w/rel", Mode: 0o777}, true, false},
		{"unlink", sysUnlink, x86(pRel), Request{Op: Unlink, Path: "/w/rel"}, true, false},
		{"unlinkat", sysUnlinkat, x86(5, pRel, 0), Request{Op: Unlink, Path: "/d5/rel"}, true, false},
		{"unlinkat AT_REMOVEDIR", sysUnlinkat, x86(5, pRel, 0x200), Request{Op: Unlink, Path: "/d5/rel", Flags: 0x200}, true, false},
		{"rmdir", sysRmdir, x86(pAbs), Request{Op: Unlink, Path: "/dev/null", Flags: 0x200}, true, false},
		{"unlinkat bad dirfd", sysUnlinkat, x86(7, pRel, 0), Request{}, false, true},
		{"clone", sysClone, x86(0x01200011), Request{Op: Fork, Flags: 0x01200011}, true, false},
		{"fork", sysFork, x86(), Request{Op: Fork, Flags: 17}, true, false},
		{"vfork", sysVfork, x86(), Request{Op: Fork, Flags: 0x4111}, true, false},
		{"clone3 thread", sysClone3, x86(pClone3Thread, 88), Request{}, false, false},
		{"clone3 spawn", sysClone3, x86(pClone3Spawn, 88), Request{Op: Fork, Flags: cloneVM | cloneVFork}, true, false},
		{"clone3 unreadable", sysClone3, x86(0x9999, 88), Request{}, false, true},
		{"kill", sysKill, x86(1234, 15), Request{Op: Kill, Child: 1234, Flags: 15}, true, false},
		{"kill process group", sysKill, x86(0xfffffffffffffc18, 9), Request{Op: Kill, Child: -1000, Flags: 9}, true, false},
		{"arm64 flags kept", sysOpenat, &seccompData{Arch: auditArchAArch64, Args: [6]uint64{5, pRel, 0o40000}}, Request{Op: Open, Path: "/d5/rel", Flags: 0o40000}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, replay, err := decode(tt.kind, tt.data, c)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if replay != tt.replay || got != tt.want {
				t.Errorf("decode = %+v, %v; want %+v, %v", got, replay, tt.want, tt.replay)
			}
		})
	}
}
