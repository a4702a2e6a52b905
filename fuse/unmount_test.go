package fuse_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/kpemu/kpemu/debugfs"
	"github.com/kpemu/kpemu/fuse"
)

// holderTree has a snapshot file and a stream that blocks until the
// server stops.
func holderTree(t testing.TB) *debugfs.Tree {
	tr := debugfs.NewTree()
	if _, err := tr.MkdirAll("tracing", 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.CreateFile("tracing/trace", 0o440, debugfs.FileOps{Show: showString("# tracer: nop\n")}); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.CreateFile("tracing/trace_pipe", 0o440, debugfs.FileOps{Read: func(ctx context.Context, p []byte, _ int64) (int, error) {
		<-ctx.Done()
		return 0, ctx.Err()
	}}); err != nil {
		t.Fatal(err)
	}
	// A stream that always has data, as trace_pipe with a busy event.
	if _, err := tr.CreateFile("tracing/busy_pipe", 0o440, debugfs.FileOps{Read: func(ctx context.Context, p []byte, _ int64) (int, error) {
		return copy(p, "line\n"), nil
	}}); err != nil {
		t.Fatal(err)
	}
	return tr
}

// startHolder starts script under bash with $D the mount point and waits
// until it prints "ready".
func startHolder(t testing.TB, dir, script string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("bash", append([]string{"-c", script, "holder"}, args...)...)
	cmd.Env = append(os.Environ(), "D="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "ready\n" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("holder: %q %v", line, err)
	}
	return cmd
}

func isMountPoint(dir string) bool {
	return exec.Command("mountpoint", "-q", dir).Run() == nil
}

// TestUnmountWhileHeld: Unmount returns and leaves no mount whoever holds
// the tree: a blocked trace_pipe reader gets EOF and exits 0, a process
// with a file open or its working directory inside gets ENOTCONN, and a
// copy of the mount in another mount namespace is taken down too.
func TestUnmountWhileHeld(t *testing.T) {
	requireFUSE(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	tests := []struct {
		name   string
		script string // prints "ready" once it holds the mount
		check  func(t *testing.T, cmd *exec.Cmd, out string)
	}{
		{name: "blocked trace_pipe reader",
			script: `exec 4<"$D/tracing/trace_pipe"; echo ready; cat <&4; echo "cat exit $?" >&3`,
			check: func(t *testing.T, cmd *exec.Cmd, out string) {
				if out != "cat exit 0\n" {
					t.Errorf("reader: %q, want EOF and exit 0", out)
				}
			}},
		{name: "busy trace_pipe reader",
			script: `exec 4<"$D/tracing/busy_pipe"; echo ready; cat <&4 >/dev/null; echo "cat exit $?" >&3`,
			check: func(t *testing.T, cmd *exec.Cmd, out string) {
				if out != "cat exit 0\n" {
					t.Errorf("reader: %q, want EOF and exit 0", out)
				}
			}},
		{name: "open file and cwd",
			script: `cd "$D/tracing" && exec 4<trace && echo ready && read -r _ <&5; cat <&4 >/dev/null 2>&1; echo "read exit $?" >&3`,
			check: func(t *testing.T, cmd *exec.Cmd, out string) {
				if out != "read exit 1\n" {
					t.Errorf("holder: %q, want a failed read", out)
				}
			}},
		{name: "copy in another mount namespace",
			script: `exec unshare -m --propagation private bash -c 'echo ready; read -r _ <&5; grep -c " $1 " /proc/self/mountinfo >&3' x "$1"`,
			check: func(t *testing.T, cmd *exec.Cmd, out string) {
				if out != "0\n" {
					t.Errorf("mounts left in the other namespace: %q, want 0", out)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "debug")
			srv, err := fuse.Mount(context.Background(), dir, holderTree(t), fuse.Options{Logger: testLogger(t)})
			if err != nil {
				t.Fatal(err)
			}
			// fd 3: what the holder reports; fd 5: tells it to go on.
			report, reportW, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			goR, goW, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("bash", "-c", tc.script, "holder", dir)
			cmd.Env = append(os.Environ(), "D="+dir)
			cmd.ExtraFiles = []*os.File{reportW, nil, goR}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			reportW.Close()
			goR.Close()
			if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "ready\n" {
				t.Fatalf("holder: %q %v", line, err)
			}
			if err := srv.Unmount(); err != nil {
				t.Errorf("Unmount: %v", err)
			}
			srv.Wait()
			if isMountPoint(dir) {
				t.Errorf("%s is still mounted", dir)
			}
			goW.Close()
			b := make([]byte, 100)
			n, _ := report.Read(b)
			report.Close()
			_ = cmd.Wait()
			tc.check(t, cmd, string(b[:n]))
		})
	}
}

// TestSecondServerRefused: a second Mount on a directory that a live
// server serves fails, naming the first's process, and the first keeps
// serving.
func TestSecondServerRefused(t *testing.T) {
	requireFUSE(t)
	tr := holderTree(t)
	dir := mount(t, tr)
	_, err := fuse.Mount(context.Background(), dir, tr, fuse.Options{Logger: testLogger(t)})
	if err == nil {
		t.Fatal("second mount succeeded")
	}
	if want := "already served by kpemu (pid " + strconv.Itoa(os.Getpid()) + ")"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q, want it to say %q", err, want)
	}
	if !isMountPoint(dir) {
		t.Fatal("the first mount is gone")
	}
	if r := sh(t, dir, `cat "$D/tracing/trace"`); r.stdout != "# tracer: nop\n" {
		t.Errorf("first server after the refusal: %q %q", r.stdout, r.stderr)
	}
}

// BenchmarkUnmountHeld reports how long Unmount takes while a reader
// blocks in trace_pipe and a copy of the mount lives in another mount
// namespace.
func BenchmarkUnmountHeld(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root")
	}
	dir := filepath.Join(b.TempDir(), "debug")
	tr := holderTree(b)
	for b.Loop() {
		b.StopTimer()
		srv, err := fuse.Mount(context.Background(), dir, tr, fuse.Options{})
		if err != nil {
			b.Fatal(err)
		}
		reader := startHolder(b, dir, `exec 4<"$D/tracing/trace_pipe"; echo ready; exec cat <&4`)
		copyNS := startHolder(b, dir, `exec unshare -m --propagation private bash -c 'echo ready; exec sleep 1000'`)
		b.StartTimer()
		if err := srv.Unmount(); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		_ = reader.Wait()
		_ = copyNS.Process.Signal(syscall.SIGKILL)
		_ = copyNS.Wait()
		b.StartTimer()
	}
}
