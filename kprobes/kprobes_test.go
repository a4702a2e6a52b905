package kprobes_test

import (
	"errors"
	"io"
	"log/slog"
	"syscall"
	"testing"

	"github.com/kpemu/kpemu/internal/benchutil"
	"github.com/kpemu/kpemu/internal/waitfor"
	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/kprobes"
)

const brkKprobes = 0xd4200080

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// boot boots the embedded image and attaches kprobes; the guest runs only
// when the test steps it.
func boot(t testing.TB) (*kernel.Kernel, *kprobes.Kprobes) {
	t.Helper()
	k, err := kernel.Boot(kernel.Config{Logger: quiet(), GuestWait: waitfor.Bound})
	if err != nil {
		t.Fatal(err)
	}
	kp, err := kprobes.New(k, quiet())
	if err != nil {
		t.Fatal(err)
	}
	return k, kp
}

// bootReady is boot, then steps the guest until it can take probes
// (HC_KERNEL_READY): from there a registered probe is armed at once.
func bootReady(t testing.TB) (*kernel.Kernel, *kprobes.Kprobes) {
	t.Helper()
	k, kp := boot(t)
	stepUntilReady(t, k)
	return k, kp
}

// runIterations steps the guest until its workload loop has run n more
// iterations.
func runIterations(t testing.TB, k *kernel.Kernel, n uint64) {
	t.Helper()
	benchutil.RunIterations(t, k, n)
}

func counter(t testing.TB, k *kernel.Kernel, sym string) uint64 {
	t.Helper()
	v, err := k.ReadSymbolU64(sym)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func insnAt(t testing.TB, k *kernel.Kernel, addr uint64) uint32 {
	t.Helper()
	v, err := k.ReadInsn(addr)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func symAddr(t testing.TB, k *kernel.Kernel, name string) uint64 {
	t.Helper()
	s, ok := k.Kallsyms().LookupName(name)
	if !ok {
		t.Fatalf("no symbol %s", name)
	}
	return s.Addr
}

func TestProbeHitsAndHandlers(t *testing.T) {
	k, kp := bootReady(t)
	vfsRead := symAddr(t, k, "vfs_read")
	orig := insnAt(t, k, vfsRead)
	var pre, post int
	var sawPC, sawX0 uint64
	p := &kprobes.Kprobe{
		Symbol: "vfs_read",
		PreHandler: func(_ *kprobes.Kprobe, r *kprobes.Regs) bool {
			pre++
			sawPC, sawX0 = r.PC, r.X[0]
			return false
		},
		PostHandler: func(_ *kprobes.Kprobe, r *kprobes.Regs) {
			post++
			if r.PC != vfsRead+4 {
				t.Errorf("post handler PC = %#x, want %#x", r.PC, vfsRead+4)
			}
		},
	}
	if err := kp.Register(p); err != nil {
		t.Fatal(err)
	}
	if p.Addr != vfsRead {
		t.Fatalf("Addr = %#x, want %#x", p.Addr, vfsRead)
	}
	if got := insnAt(t, k, vfsRead); got != brkKprobes {
		t.Fatalf("text at vfs_read = %#08x, want BRK #4", got)
	}
	reads0 := counter(t, k, "nr_vfs_read")
	runIterations(t, k, 50)
	reads := counter(t, k, "nr_vfs_read") - reads0
	if pre == 0 || uint64(pre) != p.Hits() {
		t.Fatalf("pre handler ran %d times, Hits() = %d", pre, p.Hits())
	}
	// Stepping stops between instructions, so the last hit may not have
	// reached its post handler or bumped the guest's counter yet.
	if post < pre-1 || post > pre {
		t.Errorf("post handler ran %d times for %d hits", post, pre)
	}
	if d := int64(pre) - int64(reads); d < 0 || d > 1 {
		t.Errorf("%d hits for %d guest calls of vfs_read", pre, reads)
	}
	if sawPC != vfsRead || sawX0 == 0 {
		t.Errorf("pre handler saw pc=%#x x0=%#x", sawPC, sawX0)
	}
	kp.Unregister(p)
	if got := insnAt(t, k, vfsRead); got != orig {
		t.Errorf("after unregister text = %#08x, want %#08x", got, orig)
	}
	if l := kp.List(); len(l) != 0 {
		t.Errorf("list after unregister: %v", l)
	}
	hits := p.Hits()
	runIterations(t, k, 10)
	if p.Hits() != hits {
		t.Errorf("unregistered probe still hit")
	}
}

func TestRegisterErrors(t *testing.T) {
	k, kp := boot(t)
	tests := []struct {
		name   string
		symbol string
		offset uint64
		addr   uint64
		errno  syscall.Errno
	}{
		{"unknown symbol", "no_such_function_xyz", 0, 0, syscall.ENOENT},
		{"misaligned", "vfs_read", 2, 0, syscall.EINVAL},
		{"kprobes text", "notify_page_fault", 0, 0, syscall.EINVAL},
		{"break hook gate", "kprobe_breakpoint_handler", 0, 0, syscall.EINVAL},
		{"entry text", "el1h_64_sync", 0, 0, syscall.EINVAL},
		{"NOKPROBE_SYMBOL", "el1h_64_sync_handler", 0, 0, syscall.EINVAL},
		{"data, not text", "nr_vfs_read", 0, 0, syscall.EINVAL},
		{"both symbol and address", "vfs_read", 0, symAddr(t, k, "vfs_read"), syscall.EINVAL},
		{"neither", "", 0, 0, syscall.EINVAL},
		{"address in no symbol", "", 0, 0x1000, syscall.ENOENT},
		// arm64 Linux 6.1 has no KPROBES_ON_FTRACE: a function's ftrace
		// call site, its second instruction, is check_ftrace_location's
		// EINVAL, by name or address, in the kernel or a module.
		{"ftrace call site", "kernel_clone", 4, 0, syscall.EINVAL},
		{"ftrace call site by address", "", 0, symAddr(t, k, "vfs_read") + 4, syscall.EINVAL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &kprobes.Kprobe{Symbol: tt.symbol, Offset: tt.offset, Addr: tt.addr}
			err := kp.Register(p)
			if !errors.Is(err, tt.errno) {
				t.Fatalf("Register = %v, want %v", err, tt.errno)
			}
		})
	}
	if l := kp.List(); len(l) != 0 {
		t.Errorf("failed registrations left probes: %v", l)
	}
}

// Instructions that use the PC (bl, ret, adrp, b.cond, ...) are simulated
// on the saved registers instead of being stepped out of line; a post
// handler sees the PC the instruction produced.
func TestSimulatedInstructions(t *testing.T) {
	k, kp := bootReady(t)
	s, _ := k.Kallsyms().LookupName("do_fork")
	kc, _ := k.Kallsyms().LookupName("kernel_clone")
	for off := uint64(0); off < s.Size; off += 4 {
		w := insnAt(t, k, s.Addr+off)
		if w&0xfc000000 != 0x94000000 { // bl
			continue
		}
		var postPC, lr uint64
		p := &kprobes.Kprobe{Symbol: "do_fork", Offset: off, PostHandler: func(_ *kprobes.Kprobe, r *kprobes.Regs) { postPC, lr = r.PC, r.X[30] }}
		if err := kp.Register(p); err != nil {
			t.Fatalf("do_fork+%#x (bl): %v", off, err)
		}
		if insnAt(t, k, s.Addr+off) != brkKprobes {
			t.Fatal("bl not armed")
		}
		forks := counter(t, k, "nr_forks")
		runIterations(t, k, 20)
		if p.Hits() == 0 || counter(t, k, "nr_forks") == forks {
			t.Fatalf("hits %d, forks %d -> %d", p.Hits(), forks, counter(t, k, "nr_forks"))
		}
		target := s.Addr + off + uint64(int64(int32(w<<6))>>4)
		if postPC != target || lr != s.Addr+off+4 {
			t.Errorf("after bl: pc %#x lr %#x, want pc %#x (kernel_clone at %#x) lr %#x", postPC, lr, target, kc.Addr, s.Addr+off+4)
		}
		return
	}
	t.Fatal("do_fork has no bl")
}

func TestGlobalDisarmKeepsDisabledState(t *testing.T) {
	k, kp := boot(t)
	read, write := symAddr(t, k, "vfs_read"), symAddr(t, k, "vfs_write")
	origWrite := insnAt(t, k, write)
	a := &kprobes.Kprobe{Symbol: "vfs_read"}
	b := &kprobes.Kprobe{Symbol: "vfs_write", Disabled: true}
	for _, p := range []*kprobes.Kprobe{a, b} {
		if err := kp.Register(p); err != nil {
			t.Fatal(err)
		}
	}
	if insnAt(t, k, write) != origWrite {
		t.Fatal("a disabled probe was armed")
	}
	if err := kp.DisarmAll(); err != nil {
		t.Fatal(err)
	}
	if insnAt(t, k, read) == brkKprobes || kp.Armed() {
		t.Fatal("DisarmAll left vfs_read armed")
	}
	h := a.Hits()
	runIterations(t, k, 10)
	if a.Hits() != h {
		t.Errorf("hits while disarmed: %d -> %d", h, a.Hits())
	}
	// Enabling while globally disarmed clears DISABLED but does not arm.
	if err := kp.Enable(b); err != nil {
		t.Fatal(err)
	}
	if insnAt(t, k, write) != origWrite {
		t.Error("enable armed a probe while globally disarmed")
	}
	if err := kp.ArmAll(); err != nil {
		t.Fatal(err)
	}
	if insnAt(t, k, read) != brkKprobes || insnAt(t, k, write) != brkKprobes {
		t.Error("ArmAll did not re-arm both")
	}
	if err := kp.Disable(a); err != nil {
		t.Fatal(err)
	}
	if err := kp.DisarmAll(); err != nil {
		t.Fatal(err)
	}
	if err := kp.ArmAll(); err != nil {
		t.Fatal(err)
	}
	if insnAt(t, k, read) == brkKprobes {
		t.Error("ArmAll armed a disabled probe")
	}
	for _, e := range kp.List() {
		if e.Symbol == "vfs_read" && !e.Disabled {
			t.Error("vfs_read lost its [DISABLED] mark")
		}
	}
}

func TestAggregateProbes(t *testing.T) {
	k, kp := boot(t)
	addr := symAddr(t, k, "do_fork")
	var order []string
	mk := func(name string) *kprobes.Kprobe {
		return &kprobes.Kprobe{Symbol: "do_fork", PreHandler: func(*kprobes.Kprobe, *kprobes.Regs) bool {
			order = append(order, name)
			return false
		}}
	}
	first, second := mk("first"), mk("second")
	for _, p := range []*kprobes.Kprobe{first, second} {
		if err := kp.Register(p); err != nil {
			t.Fatal(err)
		}
	}
	l := kp.List()
	if len(l) != 2 || l[0].Addr != addr || l[1].Addr != addr {
		t.Fatalf("list = %v", l)
	}
	// kprobes/list shows a point's probes newest first, as Linux's
	// list_add_rcu leaves them.
	third := &kprobes.Kprobe{Symbol: "do_fork", Disabled: true}
	if err := kp.Register(third); err != nil {
		t.Fatal(err)
	}
	if l := kp.List(); len(l) != 3 || !l[0].Disabled || l[1].Disabled || l[2].Disabled {
		t.Fatalf("list = %v, want the disabled newest first", l)
	}
	kp.Unregister(third)
	runIterations(t, k, 5)
	if len(order) < 2 || order[0] != "second" || order[1] != "first" {
		t.Fatalf("handler order %v, want newest first", order[:min(len(order), 4)])
	}
	kp.Unregister(second)
	if insnAt(t, k, addr) != brkKprobes {
		t.Fatal("unregistering one of two probes disarmed the address")
	}
	n := first.Hits()
	runIterations(t, k, 5)
	if first.Hits() == n {
		t.Error("remaining probe stopped hitting")
	}
}

// runToIteration steps the guest one instruction at a time over the end
// so that it stops right after the store that makes workload_iterations n:
// two runs stopped there have done exactly the same guest work.
func runToIteration(t testing.TB, k *kernel.Kernel, n uint64) {
	t.Helper()
	for counter(t, k, "workload_iterations") < n-1 {
		if err := k.Machine().Step(200); err != nil {
			t.Fatal(err)
		}
	}
	for counter(t, k, "workload_iterations") < n {
		if err := k.Machine().Step(1); err != nil {
			t.Fatal(err)
		}
	}
}

// workloadResults are the guest counters that depend only on the
// workload thread's own iterations (init/workload.c): a digest of every
// byte it read and of its reads' and writes' results, its successful
// forks, and the TCP segments it fed. Everything else (user processes,
// the cron threads, the scheduler, pids) legitimately differs between a
// probed and an unprobed run, because the tick counts retired instructions
// and a probe's handlers add to them, so preemption falls elsewhere.
var workloadResults = []string{"workload_digest", "workload_forks", "nr_tcp_rcv", "nr_tcp_csum_bad"}

// sameResults fails t unless k and ref computed the same workload
// results.
func sameResults(t testing.TB, k, ref *kernel.Kernel, how string) {
	t.Helper()
	for _, c := range workloadResults {
		if got, want := counter(t, k, c), counter(t, ref, c); got != want {
			t.Errorf("%s = %#x %s, %#x unprobed", c, got, how, want)
		}
	}
}

// Probing every steppable instruction of the workload's hot functions
// must not change what the guest computes.
func TestSteppingPreservesSemantics(t *testing.T) {
	const iterations = 60
	ref, _ := boot(t)
	runToIteration(t, ref, iterations)

	k, kp := boot(t)
	probed, refused := 0, 0
	for _, fn := range []string{"vfs_read", "vfs_write", "tcp_v4_rcv", "kernel_clone", "copy_process", "do_fork", "ramfs_read", "ramfs_write"} {
		s, ok := k.Kallsyms().LookupName(fn)
		if !ok {
			t.Fatalf("no %s", fn)
		}
		for off := uint64(0); off < s.Size; off += 4 {
			p := &kprobes.Kprobe{Symbol: fn, Offset: off}
			switch err := kp.Register(p); {
			case err == nil:
				probed++
			case errors.Is(err, syscall.EINVAL):
				refused++
			default:
				t.Fatalf("%s+%#x: %v", fn, off, err)
			}
		}
	}
	t.Logf("%d instructions probed, %d refused", probed, refused)
	if probed < 100 {
		t.Fatalf("only %d instructions probed", probed)
	}
	runToIteration(t, k, iterations)
	if msg, ok := k.Panicked(); ok {
		t.Fatal(msg)
	}
	sameResults(t, k, ref, "probed")
}

// TestJumpLabelSiteRefused checks check_kprobe_address_safe's
// jump_label_text_reserved: a kprobe on a tracepoint's static-branch
// site is EINVAL, as on Linux, for the key's flips would write under its
// BRK.
func TestJumpLabelSiteRefused(t *testing.T) {
	k, kp := boot(t)
	tp, ok := k.Tracepoint("sched_process_fork")
	if !ok {
		t.Fatal("no sched_process_fork tracepoint")
	}
	site, ok := k.TracepointSite(tp)
	if !ok {
		t.Fatal("sched_process_fork has no site")
	}
	err := kp.Register(&kprobes.Kprobe{Addr: site})
	if !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("Register at the site %#x: %v, want EINVAL", site, err)
	}
}
