package fuse_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kpemu/kpemu/debugfs"
	"github.com/kpemu/kpemu/fuse"
	"github.com/kpemu/kpemu/internal/waitfor"
)

// helperEnv, when set in the environment, makes the test binary a child
// that mounts a tree at the named directory, says "ready" and waits to be
// killed: the way to leave a stale mount behind.
const helperEnv = "KPEMU_FUSE_TEST_MOUNT_HELPER"

func TestMain(m *testing.M) {
	if dir := os.Getenv(helperEnv); dir != "" {
		tr := debugfs.NewTree()
		_, err := tr.CreateFile("hello", 0o444, debugfs.FileOps{Show: showString("hello\n")})
		if err == nil {
			_, err = fuse.Mount(context.Background(), dir, tr, fuse.Options{})
		}
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("ready")
		select {}
	}
	os.Exit(m.Run())
}

func showString(s string) func(context.Context, *bytes.Buffer) error {
	return func(_ context.Context, w *bytes.Buffer) error {
		w.WriteString(s)
		return nil
	}
}

func requireFUSE(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skipf("no FUSE: %v", err)
	}
}

// testLogger logs to t; with KPEMU_FUSE_DEBUG set, at debug level, which
// with Options.Debug shows every FUSE request.
func testLogger(t *testing.T) *slog.Logger {
	level := slog.LevelInfo
	if os.Getenv("KPEMU_FUSE_DEBUG") != "" {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: level}))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// mount mounts tr in a fresh temporary directory, unmounted at cleanup.
func mount(t *testing.T, tr *debugfs.Tree) string {
	t.Helper()
	requireFUSE(t)
	dir := filepath.Join(t.TempDir(), "debug")
	srv, err := fuse.Mount(context.Background(), dir, tr, fuse.Options{
		Logger: testLogger(t),
		Debug:  os.Getenv("KPEMU_FUSE_DEBUG") != "",
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Unmount(); err != nil {
			t.Errorf("unmount: %v", err)
		}
	})
	return dir
}

// result is what a shell command did.
type result struct {
	stdout, stderr string
	code           int
}

// sh runs script with bash in dir (the mount point is passed as $D, so the
// child never starts with its working directory in the mount).
func sh(t *testing.T, dir, script string) result {
	t.Helper()
	cmd := exec.Command("bash", "-c", script)
	cmd.Env = append(os.Environ(), "LC_ALL=C", "D="+dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exitErr *exec.ExitError
	code := 0
	if errors.As(err, &exitErr) {
		code = exitErr.ExitCode()
	} else if err != nil {
		t.Fatalf("bash -c %q: %v", script, err)
	}
	return result{stdout.String(), stderr.String(), code}
}

// ctlFile records what reaches its ops.
type ctlFile struct {
	mu       sync.Mutex
	writes   []string
	truncs   int
	shows    int
	writeErr error
	truncErr error
}

func (c *ctlFile) ops() debugfs.FileOps {
	return debugfs.FileOps{
		Show: func(_ context.Context, w *bytes.Buffer) error {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.shows++
			w.WriteString(strings.Join(c.writes, ""))
			return nil
		},
		Write: func(_ context.Context, p []byte, _ int64) (int, error) {
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.writeErr != nil {
				return 0, c.writeErr
			}
			c.writes = append(c.writes, string(p))
			return len(p), nil
		},
		Truncate: func(context.Context) error {
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.truncErr != nil {
				return c.truncErr
			}
			c.truncs++
			c.writes = nil
			return nil
		},
	}
}

func (c *ctlFile) state() ([]string, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.writes), c.truncs
}

func TestShell(t *testing.T) {
	tr := debugfs.NewTree()
	var gen atomic.Int32
	mustFile := func(p string, perm fs.FileMode, ops debugfs.FileOps) {
		t.Helper()
		if _, err := tr.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := tr.CreateFile(p, perm, ops); err != nil {
			t.Fatal(err)
		}
	}
	mustFile("kprobes/list", 0o400, debugfs.FileOps{Show: showString("c0080000  k  do_fork+0x0    [DISABLED]\n")})
	mustFile("kprobes/gen", 0o444, debugfs.FileOps{Show: func(_ context.Context, w *bytes.Buffer) error {
		fmt.Fprintf(w, "%d\n", gen.Add(1))
		return nil
	}})
	mustFile("tracing/wronly", 0o200, debugfs.FileOps{Write: func(_ context.Context, p []byte, _ int64) (int, error) { return len(p), nil }})
	mustFile("tracing/enable", 0o644, debugfs.FileOps{Show: showString("0\n"), Write: func(_ context.Context, p []byte, _ int64) (int, error) { return len(p), nil }})
	mustFile("tracing/big", 0o444, debugfs.FileOps{Show: showString(strings.Repeat("x", 300<<10))})
	rejecting := &ctlFile{writeErr: syscall.EINVAL}
	mustFile("tracing/reject", 0o644, rejecting.ops())
	busy := &ctlFile{truncErr: syscall.EBUSY}
	mustFile("tracing/busy", 0o644, busy.ops())
	dir := mount(t, tr)

	tests := []struct {
		name       string
		script     string
		wantOut    string
		wantErr    string // substring of stderr
		wantFailed bool
	}{
		{name: "cat", script: `cat "$D/kprobes/list"`, wantOut: "c0080000  k  do_fork+0x0    [DISABLED]\n"},
		{name: "regenerated per open", script: `cat "$D/kprobes/gen"; cat "$D/kprobes/gen"`, wantOut: "1\n2\n"},
		{name: "one open many reads", script: `exec 3<"$D/kprobes/gen"; head -c1 <&3; cat <&3; exec 3<&-`, wantOut: "3\n"},
		{name: "big", script: `wc -c <"$D/tracing/big"`, wantOut: fmt.Sprintf("%d\n", 300<<10)},
		{name: "ls", script: `ls "$D" "$D/tracing"`, wantOut: fmt.Sprintf("%s:\nkprobes\ntracing\n\n%s/tracing:\nbig\nbusy\nenable\nreject\nwronly\n", dir, dir)},
		{name: "stat file", script: `stat -c '%a %s %u %g %F' "$D/kprobes/list" "$D/tracing/wronly" "$D/tracing/enable"`,
			wantOut: "400 0 0 0 regular empty file\n200 0 0 0 regular empty file\n644 0 0 0 regular empty file\n"},
		{name: "stat dir", script: `stat -c '%a %u %g %F' "$D" "$D/tracing"`, wantOut: "700 0 0 directory\n755 0 0 directory\n"},
		{name: "echo enable", script: `echo 1 > "$D/tracing/enable" && echo 1 >> "$D/tracing/enable" && cat "$D/tracing/enable"`, wantOut: "0\n"},
		{name: "write einval", script: `echo garbage > "$D/tracing/reject"`, wantErr: "echo: write error: Invalid argument", wantFailed: true},
		{name: "write no op", script: `echo 1 > "$D/kprobes/list"`, wantErr: "echo: write error: Invalid argument", wantFailed: true},
		{name: "read no op", script: `cat "$D/tracing/wronly"`, wantErr: "Invalid argument", wantFailed: true},
		{name: "trunc ebusy", script: `echo x > "$D/tracing/busy"`, wantErr: "Device or resource busy", wantFailed: true},
		{name: "trunc ebusy empty", script: `bash -c 'echo > "$D/tracing/busy"'`, wantErr: "Device or resource busy", wantFailed: true},
		{name: "truncate(1) ebusy", script: `truncate -s 0 "$D/tracing/busy"`, wantErr: "Device or resource busy", wantFailed: true},
		{name: "append no trunc", script: `echo x >> "$D/tracing/busy"`},
		{name: "missing", script: `cat "$D/kprobes/nope"`, wantErr: "No such file or directory", wantFailed: true},
		{name: "create denied", script: `echo 1 > "$D/tracing/new"`, wantErr: "Permission denied", wantFailed: true},
		{name: "mkdir denied", script: `mkdir "$D/tracing/new"`, wantErr: "Operation not permitted", wantFailed: true},
		{name: "rm denied", script: `rm -f "$D/tracing/enable"`, wantErr: "Operation not permitted", wantFailed: true},
		{name: "file is not dir", script: `ls "$D/kprobes/list/x"`, wantErr: "Not a directory", wantFailed: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := sh(t, dir, tc.script)
			if (r.code != 0) != tc.wantFailed {
				t.Errorf("exit code %d, want failure %v; stderr %q", r.code, tc.wantFailed, r.stderr)
			}
			if tc.wantOut != "" && r.stdout != tc.wantOut {
				t.Errorf("stdout = %q, want %q", r.stdout, tc.wantOut)
			}
			if tc.wantErr == "" && r.stderr != "" || !strings.Contains(r.stderr, tc.wantErr) {
				t.Errorf("stderr = %q, want %q", r.stderr, tc.wantErr)
			}
		})
	}
	if w, tr := busy.state(); tr != 0 || !slices.Equal(w, []string{"x\n"}) {
		t.Errorf("busy file: writes %q truncs %d; want only the >> write", w, tr)
	}
}

// TestWritesAndTruncations checks that each write(2) reaches Write once
// with exactly its bytes and that each `>` truncates exactly once.
func TestWritesAndTruncations(t *testing.T) {
	tests := []struct {
		name       string
		script     string
		wantWrites []string
		wantTruncs int
	}{
		{"echo >", `echo 'p:myprobe do_sys_open' > "$F"`, []string{"p:myprobe do_sys_open\n"}, 1},
		{"echo >>", `echo 'p:a do_fork' >> "$F"`, []string{"p:a do_fork\n"}, 0},
		{"two echos", `echo a >> "$F"; echo b >> "$F"`, []string{"a\n", "b\n"}, 0},
		{"> then >>", `echo a > "$F"; echo b >> "$F"`, []string{"a\n", "b\n"}, 1},
		{"empty >", `: > "$F"`, nil, 1},
		// coreutils printf buffers its output into one write(2); bash's
		// builtin printf writes line by line, on Linux too.
		{"printf one write", `env printf 'p:a x\np:b y\n' >> "$F"`, []string{"p:a x\np:b y\n"}, 0},
		{"builtin printf per line", `printf 'p:a x\np:b y\n' >> "$F"`, []string{"p:a x\n", "p:b y\n"}, 0},
		{"truncate(1)", `truncate -s 0 "$F"`, nil, 1},
		{"truncate nonzero", `truncate -s 5 "$F"`, nil, 0},
		{"exec fd writes", `exec 3>>"$F"; echo one >&3; echo two >&3; exec 3>&-`, []string{"one\n", "two\n"}, 0},
	}
	requireFUSE(t)
	tr := debugfs.NewTree()
	dir := mount(t, tr)
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &ctlFile{}
			name := fmt.Sprintf("ctl%d", i)
			if _, err := tr.CreateFile(name, 0o644, c.ops()); err != nil {
				t.Fatal(err)
			}
			script := fmt.Sprintf("F=\"$D/%s\"; %s", name, tc.script)
			if r := sh(t, dir, script); r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			writes, truncs := c.state()
			if !slices.Equal(writes, tc.wantWrites) {
				t.Errorf("writes = %q, want %q", writes, tc.wantWrites)
			}
			if truncs != tc.wantTruncs {
				t.Errorf("truncations = %d, want %d", truncs, tc.wantTruncs)
			}
		})
	}
}

// TestBigWrite checks that one large write(2) reaches Write in one call.
func TestBigWrite(t *testing.T) {
	requireFUSE(t)
	tr := debugfs.NewTree()
	c := &ctlFile{}
	if _, err := tr.CreateFile("ctl", 0o644, c.ops()); err != nil {
		t.Fatal(err)
	}
	dir := mount(t, tr)
	data := bytes.Repeat([]byte("p:probe do_fork\n"), (256<<10)/16)
	f, err := os.OpenFile(filepath.Join(dir, "ctl"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	n, err := f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil || n != len(data) {
		t.Fatalf("write = %d, %v", n, err)
	}
	writes, _ := c.state()
	if len(writes) != 1 || writes[0] != string(data) {
		t.Errorf("%d writes for one write(2) of %d bytes", len(writes), len(data))
	}
}

func TestDynamicDirs(t *testing.T) {
	requireFUSE(t)
	tr := debugfs.NewTree()
	events, err := tr.MkdirAll("tracing/events/kprobes", 0o755)
	if err != nil {
		t.Fatal(err)
	}
	dir := mount(t, tr)
	ls := func() string {
		t.Helper()
		r := sh(t, dir, `ls "$D/tracing/events/kprobes"`)
		if r.code != 0 {
			t.Fatalf("ls: %s", r.stderr)
		}
		return r.stdout
	}
	addEvent := func(name, enable string) {
		t.Helper()
		d, err := events.Mkdir(name, 0o755)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.CreateFile("enable", 0o644, debugfs.FileOps{Show: showString(enable)}); err != nil {
			t.Fatal(err)
		}
	}

	if got := ls(); got != "" {
		t.Errorf("initial ls = %q", got)
	}
	addEvent("p1", "0\n")
	addEvent("p2", "0\n")
	if got := ls(); got != "p1\np2\n" {
		t.Errorf("after add ls = %q", got)
	}
	if r := sh(t, dir, `cat "$D/tracing/events/kprobes/p1/enable"`); r.stdout != "0\n" {
		t.Errorf("cat p1/enable = %q %q", r.stdout, r.stderr)
	}
	if err := events.RemoveAll("p1"); err != nil {
		t.Fatal(err)
	}
	if got := ls(); got != "p2\n" {
		t.Errorf("after remove ls = %q", got)
	}
	r := sh(t, dir, `cat "$D/tracing/events/kprobes/p1/enable"`)
	if r.code == 0 || !strings.Contains(r.stderr, "No such file or directory") {
		t.Errorf("cat removed: %q %q", r.stdout, r.stderr)
	}
	// Re-created under the same name, with new content: no stale inode.
	addEvent("p1", "1\n")
	if r := sh(t, dir, `cat "$D/tracing/events/kprobes/p1/enable"`); r.stdout != "1\n" {
		t.Errorf("cat re-created p1/enable = %q %q", r.stdout, r.stderr)
	}
}

// TestRemoveWhileOpen checks that I/O on an open file whose directory was
// removed fails with EIO, as on debugfs.
func TestRemoveWhileOpen(t *testing.T) {
	requireFUSE(t)
	tr := debugfs.NewTree()
	if _, err := tr.CreateFile("f", 0o644, debugfs.FileOps{Show: showString("x\n")}); err != nil {
		t.Fatal(err)
	}
	dir := mount(t, tr)
	f, err := os.Open(filepath.Join(dir, "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := tr.Remove("f"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Read(make([]byte, 10)); !errors.Is(err, syscall.EIO) {
		t.Errorf("read after remove = %v, want EIO", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "f")); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("stat after remove = %v, want ENOENT", err)
	}
}

// goroutinesSettle waits until the goroutine count drops to at most n.
func goroutinesSettle(t *testing.T, n int) {
	t.Helper()
	waitfor.Until(t, fmt.Sprintf("at most %d goroutines", n), func() bool { return runtime.NumGoroutine() <= n })
}

func TestRemountAndNoLeaks(t *testing.T) {
	requireFUSE(t)
	tr := debugfs.NewTree()
	if _, err := tr.CreateFile("hello", 0o444, debugfs.FileOps{Show: showString("hello\n")}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "debug")
	before := runtime.NumGoroutine()
	for i := range 3 {
		srv, err := fuse.Mount(context.Background(), dir, tr, fuse.Options{Logger: testLogger(t)})
		if err != nil {
			t.Fatalf("mount #%d: %v", i, err)
		}
		if r := sh(t, dir, `cat "$D/hello"`); r.stdout != "hello\n" {
			t.Errorf("mount #%d: cat = %q %q", i, r.stdout, r.stderr)
		}
		if err := srv.Unmount(); err != nil {
			t.Fatalf("unmount #%d: %v", i, err)
		}
		srv.Wait()
		if err := srv.Unmount(); err != nil {
			t.Errorf("second unmount: %v", err)
		}
		if _, err := os.Stat(filepath.Join(dir, "hello")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("after unmount, stat = %v; want not exist", err)
		}
	}
	goroutinesSettle(t, before)
}

func TestUnmountOnContextDone(t *testing.T) {
	requireFUSE(t)
	tr := debugfs.NewTree()
	dir := filepath.Join(t.TempDir(), "debug")
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := fuse.Mount(ctx, dir, tr, fuse.Options{Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	srv.Wait()
	goroutinesSettle(t, before)
}

func TestStaleMount(t *testing.T) {
	requireFUSE(t)
	dir := filepath.Join(t.TempDir(), "debug")

	// A child mounts and is killed without unmounting.
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "ready\n" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("helper: %q %v", line, err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); !errors.Is(err, syscall.ENOTCONN) {
		t.Fatalf("after killing the server, statfs = %v; want ENOTCONN", err)
	}

	tr := debugfs.NewTree()
	if _, err := tr.CreateFile("fresh", 0o444, debugfs.FileOps{Show: showString("fresh\n")}); err != nil {
		t.Fatal(err)
	}
	srv, err := fuse.Mount(context.Background(), dir, tr, fuse.Options{Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := srv.Unmount(); err != nil {
			t.Error(err)
		}
	}()
	if r := sh(t, dir, `cat "$D/fresh"`); r.stdout != "fresh\n" {
		t.Errorf("cat after stale cleanup = %q %q", r.stdout, r.stderr)
	}
}

// TestConcurrentShell lists and reads through the mount while event
// directories come and go; run with -race.
func TestConcurrentShell(t *testing.T) {
	requireFUSE(t)
	tr := debugfs.NewTree()
	events, err := tr.MkdirAll("events/kprobes", 0o755)
	if err != nil {
		t.Fatal(err)
	}
	dir := mount(t, tr)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			name := fmt.Sprintf("p%d", i%4)
			if d, err := events.Mkdir(name, 0o755); err == nil {
				_, _ = d.CreateFile("enable", 0o644, debugfs.FileOps{Show: showString("0\n")})
			} else if err := events.RemoveAll(name); err != nil {
				t.Error(err)
			}
		}
	})
	// Errors are expected (an entry vanishes between ls and cat); the
	// point is that nothing hangs, crashes or races.
	r := sh(t, dir, `for i in $(seq 50); do ls "$D/events/kprobes" >/dev/null; cat "$D"/events/kprobes/*/enable >/dev/null 2>&1; done; echo done`)
	close(stop)
	wg.Wait()
	if r.stdout != "done\n" {
		t.Errorf("shell loop: %q %q", r.stdout, r.stderr)
	}
}

// TestPermissions: the kernel checks the mode bits as Linux's VFS does on
// debugfs. Root with CAP_DAC_OVERRIDE opens anything (a write to a file
// without a write op is then EINVAL, as on Linux); a process without it
// gets EACCES at open, and chmod takes effect at once.
func TestPermissions(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("no setpriv")
	}
	tr := debugfs.NewTree()
	if _, err := tr.MkdirAll("kprobes", 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		name string
		perm fs.FileMode
	}{{"kprobes/list", 0o400}, {"kprobes/enabled", 0o600}, {"kprobes/locked", 0o600}} {
		if _, err := tr.CreateFile(f.name, f.perm, debugfs.FileOps{Show: showString("x\n"), Write: func(_ context.Context, p []byte, _ int64) (int, error) {
			if f.name == "kprobes/list" {
				return 0, syscall.EINVAL
			}
			return len(p), nil
		}}); err != nil {
			t.Fatal(err)
		}
	}
	dir := mount(t, tr)
	if r := sh(t, dir, `chmod 000 "$D/kprobes/locked"`); r.code != 0 {
		t.Fatalf("chmod: %q", r.stderr)
	}
	// noDAC runs a command as root without the capabilities that
	// override file modes.
	const noDAC = `setpriv --bounding-set=-dac_override,-dac_read_search -- `
	tests := []struct {
		name, script, wantOut, wantErr string
	}{
		{"root reads 0400", `cat "$D/kprobes/list"`, "x\n", ""},
		{"root writes 0400: EINVAL from the file", `echo 1 > "$D/kprobes/list"`, "", "Invalid argument"},
		{"root reads 000", `cat "$D/kprobes/locked"`, "x\n", ""},
		{"no DAC override: reads 0400", noDAC + `cat "$D/kprobes/list"`, "x\n", ""},
		{"no DAC override: open 0400 for writing", noDAC + `bash -c 'echo 1 > "$D/kprobes/list"'`, "", "Permission denied"},
		{"no DAC override: writes 0600", noDAC + `bash -c 'echo 1 > "$D/kprobes/enabled"'`, "", ""},
		{"no DAC override: reads 000", noDAC + `cat "$D/kprobes/locked"`, "", "Permission denied"},
		{"no DAC override: writes 000", noDAC + `bash -c 'echo 1 > "$D/kprobes/locked"'`, "", "Permission denied"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := sh(t, dir, tc.script)
			if r.stdout != tc.wantOut || !strings.Contains(r.stderr, tc.wantErr) || (tc.wantErr == "") != (r.code == 0) {
				t.Errorf("got %q %q (exit %d), want %q and error %q", r.stdout, r.stderr, r.code, tc.wantOut, tc.wantErr)
			}
		})
	}
}

// TestCachedEntriesDropOnRemove: the kernel keeps entries, but a node the
// tree removes is gone at once, and a name re-created at once is the new
// node, through both mounts of one tree.
func TestCachedEntriesDropOnRemove(t *testing.T) {
	tr := debugfs.NewTree()
	events, err := tr.MkdirAll("tracing/events/kprobes", 0o755)
	if err != nil {
		t.Fatal(err)
	}
	mk := func(content string) {
		t.Helper()
		d, err := events.Mkdir("myprobe", 0o755)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.CreateFile("enable", 0o644, debugfs.FileOps{Show: showString(content)}); err != nil {
			t.Fatal(err)
		}
	}
	dir := mount(t, tr)
	tracefs := filepath.Join(t.TempDir(), "tracing")
	srv, err := fuse.Mount(context.Background(), tracefs, tr, fuse.Options{Logger: testLogger(t), Root: "tracing"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Unmount()
	for i := range 20 {
		mk(fmt.Sprintf("%d\n", i))
		for _, p := range []string{dir + "/tracing", tracefs} {
			if b, err := os.ReadFile(p + "/events/kprobes/myprobe/enable"); err != nil || string(b) != fmt.Sprintf("%d\n", i) {
				t.Fatalf("round %d, %s: %q %v", i, p, b, err)
			}
		}
		if err := events.RemoveAll("myprobe"); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{dir + "/tracing", tracefs} {
			if _, err := os.Stat(p + "/events/kprobes/myprobe"); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("round %d, %s: stat after removal: %v", i, p, err)
			}
		}
	}
}

// TestUserMkdirRmdir: a directory with DirOps takes mkdir(2) and
// rmdir(2) through the mount (tracefs's instances/), with their errnos;
// the rmdir's own removal from the tree must not wait for the kernel,
// which holds the directory's lock until the reply, and an rmdir right
// after a close finds the file closed (WaitIdle). Elsewhere both stay
// EPERM.
func TestUserMkdirRmdir(t *testing.T) {
	requireFUSE(t)
	tr := debugfs.NewTree()
	inst, err := tr.MkdirAll("tracing/instances", 0o750)
	if err != nil {
		t.Fatal(err)
	}
	inst.SetOps(debugfs.DirOps{
		Mkdir: func(name string) error {
			if name == "fails" { // made, then taken back, as a failed instance_mkdir
				if _, err := inst.Mkdir(name, 0o750); err != nil {
					return err
				}
				if err := inst.RemoveAll(name); err != nil {
					return err
				}
				return syscall.ENOMEM
			}
			d, err := inst.Mkdir(name, 0o750)
			if err != nil {
				return err
			}
			_, err = d.CreateFile("trace", 0o640, debugfs.FileOps{Show: showString("x\n")})
			return err
		},
		Rmdir: func(name string) error {
			n, err := inst.Lookup(name)
			if err != nil {
				return err
			}
			if !n.(*debugfs.Dir).WaitIdle(time.Second) {
				return syscall.EBUSY
			}
			return inst.RemoveAll(name)
		},
	})
	dir := mount(t, tr)
	r := sh(t, dir, `cd "$D/tracing/instances" || exit 9
mkdir foo && echo made
mkdir foo 2>&1
cat foo/trace
mkdir fails 2>&1
exec 3<foo/trace
rmdir foo 2>&1
exec 3<&-
rmdir foo 2>&1
ls
mkdir foo/x 2>&1
mkdir ../events 2>&1
rmdir ../instances 2>&1
mkdir foo && rmdir foo && echo again`)
	want := "made\nmkdir: cannot create directory 'foo': File exists\nx\n" +
		"mkdir: cannot create directory 'fails': Cannot allocate memory\n" +
		"rmdir: failed to remove 'foo': Device or resource busy\n" +
		"mkdir: cannot create directory 'foo/x': No such file or directory\n" +
		"mkdir: cannot create directory '../events': Operation not permitted\n" +
		"rmdir: failed to remove '../instances': Operation not permitted\n" +
		"again\n"
	if r.stdout != want {
		t.Errorf("got\n%s\nwant\n%s\nstderr: %s", r.stdout, want, r.stderr)
	}
}
