//go:build linux && (amd64 || arm64)

package shadow

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/kpemu/kpemu/internal/mountinfo"
	"github.com/kpemu/kpemu/internal/procmem"
)

// sealOpen redirects an open of a mount table (see Seal) to a rewritten
// copy, if the table shows a kpemu mount. A copy is named by its content
// and never rewritten: the few distinct tables a namespace has take a file
// each, however many processes read them.
func (s *Supervisor) sealOpen(tid int, kind sysKind, r *Request) {
	p := r.Path
	if p == "/etc/mtab" {
		// A symlink to the table, as systemd and Debian make it.
		if t, err := os.Readlink(p); err == nil && (t == "../proc/self/mounts" || t == "/proc/self/mounts" || t == "/proc/mounts") {
			p = "/proc/self/mounts"
		}
	}
	proc, file, ok := mountTable(p)
	if !ok || r.Flags&0o3 != 0 {
		return // a write open fails on the real table (EACCES)
	}
	arg := 1 // openat, openat2: the path is the second argument
	switch kind {
	case sysOpen:
		arg = 0
	case sysOpenat, sysOpenat2:
	default:
		return
	}
	switch proc {
	case "self", "thread-self":
		// /proc/TID/ shows the thread's own table, as self does.
		proc = strconv.Itoa(tid)
	}
	table, err := os.ReadFile("/proc/" + proc + "/" + file)
	if err != nil {
		return // the tracee's open fails as it would
	}
	var out string
	if file == "mounts" {
		// Which lines are stand-ins only mountinfo's ROOT tells.
		info, err := os.ReadFile("/proc/" + proc + "/mountinfo")
		if err != nil {
			return
		}
		out = rewriteMounts(string(table), standInTargets(string(info)))
	} else {
		out = rewriteMountinfo(string(table))
	}
	if out == string(table) {
		return
	}
	sum := sha256.Sum256([]byte(out))
	name := filepath.Join(s.Seal.Dir, file+"-"+hex.EncodeToString(sum[:12]))
	if err := writeOnce(name, out); err != nil {
		s.log().Warn("shadow: seal: writing a mount table", "path", r.Path, "err", err)
		return
	}
	if err := redirectPath(tid, arg, name); err != nil {
		s.log().Warn("shadow: seal: redirecting an open", "tid", tid, "path", r.Path, "err", err)
		return
	}
	s.sealed.Add(1)
}

// writeOnce makes file name hold data, unless it exists (then it does):
// a new file is written whole and renamed into place, so that a reader
// never sees part of it.
func writeOnce(name, data string) error {
	if _, err := os.Stat(name); err == nil {
		return nil
	}
	f, err := os.CreateTemp(filepath.Dir(name), ".new-*")
	if err != nil {
		return err
	}
	_, err = f.WriteString(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o444)
	}
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// redirectPath makes the stopped syscall's path argument arg point to p:
// it writes p below the tracee's stack pointer (and its red zone), which
// nothing uses while the thread is in a syscall.
func redirectPath(tid, arg int, p string) error {
	rg, err := getRegs(tid)
	if err != nil {
		return fmt.Errorf("getting registers: %w", err)
	}
	b := append([]byte(p), 0)
	// No margin beyond the red zone: a Go tracee's goroutine stack has
	// only its guard (some 800 bytes) free below the stack pointer.
	addr := (rg.sp() - redZone - uint64(len(b))) &^ 15
	if _, err := unix.PtracePokeData(tid, uintptr(addr), b); err != nil {
		return fmt.Errorf("writing the path at %#x: %w", addr, err)
	}
	rg.setArg(arg, addr)
	if err := setRegs(tid, rg); err != nil {
		return fmt.Errorf("setting registers: %w", err)
	}
	return nil
}

// Linux's mount(2) flags the seal looks at.
const (
	msPropagation = unix.MS_SHARED | unix.MS_PRIVATE | unix.MS_SLAVE | unix.MS_UNBINDABLE
	// msPerMount are the flags a bind mount takes, by a remount.
	msPerMount = unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC |
		unix.MS_NOATIME | unix.MS_NODIRATIME | unix.MS_RELATIME | unix.MS_STRICTATIME
)

// sealMount serves a stopped mount(2) or fsopen(2) of a tracefs or debugfs:
// mount(2) binds kpemu's tree at its target, as the tracee, and fsopen(2)
// fails with ENOSYS (see Seal). Other file systems, remounts, binds, moves
// and propagation changes (which ignore the type) go on unchanged.
func (s *Supervisor) sealMount(tid int, kind sysKind, d *seccompData, c *procCaller) {
	var ret int64
	switch kind {
	case sysMount:
		flags := d.Args[3]
		if d.Args[2] == 0 || flags&(unix.MS_REMOUNT|unix.MS_BIND|unix.MS_MOVE|msPropagation) != 0 {
			return
		}
		fstype, err := c.readString(d.Args[2])
		if err != nil {
			return // the host's mount fails with EFAULT
		}
		tree, sealed := s.Seal.sealedFsType(fstype)
		if !sealed {
			return
		}
		ret = -int64(s.bindTree(tid, tree, d.Args[1], flags, c))
	case sysFsopen:
		name, err := c.readString(d.Args[0])
		if err != nil {
			return
		}
		if _, sealed := s.Seal.sealedFsType(name); !sealed {
			return
		}
		ret = -int64(unix.ENOSYS)
	default:
		return
	}
	rg, err := getRegs(tid)
	if err == nil {
		rg.skipSyscall(ret)
		err = setRegs(tid, rg)
	}
	if err != nil {
		// The host's mount must not run: the tracee is left to die
		// rather than mount the host kernel's tracing.
		s.log().Error("shadow: seal: cannot skip a mount; killing the caller", "tid", tid, "err", err)
		_ = unix.Tgkill(tgid(tid), tid, unix.SIGKILL)
		return
	}
	s.sealed.Add(1)
}

// bindTree binds tree at the tracee's target, as mount(2) of the file
// system would mount it there; it returns the errno for the tracee (0 for
// success).
func (s *Supervisor) bindTree(tid int, tree string, target uint64, flags uint64, c *procCaller) unix.Errno {
	if !hasCap(tid, unix.CAP_SYS_ADMIN) {
		return unix.EPERM
	}
	if tree == "" || !sameMountNS(tid) {
		// No tree here, or the tracee's mounts are not the tracer's to
		// change: as on a kernel without the file system.
		return unix.ENODEV
	}
	p, err := absPath(atFDCWD, target, c)
	switch {
	case err == errEmptyPath:
		return unix.ENOENT
	case err != nil:
		return unix.EFAULT
	}
	if root, err := os.Readlink("/proc/" + strconv.Itoa(tid) + "/root"); err == nil && root != "/" {
		p = path.Join(root, p) // a chrooted tracee
	}
	if err := unix.Mount(tree, p, "", unix.MS_BIND, ""); err != nil {
		return errnoOf(err)
	}
	if f := flags & msPerMount; f != 0 {
		if err := unix.Mount("", p, "", unix.MS_REMOUNT|unix.MS_BIND|uintptr(f), ""); err != nil {
			_ = unix.Unmount(p, unix.MNT_DETACH)
			return errnoOf(err)
		}
	}
	s.log().Debug("shadow: seal: bound kpemu's tree for a mount", "tid", tid, "tree", tree, "target", p)
	return 0
}

func errnoOf(err error) unix.Errno {
	if e, ok := err.(unix.Errno); ok {
		return e
	}
	return unix.EINVAL
}

// sameMountNS reports whether tid is in the tracer's mount namespace.
func sameMountNS(tid int) bool {
	mine, err1 := os.Readlink("/proc/self/ns/mnt")
	theirs, err2 := os.Readlink("/proc/" + strconv.Itoa(tid) + "/ns/mnt")
	return err1 == nil && err2 == nil && mine == theirs
}

// hasCap reports whether capability c is in tid's effective set.
func hasCap(tid int, c uint) bool {
	v, ok := statusField(tid, "CapEff")
	if !ok {
		return false
	}
	caps, err := strconv.ParseUint(v, 16, 64)
	return err == nil && caps&(1<<c) != 0
}

// tgid is the process of thread tid (tid itself if unknown).
func tgid(tid int) int {
	if v, ok := statusField(tid, "Tgid"); ok {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	return tid
}

// statusField is field name of /proc/TID/status.
func statusField(tid int, name string) (string, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(tid) + "/status")
	if err != nil {
		return "", false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, name+":"); ok {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// Linux's statfs f_type of the file systems the seal deals in.
const (
	fuseSuperMagic = 0x65735546
	tracefsMagic   = 0x74726163
	debugfsMagic   = 0x64626720
)

// statfsExit is a statfs(2) or fstatfs(2) of a kpemu tree whose result
// the seal rewrites at the syscall's exit.
type statfsExit struct {
	buf   uint64 // the struct statfs; f_type is its first word
	magic uint64 // Linux's f_type for the tree
}

// sealStatfs asks for the exit of a statfs or fstatfs of a file on a kpemu
// mount, so that its f_type shows as tracefs's or debugfs's, not FUSE's
// (perf looks for the magic at /sys/kernel/tracing before /proc/mounts).
func sealStatfs(tid int, kind sysKind, d *seccompData, c *procCaller) (statfsExit, bool) {
	var p string
	var err error
	if kind == sysStatfs {
		if p, err = absPath(atFDCWD, d.Args[0], c); err == nil {
			if r, err := filepath.EvalSymlinks(p); err == nil {
				p = r
			}
		}
	} else {
		p, err = c.dir(int32(d.Args[0]))
	}
	if err != nil || !path.IsAbs(p) {
		return statfsExit{}, false
	}
	t, ok := kpemuMountType(tid, p)
	if !ok {
		return statfsExit{}, false
	}
	magic := uint64(debugfsMagic)
	if t == "tracefs" {
		magic = tracefsMagic
	}
	return statfsExit{buf: d.Args[1], magic: magic}, true
}

// kpemuMountType is the Linux type of the kpemu mount that holds p in
// tid's mount table, if a kpemu mount holds it.
func kpemuMountType(tid int, p string) (string, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(tid) + "/mountinfo")
	if err != nil {
		return "", false
	}
	best, typ := -1, ""
	for _, m := range mountinfo.Parse(string(b)) {
		mp := m.Point
		if p != mp && mp != "/" && !strings.HasPrefix(p, mp+"/") {
			continue
		}
		// The deepest mount point holds p; of mounts on the same one, the
		// last, which covers the others.
		if len(mp) >= best {
			best, typ = len(mp), linuxType(m.FSType, m.Source)
		}
	}
	return typ, typ != ""
}

// exitStop is what the seal does at the exit of a syscall it let run or
// changed; closing: the tracer is letting its tracees go.
type exitStop interface {
	atExit(s *Supervisor, tid int, closing bool)
}

// atExit rewrites the f_type of a statfs that succeeded on a kpemu tree.
func (x statfsExit) atExit(s *Supervisor, tid int, _ bool) {
	rg, err := getRegs(tid)
	if err != nil || rg.ret() != 0 {
		return
	}
	c := &procCaller{procmem.Reader{PID: tid}}
	defer c.Close()
	var b [8]byte
	if err := c.Read(x.buf, b[:]); err != nil || binary.LittleEndian.Uint64(b[:]) != fuseSuperMagic {
		return
	}
	binary.LittleEndian.PutUint64(b[:], x.magic)
	if _, err := unix.PtracePokeData(tid, uintptr(x.buf), b[:]); err != nil {
		s.log().Warn("shadow: seal: rewriting statfs's f_type", "tid", tid, "err", err)
		return
	}
	s.sealed.Add(1)
}

// perf_event_open(2)'s ABI (include/uapi/linux/perf_event.h).
const (
	perfTypeTracepoint = 2      // PERF_TYPE_TRACEPOINT
	perfAttrSizeVer0   = 64     // PERF_ATTR_SIZE_VER0
	perfFormatGroup    = 1 << 3 // PERF_FORMAT_GROUP
	perfFlagFdCloexec  = 1 << 3 // PERF_FLAG_FD_CLOEXEC
	perfFlagPidCgroup  = 1 << 2 // PERF_FLAG_PID_CGROUP
	// struct perf_event_attr's bit fields (at offset 40)
	perfAttrDisabled     = 1 << 0
	perfAttrInherit      = 1 << 1
	perfAttrEnableOnExec = 1 << 12
)

// sealPerf serves perf_event_open(2) of a tracepoint (see Seal): the
// tool took the event's id from kpemu's tracefs, and the host kernel
// would count its own event of that id. A counting event that Perf
// serves becomes an open of Perf's file, whose exit stop gives the
// tracee back its argument registers; the rest fail with EOPNOTSUPP, as
// does a counter of the host's kprobe or uprobe PMU. Counters of the
// host's CPU and software events go on.
func (s *Supervisor) sealPerf(tid int, d *seccompData, c *procCaller) (exitStop, bool) {
	var b [perfAttrSizeVer0]byte
	if d.Args[0] == 0 || c.Read(d.Args[0], b[:8]) != nil {
		return nil, false // the host's call fails with EFAULT
	}
	typ := binary.LittleEndian.Uint32(b[:])
	if typ == perfTypeSoftware && s.Seal.Perf != nil && c.Read(d.Args[0], b[:]) == nil &&
		binary.LittleEndian.Uint64(b[8:]) == perfCountSWDummy {
		// perf record's tracking event shares a ring with the
		// tracepoints' (SET_OUTPUT), so it must be one of kpemu's.
		return s.perfDummy(tid, d, b[:])
	}
	if typ != perfTypeTracepoint && !hostProbePMU(typ) {
		return nil, false
	}
	errno := unix.EOPNOTSUPP
	if typ == perfTypeTracepoint && s.Seal.Perf != nil && c.Read(d.Args[0], b[:]) == nil {
		var x exitStop
		var ok bool
		if x, ok, errno = s.perfCounter(tid, d, b[:]); errno == 0 {
			return x, ok
		}
	}
	s.refusePerf(tid, errno)
	return nil, false
}

// refusePerf fails the stopped perf_event_open of thread tid with errno;
// a caller whose call cannot be refused is killed, as the host kernel
// would count its own event.
func (s *Supervisor) refusePerf(tid int, errno unix.Errno) {
	rg, err := getRegs(tid)
	if err == nil {
		rg.skipSyscall(-int64(errno))
		err = setRegs(tid, rg)
	}
	if err != nil {
		s.log().Error("shadow: seal: cannot refuse a perf event; killing the caller", "tid", tid, "err", err)
		_ = unix.Tgkill(tgid(tid), tid, unix.SIGKILL)
		return
	}
	s.sealed.Add(1)
}

// perfCounter turns the stopped perf_event_open of the tracepoint
// counter attr (its first perfAttrSizeVer0 bytes) into an open of the
// file s.Seal.Perf names for it, or returns the errno it fails with.
func (s *Supervisor) perfCounter(tid int, d *seccompData, attr []byte) (exitStop, bool, unix.Errno) {
	u64 := func(off int) uint64 { return binary.LittleEndian.Uint64(attr[off:]) }
	bits := u64(40)
	a := PerfAttr{
		Config: u64(8), ReadFormat: u64(32),
		Disabled: bits&perfAttrDisabled != 0, Inherit: bits&perfAttrInherit != 0,
		EnableOnExec: bits&perfAttrEnableOnExec != 0,
		PID:          int(int32(d.Args[1])), CPU: int(int32(d.Args[2])),
	}
	flags := d.Args[4]
	// Groups read as one and cgroups are not served.
	if a.ReadFormat&perfFormatGroup != 0 || flags&perfFlagPidCgroup != 0 {
		return nil, false, unix.EOPNOTSUPP
	}
	if sa, ok := sampleAttr(a, attr); ok {
		return s.perfSampler(tid, sa, flags)
	}
	p, errno := s.Seal.Perf.PreparePerf(tid, a)
	if errno != 0 {
		return nil, false, errno
	}
	entry, err := getRegs(tid)
	if err != nil {
		return nil, false, unix.ESRCH
	}
	rg := *entry
	path := append([]byte(p), 0)
	addr := (rg.sp() - redZone - uint64(len(path))) &^ 15
	if _, err := unix.PtracePokeData(tid, uintptr(addr), path); err != nil {
		return nil, false, unix.EFAULT
	}
	oflags := uint64(unix.O_RDWR)
	if flags&perfFlagFdCloexec != 0 {
		oflags |= unix.O_CLOEXEC
	}
	rg.setSyscall(unix.SYS_OPENAT)
	for i, v := range []uint64{uint64(0xffffffffffffff9c) /* AT_FDCWD */, addr, oflags, 0} {
		rg.setArg(i, v)
	}
	if err := setRegs(tid, &rg); err != nil {
		return nil, false, unix.ESRCH
	}
	s.sealed.Add(1)
	return perfExit{entry: entry}, true, 0
}

// perfExit ends a perf_event_open made an open: the tracee gets its
// registers back, with the open's descriptor (or error) as the result.
type perfExit struct{ entry *regs }

func (x perfExit) atExit(s *Supervisor, tid int, _ bool) {
	rg, err := getRegs(tid)
	if err != nil {
		return
	}
	rg.keepRet(x.entry)
	if err := setRegs(tid, rg); err != nil {
		s.log().Warn("shadow: seal: cannot end a perf counter's open", "tid", tid, "err", err)
	}
}

// hostProbePMU reports whether typ is the host kernel's kprobe or uprobe
// PMU, whose type numbers the host assigns at boot.
func hostProbePMU(typ uint32) bool {
	for _, pmu := range []string{"kprobe", "uprobe"} {
		b, err := os.ReadFile("/sys/bus/event_source/devices/" + pmu + "/type")
		if err != nil {
			continue
		}
		if n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 32); err == nil && uint32(n) == typ {
			return true
		}
	}
	return false
}
