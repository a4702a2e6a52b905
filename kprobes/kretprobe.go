package kprobes

import (
	"cmp"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/machine"
)

// Kretprobes, after Linux 6.1's kernel/kprobes.c and arch/arm64/kernel/
// probes/kprobes.c (arm64 6.1 does not use rethook). A kretprobe is a
// kprobe on the function's entry whose pre handler takes an instance from
// a pool of MaxActive, remembers the return address and frame, and points
// x30 at the guest's __kretprobe_trampoline. The trampoline traps here;
// the return handlers of the frame's instances run with regs.PC set to the
// real return address, and the trampoline returns there.

// Limits of struct kretprobe.
const (
	KretprobeMaxActiveMax = 4096 // KRETPROBE_MAXACTIVE_MAX
	KretprobeMaxDataSize  = 4096 // KRETPROBE_MAX_DATA_SIZE
)

// KretprobeInstance is one pending return (struct kretprobe_instance).
type KretprobeInstance struct {
	// RetAddr is where the function returns to; the trampoline when
	// another kretprobe hooked the same call first.
	RetAddr uint64
	// Frame is x29 at entry: the frame the return belongs to.
	Frame uint64
	// Data is the instance's private data, DataSize bytes, for the entry
	// handler to pass to the return handler (ri->data).
	Data []byte

	rp    *Kretprobe
	guest uint64 // the guest's struct kretprobe_instance, for guest handlers
}

// Kretprobe is a return probe (struct kretprobe). Set Kp.Symbol (offset 0)
// or Kp.Addr at a function's entry, the handlers and MaxActive, then
// RegisterKretprobe. Kp's own handlers are taken over.
type Kretprobe struct {
	Kp Kprobe
	// EntryHandler runs at function entry with a fresh instance; returning
	// true (Linux: non-zero) gives the instance back and skips the return.
	EntryHandler func(ri *KretprobeInstance, regs *Regs) bool
	// Handler runs when the function returns, regs.PC being the real
	// return address and regs.X[0] the return value.
	Handler func(ri *KretprobeInstance, regs *Regs)
	// MaxActive bounds the instances in flight; 0 means
	// max(10, 2*NumCPUs) (Linux 6.x's default).
	MaxActive int
	// DataSize is the size of each instance's Data; at most
	// KretprobeMaxDataSize.
	DataSize int

	free    atomic.Int64 // instances left in the pool
	nmissed atomic.Uint64
	gone    atomic.Bool // unregistered: pending returns run no handler

	// release gives a guest instance back with its Go one (guest.go).
	release func(ri *KretprobeInstance)
}

// Missed is the kretprobe's nmissed: entries with no free instance.
func (rp *Kretprobe) Missed() uint64 { return rp.nmissed.Load() }

// kretprobeInstances is the per-task lists of pending returns
// (current->kretprobe_instances). Only vCPUs touch it, inside hostcalls.
type kretprobeInstances struct {
	mu    sync.Mutex // vCPUs may run in parallel
	tasks map[uint64][]*KretprobeInstance
}

// RegisterKretprobe registers rp (register_kretprobe): -EINVAL unless the
// address is a function entry, -EINVAL for a bad MaxActive.
func (kp *Kprobes) RegisterKretprobe(rp *Kretprobe) error {
	return kp.registerKretprobe(rp, kp.Register)
}

// registerKretprobe is RegisterKretprobe with the kprobe registered by
// register (Register, or the guest API's lock-held variant).
func (kp *Kprobes) registerKretprobe(rp *Kretprobe, register func(*Kprobe) error) error {
	if rp.MaxActive < 0 || rp.MaxActive > KretprobeMaxActiveMax {
		return einval("maxactive %d out of range", rp.MaxActive)
	}
	if rp.DataSize < 0 {
		return einval("negative data_size")
	}
	if rp.DataSize > KretprobeMaxDataSize {
		return fmt.Errorf("%w: data_size %d is over %d", syscall.E2BIG, rp.DataSize, KretprobeMaxDataSize)
	}
	if kp.trampoline == 0 {
		return fmt.Errorf("%w: the kernel image has no __kretprobe_trampoline", syscall.EOPNOTSUPP)
	}
	entry, err := kp.OnFuncEntry(rp.Kp.Symbol, rp.Kp.Addr, rp.Kp.Offset)
	if err != nil {
		return err
	}
	if !entry {
		return einval("kretprobe at %s%+#x is not a function entry", cmp.Or(rp.Kp.Symbol, fmt.Sprintf("%#x", rp.Kp.Addr)), rp.Kp.Offset)
	}
	n := rp.MaxActive
	if n == 0 {
		n = max(10, 2*kp.k.Machine().NumCPUs())
	}
	rp.MaxActive = n
	rp.free.Store(int64(n))
	rp.nmissed.Store(0)
	rp.gone.Store(false)
	rp.Kp.typ = TypeKretprobe
	rp.Kp.PreHandler = func(_ *Kprobe, regs *Regs) bool { return kp.preHandlerKretprobe(rp, regs) }
	rp.Kp.PostHandler = nil
	return register(&rp.Kp)
}

// UnregisterKretprobe removes rp. Returns already hooked still come back
// through the trampoline, to their real address, without a handler.
func (kp *Kprobes) UnregisterKretprobe(rp *Kretprobe) {
	rp.gone.Store(true)
	kp.Unregister(&rp.Kp)
}

// preHandlerKretprobe is pre_handler_kretprobe with
// arch_prepare_kretprobe.
func (kp *Kprobes) preHandlerKretprobe(rp *Kretprobe, regs *Regs) bool {
	if rp.free.Add(-1) < 0 {
		rp.free.Add(1)
		rp.nmissed.Add(1)
		return false
	}
	ri := &KretprobeInstance{rp: rp, RetAddr: regs.X[30], Frame: regs.X[29]}
	if rp.DataSize > 0 {
		ri.Data = make([]byte, rp.DataSize)
	}
	if rp.EntryHandler != nil && rp.EntryHandler(ri, regs) {
		if rp.release != nil {
			rp.release(ri)
		}
		rp.free.Add(1)
		return false
	}
	task := kp.k.CurrentTask(regs.CPU)
	kp.instances.mu.Lock()
	kp.instances.tasks[task] = append(kp.instances.tasks[task], ri)
	kp.noteInstances(task)
	kp.instances.mu.Unlock()
	regs.X[30] = kp.trampoline
	kp.observe(ObsKretEntry, kp.cpu(regs), 0, regs, kp.pointAt(regs.PC), ri.RetAddr)
	return false
}

// hcKretprobeTrampoline is __kretprobe_trampoline_handler, called from the
// guest's trampoline_probe_handler with the trampoline's pt_regs.
func (kp *Kprobes) hcKretprobeTrampoline(cpu *machine.CPU) error {
	regsAddr := cpu.X(0)
	regs, err := kp.readRegs(regsAddr)
	if err != nil {
		kp.log.Error("kretprobe trampoline: bad pt_regs pointer from guest", "err", err)
		cpu.SetX(0, 0)
		return nil
	}
	defer kp.putRegs(regs) // the handlers and observers keep no pt_regs
	regs.CPU = cpu.Index()
	frame := regs.X[29]
	task := kp.k.CurrentTask(regs.CPU)

	kp.instances.mu.Lock()
	stack := kp.instances.tasks[task]
	// __kretprobe_find_ret_addr: from the top, skip instances that returned
	// to the trampoline (a second kretprobe on the same call) to the one
	// holding the real return address.
	found := -1
	for i := len(stack) - 1; i >= 0; i-- {
		if stack[i].RetAddr != kp.trampoline {
			found = i
			break
		}
	}
	if found < 0 || stack[found].Frame != frame {
		kp.instances.mu.Unlock()
		// Linux BUG()s here. Returning 0 sends the guest to address 0,
		// which oopses in the guest instead of stopping the machine.
		kp.log.Error("kretprobe: Return address not found, not execute handler. Maybe there is a bug in the kernel.", "frame", fmt.Sprintf("%#x", frame))
		cpu.SetX(0, 0)
		return nil
	}
	var nest [4]*KretprobeInstance // more than one only when kretprobes nest
	mine := append(nest[:0], stack[found:]...)
	// An emptied stack stays, so that the task's next entry appends
	// without allocating; flushTask drops it when the task exits.
	kp.instances.tasks[task] = stack[:found]
	kp.noteInstances(task)
	kp.instances.mu.Unlock()

	correct := mine[0].RetAddr
	regs.PC = correct
	kp.observe(ObsKretReturn, cpu, regsAddr, regs, kp.pointAt(mine[0].rp.Kp.Addr), correct)
	// Newest first, as the list is walked; each instance's ret_addr is
	// set to the real one before its handler runs.
	for i := len(mine) - 1; i >= 0; i-- {
		ri := mine[i]
		if !ri.rp.gone.Load() && ri.rp.Handler != nil {
			ri.RetAddr = correct
			ri.rp.Handler(ri, regs)
		}
		if ri.rp.release != nil {
			ri.rp.release(ri)
		}
		ri.rp.free.Add(1)
	}
	regs.X[30] = correct // arch_kretprobe_fixup_return
	if err := kp.writeRegs(regsAddr, regs); err != nil {
		kp.log.Error("kretprobe trampoline: writing pt_regs", "err", err)
	}
	cpu.SetX(0, correct)
	return nil
}

// setupKretprobes finds the trampoline and installs its hostcall.
func (kp *Kprobes) setupKretprobes() {
	kp.instances.tasks = make(map[uint64][]*KretprobeInstance)
	if s, ok := kp.k.Kallsyms().LookupName("__kretprobe_trampoline"); ok {
		kp.trampoline = s.Addr
	}
	kp.k.SetHostcall(kernel.HCKretprobeTrampoline, kp.hcKretprobeTrampoline)
	kp.k.SetHostcall(kernel.HCKprobeFlushTask, func(cpu *machine.CPU) error {
		kp.flushTask(cpu.X(0))
		cpu.SetX(0, 0)
		return nil
	})
}

// noteInstances tells the guest how many instances task has, for its
// kprobe_flush_task (Linux's reads the task's own list). Called with
// instances.mu held, so that the guest's count follows the map's.
func (kp *Kprobes) noteInstances(task uint64) {
	if err := kp.k.SetKretprobeInstances(task, len(kp.instances.tasks[task])); err != nil {
		kp.log.Error("kretprobe: recording a task's instances", "task", fmt.Sprintf("%#x", task), "err", err)
	}
}

// flushTask is kprobe_flush_task: the instances of a task that is gone
// go back to their pools.
func (kp *Kprobes) flushTask(task uint64) {
	kp.instances.mu.Lock()
	stack := kp.instances.tasks[task]
	delete(kp.instances.tasks, task)
	kp.instances.mu.Unlock()
	for _, ri := range stack {
		if ri.rp.release != nil {
			ri.rp.release(ri)
		}
		ri.rp.free.Add(1)
	}
}
