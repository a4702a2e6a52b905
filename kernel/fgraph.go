package kernel

import (
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/kpemu/kpemu/machine"
)

// The function graph tracer's core, after Linux 6.1's kernel/trace/fgraph.c
// and arch/arm64/kernel/ftrace.c (DYNAMIC_FTRACE_WITH_REGS).
//
// A graph tracer registers FgraphOps. Its functions are chosen by an
// FtraceOps' hashes (graph_ops shares the top trace array's global_ops
// hashes, as Linux's INIT_OPS_HASH(global_ops)), and its ftrace callback
// is ftrace_graph_func: on entry it pushes the call on the task's return
// stack, asks the tracer's entry callback, and if that wants the return
// too, replaces the callsite's LR that ftrace_caller saved in the
// pt_regs with return_to_handler, which ftrace_common restores into x30.
// The traced function thus returns into return_to_handler (guest
// assembly, entry-ftrace.S), which makes HC_FGRAPH_RETURN from
// ftrace_return_to_handler: the host pops the task's return stack, calls
// the return callback and hands back the real return address.
//
// The return stacks (current->ret_stack) are host state, one per guest
// task, keyed by its task_struct. A return stack outlives the tracer: the
// hijacked returns of functions still running when it goes still come
// back through return_to_handler.

// FtraceRetFuncDepth is FTRACE_RETFUNC_DEPTH: how deep a task's return
// stack goes.
const FtraceRetFuncDepth = 50

// pt_regs offsets of the callsite's x29 and LR (S_FP, S_LR).
const (
	ptRegsFP = PtRegsX0 + 29*8
	ptRegsLR = PtRegsX0 + 30*8
)

// FgraphEnt is struct ftrace_graph_ent: a traced function's entry.
type FgraphEnt struct {
	Func  uint64 // the record's ip
	Depth int
}

// FgraphRet is struct ftrace_graph_ret: a traced function's return.
type FgraphRet struct {
	Func     uint64
	Overrun  uint64 // the task's trace_overrun: pushes refused on a full stack
	CallTime uint64
	RetTime  uint64
	Depth    int
}

// FgraphTask is what a graph callback knows of the call: the vCPU and
// current, and current's trace_recursion bits the tracer keeps
// (TRACE_GRAPH_BIT and friends), which live with the return stack.
type FgraphTask struct {
	CPU  *machine.CPU
	Task uint64 // current's task_struct
	Rec  *FgraphRecursion

	t *fgraphTask
}

// SubTime is &ftrace_graph_get_ret_stack(current, idx)->subtime: the
// time the profiler takes off the idx-th frame from the top (0: the
// function entering or returning, 1: its caller); nil past the bottom.
// Valid only inside the callback.
func (ft FgraphTask) SubTime(idx int) *uint64 {
	if ft.t == nil || idx < 0 || idx >= len(ft.t.stack) {
		return nil
	}
	return &ft.t.stack[len(ft.t.stack)-1-idx].subtime
}

// FgraphRecursion is the graph bits of current->trace_recursion.
type FgraphRecursion struct {
	Graph   bool // TRACE_GRAPH_BIT: inside a set_graph_function function
	Notrace bool // TRACE_GRAPH_NOTRACE_BIT: inside a set_graph_notrace function
	IRQ     bool // TRACE_IRQ_BIT
	Depth   int  // trace_recursion_depth: the depth that set TRACE_GRAPH_BIT
}

// FgraphOps is struct fgraph_ops, with the ftrace ops whose hashes choose
// the functions and the clock of the call and return times.
type FgraphOps struct {
	// Entry is entryfunc: true to have the return traced too.
	Entry func(FgraphTask, *FgraphEnt) bool
	// Return is retfunc.
	Return func(FgraphTask, *FgraphRet)
	// Filter is the ftrace ops whose filter and notrace hashes say which
	// functions enter the graph.
	Filter *FtraceOps
	// Clock is trace_clock_local, in nanoseconds.
	Clock func() uint64
}

// fgraphFrame is struct ftrace_ret_stack.
type fgraphFrame struct {
	ret, fn, calltime, fp uint64
	subtime               uint64 // the function profiler's, without graph-time
}

// fgraphTask is a task's return stack and graph state.
type fgraphTask struct {
	stack   []fgraphFrame // ret_stack[0..curr_ret_stack]
	depth   int           // curr_ret_depth
	overrun uint64        // trace_overrun
	rec     FgraphRecursion
	sleptAt uint64 // ftrace_timestamp: when it was last switched out, without sleep-time
	// sleptPid is the pid of the task sleptAt stamped: a task_struct
	// comes back for a new task, which Linux's ftrace_graph_init_task
	// gives no timestamp.
	sleptPid int
}

// fgraph is the kernel's graph core.
type fgraph struct {
	mu     sync.Mutex // registration
	gops   atomic.Pointer[FgraphOps]
	ops    FtraceOps // graph_ops
	active bool      // ftrace_graph_active; guarded by mu

	taskMu sync.Mutex
	tasks  map[uint64]*fgraphTask

	handler uint64 // return_to_handler; 0: the image has none

	// The sched_switch probe (ftrace_graph_probe_sched_switch) while a
	// graph is registered; with sleep-time off it takes the time a task
	// was switched out off its functions' durations.
	schedSwitch *Tracepoint
	noSleepTime atomic.Bool // !fgraph_sleep_time
}

// initFgraph finds return_to_handler and routes HC_FGRAPH_RETURN.
func (k *Kernel) initFgraph() {
	g := &k.fgraph
	g.tasks = make(map[uint64]*fgraphTask)
	g.ops.Func = k.ftraceGraphFunc
	g.ops.SaveRegs = false
	if s, ok := k.syms.LookupName("return_to_handler"); ok {
		g.handler = s.Addr
	}
	k.m.SetHostcall(HCFgraphReturn, k.hcFgraphReturn)
}

// ReturnToHandler is return_to_handler's address, 0 without one.
func (k *Kernel) ReturnToHandler() uint64 { return k.fgraph.handler }

// RegisterFtraceGraph is register_ftrace_graph: EBUSY while another graph
// tracer is registered, ENODEV when the image has no return_to_handler.
func (k *Kernel) RegisterFtraceGraph(gops *FgraphOps) error {
	g := &k.fgraph
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.active {
		return fmt.Errorf("%w: a graph tracer is registered", syscall.EBUSY)
	}
	if g.handler == 0 {
		return fmt.Errorf("%w: the image has no return_to_handler", syscall.ENODEV)
	}
	g.ops.hashFrom = gops.Filter
	g.gops.Store(gops)
	if err := k.RegisterFtraceFunction(&g.ops); err != nil {
		g.gops.Store(nil)
		return err
	}
	if g.schedSwitch != nil {
		if err := k.setTracepointGraph(g.schedSwitch, true); err != nil {
			k.log.Error("ftrace: the graph's sched_switch probe", "err", err)
		}
	}
	g.active = true
	return nil
}

// SetFgraphSleepTime is ftrace_graph_sleep_time_control: with it off, the
// time a task spends switched out is not part of its functions' times.
func (k *Kernel) SetFgraphSleepTime(on bool) { k.fgraph.noSleepTime.Store(!on) }

// fgraphProbeSchedSwitch is ftrace_graph_probe_sched_switch, on the vCPU
// inside HC_TRACEPOINT, before the switch: current is prev, and rec is
// sched_switch's record, next_pid at offset 56. Without sleep-time, prev
// is stamped, and next, if it was stamped, has the time since added to
// the call times of its return stack. Idle tasks (pid 0, one per CPU)
// cannot be told apart by pid and are left alone.
func (k *Kernel) fgraphProbeSchedSwitch(cpu *machine.CPU, rec []byte) {
	g := &k.fgraph
	gops := g.gops.Load()
	if gops == nil || !g.noSleepTime.Load() || len(rec) < 60 {
		return
	}
	now := gops.Clock()
	prev := k.CurrentTask(cpu.Index())

	nextPid := int(int32(binary.LittleEndian.Uint32(rec[56:])))
	g.taskMu.Lock()
	defer g.taskMu.Unlock()
	pt := g.fgraphTaskOf(prev)
	pt.sleptAt = now
	pt.sleptPid, _ = k.TaskPid(prev)
	if nextPid == 0 {
		return
	}
	for task, t := range g.tasks {
		if t.sleptAt == 0 || task == prev || t.sleptPid != nextPid {
			continue
		}
		if pid, ok := k.TaskPid(task); !ok || pid != nextPid {
			continue
		}
		d := now - t.sleptAt
		for i := range t.stack {
			t.stack[i].calltime += d
		}
		return
	}
}

// UnregisterFtraceGraph is unregister_ftrace_graph: calls stop entering
// the graph; functions already in it still return through it, to no
// callback.
func (k *Kernel) UnregisterFtraceGraph(gops *FgraphOps) error {
	g := &k.fgraph
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.active || g.gops.Load() != gops {
		return nil
	}
	g.active = false
	err := k.UnregisterFtraceFunction(&g.ops)
	if g.schedSwitch != nil {
		if serr := k.setTracepointGraph(g.schedSwitch, false); err == nil {
			err = serr
		}
	}
	g.gops.Store(nil)
	return err
}

// fgraphTaskOf returns task's return stack, making it (ftrace_graph_init_task).
// taskMu is held.
func (g *fgraph) fgraphTaskOf(task uint64) *fgraphTask {
	t := g.tasks[task]
	if t == nil {
		t = &fgraphTask{depth: -1}
		g.tasks[task] = t
	}
	return t
}

// sameStack reports whether two frame pointers lie on one kernel stack
// (each is the top THREAD_SIZE of a THREAD_ALIGN-aligned block).
func sameStack(a, b uint64) bool { return a/(2*ThreadSize) == b/(2*ThreadSize) }

// ftraceGraphFunc is ftrace_graph_func and prepare_ftrace_return: the
// parent is the callsite's LR in the pt_regs, the frame pointer its x29.
func (k *Kernel) ftraceGraphFunc(c FtraceCall) {
	g := &k.fgraph
	gops := g.gops.Load()
	if gops == nil {
		return
	}
	cpu := c.CPU.Index()
	task := k.CurrentTask(cpu)
	old, err1 := k.Read64(c.Regs + ptRegsLR)
	fp, err2 := k.Read64(c.Regs + ptRegsFP)
	if err1 != nil || err2 != nil {
		return
	}
	g.taskMu.Lock()
	t := g.fgraphTaskOf(task)
	// A frame that was left without returning (a task that died in
	// do_exit, whose task_struct came back with the same stack) lies
	// above the caller's on the same stack: it can never return, so it
	// goes. Frames on another stack are kept: the boot stacks are not
	// THREAD_ALIGN-aligned, so a region test cannot tell them apart.
	for len(t.stack) > 0 && fp != 0 {
		top := t.stack[len(t.stack)-1]
		if !sameStack(top.fp, fp) || top.fp >= fp {
			break
		}
		t.stack = t.stack[:len(t.stack)-1]
		t.depth--
	}
	if len(t.stack) == 0 {
		t.depth = -1
	}
	// function_graph_enter.
	ent := FgraphEnt{Func: c.IP}
	t.depth++
	ent.Depth = t.depth
	if len(t.stack) == FtraceRetFuncDepth {
		t.overrun++
		t.depth--
		g.taskMu.Unlock()
		return
	}
	t.stack = append(t.stack, fgraphFrame{ret: old, fn: c.IP, calltime: gops.Clock(), fp: fp})
	ft := FgraphTask{CPU: c.CPU, Task: task, Rec: &t.rec, t: t}
	if !gops.Entry(ft, &ent) {
		t.stack = t.stack[:len(t.stack)-1]
		t.depth--
		g.taskMu.Unlock()
		return
	}
	g.taskMu.Unlock()
	if err := k.Write64(c.Regs+ptRegsLR, g.handler); err != nil {
		// The return cannot come: forget it.
		g.taskMu.Lock()
		t.stack = t.stack[:len(t.stack)-1]
		t.depth--
		g.taskMu.Unlock()
	}
}

// hcFgraphReturn is HC_FGRAPH_RETURN, ftrace_return_to_handler: x0 is the
// frame pointer at return_to_handler; x0 becomes the real return address.
func (k *Kernel) hcFgraphReturn(cpu *machine.CPU) error {
	g := &k.fgraph
	fp := cpu.X(0)
	task := k.CurrentTask(cpu.Index())
	g.taskMu.Lock()
	t := g.tasks[task]
	if t == nil || len(t.stack) == 0 {
		g.taskMu.Unlock()
		return fmt.Errorf("ftrace: return_to_handler on %#x with an empty return stack", task)
	}
	f := t.stack[len(t.stack)-1]
	if f.fp != fp {
		// HAVE_FUNCTION_GRAPH_FP_TEST: Linux stops the graph and
		// WARNs; the address is still the best there is.
		k.log.Error("ftrace: Bad frame pointer", "expected", fmt.Sprintf("%x", f.fp), "received", fmt.Sprintf("%x", fp), "func", k.syms.Format(f.fn), "ret", fmt.Sprintf("%x", f.ret))
	}
	ret := FgraphRet{Func: f.fn, CallTime: f.calltime, Overrun: t.overrun, Depth: t.depth}
	t.depth--
	if gops := g.gops.Load(); gops != nil {
		ret.RetTime = gops.Clock()
		gops.Return(FgraphTask{CPU: cpu, Task: task, Rec: &t.rec, t: t}, &ret)
	}
	t.stack = t.stack[:len(t.stack)-1]
	g.taskMu.Unlock()
	cpu.SetX(0, f.ret)
	return nil
}

// FgraphRetAddr is ftrace_graph_ret_addr as arm64's unwinder calls it:
// when a frame record's return address is return_to_handler, the
// address it stands for is that of the task's return stack entry
// pushed with fp, the frame record's saved x29 (the frame pointer at the
// function's entry, which prepare_ftrace_return records as retp).
func (k *Kernel) FgraphRetAddr(task, addr, fp uint64) uint64 {
	g := &k.fgraph
	if addr != g.handler || addr == 0 {
		return addr
	}
	g.taskMu.Lock()
	defer g.taskMu.Unlock()
	if t := g.tasks[task]; t != nil {
		for _, f := range t.stack {
			if f.fp == fp {
				return f.ret
			}
		}
	}
	return addr
}
