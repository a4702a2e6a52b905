//go:build linux && (amd64 || arm64)

package shadow

import (
	"bufio"
	"encoding/binary"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// procTable follows a traced tree's processes for their twins in the
// guest: a guest task per host process, with the host process's pid, that
// replays the process's calls, so that the pid a tool reads on the host
// ($$, the pid trace-cmd -F writes to set_event_pid) is the one the
// guest's events show. A twin is made by Adopt for the tree's first
// process and by Fork for each process it makes, and ended by Exit.
//
// A Fork waits at its seccomp stop (before the host's fork, when the
// child's pid is not known) and is replayed at the first stop that knows
// the child: the parent's PTRACE_EVENT_FORK (VFORK, CLONE) stop, or the
// child's own first stop, whichever the tracer sees first.
type procTable struct {
	tgid   map[int]int     // each known thread's process
	forks  map[int]Request // forking thread -> its Fork, until the child is known
	exited map[int]bool    // processes whose Exit was replayed
	// early holds each child whose own first stop replayed its Fork,
	// with the forking thread, until that thread's fork event: the
	// child may be reaped (and forgotten) before the event comes, which
	// must not replay the Fork again (its twin would never exit).
	early map[int]int
	tree  *treeSet // every process the tree had, for the kill watch
}

func newProcTable() *procTable {
	return &procTable{tgid: map[int]int{}, forks: map[int]Request{}, exited: map[int]bool{}, early: map[int]int{}, tree: &treeSet{}}
}

// adopt is the Adopt of pid, the tree's first process.
func (pt *procTable) adopt(pid int) Request {
	pt.tgid[pid] = pid
	pt.tree.add(pid)
	return Request{Op: Adopt, Child: pid, Comm: readComm(pid)}
}

// known says whether tid was seen before (adopted, or made by a fork
// or clone whose event the tracer saw).
func (pt *procTable) known(tid int) bool {
	_, ok := pt.tgid[tid]
	return ok
}

// process is tid's process.
func (pt *procTable) process(tid int) int {
	if p, ok := pt.tgid[tid]; ok {
		return p
	}
	tgid, _ := procStatus(tid)
	if tgid == 0 {
		tgid = tid
	}
	pt.tgid[tid] = tgid
	return tgid
}

// forking holds r, the Fork that thread tid is about to make.
func (pt *procTable) forking(tid int, r Request) {
	r.PID = pt.process(tid)
	pt.forks[tid] = r
}

// forked is tid's fork (vfork, clone) event that made child: the Fork to
// replay now, if it waits; none if the child's first stop replayed it,
// or if child is a thread.
func (pt *procTable) forked(tid, child, event int) (Request, bool) {
	if t, ok := pt.early[child]; ok && t == tid {
		delete(pt.early, child)
		return Request{}, false // its first stop came first
	}
	if pt.known(child) {
		return Request{}, false // a thread's first stop came first
	}
	r, ok := pt.forks[tid]
	if !ok {
		// Without a Fork at the seccomp stop: a thread (or a fork whose
		// arguments could not be read).
		if tgid, _ := procStatus(child); event == unix.PTRACE_EVENT_CLONE && (tgid == 0 || tgid != child) {
			pt.tgid[child] = pt.process(tid)
			return Request{}, false
		}
		r = Request{Op: Fork, PID: pt.process(tid), Comm: readComm(tid), Flags: sigchld}
	}
	delete(pt.forks, tid)
	pt.tgid[child] = child
	pt.tree.add(child)
	r.Child = child
	return r, true
}

// first is the first stop of tid, unknown so far: the Fork that made it,
// if its parent's fork event did not come first. A process whose parent
// made no Fork (clone with CLONE_PARENT) is adopted.
func (pt *procTable) first(tid int) (Request, bool) {
	tgid, ppid := procStatus(tid)
	if tgid != 0 && tgid != tid {
		pt.tgid[tid] = tgid // a thread
		return Request{}, false
	}
	for t, r := range pt.forks {
		if r.PID == ppid {
			delete(pt.forks, t)
			pt.early[tid] = t
			pt.tgid[tid] = tid
			pt.tree.add(tid)
			r.Child = tid
			return r, true
		}
	}
	return pt.adopt(tid), true
}

// exit is tid's end, with wait status status: the Exit of its process,
// once, when tid leads it. At a PTRACE_EVENT_EXIT stop (stopping) it is
// the process's end only if tid is its last thread: the leader also
// stops so when another thread execs, and a process whose threads all
// exit is reported gone once they have.
func (pt *procTable) exit(tid int, status uint32, stopping bool) (Request, bool) {
	p, ok := pt.tgid[tid]
	if !ok || p != tid || pt.exited[tid] {
		return Request{}, false
	}
	if stopping {
		if ts, err := os.ReadDir("/proc/" + strconv.Itoa(tid) + "/task"); err != nil || len(ts) != 1 {
			return Request{}, false
		}
	}
	pt.exited[tid] = true
	return Request{Op: Exit, PID: tid, Comm: readComm(tid), Flags: status}, true
}

// gone forgets tid, which the tracer reaped; a child that tid forked
// and whose fork event it never reported is forgotten with it.
func (pt *procTable) gone(tid int) {
	delete(pt.tgid, tid)
	delete(pt.forks, tid)
	delete(pt.exited, tid)
	for c, t := range pt.early {
		if t == tid {
			delete(pt.early, c)
		}
	}
}

// procStatus reads the Tgid and PPid of /proc/TID/status, 0 where unknown.
func procStatus(tid int) (tgid, ppid int) {
	f, err := os.Open("/proc/" + strconv.Itoa(tid) + "/status")
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		switch k {
		case "Tgid":
			tgid, _ = strconv.Atoi(strings.TrimSpace(v))
		case "PPid":
			ppid, _ = strconv.Atoi(strings.TrimSpace(v))
			return tgid, ppid
		}
	}
	return tgid, ppid
}

// killed is the Kill that thread tid's signal-delivery stop of sig
// shows, when a traced process sent it with kill(2) (SI_USER): the
// guest learns of such a call from its target, once the host has made
// it and before the signal is taken, as the filter does not stop it
// (buildFilter stops only signal 0, SIGKILL and bad signals, which no
// target shows). Stopping it would hold the caller for milliseconds,
// and trace-cmd record then loses its recorders' last pages: it turns
// tracing off, which ends their splices with 0, and then sends each a
// SIGUSR1; a recorder that takes the signal in the millisecond it sleeps
// before its next splice makes that splice non-blocking, takes its
// EAGAIN for an error and exits without its final read. Linux has the
// same window, but there the signal comes microseconds after tracing
// goes off. A kill(2) with another signal that reached no traced process
// (ESRCH, a process outside the tree) is the kill watch's
// (killwatch_linux.go); one sent to a group is seen once for each traced
// target.
func (pt *procTable) killed(tid int, sig unix.Signal) (Request, bool) {
	var si [128]byte
	_, _, errno := unix.RawSyscall6(unix.SYS_PTRACE, unix.PTRACE_GETSIGINFO, uintptr(tid), 0, uintptr(unsafe.Pointer(&si[0])), 0, 0)
	if errno != 0 {
		return Request{}, false
	}
	const siUser = 0
	code := int32(binary.LittleEndian.Uint32(si[8:]))
	sender := int(int32(binary.LittleEndian.Uint32(si[16:]))) // _kill.si_pid, a tgid
	if code != siUser || sender <= 0 || !pt.known(sender) {
		return Request{}, false
	}
	return Request{Op: Kill, PID: pt.process(sender), Child: pt.process(tid), Flags: uint32(sig), Comm: readComm(sender)}, true
}
