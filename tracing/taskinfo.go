package tracing

import (
	"bytes"
	"fmt"
	"sort"
	"sync"
)

// What the trace remembers of the tasks in it, trace.c's savedcmd and
// tgid_map, shared by every trace array: the comm of each pid for the
// comm column and saved_cmdlines, and with record-tgid the tgid of each
// pid for the TGID column and saved_tgids.

// Saved command lines: trace.c's savedcmd, room for
// SAVED_CMDLINES_DEFAULT of them and what the rest of its pages hold
// (savedCmdlinesNum; saved_cmdlines_size changes it), indexed by the
// pid's low bits.
const (
	savedCmdlinesDefault = 128
	pidMaxDefault        = 0x8000
)

// map_pid_to_cmdline[PID_MAX_DEFAULT+1], then (8-aligned) the
// map_cmdline_to_pid pointer, cmdline_num and cmdline_idx.
const savedCmdlinesHead = (((pidMaxDefault+1)*4+7)&^7 + 8 + 4 + 4)

type savedCmdlines struct {
	mu    sync.Mutex
	byPid []int32 // map_pid_to_cmdline, by pid & (PID_MAX_DEFAULT-1); -1 for none
	pids  []int   // map_cmdline_to_pid, 0 for a free slot; nil until the first save
	comms []string
	idx   int // cmdline_idx
}

// save is trace_save_cmdline: the idle task is never saved; a pid
// takes the next slot round the table unless its low bits have one
// already (which Linux does not take back when the slot moves on).
func (s *savedCmdlines) save(pid int, comm string) {
	if pid == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pids == nil {
		s.reset(savedCmdlinesNum(savedCmdlinesDefault))
	}
	tpid := pid & (pidMaxDefault - 1)
	i := int(s.byPid[tpid])
	if i < 0 {
		i = (s.idx + 1) % len(s.pids)
		s.byPid[tpid] = int32(i)
		s.idx = i
	}
	s.pids[i] = pid
	s.comms[i] = comm
}

// find is trace_find_cmdline: "<idle>" for pid 0, the saved comm, or
// "<...>" when the pid's slot went to another pid or it has none.
func (s *savedCmdlines) find(pid int) string {
	if pid == 0 {
		return "<idle>"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byPid == nil {
		return "<...>"
	}
	if i := s.byPid[pid&(pidMaxDefault-1)]; i >= 0 && s.pids[i] == pid {
		return s.comms[i]
	}
	return "<...>"
}

// savedCmdlinesNum is the number of comms allocate_cmdlines_buffer makes
// room for when asked for val: it allocates whole pages, a power of two
// of them, and uses all of them, so that the default 128 is 6552, as
// the oracle reads it.
func savedCmdlinesNum(val int) int {
	const elem = taskCommLen + 4 // SAVED_CMDLINE_MAP_ELEMENT_SIZE
	need := savedCmdlinesHead + val*elem
	size := pageSize
	for size < need {
		size <<= 1
	}
	return (size - savedCmdlinesHead) / elem
}

// reset is tracing_resize_saved_cmdlines' new buffer: n slots, empty;
// s.mu is held.
func (s *savedCmdlines) reset(n int) {
	if s.byPid == nil {
		s.byPid = make([]int32, pidMaxDefault) // a map cost a fifth of each event's recording
	}
	for i := range s.byPid {
		s.byPid[i] = -1
	}
	s.pids = make([]int, n)
	s.comms = make([]string, n)
	s.idx = 0
}

// num is cmdline_num.
func (s *savedCmdlines) num() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pids == nil {
		return savedCmdlinesNum(savedCmdlinesDefault)
	}
	return len(s.pids)
}

// show is saved_cmdlines: "pid comm" for each slot in use, in slot order.
func (s *savedCmdlines) show(w *bytes.Buffer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, pid := range s.pids {
		if pid != 0 {
			fmt.Fprintf(w, "%d %s\n", pid, s.comms[i])
		}
	}
}

// savedTgids is trace.c's tgid_map: the tgid of each pid up to pid_max
// as it was when the map was made (the first save here, the first
// record-tgid in Linux), filled while record-tgid is on.
type savedTgids struct {
	mu     sync.Mutex
	m      map[int]int
	max    int        // tgid_map_max
	pidMax func() int // the guest's pid_max
}

// save is trace_save_tgid: the idle task and pids past the map are not
// saved.
func (s *savedTgids) save(pid, tgid int) {
	if pid <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = make(map[int]int)
		s.max = s.pidMax()
	}
	if pid > s.max {
		return
	}
	s.m[pid] = tgid
}

// find is trace_find_tgid: 0 when none was saved.
func (s *savedTgids) find(pid int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[pid]
}

// show is saved_tgids: "pid tgid" by pid, the pids with a tgid.
func (s *savedTgids) show(w *bytes.Buffer) {
	s.mu.Lock()
	pids := make([]int, 0, len(s.m))
	for pid, tgid := range s.m {
		if tgid != 0 {
			pids = append(pids, pid)
		}
	}
	sort.Ints(pids)
	for _, pid := range pids {
		fmt.Fprintf(w, "%d %d\n", pid, s.m[pid])
	}
	s.mu.Unlock()
}
