package kernel_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kpemu/kpemu/kernel"
)

// arm64 system call numbers (include/uapi/asm-generic/unistd.h) that the
// user programs in kernel/image/usr make.
const (
	nrOpenat     = 56
	nrClose      = 57
	nrGetdents64 = 61
	nrRead       = 63
	nrWrite      = 64
	nrExitGroup  = 94
	nrNanosleep  = 101
	nrGetppid    = 173
	nrBrk        = 214
	nrMunmap     = 215
	nrClone      = 220
	nrExecve     = 221
	nrMmap       = 222
	nrWait4      = 260
	nrSymlinkat  = 36
	nrUnlinkat   = 35
	nrSyscalls   = 451 // __NR_syscalls, the length of syscall_counts
)

// syscallCounts reads the guest's u64 syscall_counts[__NR_syscalls].
func syscallCounts(t testing.TB, k *kernel.Kernel) []uint64 {
	t.Helper()
	s, ok := k.Kallsyms().LookupName("syscall_counts")
	if !ok {
		t.Fatal("no symbol syscall_counts")
	}
	counts := make([]uint64, nrSyscalls)
	for i := range counts {
		v, err := k.ReadU64(s.Addr + 8*uint64(i))
		if err != nil {
			t.Fatal(err)
		}
		counts[i] = v
	}
	return counts
}

// userSnapshot is what user space did; two deterministic runs of the same
// length must produce equal ones.
type userSnapshot struct {
	syscalls                      []uint64
	execs, exits, faults, segv    uint64
	iterations, vfsRead, vfsWrite uint64
	forks                         uint64
}

func userSnap(t testing.TB, k *kernel.Kernel) userSnapshot {
	t.Helper()
	return userSnapshot{
		syscalls:   syscallCounts(t, k),
		execs:      symU64(t, k, "nr_execs"),
		exits:      symU64(t, k, "nr_exits"),
		faults:     symU64(t, k, "nr_page_faults"),
		segv:       symU64(t, k, "nr_segv_kills"),
		iterations: symU64(t, k, "workload_iterations"),
		vfsRead:    symU64(t, k, "nr_vfs_read"),
		vfsWrite:   symU64(t, k, "nr_vfs_write"),
		forks:      symU64(t, k, "nr_forks"),
	}
}

// runUser boots on ncpu vCPUs and steps until sh has run cat a few times
// (execve counts: init, sh, cron, segv, then one per cat).
func runUser(t *testing.T, ncpu int) (*kernel.Kernel, *syncBuffer, userSnapshot) {
	t.Helper()
	con := &syncBuffer{}
	k, err := kernel.Boot(kernel.Config{NumCPUs: ncpu, Console: con, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	const chunk = 1_000_000
	for steps := uint64(0); ; steps += chunk {
		if err := k.Machine().Step(chunk); err != nil {
			t.Fatal(err)
		}
		if msg, ok := k.Panicked(); ok {
			t.Fatalf("guest panicked: %s\n%s", msg, con.String())
		}
		s := userSnap(t, k)
		if s.execs >= 12 && s.syscalls[nrGetdents64] > 0 && s.syscalls[nrMunmap] > 0 {
			return k, con, s
		}
		if steps > 600_000_000 {
			t.Fatalf("user space stuck after %d instructions: %+v\n%s", steps, s, con.String())
		}
	}
}

// User programs run at EL0 on 1 and 2 vCPUs: init execs sh and cron, sh
// forks and execs cat, and every system call they use goes through
// el0_svc -> invoke_syscall and is counted by number; demand paging maps
// pages; /bin/segv dies of SIGSEGV without a kernel panic (its read(2),
// write(2), getdents64(2) and wait4(2) with unmapped buffers must first
// fail with EFAULT, through the exception table, wait4 still reaping the
// child, and a read(2) and write(2) running off its only page must be
// short, or it exits 1 and is not counted); the kernel's
// own workload keeps iterating alongside.
func TestUserSpace(t *testing.T) {
	for _, ncpu := range []int{1, 2} {
		t.Run(fmt.Sprintf("%dcpu", ncpu), func(t *testing.T) {
			k, con, s := runUser(t, ncpu)
			for _, nr := range []int{nrOpenat, nrClose, nrGetdents64, nrRead, nrWrite, nrExitGroup,
				nrNanosleep, nrGetppid, nrBrk, nrMunmap, nrClone, nrExecve, nrMmap, nrWait4, nrSymlinkat, nrUnlinkat} {
				if s.syscalls[nr] == 0 {
					t.Errorf("system call %d never made", nr)
				}
			}
			if s.syscalls[nrExecve] > s.execs || s.syscalls[nrClone] == 0 || s.exits == 0 {
				t.Errorf("execve calls %d, execs %d, clones %d, exits %d",
					s.syscalls[nrExecve], s.execs, s.syscalls[nrClone], s.exits)
			}
			if s.faults == 0 {
				t.Error("no page faults handled")
			}
			if s.segv != 1 {
				t.Errorf("nr_segv_kills = %d, want 1", s.segv)
			}
			out := con.String()
			if !strings.Contains(out, "segv[") || !strings.Contains(out, "unhandled level 2 translation fault (11) at 0x0000000030000000") {
				t.Errorf("console lacks the SIGSEGV report:\n%s", out)
			}
			if strings.Contains(out, "init: ") {
				t.Errorf("init complained:\n%s", out)
			}
			// sh cats each file through the symlink /tmp/cur: a failed
			// cat (the link not followed, say) is reported on the console
			if strings.Contains(out, "cat /") {
				t.Errorf("a cat through /tmp/cur failed:\n%s", out)
			}
			if s.iterations == 0 {
				t.Error("the kernel workload did not run")
			}
			// The workload keeps iterating with user space running.
			before := s.iterations
			if err := k.Machine().Step(5_000_000); err != nil {
				t.Fatal(err)
			}
			if after := symU64(t, k, "workload_iterations"); after <= before {
				t.Errorf("workload_iterations stuck at %d", after)
			}
			var total uint64
			for _, n := range s.syscalls {
				total += n
			}
			t.Logf("%d syscalls (read %d write %d openat %d clone %d execve %d wait4 %d), %d execs, %d exits, %d page faults, %d workload iterations",
				total, s.syscalls[nrRead], s.syscalls[nrWrite], s.syscalls[nrOpenat], s.syscalls[nrClone],
				s.syscalls[nrExecve], s.syscalls[nrWait4], s.execs, s.exits, s.faults, s.iterations)
		})
	}
}

// Deterministic mode: two runs of the same length make the same system
// calls, page faults and workload progress.
func TestUserSpaceDeterministic(t *testing.T) {
	for _, ncpu := range []int{1, 2} {
		t.Run(fmt.Sprintf("%dcpu", ncpu), func(t *testing.T) {
			run := func() userSnapshot {
				k, err := kernel.Boot(kernel.Config{NumCPUs: ncpu, Logger: quiet()})
				if err != nil {
					t.Fatal(err)
				}
				if err := k.Machine().Step(40_000_000); err != nil {
					t.Fatal(err)
				}
				if msg, ok := k.Panicked(); ok {
					t.Fatalf("guest panicked: %s", msg)
				}
				return userSnap(t, k)
			}
			a, b := run(), run()
			if fmt.Sprint(a) != fmt.Sprint(b) {
				t.Fatalf("runs differ:\n%+v\n%+v", a, b)
			}
			if a.execs < 4 {
				t.Errorf("only %d execs in the run", a.execs)
			}
		})
	}
}

// nanosleep(2) ends when asked, not at the next tick (hrtimers): /bin/lockd
// sleeps 500 us between rounds of symlinkat/openat/unlinkat, so it makes
// far more than HZ (250) symlinks per second of guest time, which a sleep
// rounded up to a jiffy could not.
func TestNanosleepHighResolution(t *testing.T) {
	k, err := kernel.Boot(kernel.Config{NumCPUs: 2, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	stepUntilReady(t, k)
	if err := k.Machine().Step(30_000_000); err != nil { // lockd is running
		t.Fatal(err)
	}
	n0, t0 := syscallCounts(t, k)[nrSymlinkat], k.Uptime()
	if err := k.Machine().Step(60_000_000); err != nil {
		t.Fatal(err)
	}
	n, dt := syscallCounts(t, k)[nrSymlinkat]-n0, k.Uptime()-t0
	rate := float64(n) / dt.Seconds()
	t.Logf("%d symlinkat calls in %v of guest time: %.0f/s", n, dt, rate)
	// A sleep rounded up to a jiffy allows at most HZ rounds a second;
	// twice that tells the two apart. (The rate itself, 800 to 1,200,
	// moves with how the guest's scheduler interleaves lockd with the
	// busy workload thread, which any change to kernel code shifts.)
	if rate < 2*250 {
		t.Errorf("%.0f symlinkat calls per guest second: lockd's 500 us sleeps are not honoured", rate)
	}
}
