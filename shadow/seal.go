package shadow

import (
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Seal keeps the tools of a traced tree on kpemu's trees, so that they
// never reach the host kernel's tracing (scripts/kpemu-ns.sh):
//
//   - /proc/mounts, /proc/PID/mounts and /proc/PID/mountinfo (self,
//     thread-self, task/TID) show kpemu's FUSE mounts with the type that
//     Linux shows, "tracefs" or "debugfs", not "fuse.kpemu", and without
//     FUSE's own super options: libtracefs and perf look for the type, and
//     mount the host's tracefs when they do not find it. The open is
//     redirected to a copy of the table, rewritten, in Dir.
//   - statfs(2) and fstatfs(2) of a file on one of those mounts give
//     Linux's f_type (TRACEFS_MAGIC, DEBUGFS_MAGIC), not FUSE's: perf
//     looks for the magic at /sys/kernel/tracing first. The syscall runs,
//     and its result is rewritten at its exit stop.
//   - mount(2) of a tracefs or debugfs binds kpemu's tree there instead
//     (and fails with ENODEV where that cannot be done: a tracee in
//     another mount namespace, or no such tree); fsopen(2) of either fails
//     with ENOSYS, so that a mount(8) that tries the new mount API first
//     falls back to mount(2).
//   - perf_event_open(2) of a tracepoint (whose id a tool read from
//     kpemu's tracefs) is served by Perf: a counting event (perf stat)
//     becomes an open of the file Perf names, whose reads and ioctls are
//     a perf counter's; a sampling one (perf record), and perf record's
//     PERF_COUNT_SW_DUMMY, a memfd_create whose memfd Perf writes the
//     samples into, and whose ioctls the seal serves
//     (perfsample_linux.go). Any without Perf, and one of the host's
//     kprobe or uprobe PMU, fail with EOPNOTSUPP: the host kernel would
//     count its own events.
type Seal struct {
	Tracefs string // kpemu's tracing tree, as Linux's /sys/kernel/tracing ("" if none)
	Debugfs string // kpemu's debugfs tree ("" if none)
	// Perf, if not nil, serves perf_event_open(2) of a tracepoint with
	// a counter or sampling event of kpemu's events (see PerfCounters).
	Perf PerfCounters
	Dir  string // where the rewritten mount tables go; a private tmpfs
}

// Mode is what a Supervisor does with a process tree that attaches.
type Mode byte

const (
	// ModeShadow replays the tree's syscalls in the guest, and seals it if
	// the Supervisor has a Seal.
	ModeShadow Mode = 0
	// ModeSeal only seals the tree: nothing is replayed, and its filter
	// stops only the syscalls that the seal acts on.
	ModeSeal Mode = 1
)

// fuseType is the type of kpemu's mounts in the host's mount tables.
const fuseType = "fuse.kpemu"

// mountTable reports whether absolute path p is a mount table of /proc,
// and which: the process ("self", "thread-self", a PID) and the file
// ("mounts" or "mountinfo"). /proc/mounts is self's mounts; a thread's
// (/proc/PID/task/TID/) is its process's.
func mountTable(p string) (proc, file string, ok bool) {
	p = path.Clean(p)
	if p == "/proc/mounts" {
		return "self", "mounts", true
	}
	rest, found := strings.CutPrefix(p, "/proc/")
	if !found {
		return "", "", false
	}
	parts := strings.Split(rest, "/")
	switch {
	case len(parts) == 2:
	case len(parts) == 4 && parts[1] == "task" && isPID(parts[2]) && parts[0] != "thread-self":
	default:
		return "", "", false
	}
	if parts[len(parts)-1] != "mounts" && parts[len(parts)-1] != "mountinfo" {
		return "", "", false
	}
	if parts[0] != "self" && parts[0] != "thread-self" && !isPID(parts[0]) {
		return "", "", false
	}
	return parts[0], parts[len(parts)-1], true
}

func isPID(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n > 0 && strconv.Itoa(n) == s
}

// dropFuseOpts removes from a comma-separated list the options that FUSE
// adds to a mount's; Linux's tracefs and debugfs have none of them.
func dropFuseOpts(opts string) string {
	var keep []string
	for _, o := range strings.Split(opts, ",") {
		name, _, _ := strings.Cut(o, "=")
		switch name {
		case "user_id", "group_id", "default_permissions", "allow_other", "max_read", "blksize":
			continue
		}
		keep = append(keep, o)
	}
	return strings.Join(keep, ",")
}

// linuxType is the type Linux shows for a kpemu mount whose source (its
// FsName) is source, or "" if it is not one that kpemu stands in for.
func linuxType(fstype, source string) string {
	if fstype != fuseType || (source != "tracefs" && source != "debugfs") {
		return ""
	}
	return source
}

// standIn reports whether a kpemu mount whose ROOT (mountinfo's fourth
// field) is root is a bind of one of kpemu/'s files over a /proc or /sys
// file (kpemu-ns.sh's /proc/kallsyms, /sys/kernel/notes, the sysctls): on
// Linux those are files of proc and sysfs, not mounts, so the tables
// leave them out.
func standIn(root string) bool { return strings.HasPrefix(root, "/kpemu/") }

// rewriteMounts rewrites the lines of kpemu's mounts in a /proc/PID/mounts
// table ("SOURCE TARGET TYPE OPTS 0 0") with Linux's type and options, and
// drops those at the targets in hidden (the stand-ins, which the mounts
// table cannot tell apart: standInTargets finds them in mountinfo).
func rewriteMounts(table string, hidden map[string]bool) string {
	return rewriteLines(table, func(f []string) lineFix {
		if len(f) < 4 {
			return keepLine
		}
		t := linuxType(f[2], f[0])
		switch {
		case t == "":
			return keepLine
		case hidden[f[1]]:
			return dropLine
		}
		f[2], f[3] = t, dropFuseOpts(f[3])
		return fixLine
	})
}

// mountinfoType returns the index of the "-" separator of a
// /proc/PID/mountinfo line's fields ("ID PARENT MAJ:MIN ROOT TARGET OPTS
// [OPTIONAL...] - TYPE SOURCE SUPEROPTS") and the Linux type of the mount
// if it is kpemu's, or sep < 0 if the line is not one.
func mountinfoType(f []string) (sep int, linux string) {
	for i := 6; i < len(f); i++ {
		if f[i] == "-" {
			if i+3 >= len(f) {
				return -1, ""
			}
			return i, linuxType(f[i+1], f[i+2])
		}
	}
	return -1, ""
}

// standInTargets returns the targets of the stand-in binds in a
// mountinfo table.
func standInTargets(mountinfo string) map[string]bool {
	hidden := map[string]bool{}
	for _, line := range strings.Split(mountinfo, "\n") {
		f := strings.Split(line, " ")
		if sep, t := mountinfoType(f); sep >= 0 && t != "" && standIn(f[3]) {
			hidden[f[4]] = true
		}
	}
	return hidden
}

// rewriteMountinfo does rewriteMounts's for /proc/PID/mountinfo.
func rewriteMountinfo(table string) string {
	return rewriteLines(table, func(f []string) lineFix {
		sep, t := mountinfoType(f)
		switch {
		case sep < 0 || t == "":
			return keepLine
		case standIn(f[3]):
			return dropLine
		}
		f[sep+1], f[sep+3] = t, dropFuseOpts(f[sep+3])
		return fixLine
	})
}

// lineFix is what rewriteLines does with a line.
type lineFix int

const (
	keepLine lineFix = iota // as it was
	fixLine                 // put back together from the fields as fixed
	dropLine                // left out
)

// rewriteLines calls fix with each line's space-separated fields and
// keeps, rebuilds or drops the line as it says.
func rewriteLines(table string, fix func([]string) lineFix) string {
	var b strings.Builder
	b.Grow(len(table))
	for _, line := range strings.SplitAfter(table, "\n") {
		body, nl := strings.CutSuffix(line, "\n")
		f := strings.Split(body, " ")
		switch fix(f) {
		case fixLine:
			b.WriteString(strings.Join(f, " "))
			if nl {
				b.WriteByte('\n')
			}
		case dropLine:
		default:
			b.WriteString(line)
		}
	}
	return b.String()
}

// sealedFsType is the kpemu tree that stands in for a mount of file
// system type fstype, or "" if fstype is not one the seal keeps away.
func (s *Seal) sealedFsType(fstype string) (tree string, sealed bool) {
	switch fstype {
	case "tracefs":
		return s.Tracefs, true
	case "debugfs":
		return s.Debugfs, true
	}
	return "", false
}

// PerfAttr is what a counter of perf_event_open(2) asks for, from its
// struct perf_event_attr and arguments.
type PerfAttr struct {
	Config     uint64 // the tracepoint's id
	ReadFormat uint64 // PERF_FORMAT_*
	// Disabled: the counter starts disabled (an ioctl or the exec of
	// the process it counts enables it); Inherit: it counts the
	// process's children too; EnableOnExec: its exec enables it.
	Disabled, Inherit, EnableOnExec bool
	PID, CPU                        int // -1: any process, any CPU
}

// SampleAttr is a sampling event of perf_event_open(2) (perf record).
type SampleAttr struct {
	PerfAttr
	SampleType   uint64 // PERF_SAMPLE_*
	SamplePeriod uint64 // a sample every SamplePeriod hits
	SampleIDAll  bool   // sample_id_all
	// Comm: the ring gets a PERF_RECORD_COMM before a task's first
	// sample and when its name changes (attr.comm, perf's tracking
	// event's); Dummy: the software event PERF_COUNT_SW_DUMMY, which
	// samples nothing and is there for its ring and its tracking.
	Comm, Dummy bool
}

// PerfCounters makes kpemu's perf counters and sampling events.
type PerfCounters interface {
	// PreparePerf readies a counter of attr for tid's next open of the
	// file it names (an absolute path in the caller's file system), or
	// returns the errno that perf_event_open(2) fails with.
	PreparePerf(tid int, attr PerfAttr) (path string, errno syscall.Errno)
	// CheckSample returns the errno perf_event_open(2) of the sampling
	// event attr fails with, 0 if it would not.
	CheckSample(attr SampleAttr) syscall.Errno
	// SamplePerf makes the sampling event attr, whose ring buffer is the
	// memfd ring (kpemu's open of it, which the event then owns) that
	// process tgid maps.
	SamplePerf(attr SampleAttr, ring *os.File, tgid int) (PerfSampler, syscall.Errno)
}

// PerfSampler is a sampling event that SamplePerf made: perf's ioctls
// on it, and its end.
type PerfSampler interface {
	ID() uint64
	Enable(on bool)
	Reset()
	SetPeriod(p uint64) syscall.Errno
	SetFilter(f string) syscall.Errno
	// SetOutput sends its samples to to's ring (nil: its own).
	SetOutput(to PerfSampler) syscall.Errno
	Pause(on bool)
	// Pending reports whether its own ring holds records perf has not
	// read.
	Pending() bool
	Close()
}

// samplerTable holds the sampling events the seal made, by process and
// descriptor. The seal's trace loops share it.
type samplerTable struct {
	mu sync.Mutex
	m  map[int]map[int]PerfSampler
}

func (st *samplerTable) add(tgid, fd int, s PerfSampler) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.m == nil {
		st.m = map[int]map[int]PerfSampler{}
	}
	if st.m[tgid] == nil {
		st.m[tgid] = map[int]PerfSampler{}
	}
	if old := st.m[tgid][fd]; old != nil {
		old.Close() // the descriptor was closed and reused
	}
	st.m[tgid][fd] = s
}

// none reports whether there are no events at all, so that the seal's
// poll and ioctl stops need not look up their caller's process.
func (st *samplerTable) none() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.m) == 0
}

// of is process tgid's events by descriptor (a copy), nil if none.
func (st *samplerTable) of(tgid int) map[int]PerfSampler {
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.m[tgid]) == 0 {
		return nil
	}
	m := make(map[int]PerfSampler, len(st.m[tgid]))
	for fd, s := range st.m[tgid] {
		m[fd] = s
	}
	return m
}

func (st *samplerTable) get(tgid, fd int) PerfSampler {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.m[tgid][fd]
}

// exit ends the events of process tgid, which is gone.
func (st *samplerTable) exit(tgid int) {
	st.mu.Lock()
	l := st.m[tgid]
	delete(st.m, tgid)
	st.mu.Unlock()
	for _, s := range l {
		s.Close()
	}
}
