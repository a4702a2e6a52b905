package tracing

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/kpemu/kpemu/debugfs"
	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/tracing/internal/kstr"
)

// The pid filters of the tracing root, after Linux 6.1: set_event_pid and
// set_event_notrace_pid (trace_events.c: tr->filtered_pids and
// filtered_no_pids) for the trace events, set_ftrace_pid and
// set_ftrace_notrace_pid (ftrace.c: tr->function_pids and
// function_no_pids) for the function tracer, with the pid list code of
// trace.c (trace_pid_write, trace_pid_show, trace_ignore_this_task) and
// the event-fork and function-fork options that make a listed task's
// children listed too and take exiting tasks out.
//
// Linux decides at each context switch whether the next task is ignored
// and keeps the answer per CPU; kpemu asks at the hit, of the task current
// on the hit's CPU, which is the same answer. A hit reads one atomic
// pointer while no list is set.
//
// Linux follows forks with its sched_process_fork tracepoint (in
// kernel_clone, after copy_process, before wake_up_new_task) and exits
// with sched_process_free. The guest has no tracepoints, so kpemu hooks
// the same places with an ftrace ops of its own (kernel.FtraceOps) on
// wake_up_new_task called from kernel_clone, and on release_task, where
// the guest frees a reaped task. The ops is registered only while a -fork
// option is on and its lists are set, which Linux's tracepoint probes do
// not show; enabled_functions shows the two functions meanwhile (a kprobe
// would show in kprobes/list instead, and stop with kprobes/enabled).

// Limits of trace.c's trace_pid_write and pid_list.h.
const (
	pidBufSize = 127     // PID_BUF_SIZE: the longest word of a pid write
	pidListMax = 1 << 30 // MAX_PID: trace_pid_list_set refuses a pid from here on
)

// pidSet is a struct trace_pid_list: a set of pids, read in ascending
// order as trace_pid_next walks the bitmap. It is never changed once
// published; a change publishes a new one.
type pidSet struct {
	pids []uint32 // sorted, no duplicates
}

func newPidSet(pids []uint32) *pidSet {
	sort.Slice(pids, func(i, j int) bool { return pids[i] < pids[j] })
	out := pids[:0]
	for i, p := range pids {
		if i == 0 || p != pids[i-1] {
			out = append(out, p)
		}
	}
	return &pidSet{pids: out}
}

// has is trace_find_filtered_pid. A nil set (a NULL list) has no pid.
func (s *pidSet) has(pid int) bool {
	if s == nil || pid < 0 {
		return false
	}
	i := sort.Search(len(s.pids), func(i int) bool { return s.pids[i] >= uint32(pid) })
	return i < len(s.pids) && s.pids[i] == uint32(pid)
}

// with is a copy of s with pid set (trace_pid_list_set).
func (s *pidSet) with(pid int) *pidSet {
	return newPidSet(append(append([]uint32(nil), s.pids...), uint32(pid)))
}

// without is a copy of s with pid cleared (trace_pid_list_clear). The
// list stays even when it is left empty, as Linux's does: then every task
// is ignored until the list is written again.
func (s *pidSet) without(pid int) *pidSet {
	out := make([]uint32, 0, len(s.pids))
	for _, p := range s.pids {
		if p != uint32(pid) {
			out = append(out, p)
		}
	}
	return &pidSet{pids: out}
}

// pidLists is one trace array's pair of lists for a tracer: the pids to
// trace and the pids never to trace. nil is a NULL list.
type pidLists struct {
	pids, noPids *pidSet
}

// ignores is trace_ignore_this_task: a set pids list that lacks pid, or
// a noPids list that has it.
func (l *pidLists) ignores(pid int) bool {
	return l.pids != nil && !l.pids.has(pid) || l.noPids.has(pid)
}

// pidFilter is the pair of lists of one tracer.
type pidFilter struct {
	// lists is nil while both lists are NULL, so that a hit of an
	// unfiltered tracer reads one pointer.
	lists atomic.Pointer[pidLists]
}

// load is the current lists, the zero pair when none is set.
func (f *pidFilter) load() pidLists {
	if l := f.lists.Load(); l != nil {
		return *l
	}
	return pidLists{}
}

// store publishes l; pidFilters.mu is held.
func (f *pidFilter) store(l pidLists) {
	if l.pids == nil && l.noPids == nil {
		f.lists.Store(nil)
		return
	}
	f.lists.Store(&l)
}

// ignoresCurrent reports whether the task current on cpu is filtered out.
func (f *pidFilter) ignoresCurrent(k *kernel.Kernel, cpu int) bool {
	l := f.lists.Load()
	return l != nil && l.ignores(k.CurrentPid(cpu))
}

// pidFilters are the trace array's pid filters and the fork hook that
// the -fork options need.
type pidFilters struct {
	mu    sync.Mutex // event_mutex and ftrace_lock for the lists' changes
	event pidFilter  // set_event_pid, set_event_notrace_pid
	fn    pidFilter  // set_ftrace_pid, set_ftrace_notrace_pid

	// hookMu guards the fork hook's registration. It is never held
	// with mu: registering patches the guest's text with every vCPU
	// stopped, and a vCPU in the hook waits for mu.
	hookMu  sync.Mutex
	hook    kernel.FtraceOps
	hooked  bool
	forkIP  uint64 // wake_up_new_task's ftrace record
	freeIP  uint64 // release_task's
	cloneLo uint64 // kernel_clone's text: a fork's wake_up_new_task is called from there
	cloneHi uint64
}

// eventPidIgnored is trace_event_ignore_this_pid for a hit on cpu.
func (ta *TraceArray) eventPidIgnored(cpu int) bool {
	return ta.pids.event.ignoresCurrent(ta.t.kp.Kernel(), cpu)
}

// pidFileOps are the operations of one of the four files: f's pids list
// (noPids false) or its noPids list. events selects the event files'
// behaviour (set_event_pid: an empty list reads empty, a write expands
// the buffer) over the function tracer's (set_ftrace_pid: "no pid").
func (ta *TraceArray) pidFileOps(f *pidFilter, noPids, events bool) debugfs.FileOps {
	write := func(_ context.Context, p []byte, _ int64) (int, error) {
		if len(p) == 0 {
			return 0, nil
		}
		if events {
			ta.updateBuffers() // event_pid_write's tracing_update_buffers
		}
		n, err := ta.writePids(f, noPids, p)
		if err != nil {
			return 0, err
		}
		ta.updateForkHook()
		return n, nil
	}
	return debugfs.FileOps{
		Show: func(_ context.Context, w *bytes.Buffer) error {
			l := f.load()
			s := l.pids
			if noPids {
				s = l.noPids
			}
			if s == nil {
				if !events {
					w.WriteString("no pid\n") // fpid_show's FTRACE_NO_PIDS
				}
				return nil
			}
			var b []byte
			for _, p := range s.pids {
				b = strconv.AppendUint(b[:0], uint64(p), 10) // trace_pid_show: "%lu\n"
				w.Write(b)
				w.WriteByte('\n')
			}
			return nil
		},
		Write: write,
		// An open for writing with O_TRUNC clears the list
		// (ftrace_event_set_pid_open, pid_open), before any write; a
		// truncate(2) does not, as tracefs has no truncate of its own,
		// so this is Open rather than Truncate.
		Open: func(_ context.Context, flags int) (debugfs.OpenFile, error) {
			if flags&os.O_TRUNC != 0 {
				ta.pids.mu.Lock()
				l := f.load()
				if noPids {
					l.noPids = nil
				} else {
					l.pids = nil
				}
				f.store(l)
				ta.pids.mu.Unlock()
				ta.updateForkHook()
			}
			return pidOpen(write), nil
		},
	}
}

// pidOpen is an open of a pid file for writing: each write(2) is a
// trace_pid_write of its own, so nothing waits for the close.
type pidOpen func(ctx context.Context, p []byte, off int64) (int, error)

var _ debugfs.OpenFile = pidOpen(nil)

func (w pidOpen) Write(ctx context.Context, p []byte, off int64) (int, error) { return w(ctx, p, off) }
func (pidOpen) Close(context.Context)                                         {}

// writePids is event_pid_write and ftrace.c's pid_write: the new list is
// built from the old one and the written pids, and replaces it whole, or
// nothing changes.
func (ta *TraceArray) writePids(f *pidFilter, noPids bool, p []byte) (int, error) {
	ta.pids.mu.Lock()
	defer ta.pids.mu.Unlock()
	l := f.load()
	old := &l.pids
	if noPids {
		old = &l.noPids
	}
	s, n, err := parsePidWrite(*old, p)
	if err != nil {
		return 0, err
	}
	*old = s
	f.store(l)
	return n, nil
}

// parsePidWrite is trace_pid_write: the old list's pids, then one pid per
// word (trace_get_user, a fresh parse per word) until the input ends or
// only white space is left; each word is kstrtoul(word, 0), truncated to
// a pid_t. A bad word is EINVAL, a pid from MAX_PID on is the -1 (EPERM)
// that trace_pid_write returns for trace_pid_list_set's failure. No pid
// at all makes the list NULL. It returns the bytes consumed: up to the
// end, or to where only white space (or a NUL) stopped the parse.
func parsePidWrite(old *pidSet, p []byte) (*pidSet, int, error) {
	var pids []uint32
	if old != nil {
		pids = append(pids, old.pids...)
	}
	parser := traceParser{size: pidBufSize + 1}
	read := 0
	for read < len(p) {
		parser.clear()
		n, err := parser.get(p[read:])
		if err != nil {
			return nil, 0, fmt.Errorf("a pid longer than %d bytes: %w", pidBufSize, err)
		}
		read += n
		if !parser.loaded() {
			break
		}
		v, err := kstr.Strtoull(parser.word(), 0)
		if err != nil {
			return nil, 0, fmt.Errorf("pid %q: %w", parser.word(), syscall.EINVAL)
		}
		pid := uint32(v) // (pid_t)val, then trace_pid_list_set's unsigned int
		if pid >= pidListMax {
			return nil, 0, fmt.Errorf("pid %d past MAX_PID: %w", pid, syscall.EPERM)
		}
		pids = append(pids, pid)
	}
	if len(pids) == 0 {
		return nil, read, nil
	}
	return newPidSet(pids), read, nil
}

// forkFollowed is whether a -fork option and a set list ask for the fork
// hook.
func (ta *TraceArray) forkFollowed() bool {
	return ta.flag(optEventFork) && ta.pids.event.lists.Load() != nil ||
		ta.flag(optFuncFork) && ta.pids.fn.lists.Load() != nil
}

// updateForkHook registers the fork hook when forkFollowed and
// unregisters it when not. A guest whose kernel_clone,
// wake_up_new_task or release_task cannot be traced gets no hook; the
// options then only keep their values.
func (ta *TraceArray) updateForkHook() {
	ph := &ta.pids
	ph.hookMu.Lock()
	defer ph.hookMu.Unlock()
	want := ta.forkFollowed()
	if want == ph.hooked {
		return
	}
	k := ta.t.kp.Kernel()
	if !want {
		if err := k.UnregisterFtraceFunction(&ph.hook); err != nil {
			ta.t.log.Error("trace: unhooking fork and exit for the pid filters", "err", err)
		}
		ph.hooked = false
		return
	}
	if ph.forkIP == 0 {
		syms := k.Kallsyms()
		clone, ok1 := syms.LookupName("kernel_clone")
		wake, ok2 := syms.LookupName("wake_up_new_task")
		free, ok3 := syms.LookupName("release_task")
		if !ok1 || !ok2 || !ok3 {
			ta.t.log.Warn("trace: the guest lacks kernel_clone, wake_up_new_task or release_task; event-fork and function-fork follow no forks")
			return
		}
		forkIP, freeIP := k.FtraceLocation(wake.Addr), k.FtraceLocation(free.Addr)
		if forkIP == 0 || freeIP == 0 {
			ta.t.log.Warn("trace: wake_up_new_task or release_task is not traceable; event-fork and function-fork follow no forks")
			return
		}
		var h kernel.FtraceHash
		h.Add(forkIP)
		h.Add(freeIP)
		ph.hook.Func = ta.pidForkExit
		if err := k.FtraceSetHash(&ph.hook, true, h); err != nil {
			ta.t.log.Error("trace: hooking fork and exit for the pid filters", "err", err)
			return
		}
		ph.forkIP, ph.freeIP = forkIP, freeIP
		ph.cloneLo, ph.cloneHi = clone.Addr, clone.Addr+max(clone.Size, 1)
	}
	if err := k.RegisterFtraceFunction(&ph.hook); err != nil {
		ta.t.log.Error("trace: hooking fork and exit for the pid filters", "err", err)
		return
	}
	ph.hooked = true
}

// pidForkExit is the fork hook's callback, on the vCPU: at
// wake_up_new_task(p) called by kernel_clone it is
// sched_process_fork(current, p), at release_task(p) sched_process_free(p);
// the task is the call's x0, in the pt_regs ftrace_caller saved.
func (ta *TraceArray) pidForkExit(c kernel.FtraceCall) {
	ph := &ta.pids
	k := ta.t.kp.Kernel()
	task, err := k.Read64(c.Regs)
	if err != nil {
		return
	}
	pid, ok := k.TaskPid(task)
	if !ok {
		return
	}
	var filters []*pidFilter
	if ta.flag(optEventFork) {
		filters = append(filters, &ph.event)
	}
	if ta.flag(optFuncFork) {
		filters = append(filters, &ph.fn)
	}
	switch c.IP {
	case ph.forkIP:
		if c.ParentIP < ph.cloneLo || c.ParentIP >= ph.cloneHi {
			return // a kthread's first wake-up, not a fork
		}
		self := k.CurrentPid(c.CPU.Index())
		for _, f := range filters {
			ph.addRemoveTask(f, self, pid, true)
		}
	case ph.freeIP:
		for _, f := range filters {
			ph.addRemoveTask(f, 0, pid, false)
		}
	}
}

// addRemoveTask is trace_filter_add_remove_task on both lists of f: a
// fork (add) lists the child in each list that lists the parent self; an
// exit takes pid out of each list.
func (ph *pidFilters) addRemoveTask(f *pidFilter, self, pid int, add bool) {
	change := func(s *pidSet) *pidSet {
		switch {
		case s == nil:
			return nil
		case add && s.has(self) && !s.has(pid):
			return s.with(pid)
		case !add && s.has(pid):
			return s.without(pid)
		}
		return s
	}
	l := f.lists.Load()
	if l == nil || change(l.pids) == l.pids && change(l.noPids) == l.noPids {
		return // the common case: nothing to do, and no lock taken
	}
	ph.mu.Lock()
	defer ph.mu.Unlock()
	cur := f.load()
	f.store(pidLists{pids: change(cur.pids), noPids: change(cur.noPids)})
}
