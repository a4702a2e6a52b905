package kernel_test

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/kpemu/kpemu/kernel"
)

// The graph core: register_ftrace_graph puts kernel_clone's call site on
// ftrace_caller; each call enters through the entry callback and, when it
// says so, comes back through return_to_handler to the return callback,
// in the right order, with a depth, the function and times; a second
// graph is EBUSY; unregistered, the site goes back to a NOP, and returns
// already hijacked still come back (to no callback) without harm.
func TestFgraph(t *testing.T) {
	k := boot(t)
	clone := symAddr(t, k, "kernel_clone")
	copyProc := symAddr(t, k, "copy_process")
	var mu sync.Mutex
	type call struct {
		fn    uint64
		depth int
	}
	stacks := map[uint64][]call{} // each task's calls in the graph
	var bad []string
	returns := map[uint64]int{}
	var clock uint64
	filter := &kernel.FtraceOps{}
	var h kernel.FtraceHash
	h.Add(clone + 4)
	h.Add(copyProc + 4)
	if err := k.FtraceSetHash(filter, true, h); err != nil {
		t.Fatal(err)
	}
	gops := &kernel.FgraphOps{
		Entry: func(ft kernel.FgraphTask, e *kernel.FgraphEnt) bool {
			mu.Lock()
			defer mu.Unlock()
			if d := len(stacks[ft.Task]); e.Depth != d {
				bad = append(bad, fmt.Sprintf("entry of %s at depth %d on a stack of %d", k.Kallsyms().Format(e.Func), e.Depth, d))
			}
			stacks[ft.Task] = append(stacks[ft.Task], call{e.Func, e.Depth})
			return true
		},
		Return: func(ft kernel.FgraphTask, r *kernel.FgraphRet) {
			mu.Lock()
			defer mu.Unlock()
			st := stacks[ft.Task]
			switch {
			case len(st) == 0:
				bad = append(bad, "a return with nothing entered")
				return
			case st[len(st)-1] != call{r.Func, r.Depth}:
				bad = append(bad, fmt.Sprintf("return of %s at %d, entered %s at %d", k.Kallsyms().Format(r.Func), r.Depth, k.Kallsyms().Format(st[len(st)-1].fn), st[len(st)-1].depth))
			case r.RetTime <= r.CallTime:
				bad = append(bad, "rettime <= calltime")
			}
			stacks[ft.Task] = st[:len(st)-1]
			returns[r.Func]++
		},
		Filter: filter,
		Clock:  func() uint64 { return atomic.AddUint64(&clock, 1) },
	}
	if err := k.RegisterFtraceGraph(gops); err != nil {
		t.Fatal(err)
	}
	if err := k.RegisterFtraceGraph(&kernel.FgraphOps{Filter: filter}); !errors.Is(err, syscall.EBUSY) {
		t.Errorf("a second graph: %v, want EBUSY", err)
	}
	if w, want := insnAt(t, k, clone+4), bl(clone+4, symAddr(t, k, "ftrace_caller")); w != want {
		t.Errorf("kernel_clone+4 = %#08x, want BL ftrace_caller %#08x", w, want)
	}
	if err := k.Machine().Step(20_000_000); err != nil {
		t.Fatal(err)
	}
	if err := k.UnregisterFtraceGraph(gops); err != nil {
		t.Fatal(err)
	}
	if w := insnAt(t, k, clone+4); w != insnNop {
		t.Errorf("kernel_clone+4 = %#08x after unregistering, want NOP", w)
	}
	// Anything still in flight returns through return_to_handler.
	if err := k.Machine().Step(5_000_000); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bad) > 0 {
		t.Errorf("%d bad calls, the first: %s", len(bad), bad[0])
	}
	if returns[clone+4] < 2 || returns[copyProc+4] < returns[clone+4] {
		t.Errorf("returns: %d of kernel_clone, %d of copy_process", returns[clone+4], returns[copyProc+4])
	}
}
