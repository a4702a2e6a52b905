package kernel_test

import (
	"context"
	"errors"
	"syscall"
	"testing"

	"github.com/kpemu/kpemu/internal/waitfor"
	"github.com/kpemu/kpemu/kernel"
)

// shadowReady waits until the guest's /bin/shadowd answers.
func shadowReady(t testing.TB, k *kernel.Kernel) {
	t.Helper()
	waitfor.Until(t, "shadowd to answer", func() bool {
		return k.Shadow(context.Background(), kernel.ShadowRequest{Op: kernel.ShadowFork, Comm: "test"}) == nil
	})
}

// The guest replays each request as the same system call, so its file
// system follows the host's mkdir, open(O_CREAT), symlink and unlink.
func TestShadowReplaysFileCalls(t *testing.T) {
	k := running(t)
	shadowReady(t, k)
	const dir = "/tmp/shadowtest"
	steps := []struct {
		req      kernel.ShadowRequest
		path     string
		wantErr  error // from LookupPath after the step
		wantMode uint32
	}{
		{kernel.ShadowRequest{Op: kernel.ShadowMkdir, Path: dir, Mode: 0o755}, dir, nil, syscall.S_IFDIR},
		{kernel.ShadowRequest{Op: kernel.ShadowOpen, Path: dir + "/f", Flags: syscall.O_WRONLY | syscall.O_CREAT, Mode: 0o644}, dir + "/f", nil, syscall.S_IFREG},
		{kernel.ShadowRequest{Op: kernel.ShadowSymlink, Path: dir + "/l", Target: "f"}, dir + "/l", nil, syscall.S_IFREG},
		{kernel.ShadowRequest{Op: kernel.ShadowUnlink, Path: dir + "/l"}, dir + "/l", syscall.ENOENT, 0},
		{kernel.ShadowRequest{Op: kernel.ShadowUnlink, Path: dir + "/f"}, dir + "/f", syscall.ENOENT, 0},
		{kernel.ShadowRequest{Op: kernel.ShadowUnlink, Path: dir, Flags: 0x200 /* AT_REMOVEDIR */}, dir, syscall.ENOENT, 0},
	}
	for _, s := range steps {
		s.req.Comm = "bash"
		if err := k.Shadow(context.Background(), s.req); err != nil {
			t.Fatalf("Shadow(%+v): %v", s.req, err)
		}
		f, err := k.LookupPath(s.path)
		if !errors.Is(err, s.wantErr) && !(err == nil && s.wantErr == nil) {
			t.Fatalf("after %+v: LookupPath(%s) = %v, want %v", s.req, s.path, err, s.wantErr)
		}
		if err == nil && f.Mode&syscall.S_IFMT != s.wantMode {
			t.Errorf("after %+v: %s has mode %#o, want type %#o", s.req, s.path, f.Mode, s.wantMode)
		}
	}
}

// Each host process has a twin in the guest with its pid: Adopt makes the
// first, a Fork from a twin makes the child's, requests from a pid are
// replayed under that pid, and Exit ends the twin before it returns. A
// pid that the guest already uses (init's) gets no twin: shadowd replays
// that process's requests itself.
func TestShadowTwins(t *testing.T) {
	k := running(t)
	shadowReady(t, k)
	const parent, child = 20000, 20001
	const dir = "/tmp/twintest"
	do := func(r kernel.ShadowRequest) {
		t.Helper()
		if err := k.Shadow(context.Background(), r); err != nil {
			t.Fatalf("Shadow(%+v): %v", r, err)
		}
	}
	comm := func(pid int) string {
		c, ok := k.Tasks()[pid]
		if !ok {
			return "(none)"
		}
		return c
	}
	do(kernel.ShadowRequest{Op: kernel.ShadowAdopt, Child: parent, Comm: "bash"})
	if got := comm(parent); got != "shadowd" && got != "bash" {
		t.Fatalf("after Adopt, pid %d is %q, want shadowd's twin", parent, got)
	}
	do(kernel.ShadowRequest{Op: kernel.ShadowMkdir, PID: parent, Comm: "bash", Path: dir, Mode: 0o755})
	do(kernel.ShadowRequest{Op: kernel.ShadowFork, PID: parent, Child: child, Comm: "bash"})
	do(kernel.ShadowRequest{Op: kernel.ShadowOpen, PID: child, Comm: "touch", Path: dir + "/f", Flags: syscall.O_WRONLY | syscall.O_CREAT, Mode: 0o644})
	if got := comm(child); got != "touch" {
		t.Errorf("pid %d is %q, want touch", child, got)
	}
	if _, err := k.LookupPath(dir + "/f"); err != nil {
		t.Errorf("the child's twin did not create %s/f: %v", dir, err)
	}
	// A twin's kill(2) signals no one here, neither a twin nor a guest
	// task of the pid (init): the host delivers the host's signal.
	do(kernel.ShadowRequest{Op: kernel.ShadowKill, PID: parent, Child: child, Comm: "bash", Flags: 15})
	do(kernel.ShadowRequest{Op: kernel.ShadowKill, PID: parent, Child: 1, Comm: "bash", Flags: 9, Mode: uint32(syscall.EPERM)})
	do(kernel.ShadowRequest{Op: kernel.ShadowMkdir, PID: child, Comm: "touch", Path: dir + "/d", Mode: 0o755})
	if got, got1 := comm(child), comm(1); got != "touch" || got1 != "init" {
		t.Errorf("after the kills, pid %d is %q and pid 1 %q, want touch and init", child, got, got1)
	}
	do(kernel.ShadowRequest{Op: kernel.ShadowUnlink, PID: child, Comm: "touch", Path: dir + "/d", Flags: 0x200 /* AT_REMOVEDIR */})
	do(kernel.ShadowRequest{Op: kernel.ShadowExit, PID: child, Comm: "touch"})
	waitfor.Until(t, "the child's twin to be reaped", func() bool { return comm(child) == "(none)" })
	do(kernel.ShadowRequest{Op: kernel.ShadowUnlink, PID: parent, Comm: "bash", Path: dir + "/f"})
	if got := comm(parent); got != "bash" {
		t.Errorf("pid %d is %q, want bash", parent, got)
	}
	do(kernel.ShadowRequest{Op: kernel.ShadowExit, PID: parent, Comm: "bash", Flags: 3 << 8})
	waitfor.Until(t, "the parent's twin to be reaped", func() bool { return comm(parent) == "(none)" })

	// init has pid 1: no twin; shadowd replays pid 1's calls.
	do(kernel.ShadowRequest{Op: kernel.ShadowAdopt, Child: 1, Comm: "sh"})
	do(kernel.ShadowRequest{Op: kernel.ShadowUnlink, PID: 1, Comm: "rmdir", Path: dir, Flags: 0x200 /* AT_REMOVEDIR */})
	if _, err := k.LookupPath(dir); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("after pid 1's rmdir: %v, want ENOENT", err)
	}
	do(kernel.ShadowRequest{Op: kernel.ShadowExit, PID: 1, Comm: "sh"})
	if got := comm(1); got != "init" {
		t.Errorf("pid 1 is %q, want init", got)
	}
}

// With the host's pid_max given, the guest's own tasks take pids above
// it, so that every host pid is free for a twin: from boot on no guest
// task has a pid a host process could have (past the ones made before
// the shadow device, as pid 1), and the host's highest pid gets its twin.
func TestShadowLeavesHostPIDs(t *testing.T) {
	const hostPIDMax = 32768
	k := runningWith(t, kernel.Config{HostPIDMax: hostPIDMax})
	shadowReady(t, k)
	const reserved = 300 // RESERVED_PIDS: below it, the tasks of early boot
	own := 0
	for pid, comm := range k.Tasks() {
		switch {
		case pid >= reserved && pid < hostPIDMax:
			t.Errorf("guest task %s has pid %d, which the host may give a process", comm, pid)
		case pid >= hostPIDMax:
			own++
		}
	}
	if own == 0 {
		t.Errorf("no guest task above the host's pids: %v", k.Tasks())
	}
	for _, pid := range []int32{reserved, hostPIDMax - 1} {
		if err := k.Shadow(context.Background(), kernel.ShadowRequest{Op: kernel.ShadowAdopt, Child: pid, Comm: "bash"}); err != nil {
			t.Fatal(err)
		}
		waitfor.Until(t, "the twin", func() bool { return k.Tasks()[int(pid)] == "bash" })
	}
}

// A path the guest cannot hold is refused before it is queued.
func TestShadowRefusesLongPath(t *testing.T) {
	k := running(t)
	long := "/" + string(make([]byte, 300))
	if err := k.Shadow(context.Background(), kernel.ShadowRequest{Op: kernel.ShadowOpen, Path: long}); err == nil {
		t.Fatal("Shadow accepted a 301-byte path")
	}
}

// BenchmarkShadow measures a replayed call's round trip: queue, doorbell,
// shadowd's system call, its report.
func BenchmarkShadow(b *testing.B) {
	k := running(b)
	shadowReady(b, k)
	for _, bc := range []struct {
		name string
		req  kernel.ShadowRequest
	}{
		{"fork", kernel.ShadowRequest{Op: kernel.ShadowFork, Comm: "bash"}},
		{"open", kernel.ShadowRequest{Op: kernel.ShadowOpen, Comm: "bash", Path: "/dev/null", Flags: syscall.O_WRONLY}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if err := k.Shadow(context.Background(), bc.req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
