package kernel_test

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/machine"
)

// syncBuffer is a console that the test reads while the guest writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// perCPU reads element cpu of a u64[NR_CPUS] guest array.
func perCPU(t *testing.T, k *kernel.Kernel, sym string, cpu int) uint64 {
	t.Helper()
	s, ok := k.Kallsyms().LookupName(sym)
	if !ok {
		t.Fatalf("no symbol %s", sym)
	}
	v, err := k.ReadU64(s.Addr + 8*uint64(cpu))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func symU64(t testing.TB, k *kernel.Kernel, sym string) uint64 {
	t.Helper()
	v, err := k.ReadSymbolU64(sym)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// smpSnapshot is what a run did, per CPU and in total: two deterministic
// runs of the same length must produce equal snapshots.
type smpSnapshot struct {
	retired, ticks, busy, switches []uint64
	iterations, forks, cron        uint64
}

func snapshot(t *testing.T, k *kernel.Kernel) smpSnapshot {
	t.Helper()
	var s smpSnapshot
	for i := 0; i < k.Machine().NumCPUs(); i++ {
		s.retired = append(s.retired, k.Machine().CPU(i).Retired())
		s.ticks = append(s.ticks, perCPU(t, k, "sched_ticks", i))
		s.busy = append(s.busy, perCPU(t, k, "sched_busy_ticks", i))
		s.switches = append(s.switches, perCPU(t, k, "nr_context_switches", i))
	}
	s.iterations = symU64(t, k, "workload_iterations")
	s.forks = symU64(t, k, "nr_forks")
	for i := 0; i < 4; i++ {
		s.cron += perCPU(t, k, "cron_wakeups", i)
	}
	return s
}

// bootSMP boots ncpu vCPUs and steps the guest until every CPU has run
// tasks (context switches between its idle task and others) and the
// workload is steady. Busy ticks are only logged: the short-lived tasks of
// the secondaries are rarely running when their tick falls.
func bootSMP(t *testing.T, ncpu int) (*kernel.Kernel, *syncBuffer, uint64) {
	t.Helper()
	con := &syncBuffer{}
	k, err := kernel.Boot(kernel.Config{NumCPUs: ncpu, Console: con, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	const chunk = 100000
	var steps uint64
	for {
		if err := k.Machine().Step(chunk); err != nil {
			t.Fatal(err)
		}
		steps += chunk
		if msg, ok := k.Panicked(); ok {
			t.Fatalf("guest panicked: %s\n%s", msg, con.String())
		}
		s := snapshot(t, k)
		done := s.iterations >= 300 && s.cron >= 8
		for i := 0; i < ncpu; i++ {
			done = done && s.retired[i] > 0 && s.switches[i] > 1
		}
		if done {
			return k, con, steps
		}
		if steps > 400_000_000 {
			t.Fatalf("no steady workload on %d CPUs after %d instructions: %+v\n%s", ncpu, steps, s, con.String())
		}
	}
}

// The workload reaches a steady state on 1, 2 and 4 vCPUs: every CPU is
// brought up, takes ticks, and switches between tasks; pid 1 iterates,
// forks, and the cron threads wake from msleep().
func TestSMPBootsToSteadyWorkload(t *testing.T) {
	for _, ncpu := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("%dcpu", ncpu), func(t *testing.T) {
			k, con, steps := bootSMP(t, ncpu)
			want := fmt.Sprintf("smp: Brought up 1 node, %d CPU", ncpu)
			if !strings.Contains(con.String(), want) {
				t.Errorf("console lacks %q:\n%s", want, con.String())
			}
			s := snapshot(t, k)
			for i := 0; i < ncpu; i++ {
				if s.retired[i] == 0 || s.ticks[i] == 0 {
					t.Errorf("CPU%d: retired %d, ticks %d", i, s.retired[i], s.ticks[i])
				}
			}
			if s.forks == 0 {
				t.Error("no forks")
			}
			checkTTBR1(t, k)
			t.Logf("%d instructions: %+v", steps, s)
			var sw uint64
			for _, n := range s.switches {
				sw += n
			}
			t.Logf("%.0f guest instructions per context switch", float64(steps)/float64(sw))
		})
	}
}

// Deterministic mode: two runs of the same length on the same number of
// vCPUs interleave identically, ticks and preemptions included.
func TestSMPDeterministic(t *testing.T) {
	tests := []struct {
		ncpu  int
		steps uint64
	}{
		{1, 20_000_000},
		{2, 20_000_000},
		{4, 20_000_000},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%dcpu", tt.ncpu), func(t *testing.T) {
			run := func() smpSnapshot {
				k, err := kernel.Boot(kernel.Config{NumCPUs: tt.ncpu, Logger: quiet()})
				if err != nil {
					t.Fatal(err)
				}
				if err := k.Machine().Step(tt.steps); err != nil {
					t.Fatal(err)
				}
				if msg, ok := k.Panicked(); ok {
					t.Fatalf("guest panicked: %s", msg)
				}
				return snapshot(t, k)
			}
			a, b := run(), run()
			if fmt.Sprint(a) != fmt.Sprint(b) {
				t.Fatalf("runs differ:\n%+v\n%+v", a, b)
			}
			for i, n := range a.retired {
				if n == 0 {
					t.Errorf("CPU%d retired nothing", i)
				}
			}
		})
	}
}

// The task a CPU runs is its SP_EL0 (current), or __entry_task[cpu] at
// EL0: the kernel's workload thread "kworkload", pid 1 "init", sh, cat,
// cron threads or an idle task, on both CPUs.
func TestCurrentIsPerCPU(t *testing.T) {
	k, _, _ := bootSMP(t, 2)
	seen := map[string]bool{}
	for i := 0; i < 400; i++ {
		if err := k.Machine().Step(7919); err != nil {
			t.Fatal(err)
		}
		for cpu := 0; cpu < 2; cpu++ {
			comm, pid := k.Current(cpu)
			seen[fmt.Sprintf("%d:%s-%d", cpu, comm, pid)] = true
		}
	}
	var kworkload bool
	for s := range seen {
		kworkload = kworkload || strings.Contains(s, ":kworkload-")
	}
	if !kworkload {
		t.Errorf("never saw kworkload: %v", seen)
	}
	var cpu1 bool
	for s := range seen {
		cpu1 = cpu1 || strings.HasPrefix(s, "1:")
	}
	if !cpu1 {
		t.Errorf("nothing on CPU1: %v", seen)
	}
	t.Logf("seen %v", seen)
}

// checkTTBR1 checks that every CPU runs the kernel as Linux arm64 does: the
// 48-bit TTBR1 half holds swapper_pg_dir, kernel objects (the current task)
// are kernel VAs in the image or the linear map, and TTBR0 holds either a
// process's tables or the empty reserved_pg_dir, never the boot idmap.
func checkTTBR1(t *testing.T, k *kernel.Kernel) {
	t.Helper()
	pa := func(sym string) uint64 {
		s, ok := k.Kallsyms().LookupName(sym)
		if !ok {
			t.Fatalf("no %s", sym)
		}
		p, err := k.Phys(s.Addr, 4096)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	swapper, idmap := pa("swapper_pg_dir"), pa("init_idmap_pg_dir")
	if s, _ := k.Kallsyms().LookupName("_text"); s.Addr != kernel.KimageVaddr {
		t.Errorf("_text at %#x, want KIMAGE_VADDR %#x", s.Addr, uint64(kernel.KimageVaddr))
	}
	m := k.Machine()
	for i := 0; i < m.NumCPUs(); i++ {
		c := m.CPU(i)
		if got := c.SysReg(machine.TTBR1_EL1) &^ (0xffff << 48); got != swapper {
			t.Errorf("CPU%d: TTBR1_EL1 = %#x, want swapper_pg_dir at %#x", i, got, swapper)
		}
		if t1sz := c.SysReg(machine.TCR_EL1) >> 16 & 0x3f; t1sz != 64-kernel.VABits {
			t.Errorf("CPU%d: TCR_EL1.T1SZ = %d, want %d", i, t1sz, 64-kernel.VABits)
		}
		if c.SysReg(machine.TTBR0_EL1)&^(0xffff<<48) == idmap {
			t.Errorf("CPU%d still runs on the boot idmap", i)
		}
		task := k.CurrentTask(i)
		if _, err := k.Phys(task, 8); err != nil || task < kernel.PageOffset {
			t.Errorf("CPU%d: current task at %#x is not a kernel VA: %v", i, task, err)
		}
	}
}
