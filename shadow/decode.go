package shadow

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path"
)

// sysKind is what a stopped syscall is, whatever its number on the host.
type sysKind int

const (
	sysOpen sysKind = iota + 1
	sysOpenat
	sysOpenat2
	sysCreat
	sysSymlink
	sysSymlinkat
	sysMkdir
	sysMkdirat
	sysUnlink
	sysUnlinkat
	sysRmdir
	sysClone
	sysClone3
	sysFork
	sysVfork
	sysMount  // not replayed: the seal's (seal_linux.go)
	sysFsopen // likewise
	sysStatfs
	sysFstatfs
	sysSplice // the seal's (splice_linux.go)
	// sysPerfEventOpen is the seal's (seal_linux.go): a tracepoint or
	// probe counter would count the host kernel's events.
	sysPerfEventOpen
	// sysKill stops only with a signal no target shows (atCaller,
	// kill_linux.go).
	sysKill
	// sysIoctl stops only with one of perf's commands (type '$'): the
	// seal's, for the sampling events it made memfds (perfsample_linux.go).
	sysIoctl
	// sysPoll and sysPpoll are the seal's, for perf record's waits on
	// the rings of its sampling events (perfsample_linux.go).
	sysPoll
	sysPpoll
	// sysSelect and sysPselect6 are the seal's, for waits on kpemu's
	// files that poll (select_linux.go).
	sysSelect
	sysPselect6
)

// Linux ABI values used by the decoder. They are spelled out rather than
// taken from x/sys/unix so that the decoder (and its tests) builds on every
// host, and because unix.O_LARGEFILE is the userspace 0, not the flag the
// kernel sees.
const (
	atFDCWD     = -100
	atRemoveDir = 0x200

	cloneVM     = 0x100
	cloneVFork  = 0x4000
	cloneThread = 0x10000
	sigchld     = 17

	oWronly    = 0o1
	oCreat     = 0o100
	oTrunc     = 0o1000
	oTmpfile   = 0o20000000 // __O_TMPFILE, the same on x86 and arm64
	openHowLen = 24         // struct open_how, OPEN_HOW_SIZE_VER0

	// AUDIT_ARCH_* of seccomp_data.arch.
	auditArchX86_64  = 0xc000003e
	auditArchAArch64 = 0xc00000b7
)

// The O_* flags whose bits differ between x86 and the asm-generic
// encoding that arm64 uses; all other flags are equal.
const (
	x86Direct, x86LargeFile, x86Directory, x86NoFollow = 0o40000, 0o100000, 0o200000, 0o400000
	armDirectory, armNoFollow, armDirect, armLargeFile = 0o40000, 0o100000, 0o200000, 0o400000
)

// arm64OpenFlags translates open flags as a caller of architecture arch
// (an AUDIT_ARCH_* value) passed them into arm64's encoding.
func arm64OpenFlags(arch uint32, flags uint32) uint32 {
	if arch != auditArchX86_64 {
		return flags
	}
	out := flags &^ (x86Direct | x86LargeFile | x86Directory | x86NoFollow)
	for _, m := range [...][2]uint32{
		{x86Direct, armDirect}, {x86LargeFile, armLargeFile},
		{x86Directory, armDirectory}, {x86NoFollow, armNoFollow},
	} {
		if flags&m[0] != 0 {
			out |= m[1]
		}
	}
	return out
}

// seccompData is struct seccomp_data.
type seccompData struct {
	Nr   int32
	Arch uint32
	IP   uint64
	Args [6]uint64
}

// caller reads the process that made a syscall.
type caller interface {
	// readString reads a NUL-terminated string (at most PATH_MAX bytes).
	readString(addr uint64) (string, error)
	// Read fills b from addr.
	Read(addr uint64, b []byte) error
	// dir is the path of directory fd dirfd, or of the working directory
	// for AT_FDCWD.
	dir(dirfd int32) (string, error)
}

var errEmptyPath = errors.New("empty path")

// decode turns syscall k with data d into the request to replay; replay
// is false for what is not replayed (a clone3 creating a thread).
func decode(k sysKind, d *seccompData, c caller) (r Request, replay bool, err error) {
	a := d.Args
	pathAt := func(dirfd int32, addr uint64) (string, error) { return absPath(dirfd, addr, c) }
	switch k {
	case sysOpen, sysOpenat, sysOpenat2, sysCreat:
		r.Op = Open
		dirfd := int32(atFDCWD)
		var addr, flags, mode uint64
		switch k {
		case sysOpen:
			addr, flags, mode = a[0], a[1], a[2]
		case sysOpenat:
			dirfd, addr, flags, mode = int32(a[0]), a[1], a[2], a[3]
		case sysCreat:
			addr, flags, mode = a[0], oCreat|oWronly|oTrunc, a[1]
		case sysOpenat2:
			if a[3] < openHowLen {
				return r, false, fmt.Errorf("openat2: open_how size %d", a[3])
			}
			var how [openHowLen]byte
			if err := c.Read(a[2], how[:]); err != nil {
				return r, false, fmt.Errorf("openat2: reading open_how: %w", err)
			}
			dirfd, addr = int32(a[0]), a[1]
			flags = binary.LittleEndian.Uint64(how[0:])
			mode = binary.LittleEndian.Uint64(how[8:])
		}
		if r.Path, err = pathAt(dirfd, addr); err != nil {
			return r, false, err
		}
		r.Flags = arm64OpenFlags(d.Arch, uint32(flags))
		// The mode argument is garbage unless the open creates.
		if flags&(oCreat|oTmpfile) != 0 {
			r.Mode = uint32(mode) & 0o7777
		}
	case sysSymlink, sysSymlinkat:
		r.Op = Symlink
		if r.Target, err = c.readString(a[0]); err != nil {
			return r, false, fmt.Errorf("symlink target: %w", err)
		}
		if k == sysSymlink {
			r.Path, err = pathAt(atFDCWD, a[1])
		} else {
			r.Path, err = pathAt(int32(a[1]), a[2])
		}
		if err != nil {
			return r, false, err
		}
	case sysMkdir, sysMkdirat:
		r.Op = Mkdir
		dirfd, addr, mode := int32(atFDCWD), a[0], a[1]
		if k == sysMkdirat {
			dirfd, addr, mode = int32(a[0]), a[1], a[2]
		}
		if r.Path, err = pathAt(dirfd, addr); err != nil {
			return r, false, err
		}
		r.Mode = uint32(mode) & 0o7777
	case sysUnlink, sysUnlinkat, sysRmdir:
		r.Op = Unlink
		dirfd, addr := int32(atFDCWD), a[0]
		switch k {
		case sysUnlinkat:
			dirfd, addr = int32(a[0]), a[1]
			r.Flags = uint32(a[2]) & atRemoveDir
		case sysRmdir:
			r.Flags = atRemoveDir
		}
		if r.Path, err = pathAt(dirfd, addr); err != nil {
			return r, false, err
		}
	case sysClone:
		// The filter lets threads through; this is a process.
		r.Op, r.Flags = Fork, uint32(a[0])
	case sysFork:
		r.Op, r.Flags = Fork, sigchld
	case sysVfork:
		r.Op, r.Flags = Fork, cloneVM|cloneVFork|sigchld
	case sysClone3:
		// BPF cannot read struct clone_args; its first field is flags.
		if a[1] < 8 {
			return r, false, fmt.Errorf("clone3: clone_args size %d", a[1])
		}
		var b [8]byte
		if err := c.Read(a[0], b[:]); err != nil {
			return r, false, fmt.Errorf("clone3: reading clone_args: %w", err)
		}
		flags := binary.LittleEndian.Uint64(b[:])
		if clone3IsThread(flags) {
			return r, false, nil
		}
		r.Op, r.Flags = Fork, uint32(flags)
	case sysKill:
		r.Op, r.Child, r.Flags = Kill, int(int32(a[0])), uint32(a[1])
	default:
		return r, false, fmt.Errorf("syscall kind %d not handled", k)
	}
	return r, true, nil
}

// clone3IsThread reports whether clone_args.flags create a thread.
func clone3IsThread(flags uint64) bool { return flags&cloneThread != 0 }

// absPath reads the path at addr and joins a relative one to the
// directory of dirfd.
func absPath(dirfd int32, addr uint64, c caller) (string, error) {
	p, err := c.readString(addr)
	if err != nil {
		return "", fmt.Errorf("reading path: %w", err)
	}
	return resolvePath(p, dirfd, c.dir)
}

// resolvePath makes p absolute against the directory of dirfd.
func resolvePath(p string, dirfd int32, dir func(int32) (string, error)) (string, error) {
	if p == "" {
		// The host syscall fails with ENOENT; nothing to replay.
		return "", errEmptyPath
	}
	if path.IsAbs(p) {
		return p, nil
	}
	base, err := dir(dirfd)
	if err != nil {
		return "", fmt.Errorf("resolving %q: %w", p, err)
	}
	if !path.IsAbs(base) {
		// Not a directory (e.g. "socket:[123]"): the host syscall fails.
		return "", fmt.Errorf("resolving %q: dirfd %d is %q", p, dirfd, base)
	}
	return path.Join(base, p), nil
}
