//go:build linux && (amd64 || arm64)

package shadow

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/kpemu/kpemu/debugfs"
	"github.com/kpemu/kpemu/fuse"
	"github.com/kpemu/kpemu/internal/waitfor"
)

// The test binary doubles as the supervised process: with SHADOW_HELPER
// set, TestMain runs a helper instead of the tests.
func TestMain(m *testing.M) {
	if mode := os.Getenv("SHADOW_HELPER"); mode != "" {
		os.Exit(helper(mode, os.Getenv("SHADOW_SOCKET"), os.Args[1:]))
	}
	os.Exit(m.Run())
}

// exitNoFilter tells the test that the kernel refused Install's filter.
const exitNoFilter = 42

// helper runs helper mode:
//   - exec: Attach to SHADOW_SOCKET, Install, exec args with SHADOW_HELPER
//     set to SHADOW_THEN, as kpemu shadow-exec does (in ModeSeal if
//     SHADOW_MODE is "seal");
//   - threads: threadsHelper, in a process exec'd by exec mode;
//   - splice: spliceHelper, likewise;
//   - select: selectHelper, likewise;
//   - bench: Attach, Install, then openLoop on the filtered thread;
//   - install: Install without Attach, which must fail.
func helper(mode, sock string, args []string) int {
	err := func() error {
		var path string
		var env []string
		switch mode {
		case "install":
			return InstallMode(ModeShadow)
		case "threads":
			return threadsHelper(args[0])
		case "splice":
			return spliceHelper(args)
		case "select":
			return selectHelper(args)
		case "exec":
			// Before Attach and Install, for the error's sake.
			var err error
			if path, err = exec.LookPath(args[0]); err != nil {
				return err
			}
			for _, kv := range os.Environ() {
				if !strings.HasPrefix(kv, "SHADOW_HELPER=") {
					env = append(env, kv)
				}
			}
			if then := os.Getenv("SHADOW_THEN"); then != "" {
				env = append(env, "SHADOW_HELPER="+then)
			}
		case "bench":
		default:
			return fmt.Errorf("unknown helper mode %q", mode)
		}
		m := ModeShadow
		if os.Getenv("SHADOW_MODE") == "seal" {
			m = ModeSeal
		}
		if err := AttachMode(sock, m); err != nil {
			return err
		}
		if err := InstallMode(m); err != nil {
			if errors.Is(err, ErrNotTraced) {
				return err
			}
			fmt.Fprintln(os.Stderr, err)
			os.Exit(exitNoFilter)
		}
		if mode == "bench" {
			return benchHelper(args[0])
		}
		return syscall.Exec(path, args, env)
	}()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// threadsHelper creates threads, which must not be mirrored, and does
// dirfd-relative syscalls, which must.
func threadsHelper(dir string) error {
	// New OS threads: clone(CLONE_THREAD), let through in BPF.
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			time.Sleep(20 * time.Millisecond)
		}()
	}
	wg.Wait()
	// clone3 of a thread: stopped, recognised, not replayed. CLONE_THREAD
	// without CLONE_SIGHAND makes the kernel refuse it after the filter.
	args := make([]uint64, 11) // struct clone_args, CLONE_ARGS_SIZE_VER2
	args[0] = cloneThread
	if _, _, errno := unix.Syscall(unix.SYS_CLONE3, uintptr(unsafe.Pointer(&args[0])), 88, 0); errno != unix.EINVAL {
		return fmt.Errorf("clone3(CLONE_THREAD): %v, want EINVAL", errno)
	}
	// clone3 of a process with a bad exit signal: stopped, then refused
	// by the host, and so not replayed (Linux refuses it before
	// kernel_clone too).
	args[0], args[4] = 0, 1000 // flags, exit_signal
	if _, _, errno := unix.Syscall(unix.SYS_CLONE3, uintptr(unsafe.Pointer(&args[0])), 88, 0); errno != unix.EINVAL {
		return fmt.Errorf("clone3(exit_signal 1000): %v, want EINVAL", errno)
	}
	dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	if err := unix.Mkdirat(dfd, "sub", 0o750); err != nil {
		return err
	}
	if err := unix.Symlinkat("x/y", dfd, "sub/lnk"); err != nil {
		return err
	}
	fd, err := unix.Openat2(dfd, "sub/f", &unix.OpenHow{Flags: unix.O_CREAT | unix.O_WRONLY | unix.O_CLOEXEC, Mode: 0o640})
	if err != nil {
		return err
	}
	unix.Close(fd)
	for _, name := range []string{"sub/lnk", "sub/f"} {
		if err := unix.Unlinkat(dfd, name, 0); err != nil {
			return err
		}
	}
	return unix.Unlinkat(dfd, "sub", unix.AT_REMOVEDIR)
}

// benchHelper opens /dev/null N times and prints how long that took.
func benchHelper(count string) error {
	n, err := strconv.Atoi(count)
	if err != nil {
		return err
	}
	d, err := openLoop(n)
	if err != nil {
		return err
	}
	fmt.Println(d.Nanoseconds())
	return nil
}

func openLoop(n int) (time.Duration, error) {
	start := time.Now()
	for range n {
		fd, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return 0, err
		}
		unix.Close(fd)
	}
	return time.Since(start), nil
}

// recorder is a replay function that records.
type recorder struct {
	mu   sync.Mutex
	reqs []Request
}

func (r *recorder) replay(_ context.Context, req Request) error {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return nil
}

func (r *recorder) all() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Request(nil), r.reqs...)
}

// supervise runs the test binary in helper mode under a Supervisor whose
// replay is replay, and returns its stdout.
func supervise(tb testing.TB, sup *Supervisor, env []string, mode string, args ...string) []byte {
	tb.Helper()
	avail, err := os.ReadFile("/proc/sys/kernel/seccomp/actions_avail")
	if err != nil || !strings.Contains(string(avail), "trace") {
		tb.Skip("seccomp SECCOMP_RET_TRACE unavailable")
	}
	sock := filepath.Join(tb.TempDir(), "shadow.sock")
	ctx, cancel := context.WithDeadline(context.Background(), waitfor.Deadline(tb))
	defer cancel()
	lctx, stop := context.WithCancel(ctx)
	listened := make(chan error, 1)
	go func() { listened <- sup.Listen(lctx, sock) }()
	// Until the socket is there (a fixed 500 polls ran out on a loaded
	// host), or Listen failed.
	var lerr error
	waitfor.Until(tb, "the supervisor's socket", func() bool {
		select {
		case lerr = <-listened:
			return true
		default:
		}
		_, err := os.Stat(sock)
		return err == nil
	})
	if lerr != nil {
		tb.Fatalf("Listen: %v", lerr)
	}
	// The helper runs as a grandchild, as kpemu shadow-exec runs beside
	// kpemu and not below it: a tracer in the thread group of its
	// tracee's real parent reaps the tracee's exit itself, and the
	// parent's wait would never see it.
	cmd := exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", `"$0" "$@" & wait $!`, os.Args[0]}, args...)...)
	cmd.Env = append(append(os.Environ(), env...), "SHADOW_HELPER="+mode, "SHADOW_SOCKET="+sock)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	// Forked and waited for from a thread locked to this goroutine: a
	// tracer locks its goroutine to some thread, and waits for all the
	// children of that thread (__WNOTHREAD); were it the thread that
	// forked the shell, the tracer would reap the shell and cmd's wait
	// would fail with ECHILD.
	var out []byte
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		out, err = cmd.Output()
	}()
	<-ran
	stop()
	if lerr := <-listened; lerr != context.Canceled {
		tb.Errorf("Listen = %v, want context.Canceled", lerr)
	}
	if cmd.ProcessState != nil && cmd.ProcessState.ExitCode() == exitNoFilter {
		tb.Skipf("Install: %s", stderr.String())
	}
	if err != nil {
		tb.Fatalf("helper %s: %v; stderr:\n%s", mode, err, stderr.String())
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		tb.Errorf("socket left behind: %v", err)
	}
	return out
}

func testLogger(tb testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tb.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// want is an expected request: empty comm and path match any; flags,
// mode and target are checked where exact is set.
type want struct {
	op     Op
	comm   string
	path   string
	target string
	flags  uint32
	mode   uint32
	exact  bool // check flags, mode and target
}

func (w want) matches(r Request) bool {
	if r.Op != w.op || (w.comm != "" && r.Comm != w.comm) || (w.path != "" && r.Path != w.path) {
		return false
	}
	return !w.exact || (r.Flags == w.flags && r.Mode == w.mode && r.Target == w.target)
}

// checkInOrder checks that reqs holds ws in order, other requests between.
func checkInOrder(t *testing.T, reqs []Request, ws []want) {
	t.Helper()
	i := 0
	for _, r := range reqs {
		if i < len(ws) && ws[i].matches(r) {
			i++
		}
	}
	if i < len(ws) {
		var b strings.Builder
		for _, r := range reqs {
			fmt.Fprintf(&b, "\t%v pid=%d comm=%q path=%q target=%q flags=%#o mode=%#o\n", r.Op, r.PID, r.Comm, r.Path, r.Target, r.Flags, r.Mode)
		}
		t.Fatalf("missing in order: %+v (and %d more after it); requests:\n%s", ws[i], len(ws)-i-1, b.String())
	}
}

func TestShellMirrored(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	sup := &Supervisor{Replay: rec.replay, Log: testLogger(t)}
	// The signal must reach the shell through its tracer (a lost signal
	// once made every ftracetest test pass).
	script := `trap "echo usr1" USR1; kill -USR1 $$; ( : ); echo > /dev/null; mkdir $D/d; ln -s foo $D/d/bar; readlink $D/d/bar; rm $D/d/bar; rmdir $D/d; cd $D && : > rel && echo done`
	t.Setenv("D", dir)
	out := supervise(t, sup, nil, "exec", "/bin/sh", "-c", script)
	if got := string(out); got != "usr1\nfoo\ndone\n" {
		t.Errorf("shell output %q, want %q", got, "usr1\nfoo\ndone\n")
	}
	if _, err := os.Stat(filepath.Join(dir, "rel")); err != nil {
		t.Errorf("the shell's file: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "d")); !os.IsNotExist(err) {
		t.Errorf("the shell's directory is still there: %v", err)
	}
	const wrCreatTrunc = 0o1101
	checkInOrder(t, rec.all(), []want{
		{op: Kill, comm: "sh"}, // kill -USR1 $$, seen as the shell takes it
		{op: Fork, comm: "sh"}, // ( : )
		{op: Open, comm: "sh", path: "/dev/null", flags: wrCreatTrunc, mode: 0o666, exact: true},
		{op: Fork, comm: "sh"},
		{op: Mkdir, comm: "mkdir", path: dir + "/d", mode: 0o777, exact: true},
		{op: Fork, comm: "sh"},
		{op: Symlink, comm: "ln", path: dir + "/d/bar", target: "foo", exact: true},
		{op: Fork, comm: "sh"},
		{op: Unlink, comm: "rm", path: dir + "/d/bar", flags: 0, exact: true},
		{op: Fork, comm: "sh"},
		{op: Unlink, comm: "rmdir", path: dir + "/d", flags: atRemoveDir, exact: true},
		{op: Open, comm: "sh", path: dir + "/rel", flags: wrCreatTrunc, mode: 0o666, exact: true},
	})
	checkTwins(t, rec.all())
	st := sup.Stats()
	if st.Forks != 6 || st.Adopts != 1 || st.Exits != 7 || st.Kills != 1 {
		t.Errorf("Stats: %d forks, %d adopts, %d exits, %d kills; want 6 (the subshell and 5 commands), 1 (the shell), 7, 1", st.Forks, st.Adopts, st.Exits, st.Kills)
	}
	t.Logf("stats: %+v", st)
}

// checkTwins checks the processes that reqs name, for the guest's twins:
// Adopt names the first; each Fork names its new process, which no
// request named before; every request is from a process named before and
// not yet exited; each process exits once, its requests before.
func checkTwins(t *testing.T, reqs []Request) {
	t.Helper()
	if len(reqs) == 0 || reqs[0].Op != Adopt || reqs[0].Child <= 0 || reqs[0].PID != 0 {
		t.Fatalf("the first request is not an Adopt of a pid: %+v", reqs[:min(len(reqs), 1)])
	}
	live := map[int]bool{reqs[0].Child: true}
	named := map[int]bool{reqs[0].Child: true}
	for _, r := range reqs[1:] {
		if !live[r.PID] {
			t.Errorf("%v from pid %d, which is not a live traced process", r.Op, r.PID)
		}
		switch r.Op {
		case Adopt:
			t.Errorf("a second Adopt: %+v", r)
		case Fork:
			if r.Child <= 0 || named[r.Child] {
				t.Errorf("a Fork's child %d is not a new pid", r.Child)
			}
			live[r.Child], named[r.Child] = true, true
		case Exit:
			delete(live, r.PID)
		case Kill: // Child is kill's pid argument
		default:
			if r.Child != 0 {
				t.Errorf("%v with a child: %+v", r.Op, r)
			}
		}
	}
	if len(live) != 0 {
		t.Errorf("processes without an Exit: %v", live)
	}
}

func TestThreadsNotMirrored(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	sup := &Supervisor{Replay: rec.replay, Log: testLogger(t)}
	supervise(t, sup, []string{"SHADOW_THEN=threads"}, "exec", os.Args[0], dir)
	reqs := rec.all()
	var forks []Request
	for _, r := range reqs {
		if r.Op == Fork {
			forks = append(forks, r)
		}
	}
	if len(forks) != 0 {
		t.Errorf("forks %+v, want none: the clone3 of a process failed", forks)
	}
	// At least: a cgo binary's runtime threads come from pthread_create,
	// clone3 in glibc >= 2.34, stopped and let through too.
	if st := sup.Stats(); st.Threads < 1 {
		t.Errorf("Stats.Threads = %d, want at least 1 (the clone3 of a thread)", st.Threads)
	}
	const (
		armDirectory, armNoFollow = 0o40000, 0o100000
		cloexec, creat, wronly    = 0o2000000, 0o100, 0o1
	)
	checkInOrder(t, reqs, []want{
		{op: Open, path: dir, flags: armDirectory | armNoFollow | cloexec, exact: true},
		{op: Mkdir, path: dir + "/sub", mode: 0o750, exact: true},
		{op: Symlink, path: dir + "/sub/lnk", target: "x/y", exact: true},
		{op: Open, path: dir + "/sub/f", flags: creat | wronly | cloexec, mode: 0o640, exact: true},
		{op: Unlink, path: dir + "/sub/lnk", exact: true},
		{op: Unlink, path: dir + "/sub/f", exact: true},
		{op: Unlink, path: dir + "/sub", flags: atRemoveDir, exact: true},
	})
}

// A sealed tree's mount(2) of tracefs binds the Seal's tree; of debugfs,
// with no tree, fails with ENODEV; in ModeSeal nothing is replayed.
func TestSealMount(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mount(2) needs root")
	}
	if _, err := exec.LookPath("mount"); err != nil {
		t.Skip("no mount(8)")
	}
	for _, mode := range []string{"shadow", "seal"} {
		t.Run(mode, func(t *testing.T) {
			dir, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			tree, mnt := filepath.Join(dir, "tree"), filepath.Join(dir, "mnt")
			for _, d := range []string{tree, mnt} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(tree, "marker"), []byte("kpemu's\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = unix.Unmount(mnt, unix.MNT_DETACH) })
			rec := &recorder{}
			sup := &Supervisor{Replay: rec.replay, Log: testLogger(t), Seal: &Seal{Tracefs: tree, Dir: dir}}
			t.Setenv("D", dir)
			script := `mount -t tracefs nodev $D/mnt && cat $D/mnt/marker && umount $D/mnt
				mount -t debugfs nodev $D/mnt 2>/dev/null || echo "debugfs: $?"
				echo done`
			out := supervise(t, sup, []string{"SHADOW_MODE=" + mode}, "exec", "/bin/sh", "-c", script)
			if want := "kpemu's\ndebugfs: 32\ndone\n"; string(out) != want {
				t.Errorf("output %q, want %q", out, want)
			}
			st := sup.Stats()
			if st.Sealed != 2 {
				t.Errorf("Stats.Sealed = %d, want 2", st.Sealed)
			}
			if n := len(rec.all()); (mode == "seal") != (n == 0) {
				t.Errorf("%d requests replayed in mode %s", n, mode)
			}
		})
	}
}

// A sealed tree's /proc/mounts and /proc/PID/mountinfo show a kpemu
// mount (FUSE, "fuse.kpemu") as Linux's tracefs; unsealed, as it is.
func TestSealMountTable(t *testing.T) {
	mnt, tables := mountTree(t, debugfs.NewTree())
	t.Setenv("T", mnt)
	// stat -f: statfs(2)'s f_type, TRACEFS_MAGIC sealed.
	// Each table read three ways: by path, relative to /proc, and through
	// a dirfd (bash's cd resolves it; cat opens relative to the cwd).
	script := `grep " $T " /proc/mounts | cut -d" " -f1,3
		grep " $T " /proc/self/mountinfo | sed "s/.* - //"
		cd /proc/self && grep " $T " mounts | cut -d" " -f3
		grep " $T " /proc/$$/task/$$/mountinfo | sed "s/.* - //" | cut -d" " -f1
		for i in $(seq 20); do grep " $T " /etc/mtab; done | cut -d" " -f3 | uniq -c | sed "s/^ *//"
		stat -f -c %t $T`
	for _, tt := range []struct {
		name string
		seal *Seal
		want string
	}{
		{"sealed", &Seal{Tracefs: mnt, Dir: tables}, "tracefs tracefs\ntracefs tracefs rw\ntracefs\ntracefs\n20 tracefs\n74726163\n"},
		{"unsealed", nil, "tracefs fuse.kpemu\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sup := &Supervisor{Replay: (&recorder{}).replay, Log: testLogger(t), Seal: tt.seal}
			out := string(supervise(t, sup, []string{"SHADOW_MODE=seal"}, "exec", "/bin/sh", "-c", script))
			if tt.seal == nil {
				out, _, _ = strings.Cut(out, "\n")
				out += "\n"
			}
			if out != tt.want {
				t.Errorf("output %q, want %q", out, tt.want)
			}
		})
	}
	// One copy per distinct table, however many reads: mounts and
	// mountinfo, and a few more if the host's mounts changed meanwhile
	// (other tests' FUSE mounts), far fewer than the 24 reads.
	if ents, err := os.ReadDir(tables); err != nil || len(ents) < 2 || len(ents) > 8 {
		t.Errorf("rewritten tables: %v, %v; want 2 (a few more if the host's mounts changed)", ents, err)
	}
}

// mountTree mounts tree with FUSE as a tracefs (root only) and returns
// the mount point and a directory for the seal's tables.
func mountTree(t *testing.T, tree *debugfs.Tree) (mnt, tables string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("a FUSE mount needs root here")
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mnt, tables = filepath.Join(dir, "t"), filepath.Join(dir, "tables")
	if err := os.Mkdir(tables, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	srv, err := fuse.Mount(ctx, mnt, tree, fuse.Options{FsName: "tracefs"})
	if err != nil {
		t.Skipf("no FUSE mount: %v", err)
	}
	t.Cleanup(func() { _ = srv.Unmount() })
	return mnt, tables
}

// BenchmarkMirroredOpen measures opens of /dev/null by a supervised child
// through Trace with a no-op replay, against the same loop unsupervised.
func BenchmarkMirroredOpen(b *testing.B) {
	base, err := openLoop(b.N)
	if err != nil {
		b.Fatal(err)
	}
	sup := &Supervisor{Replay: func(context.Context, Request) error { return nil }, Log: testLogger(b)}
	b.ResetTimer()
	out := supervise(b, sup, nil, "bench", strconv.Itoa(b.N))
	b.StopTimer()
	ns, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		b.Fatalf("helper output %q: %v", out, err)
	}
	if st := sup.Stats(); st.Opens < uint64(b.N) {
		b.Fatalf("%d opens mirrored, want at least %d", st.Opens, b.N)
	}
	mirrored := float64(b.N) / (float64(ns) / 1e9)
	baseline := float64(b.N) / base.Seconds()
	b.ReportMetric(float64(ns)/float64(b.N), "ns/op")
	b.ReportMetric(mirrored, "mirrored/s")
	b.ReportMetric(baseline, "baseline/s")
	b.ReportMetric(baseline/mirrored, "slowdown")
}

// BenchmarkSealedOpen is BenchmarkMirroredOpen in ModeSeal, as under
// kpemu-ns.sh -S: each open stops for the tracer, which replays nothing.
func BenchmarkSealedOpen(b *testing.B) {
	base, err := openLoop(b.N)
	if err != nil {
		b.Fatal(err)
	}
	sup := &Supervisor{Replay: func(context.Context, Request) error { return nil }, Log: testLogger(b),
		Seal: &Seal{Dir: b.TempDir()}}
	b.ResetTimer()
	out := supervise(b, sup, []string{"SHADOW_MODE=seal"}, "bench", strconv.Itoa(b.N))
	b.StopTimer()
	ns, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		b.Fatalf("helper output %q: %v", out, err)
	}
	b.ReportMetric(float64(ns)/float64(b.N), "ns/op")
	b.ReportMetric(float64(ns)/1e9/base.Seconds(), "slowdown")
}

// Attach without a supervisor fails, before the caller installs a filter
// that would make its syscalls fail with ENOSYS.
func TestAttachWithoutSupervisor(t *testing.T) {
	if err := Attach(filepath.Join(t.TempDir(), "none.sock")); err == nil {
		t.Error("Attach to no supervisor succeeded")
	}
}

// Install on an untraced thread fails before the filter goes on, rather
// than leave a command whose filtered syscalls fail with ENOSYS.
func TestInstallUntraced(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "SHADOW_HELPER=install")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), ErrNotTraced.Error()) {
		t.Errorf("Install without a tracer: %v, output %q; want exit 1 with %q", err, out, ErrNotTraced)
	}
}

// TestKillsReplayed checks each way a kill(2) reaches the guest: signal
// 0 and SIGKILL at the caller's stop, with the errno the host's call
// answers; another signal to a traced process from its target's
// signal-delivery stop; one that fails through the kill watch.
func TestKillsReplayed(t *testing.T) {
	rec := &recorder{}
	sup := &Supervisor{Replay: rec.replay, Log: testLogger(t)}
	script := `sleep 60 & p=$!; kill -0 $p; kill -9 $p; wait $p; kill -0 4000000 2>/dev/null; sleep 60 & q=$!; kill -TERM $q; wait $q; kill -TERM 4000001 2>/dev/null; echo done`
	out := supervise(t, sup, nil, "exec", "/bin/sh", "-c", script)
	if got := string(out); got != "done\n" {
		t.Errorf("shell output %q, want %q", got, "done\n")
	}
	checkInOrder(t, rec.all(), []want{
		{op: Kill, comm: "sh", flags: 0, mode: 0, exact: true},
		{op: Kill, comm: "sh", flags: 9, mode: 0, exact: true},
		{op: Kill, comm: "sh", flags: 0, mode: uint32(unix.ESRCH), exact: true},
		{op: Kill, comm: "sh", flags: 15, mode: 0, exact: true},
	})
	kills := 4
	if _, _, err := hostKillIDs(); err != nil {
		t.Logf("no kill watch (%v): kill -TERM 4000001 is not seen", err)
	} else {
		// the kill watch's, after the fact but before the shell's exit
		kills = 5
		checkInOrder(t, rec.all(), []want{
			{op: Kill, comm: "sh", flags: 15, mode: uint32(unix.ESRCH), exact: true},
			{op: Exit, comm: "sh"},
		})
	}
	if st := sup.Stats(); st.Kills != uint64(kills) {
		t.Errorf("Stats: %d kills, want %d", st.Kills, kills)
	}
}
