//go:build linux && (amd64 || arm64)

package shadow

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The kill watch: kill(2)s with a signal that no signal-delivery stop of
// the tree shows (one that fails, one to a process outside the tree)
// are seen after the fact, without stopping their caller, through the
// host kernel's syscalls:sys_enter_kill and sys_exit_kill tracepoints
// counted by perf on every CPU. A stop at the caller would hold it for
// milliseconds (see procTable.killed for what that breaks); the
// tracepoints cost the caller nothing it would notice. Where perf or the
// tracepoints are not there, those kills are not replayed.

// treeSet is the processes that were ever in a traced tree, for the
// watch's goroutine: the tracer's procTable is its thread's alone. A
// process stays after it is gone, so that a kill(2) seen after its
// target or caller was reaped is still known to be the tree's.
type treeSet struct {
	mu  sync.Mutex
	set map[int]bool
}

func (s *treeSet) add(pid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.set == nil {
		s.set = map[int]bool{}
	}
	s.set[pid] = true
}

func (s *treeSet) has(pid int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.set[pid]
}

// inGroup reports whether a process of the set is in process group pgid
// (any, for -1) other than self.
func (s *treeSet) inGroup(pgid, self int) bool {
	s.mu.Lock()
	pids := make([]int, 0, len(s.set))
	for p := range s.set {
		pids = append(pids, p)
	}
	s.mu.Unlock()
	for _, p := range pids {
		if p == self {
			continue
		}
		if g, err := unix.Getpgid(p); err == nil && (pgid == -1 || g == pgid) {
			return true
		}
	}
	return false
}

// hostKillIDs are the host's ids of syscalls:sys_enter_kill and
// sys_exit_kill, read from a tracefs of the kpemu process's own, mounted
// nowhere (fsopen, fsmount: kpemu-ns.sh has unmounted the host's tracefs
// and put kpemu's where it was). It goes with its descriptor. Not
// unshare(2) on a locked thread: Go may lock the main thread, whose
// namespace /proc/self shows, and it cannot end that thread.
func hostKillIDs() (enter, exit uint64, err error) {
	fs, err := unix.Fsopen("tracefs", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return 0, 0, fmt.Errorf("fsopen tracefs: %w", err)
	}
	defer unix.Close(fs)
	if err := unix.FsconfigCreate(fs); err != nil {
		return 0, 0, fmt.Errorf("creating a tracefs: %w", err)
	}
	mnt, err := unix.Fsmount(fs, unix.FSMOUNT_CLOEXEC, 0)
	if err != nil {
		return 0, 0, fmt.Errorf("fsmount tracefs: %w", err)
	}
	defer unix.Close(mnt)
	id := func(ev string) (uint64, error) {
		fd, err := unix.Openat(mnt, "events/syscalls/"+ev+"/id", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", ev, err)
		}
		f := os.NewFile(uintptr(fd), ev)
		defer f.Close()
		b, err := io.ReadAll(f)
		if err != nil {
			return 0, err
		}
		return strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	}
	if enter, err = id("sys_enter_kill"); err != nil {
		return 0, 0, err
	}
	exit, err = id("sys_exit_kill")
	return enter, exit, err
}

// perfRingPages is the data pages of each CPU's ring, a power of two.
const perfRingPages = 8

// killWatch reads the two tracepoints' samples of every CPU, each CPU's
// into one ring, and replays the tree's kills that the tree's stops do
// not show.
type killWatch struct {
	enterID, exitID uint64
	fds             []int
	rings           [][]byte
	pageSize        int
	quit            int // eventfd: stop the reader
	tree            *treeSet
	replay          func(Request)

	mu      sync.Mutex // one reader at a time: the goroutine or a drain
	pending map[int]killCall
	lost    atomic.Uint64
}

// killCall is a kill(2)'s arguments, from its sys_enter_kill.
type killCall struct {
	pid int
	sig int
}

// startKillWatch opens the watch for the processes of tree, replaying
// what it sees with replay, until stop.
func startKillWatch(tree *treeSet, replay func(Request)) (*killWatch, error) {
	enter, exit, err := hostKillIDs()
	if err != nil {
		return nil, fmt.Errorf("the host's kill tracepoints: %w", err)
	}
	cpus, err := onlineCPUs()
	if err != nil {
		return nil, err
	}
	w := &killWatch{enterID: enter, exitID: exit, pageSize: os.Getpagesize(), tree: tree, replay: replay, pending: map[int]killCall{}, quit: -1}
	ok := false
	defer func() {
		if !ok {
			w.close()
		}
	}()
	for _, cpu := range cpus {
		attr := unix.PerfEventAttr{
			Type:        unix.PERF_TYPE_TRACEPOINT,
			Config:      enter,
			Size:        uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
			Sample:      1,
			Sample_type: unix.PERF_SAMPLE_TID | unix.PERF_SAMPLE_TIME | unix.PERF_SAMPLE_RAW,
			Wakeup:      1,
		}
		fe, err := unix.PerfEventOpen(&attr, -1, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
		if err != nil {
			return nil, fmt.Errorf("perf_event_open sys_enter_kill, CPU %d: %w", cpu, err)
		}
		w.fds = append(w.fds, fe)
		attr.Config = exit
		fx, err := unix.PerfEventOpen(&attr, -1, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
		if err != nil {
			return nil, fmt.Errorf("perf_event_open sys_exit_kill, CPU %d: %w", cpu, err)
		}
		w.fds = append(w.fds, fx)
		ring, err := unix.Mmap(fe, 0, (1+perfRingPages)*w.pageSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
		if err != nil {
			return nil, fmt.Errorf("mapping the ring of CPU %d: %w", cpu, err)
		}
		w.rings = append(w.rings, ring)
		if err := unix.IoctlSetInt(fx, unix.PERF_EVENT_IOC_SET_OUTPUT, fe); err != nil {
			return nil, fmt.Errorf("PERF_EVENT_IOC_SET_OUTPUT, CPU %d: %w", cpu, err)
		}
	}
	if w.quit, err = unix.Eventfd(0, unix.EFD_CLOEXEC); err != nil {
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	ok = true
	go w.run()
	return w, nil
}

// onlineCPUs lists the host's online CPUs.
func onlineCPUs() ([]int, error) {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return nil, err
	}
	return parseCPUList(strings.TrimSpace(string(b)))
}

// parseCPUList parses a kernel CPU list ("0-3,5").
func parseCPUList(list string) ([]int, error) {
	var cpus []int
	for _, r := range strings.Split(list, ",") {
		lo, hi, isRange := strings.Cut(r, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("CPU list %q: %w", list, err)
		}
		z := a
		if isRange {
			if z, err = strconv.Atoi(hi); err != nil || z < a {
				return nil, fmt.Errorf("CPU list %q: bad range %q", list, r)
			}
		}
		for c := a; c <= z; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// run drains the rings whenever one has a sample, until close.
func (w *killWatch) run() {
	pfds := make([]unix.PollFd, 0, len(w.rings)+1)
	for i := range w.rings {
		pfds = append(pfds, unix.PollFd{Fd: int32(w.fds[2*i]), Events: unix.POLLIN})
	}
	pfds = append(pfds, unix.PollFd{Fd: int32(w.quit), Events: unix.POLLIN})
	defer unix.Close(w.quit)
	for {
		if _, err := unix.Poll(pfds, -1); err != nil && err != unix.EINTR {
			return
		}
		if pfds[len(pfds)-1].Revents != 0 {
			return
		}
		w.drain()
	}
}

// killSample is one sample of either tracepoint.
type killSample struct {
	time     uint64
	pid, tid int
	exit     bool
	a, b     int64 // enter: pid, sig; exit: the result
}

// drain replays what the rings hold now, in time order. The tracer calls
// it before it replays a process's exit, so that the process's kills
// come first: a sample is in its ring before its caller goes on.
func (w *killWatch) drain() {
	w.mu.Lock()
	defer w.mu.Unlock()
	var samples []killSample
	for _, ring := range w.rings {
		samples = w.read(ring, samples)
	}
	slices.SortStableFunc(samples, func(x, y killSample) int {
		switch {
		case x.time < y.time:
			return -1
		case x.time > y.time:
			return 1
		}
		return 0
	})
	for _, s := range samples {
		if !s.exit {
			if w.tree.has(s.pid) { // the host's other kills are not kept
				w.pending[s.tid] = killCall{pid: int(int32(s.a)), sig: int(int32(s.b))}
			}
			continue
		}
		call, ok := w.pending[s.tid]
		delete(w.pending, s.tid)
		if !ok || !w.unseen(s.pid, call, s.b) {
			continue
		}
		errno := uint32(0)
		if s.b < 0 {
			errno = uint32(-s.b)
		}
		w.replay(Request{Op: Kill, PID: s.pid, Child: call.pid, Flags: uint32(call.sig), Mode: errno, Comm: readComm(s.tid)})
	}
}

// unseen says whether caller's kill(2) call, which answered ret, is one
// that no stop of the tree shows: its caller is the tree's, its signal
// one the filter lets run (buildFilter), and it failed or reached no
// process of the tree.
func (w *killWatch) unseen(caller int, call killCall, ret int64) bool {
	if !w.tree.has(caller) || atCaller(int32(call.sig)) {
		return false
	}
	switch {
	case ret != 0:
		return true
	case call.pid > 0:
		return !w.tree.has(call.pid)
	case call.pid == -1:
		return !w.tree.inGroup(-1, caller)
	case call.pid == 0:
		g, err := unix.Getpgid(caller)
		return err == nil && !w.tree.inGroup(g, -1)
	}
	return !w.tree.inGroup(-call.pid, -1)
}

// read appends the samples of ring from its tail to its head, and
// moves its tail there.
func (w *killWatch) read(ring []byte, out []killSample) []killSample {
	meta := (*unix.PerfEventMmapPage)(unsafe.Pointer(&ring[0]))
	head := atomic.LoadUint64(&meta.Data_head)
	tailp := &meta.Data_tail
	tail := atomic.LoadUint64(tailp)
	data := ring[w.pageSize:]
	size := uint64(len(data))
	at := func(off uint64, n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = data[(off+uint64(i))%size]
		}
		return b
	}
	for tail < head {
		h := at(tail, 8)
		typ, n := binary.LittleEndian.Uint32(h), uint64(binary.LittleEndian.Uint16(h[6:]))
		if n < 8 {
			break // cannot be; do not spin
		}
		switch typ {
		case unix.PERF_RECORD_SAMPLE:
			// pid, tid, time, raw size, raw (struct trace_entry, then
			// __syscall_nr and the arguments or the result, 8 bytes
			// each from offset 16)
			b := at(tail+8, int(n-8))
			if len(b) < 20 {
				break
			}
			s := killSample{pid: int(binary.LittleEndian.Uint32(b)), tid: int(binary.LittleEndian.Uint32(b[4:])), time: binary.LittleEndian.Uint64(b[8:])}
			raw := b[20:]
			if rawLen := int(binary.LittleEndian.Uint32(b[16:])); rawLen < len(raw) {
				raw = raw[:rawLen]
			}
			if len(raw) < 24 {
				break
			}
			switch uint64(binary.LittleEndian.Uint16(raw)) {
			case w.enterID:
				if len(raw) < 32 {
					break
				}
				s.a, s.b = int64(binary.LittleEndian.Uint64(raw[16:])), int64(binary.LittleEndian.Uint64(raw[24:]))
				out = append(out, s)
			case w.exitID:
				s.exit, s.b = true, int64(binary.LittleEndian.Uint64(raw[16:]))
				out = append(out, s)
			}
		case unix.PERF_RECORD_LOST:
			w.lost.Add(1)
		}
		tail += n
	}
	atomic.StoreUint64(tailp, tail)
	return out
}

// close stops the reader and releases the events.
func (w *killWatch) close() {
	if w.quit >= 0 {
		eventfdPost(w.quit)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range w.rings {
		_ = unix.Munmap(r)
	}
	w.rings = nil
	for _, fd := range w.fds {
		unix.Close(fd)
	}
	w.fds = nil
}
