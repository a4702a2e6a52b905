package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/kpemu/kpemu/debugfs"
	"github.com/kpemu/kpemu/fuse"
	"github.com/kpemu/kpemu/gdbstub"
	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/kernel/kpemufs"
	"github.com/kpemu/kpemu/kprobes"
	"github.com/kpemu/kpemu/shadow"
	"github.com/kpemu/kpemu/tracing"
)

// tracingDir is where the tracing files sit in the debugfs tree, as
// /sys/kernel/debug/tracing; --tracefs mounts it alone.
const tracingDir = "tracing"

type runOptions struct {
	mount   string
	tracefs string
	probes  []string
	cpus    int
	ramMiB  uint64
	console string
	debug   bool
	unsafe  bool
	step    string
	par     bool
	interp  bool
	perfMap bool
	gdb     string
	modules []string
	shadow  string
	seal    string
}

func newRunCmd() *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Boot the emulated kernel and serve its debugfs at --mount",
		Long: `Boot the embedded AArch64 kernel image, register the --probe probes, and,
once the guest kernel is up (some tens of milliseconds), serve a debugfs
tree that reads and writes as Linux 6.1's /sys/kernel/debug (kprobes/list,
kprobes/enabled, kprobes/blacklist, tracing/kprobe_events, tracing/trace,
...) at --mount, and the tracing tree alone at --tracefs, until SIGINT or
SIGTERM. Then it logs each --probe's hits, unmounts and exits 0. The guest
console goes to the log (--console). A second run on a mount point that a
live kpemu serves is refused, naming its pid.

--probe takes SYM[+OFF], an address, or k:SYM[+OFF] for a kprobe,
j:SYM[:HANDLER] for a jprobe, r[MAXACTIVE]:SYM for a kretprobe; the same
probe twice makes an aggregate; MOD:SYM names a module's symbol and is
registered once --module has loaded MOD. "make run" runs this with
--mount /tmp/dbg --probe vfs_read --probe do_fork.`,
		Example: `  kpemu run --mount /tmp/dbg --probe vfs_read --probe do_fork
  kpemu run --mount /tmp/dbg --tracefs /tmp/tracefs --cpus 4 --parallel
  kpemu run --mount /tmp/dbg --module e1000ish --probe e1000ish:vnet_rx
  kpemu run --mount /tmp/dbg --probe r:vfs_read --probe j:do_fork:jdo_fork
  kpemu run --gdb :1234   # then: gdb-multiarch kernel/image/kpemu.elf -ex 'target remote :1234'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return run(cmd.Context(), o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.mount, "mount", "", "directory to mount the debugfs tree at (created if missing)")
	f.StringVar(&o.tracefs, "tracefs", "", "directory to mount the tracing tree alone at, as Linux's /sys/kernel/tracing (created if missing)")
	f.StringArrayVar(&o.probes, "probe", nil, "register a probe (repeatable): SYM[+OFF], ADDR or k:SYM[+OFF] (kprobe), j:SYM[:HANDLER] (jprobe), r[MAXACTIVE]:SYM (kretprobe)")
	f.IntVar(&o.cpus, "cpus", 2, "number of vCPUs (1 to 8)")
	f.Uint64Var(&o.ramMiB, "ram", 128, "guest RAM in MiB")
	f.StringVar(&o.console, "console", "log", `where the guest console goes: "log" (the host log), "-" (stdout) or a file`)
	f.BoolVar(&o.debug, "fuse-debug", false, "log every FUSE request")
	f.StringVar(&o.gdb, "gdb", "", "serve the GDB remote protocol at this TCP address (e.g. :1234); the guest runs until a debugger attaches")
	f.StringArrayVar(&o.modules, "module", nil, "load this module of the image once the kernel is ready (repeatable; see kpemu/modules); --probe MOD:SYM probes are registered after")
	f.StringVar(&o.shadow, "shadow-socket", "", "once the guest is ready, listen on this unix socket for kpemu shadow-exec processes and have the guest replay their forks, opens, symlinks, mkdirs and unlinks")
	f.StringVar(&o.seal, "seal", "", "with --shadow-socket: keep the shadow-exec processes on this kpemu's trees (their /proc/mounts shows them as tracefs and debugfs, a mount of either binds them); the directory (a private tmpfs) holds their rewritten mount tables")
	f.BoolVar(&o.par, "parallel", false, "run one host thread per vCPU (faster on several host cores, not deterministic)")
	f.BoolVar(&o.interp, "interpret", false, "interpret every guest instruction instead of translating blocks to host code (slower; the guest sees no difference)")
	f.BoolVar(&o.perfMap, "perf-map", false, "write /tmp/perf-PID.map, so that Linux perf names samples in translated code after the guest pc they run")
	f.StringVar(&o.step, "step", "brk", "how probed instructions are stepped out of line: brk (BRK #0x006 after the slot, Linux >= 5.10) or hw (the software step exception, Linux <= 5.9)")
	f.BoolVar(&o.unsafe, "unsafe-allow-blacklisted", false, "allow probes on blacklisted functions, to watch the recursion the blacklist prevents (the guest panics; kpemu stays up)")
	return cmd
}

func run(ctx context.Context, o runOptions) error {
	// The log's reader may go first: Ctrl-C on "kpemu run | tee log" ends
	// tee too, and kpemu's next log line then killed it with SIGPIPE,
	// before it unmounted, its readers cut off with ECONNABORTED. With
	// SIGPIPE notified, a write to a broken stdout or stderr fails with
	// EPIPE instead (os/signal), and children keep its default action.
	sigpipe := make(chan os.Signal, 1)
	signal.Notify(sigpipe, syscall.SIGPIPE)
	defer signal.Stop(sigpipe)
	log := slog.Default()
	console, closeConsole, err := consoleWriter(o.console, log)
	if err != nil {
		return err
	}
	defer closeConsole()

	var perfMap io.Writer
	if o.perfMap {
		f, err := os.Create(fmt.Sprintf("/tmp/perf-%d.map", os.Getpid()))
		if err != nil {
			return fmt.Errorf("--perf-map: %w", err)
		}
		defer f.Close()
		perfMap = f
	}
	var hostPIDs uint32
	if o.shadow != "" {
		hostPIDs = hostPIDMax(log)
	}
	k, err := kernel.Boot(kernel.Config{NumCPUs: o.cpus, RAMSize: o.ramMiB << 20, Console: console, Logger: log,
		Parallel: o.par, Interpret: o.interp, PerfMap: perfMap, HostPIDMax: hostPIDs})
	if err != nil {
		return fmt.Errorf("booting: %w", err)
	}
	kp, err := kprobes.New(k, log)
	if err != nil {
		return err
	}
	kp.SetAllowBlacklisted(o.unsafe)
	mode, err := kprobes.ParseStepMode(o.step)
	if err != nil {
		return fmt.Errorf("--step: %w", err)
	}
	kp.SetStepMode(mode)
	tree := debugfs.NewTree()
	if err := kp.RegisterFiles(tree); err != nil {
		return err
	}
	tr, err := tracing.New(kp, tree, tracingDir, k.Uptime, log)
	if err != nil {
		return err
	}
	if err := kpemufs.Register(tree, k); err != nil {
		return err
	}
	// Linux's /proc/sys/kernel/stack_tracer_enabled, among kpemu's
	// additions as kpemu/version stands for /proc/version.
	if _, err := tree.CreateFile("kpemu/stack_tracer_enabled", 0o644, tr.StackTracerEnabledOps()); err != nil {
		return fmt.Errorf("creating kpemu/stack_tracer_enabled: %w", err)
	}
	// The perf counters the seal serves (shadow.Seal.Perf).
	if _, err := tree.CreateFile(perfEventFile, 0o600, tr.PerfEventOps()); err != nil {
		return fmt.Errorf("creating %s: %w", perfEventFile, err)
	}
	probes := &registeredProbes{}
	var moduleSpecs []kprobes.Spec // MOD:SYM probes wait for --module
	for _, spec := range o.probes {
		s, err := kprobes.ParseSpec(spec)
		if err != nil {
			return fmt.Errorf("--probe: %w", err)
		}
		if strings.Contains(s.Symbol, ":") {
			moduleSpecs = append(moduleSpecs, s)
			continue
		}
		if err := probes.register(kp, s, log); err != nil {
			return fmt.Errorf("--probe: %w", err)
		}
	}

	// With --gdb the stub drives the machine instead of k.Run (below): it
	// lets the guest run until a debugger attaches. Listening before the
	// mount makes a busy port fail the command with nothing to undo.
	var gdbLn net.Listener
	if o.gdb != "" {
		gdbLn, err = net.Listen("tcp", o.gdb)
		if err != nil {
			return fmt.Errorf("--gdb: %w", err)
		}
		log.Info("gdb stub listening", "addr", gdbLn.Addr().String())
	}

	runErr := make(chan error, 1)
	go func() {
		if gdbLn != nil {
			runErr <- gdbstub.Serve(ctx, gdbLn, gdbstub.NewMachineTarget(k.Machine()), gdbstub.Config{Logger: log})
			return
		}
		runErr <- k.Run(ctx)
	}()
	// The tree appears once the guest has booted (HC_KERNEL_READY, some
	// tens of milliseconds): what a script writes as soon as it sees the
	// mount then reaches a kernel that can take it, as Linux's debugfs
	// only exists from its initcall on.
	select {
	case <-k.Ready():
	case <-ctx.Done():
		<-runErr // stopped while booting: nothing was mounted
		return nil
	case err := <-runErr:
		runErr <- err // the guest stopped before it was ready; handled below
	}

	var srv *fuse.Server
	if o.mount != "" {
		srv, err = fuse.Mount(ctx, o.mount, tree, fuse.Options{Logger: log, Debug: o.debug})
		if err != nil {
			return fmt.Errorf("mounting %s: %w", o.mount, err)
		}
		log.Info("debugfs mounted", "dir", o.mount)
	}
	var tsrv *fuse.Server
	if o.tracefs != "" {
		tsrv, err = fuse.Mount(ctx, o.tracefs, tree, fuse.Options{Logger: log, Debug: o.debug, FsName: "tracefs", Root: tracingDir})
		if err != nil {
			if srv != nil {
				_ = srv.Unmount()
			}
			return fmt.Errorf("mounting %s: %w", o.tracefs, err)
		}
		log.Info("tracefs mounted", "dir", o.tracefs)
	}

	if len(o.modules) > 0 || len(moduleSpecs) > 0 {
		go func() {
			loadModules(ctx, k, o.modules, log)
			for _, s := range moduleSpecs {
				if err := probes.register(kp, s, log); err != nil {
					log.Error("--probe", "err", err)
				}
			}
		}()
	}
	var shadowDone <-chan struct{}
	if o.shadow != "" {
		var seal *shadow.Seal
		if o.seal != "" {
			seal = &shadow.Seal{Debugfs: o.mount, Tracefs: o.tracefs, Dir: o.seal,
				Perf: perfCounters{tr: tr, path: filepath.Join(o.mount, perfEventFile)}}
		}
		shadowDone = startShadow(ctx, k, o.shadow, seal, log)
	}
	select {
	case <-ctx.Done():
		<-runErr
	case err := <-runErr:
		if err != nil {
			log.Error("guest stopped", "err", err)
		} else if k.Machine().PoweredOff() {
			log.Info("guest powered off")
		}
		if msg, ok := k.Panicked(); ok {
			log.Error("guest panicked; the debugfs tree stays up until SIGINT/SIGTERM", "message", msg)
		}
		<-ctx.Done()
	}
	for _, p := range probes.all() {
		log.Info("probe summary", "probe", p.Spec.String(), "hits", p.Hits(), "missed", p.Missed())
	}
	if shadowDone != nil {
		<-shadowDone // the supervisor logs its totals
	}
	st := k.Machine().Stats()
	log.Info("guest stopped", "instructions", st.Instructions, "exceptions", st.Exceptions, "hostcalls", st.Hostcalls,
		"translated_blocks", st.TranslatedBlocks, "code_cache_bytes", st.CodeCacheBytes, "code_cache_flushes", st.CodeCacheFlushes)
	if tsrv != nil {
		if err := tsrv.Unmount(); err != nil {
			return fmt.Errorf("unmounting %s: %w", o.tracefs, err)
		}
		log.Info("tracefs unmounted", "dir", o.tracefs)
	}
	if srv != nil {
		if err := srv.Unmount(); err != nil {
			return fmt.Errorf("unmounting %s: %w", o.mount, err)
		}
		log.Info("debugfs unmounted", "dir", o.mount)
	}
	return nil
}

// registeredProbes are the --probe probes; module probes join once their
// module is loaded, from another goroutine.
type registeredProbes struct {
	mu sync.Mutex
	ps []*kprobes.Registered
}

func (r *registeredProbes) register(kp *kprobes.Kprobes, s kprobes.Spec, log *slog.Logger) error {
	p, err := kp.RegisterSpec(s)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.ps = append(r.ps, p)
	r.mu.Unlock()
	log.Info("probe registered", "probe", s.String(), "addr", fmt.Sprintf("%#x", p.Kprobe().Addr))
	return nil
}

func (r *registeredProbes) all() []*kprobes.Registered {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*kprobes.Registered(nil), r.ps...)
}

// loadModules loads the --module modules, in order, once the guest is
// ready (insmod at boot); a failure is logged and the rest still load.
func loadModules(ctx context.Context, k *kernel.Kernel, names []string, log *slog.Logger) {
	select {
	case <-k.Ready():
	case <-ctx.Done():
		return
	}
	for _, name := range names {
		if err := k.LoadEmbeddedModule(name); err != nil {
			log.Error("--module", "module", name, "err", err)
			continue
		}
		log.Info("module loaded", "module", name)
	}
}

// consoleWriter is where the guest's UART goes.
func consoleWriter(dest string, log *slog.Logger) (io.Writer, func(), error) {
	switch dest {
	case "log", "":
		return &lineLogger{log: log}, func() {}, nil
	case "-":
		return os.Stdout, func() {}, nil
	}
	f, err := os.Create(dest)
	if err != nil {
		return nil, nil, fmt.Errorf("--console: %w", err)
	}
	return f, func() { f.Close() }, nil
}

// lineLogger logs the guest console one line at a time.
type lineLogger struct {
	log *slog.Logger
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lineLogger) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	for {
		i := bytes.IndexByte(l.buf.Bytes(), '\n')
		if i < 0 {
			break
		}
		line := strings.TrimRight(string(l.buf.Next(i+1)), "\r\n")
		l.log.Info("guest console", "line", line)
	}
	return len(p), nil
}
