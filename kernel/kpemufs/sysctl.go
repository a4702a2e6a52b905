package kpemufs

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/kpemu/kpemu/debugfs"
)

// SysctlDir is where the guest's /proc/sys/kernel entries that tracing
// tools read and write live in the tree: scripts/kpemu-ns.sh binds each
// file of it over the host's /proc/sys/kernel/NAME, so that a tool run
// there (trace-cmd, perf, ftracetest) changes the guest's value and never
// the host kernel's.
const SysctlDir = "kpemu/sys/kernel"

// sysctlInt is one int sysctl as Linux's proc_dointvec family handles it.
type sysctlInt struct {
	name string
	def  int
	// check is the handler's validation beyond proc_dointvec's parse
	// (proc_dointvec_minmax's range, sched_rt_handler's): it returns
	// Linux's errno, and the value is then not stored.
	check func(v int, s *sysctls) error
	// act, if not nil, is what kpemu does on a new value (after check);
	// its error fails the write and the value is not stored.
	act func(old, v int, s *sysctls) error
}

// sysctls holds the values; one lock, as they are read and written rarely
// and sched_rt_runtime_us is checked against sched_rt_period_us.
type sysctls struct {
	mu  sync.Mutex
	val map[string]int
	// ftraceEnabled turns the kernel's function tracing on or off (nil:
	// the value is only kept).
	ftraceEnabled func(on bool) error
}

// minmax is proc_dointvec_minmax's range check.
func minmax(lo, hi int) func(int, *sysctls) error {
	return func(v int, _ *sysctls) error {
		if v < lo || v > hi {
			return syscall.EINVAL
		}
		return nil
	}
}

// kernelSysctls are Linux 6.1's defaults (defconfig, as the guest's build)
// and checks. kpemu acts on ftrace_enabled as Linux does and keeps the
// others; kpemu-ns.sh serves them so that what a tool writes stays in the
// guest. stack_tracer_enabled is the tracing package's file.
func kernelSysctls() []sysctlInt {
	return []sysctlInt{
		// ftrace_enable_sysctl: any int; turning it to zero or non-zero
		// stops or restarts function tracing.
		{name: "ftrace_enabled", def: 1, act: func(old, v int, s *sysctls) error {
			if (old != 0) == (v != 0) || s.ftraceEnabled == nil {
				return nil
			}
			return s.ftraceEnabled(v != 0)
		}},
		{name: "ftrace_dump_on_oops", def: 0},
		{name: "traceoff_on_warning", def: 0},
		{name: "tracepoint_printk", def: 0},
		{name: "kptr_restrict", def: 0, check: minmax(0, 2)},
		{name: "perf_event_paranoid", def: 2},
		// sched_rt_handler: the period must be positive, the runtime -1
		// (RUNTIME_INF) or at most the period.
		{name: "sched_rt_period_us", def: 1000000, check: func(v int, s *sysctls) error {
			if v <= 0 {
				return syscall.EINVAL
			}
			if rt := s.val["sched_rt_runtime_us"]; rt != -1 && rt > v {
				return syscall.EINVAL
			}
			return nil
		}},
		{name: "sched_rt_runtime_us", def: 950000, check: func(v int, s *sysctls) error {
			if v != -1 && (v < 0 || v > s.val["sched_rt_period_us"]) {
				return syscall.EINVAL
			}
			return nil
		}},
	}
}

// registerSysctls creates SysctlDir's files, each with Linux's default;
// ftraceEnabled (nil: none) is what the ftrace_enabled file turns.
func registerSysctls(tree *debugfs.Tree, ftraceEnabled func(on bool) error) error {
	dir, err := tree.MkdirAll(SysctlDir, 0o555)
	if err != nil {
		return fmt.Errorf("creating %s: %w", SysctlDir, err)
	}
	all := kernelSysctls()
	s := &sysctls{val: make(map[string]int, len(all)), ftraceEnabled: ftraceEnabled}
	for _, c := range all {
		s.val[c.name] = c.def
	}
	for _, c := range all {
		ops := debugfs.FileOps{
			Show: func(_ context.Context, w *bytes.Buffer) error {
				s.mu.Lock()
				defer s.mu.Unlock()
				fmt.Fprintf(w, "%d\n", s.val[c.name])
				return nil
			},
			Write: func(_ context.Context, p []byte, _ int64) (int, error) {
				v, err := ParseProcInt(p)
				if err != nil {
					return 0, err
				}
				s.mu.Lock()
				defer s.mu.Unlock()
				if c.check != nil {
					if err := c.check(v, s); err != nil {
						return 0, err
					}
				}
				if c.act != nil {
					if err := c.act(s.val[c.name], v, s); err != nil {
						return 0, err
					}
				}
				s.val[c.name] = v
				return len(p), nil
			},
		}
		if _, err := dir.CreateFile(c.name, 0o644, ops); err != nil {
			return fmt.Errorf("creating %s/%s: %w", SysctlDir, c.name, err)
		}
	}
	return nil
}

// ParseProcInt parses a write to an int sysctl as proc_dointvec does:
// leading blanks, an optional '-', a number in C's base 0 (0x hex, 0
// octal), which must fit an int and be followed by a blank or the end.
// Anything else, or nothing, is EINVAL.
func ParseProcInt(p []byte) (int, error) {
	s := strings.TrimLeft(string(p), " \t\n")
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	end := strings.IndexAny(s, " \t\n")
	if end < 0 {
		end = len(s)
	}
	num := s[:end]
	if num == "" || num[0] == '+' || num[0] == '-' {
		return 0, syscall.EINVAL
	}
	u, err := strconv.ParseUint(num, 0, 64)
	if err != nil || strings.Contains(num, "_") || strings.HasPrefix(num, "0b") || strings.HasPrefix(num, "0o") {
		return 0, syscall.EINVAL
	}
	v := int64(u)
	if neg {
		v = -v
	}
	if u > math.MaxInt32+1 || v > math.MaxInt32 || v < math.MinInt32 {
		return 0, syscall.EINVAL
	}
	return int(v), nil
}
