package tracing

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"path"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/kpemu/kpemu/debugfs"
	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/tracing/internal/kstr"
)

// The stack tracer, after Linux 6.1's kernel/trace/trace_stack.c: an
// ftrace ops whose callback, at every call of a function its filter
// (stack_trace_filter) takes, measures how much of the current task's
// kernel stack is in use, and on a new maximum records the backtrace with
// the stack depth at each frame. stack_max_size shows the maximum (a
// write sets it, to start over); stack_trace shows the frames.
//
// Linux enables it with the sysctl /proc/sys/kernel/stack_tracer_enabled
// (or "stacktrace" on the command line). kpemu's tree has no /proc/sys:
// StackTracerEnabledOps is that file's operations, which kpemu's command
// serves as kpemu/stack_tracer_enabled, and SetStackTracerEnabled is the
// same for Go callers.

// stackTraceEntries is STACK_TRACE_ENTRIES.
const stackTraceEntries = 500

// stackTracer is trace_stack.c's state.
type stackTracer struct {
	k   *kernel.Kernel
	ops kernel.FtraceOps // trace_ops

	sysctl sync.Mutex // stack_sysctl_mutex: enabled and the ops' registration
	// enabled is stack_tracer_enabled, the sysctl's int.
	enabled int

	mu          sync.Mutex // stack_trace_max_lock: everything below
	maxSize     uint64     // stack_trace_max_size
	nr          int        // stack_trace_nr_entries
	dump        [stackTraceEntries]uint64
	index       [stackTraceEntries]uint64
	tracerFrame uint64 // the tracer's own stack use, found on the first maximum
}

func (t *Tracing) initStackTracer() error {
	st := &t.stack
	st.k = t.kp.Kernel()
	st.ops.Func = st.stackTraceCall
	files := []struct {
		name string
		mode uint32
		ops  debugfs.FileOps
	}{
		{"stack_max_size", 0o640, debugfs.FileOps{Show: st.showStackMaxSize, Write: st.writeStackMaxSize}},
		{"stack_trace", 0o440, debugfs.FileOps{Show: st.showStackTrace}},
		{"stack_trace_filter", 0o640, t.regexFileOps(&st.ops, true, nil)},
	}
	for _, f := range files {
		if _, err := t.tree.CreateFile(path.Join(t.dir, f.name), fsMode(f.mode), f.ops); err != nil {
			return fmt.Errorf("creating %s/%s: %w", t.dir, f.name, err)
		}
	}
	return nil
}

// SetStackTracerEnabled turns the stack tracer on or off, as writing 1 or
// 0 to /proc/sys/kernel/stack_tracer_enabled does.
func (t *Tracing) SetStackTracerEnabled(on bool) error {
	v := 0
	if on {
		v = 1
	}
	return t.stack.setStackTracerEnabled(v)
}

// setStackTracerEnabled is stack_trace_sysctl's write: the ops is
// registered when the value turns non-zero and unregistered when it turns
// zero.
func (st *stackTracer) setStackTracerEnabled(v int) error {
	st.sysctl.Lock()
	defer st.sysctl.Unlock()
	was := st.enabled != 0
	st.enabled = v
	if was == (v != 0) {
		return nil
	}
	k := st.k
	if v != 0 {
		return k.RegisterFtraceFunction(&st.ops)
	}
	return k.UnregisterFtraceFunction(&st.ops)
}

// StackTracerEnabledOps are the operations of Linux's
// /proc/sys/kernel/stack_tracer_enabled (proc_dointvec): it reads as the
// int and a new int enables (non-zero) or disables (zero) the stack tracer.
func (t *Tracing) StackTracerEnabledOps() debugfs.FileOps {
	return debugfs.FileOps{
		Show: func(_ context.Context, w *bytes.Buffer) error {
			t.stack.sysctl.Lock()
			defer t.stack.sysctl.Unlock()
			fmt.Fprintf(w, "%d\n", t.stack.enabled)
			return nil
		},
		Write: func(_ context.Context, p []byte, _ int64) (int, error) {
			v, err := strconv.ParseInt(strings.TrimSpace(string(p)), 10, 32)
			if err != nil {
				return 0, syscall.EINVAL
			}
			if err := t.stack.setStackTracerEnabled(int(v)); err != nil {
				return 0, err
			}
			return len(p), nil
		},
	}
}

func (st *stackTracer) showStackMaxSize(_ context.Context, w *bytes.Buffer) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	fmt.Fprintf(w, "%d\n", int64(st.maxSize))
	return nil
}

// writeStackMaxSize is stack_max_size_write: kstrtoul_from_user, base 10.
func (st *stackTracer) writeStackMaxSize(_ context.Context, p []byte, _ int64) (int, error) {
	v, err := kstr.StrtoulFromUser(p)
	if err != nil {
		return 0, err
	}
	st.mu.Lock()
	st.maxSize = v
	st.mu.Unlock()
	return len(p), nil
}

// showStackTrace is stack_trace's seq_file: the header, Linux's notice
// while the tracer is off and no maximum is kept, then one line per
// frame: its depth, its size and %pS of its return address.
func (st *stackTracer) showStackTrace(_ context.Context, w *bytes.Buffer) error {
	st.sysctl.Lock()
	enabled := st.enabled != 0
	st.sysctl.Unlock()
	st.mu.Lock()
	defer st.mu.Unlock()
	fmt.Fprintf(w, "        Depth    Size   Location    (%d entries)\n        -----    ----   --------\n", st.nr)
	if !enabled && st.maxSize == 0 {
		w.WriteString("#\n" +
			"#  Stack tracer disabled\n" +
			"#\n" +
			"# To enable the stack tracer, either add 'stacktrace' to the\n" +
			"# kernel command line\n" +
			"# or 'echo 1 > /proc/sys/kernel/stack_tracer_enabled'\n" +
			"#\n")
	}
	syms := st.k.Kallsyms()
	for i := 0; i < st.nr; i++ {
		size := st.index[i]
		if i+1 < st.nr {
			size = st.index[i] - st.index[i+1]
		}
		fmt.Fprintf(w, "%3d) %8d   %5d   %s\n", i, int32(st.index[i]), int32(size), syms.Format(st.dump[i]))
	}
	return nil
}

// stackTraceCall is stack_trace_call and check_stack, on the vCPU that
// called a function the ops takes. The tracer's frame is where the gate
// (arch_ftrace_ops_list_func) made its hostcall: its SP stands for the
// address of stack_trace_call's local variable, and the frame records
// from its FP for stack_trace_save(). Everything is read from guest
// memory; nothing runs in the guest.
func (st *stackTracer) stackTraceCall(c kernel.FtraceCall) {
	k := st.k
	ip := c.IP + kernel.MCountInsnSize // the return address into the traced function
	sp := c.CPU.SP()
	base, ok := k.TaskStack(k.CurrentTask(c.CPU.Index()))
	top := base + kernel.ThreadSize
	// object_is_on_stack: the current task's stack only.
	if !ok || sp < base || sp >= top {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	thisSize := top - sp - st.tracerFrame
	if thisSize <= st.maxSize {
		return
	}
	st.maxSize = thisSize
	stack := make([]byte, top-sp)
	if err := k.ReadMem(sp, stack); err != nil {
		return
	}
	word := func(addr uint64) uint64 { return binary.LittleEndian.Uint64(stack[addr-sp:]) }

	// stack_trace_save: the frame records, from the gate's.
	task := k.CurrentTask(c.CPU.Index())
	nr := 0
	for fp := c.CPU.X(29); nr < stackTraceEntries-1 && fp >= sp && fp+16 <= top && fp&7 == 0; {
		next, lr := word(fp), word(fp+8)
		if lr == 0 {
			break
		}
		st.dump[nr] = k.FgraphRetAddr(task, lr, next) // the real return, past return_to_handler
		nr++
		if next <= fp {
			break
		}
		fp = next
	}
	// Skip over the overhead of the stack tracer itself.
	i := 0
	for i < nr && st.dump[i] != ip {
		i++
	}
	if i == nr {
		i = 0
	}
	// Find where on the stack each return address is.
	x := 0
	start := sp
	for i < nr {
		found := false
		st.index[x] = thisSize
		p := start
		for ; p < top && i < nr; p += 8 {
			if word(p) == st.dump[i] {
				st.dump[x] = st.dump[i]
				i++
				thisSize = top - p
				st.index[x] = thisSize
				x++
				found = true
				start = p + 8
				// The first time, the tracer's own frame is
				// what lies below the traced function's.
				if st.tracerFrame == 0 {
					st.tracerFrame = p - sp
					st.maxSize -= st.tracerFrame
				}
			}
		}
		if !found {
			i++
		}
	}
	// ARCH_FTRACE_SHIFT_STACK_TRACER: arm64 saves the return address
	// below a function's locals, so each size belongs one frame down.
	if x > 1 {
		copy(st.index[:x-1], st.index[1:x])
		x--
	}
	st.nr = x
}
