package kernel

import (
	"bytes"
	"debug/dwarf"
	"encoding/binary"
	"fmt"
	"strconv"
	"syscall"

	"github.com/kpemu/kpemu/machine"
)

// taskLayout is where struct task_struct keeps what traces show, read
// from the image's DWARF so that the host never hard-codes guest offsets.
type taskLayout struct {
	ok      bool
	pidOff  int64
	commOff int64
	commLen int64
	tgidOff int64 // -1 when the image's DWARF lacks it (tasktgid.go)
	// tasks, the task list's link (from init_task.tasks); -1 when the
	// image's DWARF lacks it.
	tasksOff int64
	// real_parent, for perf's inherited counters; -1 when the image's
	// DWARF lacks it.
	parentOff int64

	// thread_info.flags and the kernel stack (Linux's task->stack),
	// for the tracers; -1 when the image's DWARF lacks them.
	tiFlagsOff int64
	stackOff   int64
	// thread_info.preempt_count, for the jprobe handlers that run with
	// preemption off; -1 when the image's DWARF lacks it.
	tiPreemptOff int64
	// kretprobe_instances, the count the host keeps of a task's
	// kretprobe instances; -1 when the image's DWARF lacks it.
	kretOff int64
}

// readTaskLayout finds task_struct's pid and comm in the image's DWARF
// d. An image without them (or without DWARF: d nil) still boots; Current
// then reports the idle task.
func readTaskLayout(d *dwarf.Data) taskLayout {
	tl := taskLayout{tiFlagsOff: -1, stackOff: -1, tgidOff: -1, tiPreemptOff: -1, tasksOff: -1, parentOff: -1, kretOff: -1}
	if d == nil {
		return tl
	}
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			return tl
		}
		if e.Tag != dwarf.TagStructType || e.Val(dwarf.AttrName) != "task_struct" || !e.Children {
			continue
		}
		t, err := d.Type(e.Offset)
		if err != nil {
			return tl
		}
		st, ok := t.(*dwarf.StructType)
		if !ok || st.Incomplete {
			continue
		}
		var havePid, haveComm bool
		for _, fld := range st.Field {
			switch fld.Name {
			case "pid":
				tl.pidOff, havePid = fld.ByteOffset, true
			case "tgid":
				tl.tgidOff = fld.ByteOffset
			case "comm":
				tl.commOff, haveComm = fld.ByteOffset, true
				tl.commLen = fld.Type.Size()
			case "stack":
				tl.stackOff = fld.ByteOffset
			case "tasks":
				tl.tasksOff = fld.ByteOffset
			case "real_parent":
				tl.parentOff = fld.ByteOffset
			case "kretprobe_instances":
				tl.kretOff = fld.ByteOffset
			case "thread_info":
				if ti, ok := fld.Type.(*dwarf.StructType); ok {
					for _, f := range ti.Field {
						switch f.Name {
						case "flags":
							tl.tiFlagsOff = fld.ByteOffset + f.ByteOffset
						case "preempt_count":
							tl.tiPreemptOff = fld.ByteOffset + f.ByteOffset
						}
					}
				}
			}
		}
		tl.ok = havePid && haveComm && tl.commLen > 0
		return tl
	}
}

// Current returns the command name and pid of the task running on cpu
// (Linux's current->comm and current->pid), as trace lines show them.
// Before the guest sets up its tasks it is the idle task, swapper/N, pid 0.
func (k *Kernel) Current(cpu int) (comm string, pid int) {
	idle := func() (string, int) { return "swapper/" + strconv.Itoa(cpu), 0 }
	tl := k.taskStruct()
	if !tl.ok {
		return idle()
	}
	task := k.CurrentTask(cpu)
	if task == 0 {
		return idle()
	}
	var commBuf [32]byte // TASK_COMM_LEN is 16: no allocation a call
	var buf []byte
	if tl.commLen <= int64(len(commBuf)) {
		buf = commBuf[:tl.commLen]
	} else {
		buf = make([]byte, tl.commLen)
	}
	var p [4]byte
	if k.ReadMem(task+uint64(tl.pidOff), p[:]) != nil || k.ReadMem(task+uint64(tl.commOff), buf) != nil {
		return idle()
	}
	for i, c := range buf {
		if c == 0 {
			buf = buf[:i]
			break
		}
	}
	pid = int(int32(binary.LittleEndian.Uint32(p[:])))
	if cpu < 0 || cpu >= len(k.lastComm) {
		return string(buf), pid
	}
	if last := k.lastComm[cpu].Load(); last != nil && last.task == task && last.comm == string(buf) {
		return last.comm, pid
	}
	comm = string(buf)
	k.lastComm[cpu].Store(&taskComm{task: task, comm: comm})
	return comm, pid
}

// taskComm is a task's comm as Current read it.
type taskComm struct {
	task uint64
	comm string
}

// CurrentCommAddr returns the address of current->comm on cpu, a
// kernel VA (what Linux's (unsigned long)current->comm is), 0 when the
// guest has no task there yet.
func (k *Kernel) CurrentCommAddr(cpu int) uint64 {
	task := k.CurrentTask(cpu)
	if task == 0 {
		return 0
	}
	return task + uint64(k.taskStruct().commOff)
}

// CurrentTask returns the address of the task running on cpu (current), a
// kernel VA in the linear map, 0 before the guest set it up. As on Linux
// arm64, the guest keeps current in SP_EL0 while it runs at EL1 on SP_EL1
// (head.S, cpu_switch_to), so this is that CPU's SP_EL0. At EL0 SP_EL0 is
// the user's stack pointer: then current is the CPU's entry of
// __entry_task[], which the scheduler keeps and kernel_entry loads SP_EL0
// from. Call it from cpu's own hostcall handler or with the machine
// stopped: it reads the CPU's register file.
func (k *Kernel) CurrentTask(cpu int) uint64 {
	if !k.taskStruct().ok || cpu < 0 || cpu >= k.m.NumCPUs() {
		return 0
	}
	c := k.m.CPU(cpu)
	if !c.PoweredOn() {
		return 0
	}
	// At EL0, and at EL1 in kernel_entry before it loads current into
	// SP_EL0 (which still holds the user's stack pointer), current is
	// __entry_task[cpu], as entry.S itself finds it.
	sp0 := c.SysReg(machine.SP_EL0)
	if c.EL() == 1 && sp0>>48 == 0xffff {
		return sp0
	}
	s, ok := k.syms.LookupName("__entry_task")
	if !ok {
		return 0
	}
	task, err := k.Read64(s.Addr + 8*uint64(cpu))
	if err != nil {
		return 0
	}
	return task
}

// tifNeedResched is TIF_NEED_RESCHED, the bit of thread_info.flags that
// asks for a reschedule (the guest's linux/sched.h, as arm64's
// asm/thread_info.h).
const tifNeedResched = 1

// NeedResched reports whether the task at kernel address task has
// TIF_NEED_RESCHED set (tif_need_resched), which trace lines show as 'N'.
func (k *Kernel) NeedResched(task uint64) bool {
	tl := k.taskStruct()
	if task == 0 || tl.tiFlagsOff < 0 {
		return false
	}
	flags, err := k.Read64(task + uint64(tl.tiFlagsOff))
	return err == nil && flags&(1<<tifNeedResched) != 0
}

// SetKretprobeInstances records in the task at kernel address task how
// many kretprobe instances the host holds for it, which the guest's
// kprobe_flush_task reads to trap only when there are some. An image
// without the field traps every time, which is as correct.
func (k *Kernel) SetKretprobeInstances(task uint64, n int) error {
	tl := k.taskStruct()
	if task == 0 || tl.kretOff < 0 {
		return nil
	}
	return k.Write64(task+uint64(tl.kretOff), uint64(n))
}

// PreemptCount returns the preempt_count of the task running on cpu
// (0: preemptible). Call it as CurrentTask allows.
func (k *Kernel) PreemptCount(cpu int) (int32, error) {
	va, err := k.preemptCountVA(cpu)
	if err != nil {
		return 0, err
	}
	n, err := k.Read32(va)
	if err != nil {
		return 0, fmt.Errorf("preempt_count at %#x: %w", va, err)
	}
	return int32(n), nil
}

// AddPreemptCount adds delta to the preempt_count of the task running on
// cpu (preempt_disable is +1, preempt_enable_no_resched -1). Call it as
// CurrentTask allows.
func (k *Kernel) AddPreemptCount(cpu int, delta int32) error {
	n, err := k.PreemptCount(cpu)
	if err != nil {
		return err
	}
	va, _ := k.preemptCountVA(cpu)
	if err := k.Write32(va, uint32(n+delta)); err != nil {
		return fmt.Errorf("preempt_count at %#x: %w", va, err)
	}
	return nil
}

// preemptCountVA is where current's thread_info.preempt_count is.
func (k *Kernel) preemptCountVA(cpu int) (uint64, error) {
	tl := k.taskStruct()
	task := k.CurrentTask(cpu)
	if task == 0 || tl.tiPreemptOff < 0 {
		return 0, fmt.Errorf("%w: no current task or no thread_info.preempt_count on CPU %d", syscall.EOPNOTSUPP, cpu)
	}
	return task + uint64(tl.tiPreemptOff), nil
}

// TaskStack returns the kernel stack of the task at kernel address task,
// [base, base + ThreadSize) (task_stack_page), and false when the image
// does not say where it is.
func (k *Kernel) TaskStack(task uint64) (base uint64, ok bool) {
	tl := k.taskStruct()
	if task == 0 || tl.stackOff < 0 {
		return 0, false
	}
	base, err := k.Read64(task + uint64(tl.stackOff))
	if err != nil || base == 0 {
		return 0, false
	}
	return base, true
}

// TaskPid returns task->pid of the task_struct at kernel address task,
// and false when the image's DWARF does not place pid or the task cannot
// be read. The tracers' pid filters (set_event_pid & co) learn a forked
// child's or a freed task's pid from the task_struct their hooks see.
func (k *Kernel) TaskPid(task uint64) (int, bool) {
	tl := k.taskStruct()
	if !tl.ok || task == 0 {
		return 0, false
	}
	v, err := k.Read32(task + uint64(tl.pidOff))
	if err != nil {
		return 0, false
	}
	return int(int32(v)), true
}

// CurrentPid is Current's pid alone (current->pid on cpu, 0 for the idle
// task), without copying the comm: the pid filters ask it at every hit
// of a filtered tracer. The same rules as CurrentTask apply.
func (k *Kernel) CurrentPid(cpu int) int {
	pid, ok := k.TaskPid(k.CurrentTask(cpu))
	if !ok {
		return 0
	}
	return pid
}

// CurrentTgid returns current->tgid on cpu (0 for the idle task, or when
// the image's DWARF does not place tgid), for the tracers' record-tgid
// option. The same rules as CurrentTask apply.
func (k *Kernel) CurrentTgid(cpu int) int {
	tl := k.taskStruct()
	task := k.CurrentTask(cpu)
	if !tl.ok || tl.tgidOff < 0 || task == 0 {
		return 0
	}
	v, err := k.Read32(task + uint64(tl.tgidOff))
	if err != nil {
		return 0
	}
	return int(int32(v))
}

// CurrentDescends reports whether the task running on cpu belongs to
// process tgid or to one of its descendants, following real_parent up
// to init (perf's inherited counters: a twin's parent is its host
// process's parent's twin). The same rules as CurrentTask apply.
func (k *Kernel) CurrentDescends(cpu, tgid int) bool {
	tl := k.taskStruct()
	task := k.CurrentTask(cpu)
	if !tl.ok || tl.tgidOff < 0 || tl.parentOff < 0 {
		return false
	}
	for n := 0; task != 0 && n < maxTasks; n++ {
		v, err := k.Read32(task + uint64(tl.tgidOff))
		if err != nil {
			return false
		}
		switch int(int32(v)) {
		case tgid:
			return true
		case 0, 1:
			return false
		}
		if task, err = k.Read64(task + uint64(tl.parentOff)); err != nil {
			return false
		}
	}
	return false
}

// PIDMax is the guest's pid_max (kernel/pid.c's), PID_MAX_DEFAULT if the
// image does not have it or it cannot be read.
func (k *Kernel) PIDMax() int {
	const pidMaxDefault = 0x8000
	s, ok := k.syms.LookupName("pid_max")
	if !ok {
		return pidMaxDefault
	}
	v, err := k.Read32(s.Addr)
	if err != nil || int32(v) <= 0 {
		return pidMaxDefault
	}
	return int(int32(v))
}

// maxTasks bounds a walk of the task list, which a guest bug could make
// circular elsewhere than at its head.
const maxTasks = 1 << 16

// Tasks returns the pid and comm of each task on the task list
// (init_task.tasks, as for_each_process walks it); none when the image
// does not say where the list is. It stops the machine for the walk.
// Tests use it to see the guest's tasks.
func (k *Kernel) Tasks() map[int]string {
	tl := k.taskStruct()
	head, found := k.syms.LookupName("init_task")
	if !tl.ok || tl.tasksOff < 0 || !found {
		return nil
	}
	tasks := make(map[int]string)
	k.StopMachine(func() {
		at := head.Addr + uint64(tl.tasksOff)
		buf := make([]byte, tl.commLen)
		for next, n := at, 0; n < maxTasks; n++ {
			v, err := k.Read64(next)
			if err != nil || v == at {
				return
			}
			next = v
			task := v - uint64(tl.tasksOff)
			p, err := k.Read32(task + uint64(tl.pidOff))
			if err != nil || k.ReadMem(task+uint64(tl.commOff), buf) != nil {
				return
			}
			comm := buf
			if i := bytes.IndexByte(comm, 0); i >= 0 {
				comm = comm[:i]
			}
			tasks[int(int32(p))] = string(comm)
		}
	})
	return tasks
}
