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
