package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/shadow"
	"github.com/kpemu/kpemu/tracing"
)

func newShadowExecCmd() *cobra.Command {
	var socket string
	var sealOnly bool
	cmd := &cobra.Command{
		Use:   "shadow-exec --socket PATH -- CMD [ARG...]",
		Short: "Run CMD with its forks, opens, symlinks, mkdirs and unlinks replayed by the guest",
		Long: `Have "kpemu run --shadow-socket PATH" trace this process (ptrace), install
a seccomp filter that stops every fork, open, symlink, mkdir, unlink and
rmdir of CMD and its descendants for that tracer, and exec CMD. The guest
replays each of those calls before the host makes it, so its probes see
what the host's processes do. If kpemu goes away, those calls fail with
ENOSYS. CMD and its descendants cannot be traced by strace or gdb.
With --seal-only the guest replays nothing: CMD is only sealed (run's
--seal), and only its opens, mounts and statfs calls stop for the tracer.
scripts/kpemu-ns.sh runs it for you (see docs/linux-scripts.md).`,
		Example: `  kpemu run --mount /tmp/dbg --shadow-socket /tmp/kpemu.sock &
  kpemu shadow-exec --socket /tmp/kpemu.sock -- sh -c 'cat /etc/hostname'`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if socket == "" {
				return errors.New("--socket is required")
			}
			// Before Install, which makes this thread's filtered syscalls
			// wait for the supervisor.
			path, err := exec.LookPath(args[0])
			if err != nil {
				return err
			}
			env := os.Environ()
			mode := shadow.ModeShadow
			if sealOnly {
				mode = shadow.ModeSeal
			}
			if err := shadow.AttachMode(socket, mode); err != nil {
				return err
			}
			if err := shadow.InstallMode(mode); err != nil {
				return err
			}
			// From the goroutine Install locked to the filtered thread.
			return fmt.Errorf("exec %s: %w", path, syscall.Exec(path, args, env))
		},
	}
	cmd.Flags().StringVar(&socket, "socket", "", "the unix socket of kpemu run --shadow-socket")
	cmd.Flags().BoolVar(&sealOnly, "seal-only", false, "replay nothing in the guest: only seal CMD (kpemu run --seal)")
	// CMD's own flags are its arguments, with or without "--".
	cmd.Flags().SetInterspersed(false)
	return cmd
}

// startShadow serves --shadow-socket once the guest is ready to replay,
// until ctx ends; done is closed when the socket is gone.
// seal, if not nil, seals the traced processes.
func startShadow(ctx context.Context, k *kernel.Kernel, socket string, seal *shadow.Seal, log *slog.Logger) (done <-chan struct{}) {
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		select {
		case <-k.Ready():
		case <-ctx.Done():
			return
		}
		sup := &shadow.Supervisor{
			Replay: func(ctx context.Context, r shadow.Request) error { return k.Shadow(ctx, shadowRequest(r)) },
			Log:    log,
			Seal:   seal,
		}
		err := sup.Listen(ctx, socket)
		if err != nil && !errors.Is(err, context.Canceled) {
			log.Error("--shadow-socket", "err", err)
		}
	}()
	return ch
}

// hostPIDMax is this host's pid_max, the pids its processes take, which
// the guest leaves to their twins when it shadows them; 0 (the guest
// shares its pids with the host's, and a twin may find its pid taken)
// if it cannot be read.
func hostPIDMax(log *slog.Logger) uint32 {
	const file = "/proc/sys/kernel/pid_max"
	b, err := os.ReadFile(file)
	if err == nil {
		var v uint64
		if v, err = strconv.ParseUint(strings.TrimSpace(string(b)), 10, 32); err == nil {
			return uint32(v)
		}
	}
	log.Warn("--shadow-socket: the guest's own pids may take a host process's", "err", err)
	return 0
}

// shadowRequest is r as the guest's replayer takes it.
func shadowRequest(r shadow.Request) kernel.ShadowRequest {
	kr := kernel.ShadowRequest{PID: int32(r.PID), Child: int32(r.Child), Comm: r.Comm, Path: r.Path, Target: r.Target, Mode: r.Mode}
	switch r.Op {
	case shadow.Fork:
		kr.Op = kernel.ShadowFork
	case shadow.Adopt:
		kr.Op = kernel.ShadowAdopt
	case shadow.Exit:
		kr.Op, kr.Flags = kernel.ShadowExit, r.Flags
	case shadow.Open:
		kr.Op, kr.Flags = kernel.ShadowOpen, r.Flags
	case shadow.Symlink:
		kr.Op = kernel.ShadowSymlink
	case shadow.Mkdir:
		kr.Op = kernel.ShadowMkdir
	case shadow.Unlink:
		kr.Op, kr.Flags = kernel.ShadowUnlink, r.Flags
	case shadow.Kill:
		kr.Op, kr.Flags = kernel.ShadowKill, r.Flags
	}
	return kr
}

// perfEventFile is the debugfs file whose opens are the perf counters
// that the seal serves.
const perfEventFile = "kpemu/perf_event"

// perfCounters serves the seal's perf counters with tracing's.
type perfCounters struct {
	tr   *tracing.Tracing
	path string // perfEventFile in the mount
}

func (p perfCounters) PreparePerf(tid int, a shadow.PerfAttr) (string, syscall.Errno) {
	return p.path, p.tr.PreparePerf(tid, perfAttr(a))
}

func (p perfCounters) CheckSample(a shadow.SampleAttr) syscall.Errno {
	return p.tr.CheckSample(sampleAttr(a))
}

func (p perfCounters) SamplePerf(a shadow.SampleAttr, ring *os.File, tgid int) (shadow.PerfSampler, syscall.Errno) {
	s, errno := p.tr.OpenSample(sampleAttr(a), ring, tgid)
	if errno != 0 {
		return nil, errno
	}
	return perfSampler{s}, 0
}

func perfAttr(a shadow.PerfAttr) tracing.PerfAttr {
	return tracing.PerfAttr{
		Config: a.Config, ReadFormat: a.ReadFormat,
		Disabled: a.Disabled, Inherit: a.Inherit, EnableOnExec: a.EnableOnExec,
		PID: a.PID, CPU: a.CPU,
	}
}

func sampleAttr(a shadow.SampleAttr) tracing.SampleAttr {
	return tracing.SampleAttr{PerfAttr: perfAttr(a.PerfAttr), SampleType: a.SampleType, SamplePeriod: a.SamplePeriod,
		SampleIDAll: a.SampleIDAll, Comm: a.Comm, Dummy: a.Dummy}
}

// perfSampler is a tracing.PerfSampler as the seal takes it.
type perfSampler struct{ *tracing.PerfSampler }

func (s perfSampler) SetOutput(to shadow.PerfSampler) syscall.Errno {
	if to == nil {
		return s.PerfSampler.SetOutput(nil)
	}
	return s.PerfSampler.SetOutput(to.(perfSampler).PerfSampler)
}
