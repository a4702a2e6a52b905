package kernel_test

import (
	"encoding/binary"
	"sync"
	"testing"

	"github.com/kpemu/kpemu/kernel"
)

const (
	insnNop     = 0xd503201f
	insnMovX9LR = 0xaa1e03e9
)

func symAddr(t *testing.T, k *kernel.Kernel, name string) uint64 {
	t.Helper()
	s, ok := k.Kallsyms().LookupName(name)
	if !ok {
		t.Fatalf("no symbol %s", name)
	}
	return s.Addr
}

func insnAt(t *testing.T, k *kernel.Kernel, addr uint64) uint32 {
	t.Helper()
	var w uint32
	var err error
	k.StopMachine(func() { w, err = k.ReadInsn(addr) })
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// bl is the BL from pc to target.
func bl(pc, target uint64) uint32 { return 0x94000000 | uint32((target-pc)>>2)&0x03ffffff }

// ftrace_init at boot: one record per function built with patchable
// entries, at its second instruction, the first made MOV X9, LR; none for
// notrace, noinstr, lib/ and assembly code.
func TestFtraceRecordsAtBoot(t *testing.T) {
	k := boot(t)
	recs := k.FtraceRecords()
	if len(recs) < 100 {
		t.Fatalf("%d records", len(recs))
	}
	byIP := map[uint64]bool{}
	for i, r := range recs {
		if i > 0 && r.IP <= recs[i-1].IP {
			t.Fatalf("records not in address order at %d", i)
		}
		if r.Enabled || r.Count != 0 {
			t.Errorf("%s enabled at boot", k.Kallsyms().Format(r.IP))
		}
		if w := insnAt(t, k, r.IP-4); w != insnMovX9LR {
			t.Errorf("%s: %#08x, want MOV X9, LR", k.Kallsyms().Format(r.IP-4), w)
		}
		if w := insnAt(t, k, r.IP); w != insnNop {
			t.Errorf("%s: %#08x, want NOP", k.Kallsyms().Format(r.IP), w)
		}
		byIP[r.IP] = true
	}
	for _, fn := range []string{"kernel_clone", "vfs_read", "do_debug_exception", "kprobe_breakpoint_handler", "gic_handle_irq", "preempt_schedule_irq"} {
		if !byIP[symAddr(t, k, fn)+kernel.MCountInsnSize] {
			t.Errorf("%s has no record", fn)
		}
	}
	for _, fn := range []string{
		"__schedule", "secondary_start_kernel", // notrace, as in Linux
		"el1h_64_sync_handler", "el1_dbg", // noinstr
		"memcpy", "vsnprintf", "csum_partial", // lib/
		"arch_ftrace_ops_list_func",                                       // kernel/trace/
		"copy_to_user", "ftrace_caller", "vectors", "__arch_copy_to_user", // notrace, assembly
	} {
		a := symAddr(t, k, fn)
		if k.FtraceLocation(a) != 0 {
			t.Errorf("%s has a record", fn)
		}
	}
}

// ftrace_location: a call site is its own location, a function's first
// address maps to its call site, anything else is none; kprobes refuses
// exactly the addresses that are their own location.
func TestFtraceLocation(t *testing.T) {
	k := boot(t)
	clone := symAddr(t, k, "kernel_clone")
	sched := symAddr(t, k, "__schedule")
	tests := []struct {
		name string
		addr uint64
		want uint64
	}{
		{"kernel_clone+0", clone, clone + 4},
		{"kernel_clone+4", clone + 4, clone + 4},
		{"kernel_clone+8", clone + 8, 0},
		{"kernel_clone+2", clone + 2, 0},
		{"kernel_clone+6, inside the call site", clone + 6, clone + 4},
		{"__schedule+0 (notrace)", sched, 0},
		{"__schedule+4", sched + 4, 0},
	}
	for _, tt := range tests {
		if got := k.FtraceLocation(tt.addr); got != tt.want {
			t.Errorf("FtraceLocation(%s) = %#x, want %#x", tt.name, got, tt.want)
		}
	}
	if got := k.FtraceLocationRange(clone, clone+3); got != 0 {
		t.Errorf("FtraceLocationRange over the MOV = %#x", got)
	}
	if got := k.FtraceLocationRange(clone, clone+100); got != clone+4 {
		t.Errorf("FtraceLocationRange over the function = %#x", got)
	}
}

// Registering an ops patches BL ftrace_caller over the call sites its
// filter takes (and ftrace_call to the list gate); the callback sees each
// call with the caller as parent and the pt_regs that ftrace_caller
// built; unregistering restores the NOPs.
func TestFtraceOps(t *testing.T) {
	k := boot(t)
	clone := symAddr(t, k, "kernel_clone")
	call := symAddr(t, k, "ftrace_call")
	var mu sync.Mutex
	var calls []kernel.FtraceCall
	var regsPC, regsX9 []uint64
	ops := &kernel.FtraceOps{Func: func(c kernel.FtraceCall) {
		var b [8]byte
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, c)
		// What a callback reads of its pt_regs: the PC after the
		// call site and x9, the function's LR.
		if k.ReadMem(c.Regs+kernel.PtRegsPC, b[:]) == nil {
			regsPC = append(regsPC, binary.LittleEndian.Uint64(b[:]))
		}
		if k.ReadMem(c.Regs+9*8, b[:]) == nil {
			regsX9 = append(regsX9, binary.LittleEndian.Uint64(b[:]))
		}
	}}
	var h kernel.FtraceHash
	h.Add(clone + 4)
	if err := k.FtraceSetHash(ops, true, h); err != nil {
		t.Fatal(err)
	}
	if w := insnAt(t, k, clone+4); w != insnNop {
		t.Fatalf("an unregistered ops patched kernel_clone: %#08x", w)
	}
	if err := k.RegisterFtraceFunction(ops); err != nil {
		t.Fatal(err)
	}
	if err := k.RegisterFtraceFunction(ops); err == nil {
		t.Error("registered twice")
	}
	if w, want := insnAt(t, k, clone+4), bl(clone+4, symAddr(t, k, "ftrace_caller")); w != want {
		t.Errorf("kernel_clone+4 = %#08x, want BL ftrace_caller %#08x", w, want)
	}
	if w, want := insnAt(t, k, call), bl(call, symAddr(t, k, "arch_ftrace_ops_list_func")); w != want {
		t.Errorf("ftrace_call = %#08x, want BL arch_ftrace_ops_list_func %#08x", w, want)
	}
	enabled := 0
	for _, r := range k.FtraceRecords() {
		if r.Enabled {
			enabled++
			if r.IP != clone+4 || r.Count != 1 || r.Regs {
				t.Errorf("enabled record %+v", r)
			}
		}
	}
	if enabled != 1 {
		t.Errorf("%d records enabled", enabled)
	}
	if err := k.Machine().Step(20_000_000); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(calls) == 0 {
		t.Fatal("kernel_clone was not traced")
	}
	for i, c := range calls {
		if c.IP != clone+4 {
			t.Errorf("call %d: ip %s", i, k.Kallsyms().Format(c.IP))
		}
		parent, _, ok := k.Kallsyms().LookupAddr(c.ParentIP)
		if !ok || !callsKernelClone(t, k, parent, clone) {
			t.Errorf("call %d: parent %s does not call kernel_clone", i, k.Kallsyms().Format(c.ParentIP))
		}
		if i < len(regsPC) && regsPC[i] != clone+8 {
			t.Errorf("call %d: regs->pc %s, want kernel_clone+0x8", i, k.Kallsyms().Format(regsPC[i]))
		}
		if i < len(regsX9) && regsX9[i] != c.ParentIP {
			t.Errorf("call %d: regs x9 %#x, want the parent %#x", i, regsX9[i], c.ParentIP)
		}
	}
	n := len(calls)
	mu.Unlock()

	// FTRACE_OPS_FL_SAVE_REGS: the site calls ftrace_regs_caller.
	regsOps := &kernel.FtraceOps{Func: func(kernel.FtraceCall) {}, SaveRegs: true}
	if err := k.FtraceSetHash(regsOps, true, h); err != nil {
		t.Fatal(err)
	}
	if err := k.RegisterFtraceFunction(regsOps); err != nil {
		t.Fatal(err)
	}
	if w, want := insnAt(t, k, clone+4), bl(clone+4, symAddr(t, k, "ftrace_regs_caller")); w != want {
		t.Errorf("with SaveRegs kernel_clone+4 = %#08x, want BL ftrace_regs_caller", w)
	}
	if err := k.UnregisterFtraceFunction(regsOps); err != nil {
		t.Fatal(err)
	}
	if w, want := insnAt(t, k, clone+4), bl(clone+4, symAddr(t, k, "ftrace_caller")); w != want {
		t.Errorf("after SaveRegs went kernel_clone+4 = %#08x, want BL ftrace_caller", w)
	}

	if err := k.UnregisterFtraceFunction(ops); err != nil {
		t.Fatal(err)
	}
	if w := insnAt(t, k, clone+4); w != insnNop {
		t.Errorf("after unregistering kernel_clone+4 = %#08x", w)
	}
	if w, want := insnAt(t, k, call), bl(call, symAddr(t, k, "ftrace_stub")); w != want {
		t.Errorf("after unregistering ftrace_call = %#08x, want BL ftrace_stub", w)
	}
	if err := k.Machine().Step(5_000_000); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(calls) != n {
		t.Errorf("%d calls traced after unregistering", len(calls)-n)
	}
}

// ftrace_enabled 0 makes every site a NOP and ftrace_call the stub, with
// the ops still registered; 1 brings the ops' sites back, and an ops
// registered while it was 0 starts then.
func TestFtraceEnabledSysctl(t *testing.T) {
	k := boot(t)
	clone, read := symAddr(t, k, "kernel_clone"), symAddr(t, k, "vfs_read")
	call := symAddr(t, k, "ftrace_call")
	caller := symAddr(t, k, "ftrace_caller")
	var mu sync.Mutex
	hits := 0
	newOps := func(ip uint64) *kernel.FtraceOps {
		ops := &kernel.FtraceOps{Func: func(kernel.FtraceCall) { mu.Lock(); hits++; mu.Unlock() }}
		var h kernel.FtraceHash
		h.Add(ip + 4)
		if err := k.FtraceSetHash(ops, true, h); err != nil {
			t.Fatal(err)
		}
		return ops
	}
	cloneOps, readOps := newOps(clone), newOps(read)
	if err := k.RegisterFtraceFunction(cloneOps); err != nil {
		t.Fatal(err)
	}
	if err := k.SetFtraceEnabled(false); err != nil {
		t.Fatal(err)
	}
	if err := k.RegisterFtraceFunction(readOps); err != nil {
		t.Fatal(err)
	}
	for _, site := range []struct {
		name     string
		at, want uint32
	}{
		{"kernel_clone+4", insnAt(t, k, clone+4), insnNop},
		{"vfs_read+4", insnAt(t, k, read+4), insnNop},
		{"ftrace_call", insnAt(t, k, call), bl(call, symAddr(t, k, "ftrace_stub"))},
	} {
		if site.at != site.want {
			t.Errorf("ftrace_enabled 0: %s = %#08x, want %#08x", site.name, site.at, site.want)
		}
	}
	if err := k.Machine().Step(10_000_000); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if hits != 0 {
		t.Errorf("%d calls traced with ftrace_enabled 0", hits)
	}
	mu.Unlock()
	if err := k.SetFtraceEnabled(true); err != nil {
		t.Fatal(err)
	}
	for _, site := range []struct {
		name     string
		at, want uint32
	}{
		{"kernel_clone+4", insnAt(t, k, clone+4), bl(clone+4, caller)},
		{"vfs_read+4", insnAt(t, k, read+4), bl(read+4, caller)},
		{"ftrace_call", insnAt(t, k, call), bl(call, symAddr(t, k, "arch_ftrace_ops_list_func"))},
	} {
		if site.at != site.want {
			t.Errorf("ftrace_enabled 1: %s = %#08x, want %#08x", site.name, site.at, site.want)
		}
	}
	for _, o := range []*kernel.FtraceOps{cloneOps, readOps} {
		if err := k.UnregisterFtraceFunction(o); err != nil {
			t.Fatal(err)
		}
	}
}

// callsKernelClone reports whether fn holds a BL to kernel_clone.
func callsKernelClone(t *testing.T, k *kernel.Kernel, fn kernel.Symbol, clone uint64) bool {
	t.Helper()
	for a := fn.Addr; a < fn.Addr+fn.Size; a += 4 {
		if w := insnAt(t, k, a); w == bl(a, clone) {
			return true
		}
	}
	return false
}

// A module's call sites become records while it is loaded, listed after
// the core kernel's; the ones in its init text go once init is done.
func TestFtraceModuleRecords(t *testing.T) {
	k := running(t)
	if err := k.LoadEmbeddedModule("e1000ish"); err != nil {
		t.Fatal(err)
	}
	m, _, _ := k.Module("e1000ish")
	rx := symAddr(t, k, "e1000ish:vnet_rx")
	if got := k.FtraceLocation(rx); got != rx+4 {
		t.Errorf("FtraceLocation(vnet_rx) = %#x, want %#x", got, rx+4)
	}
	if w := insnAt(t, k, rx); w != insnMovX9LR {
		t.Errorf("vnet_rx+0 = %#08x, want MOV X9, LR", w)
	}
	recs := k.FtraceRecords()
	last := recs[len(recs)-1]
	if !m.Contains(last.IP) {
		t.Errorf("the last record %s is not the module's", k.Kallsyms().Format(last.IP))
	}
	for _, r := range recs {
		if m.IsInitText(r.IP) {
			t.Errorf("init text record %#x survived init", r.IP)
		}
	}
	if err := k.UnloadModule("e1000ish"); err != nil {
		t.Fatal(err)
	}
	for _, r := range k.FtraceRecords() {
		if m.Contains(r.IP) {
			t.Fatalf("record %#x of the unloaded module", r.IP)
		}
	}
	if got := k.FtraceLocation(rx + 4); got != 0 {
		t.Errorf("FtraceLocation after unload = %#x", got)
	}
}
