package debugfs_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kpemu/kpemu/debugfs"
)

// errnoOf returns the errno err carries, 0 for nil, or fails the test.
func errnoOf(t *testing.T, err error) syscall.Errno {
	t.Helper()
	if err == nil {
		return 0
	}
	var e syscall.Errno
	if !errors.As(err, &e) {
		t.Fatalf("error %q carries no errno", err)
	}
	return e
}

// showString returns a Show op that writes s.
func showString(s string) func(context.Context, *bytes.Buffer) error {
	return func(_ context.Context, w *bytes.Buffer) error {
		w.WriteString(s)
		return nil
	}
}

func newTestTree(t *testing.T) *debugfs.Tree {
	t.Helper()
	tr := debugfs.NewTree()
	mustDir := func(p string) {
		if _, err := tr.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mustFile := func(p string, perm fs.FileMode, ops debugfs.FileOps) {
		if _, err := tr.CreateFile(p, perm, ops); err != nil {
			t.Fatal(err)
		}
	}
	mustDir("kprobes")
	mustDir("tracing/events/kprobes")
	mustFile("kprobes/list", 0o400, debugfs.FileOps{Show: showString("list\n")})
	mustFile("kprobes/enabled", 0o600, debugfs.FileOps{Show: showString("1\n")})
	mustFile("tracing/kprobe_events", 0o644, debugfs.FileOps{Show: showString("")})
	return tr
}

func TestTreeOps(t *testing.T) {
	tests := []struct {
		name string
		op   func(tr *debugfs.Tree) error
		want syscall.Errno
	}{
		{"lookup root", func(tr *debugfs.Tree) error { _, err := tr.Lookup("/"); return err }, 0},
		{"lookup empty", func(tr *debugfs.Tree) error { _, err := tr.Lookup(""); return err }, 0},
		{"lookup file", func(tr *debugfs.Tree) error { _, err := tr.Lookup("/kprobes/list"); return err }, 0},
		{"lookup unclean", func(tr *debugfs.Tree) error { _, err := tr.Lookup("kprobes//./list"); return err }, 0},
		{"lookup missing", func(tr *debugfs.Tree) error { _, err := tr.Lookup("kprobes/nope"); return err }, syscall.ENOENT},
		{"lookup through file", func(tr *debugfs.Tree) error { _, err := tr.Lookup("kprobes/list/x"); return err }, syscall.ENOTDIR},
		{"lookupdir on file", func(tr *debugfs.Tree) error { _, err := tr.LookupDir("kprobes/list"); return err }, syscall.ENOTDIR},
		{"lookupfile on dir", func(tr *debugfs.Tree) error { _, err := tr.LookupFile("kprobes"); return err }, syscall.EISDIR},
		{"mkdir", func(tr *debugfs.Tree) error { _, err := tr.Mkdir("tracing/instances", 0o755); return err }, 0},
		{"mkdir exists", func(tr *debugfs.Tree) error { _, err := tr.Mkdir("kprobes", 0o755); return err }, syscall.EEXIST},
		{"mkdir over file", func(tr *debugfs.Tree) error { _, err := tr.Mkdir("kprobes/list", 0o755); return err }, syscall.EEXIST},
		{"mkdir no parent", func(tr *debugfs.Tree) error { _, err := tr.Mkdir("a/b", 0o755); return err }, syscall.ENOENT},
		{"mkdir root", func(tr *debugfs.Tree) error { _, err := tr.Mkdir("/", 0o755); return err }, syscall.EINVAL},
		{"mkdir bad mode", func(tr *debugfs.Tree) error { _, err := tr.Mkdir("x", fs.ModeSymlink|0o755); return err }, syscall.EINVAL},
		{"mkdirall exists", func(tr *debugfs.Tree) error { _, err := tr.MkdirAll("tracing/events", 0o755); return err }, 0},
		{"mkdirall through file", func(tr *debugfs.Tree) error { _, err := tr.MkdirAll("kprobes/list/x", 0o755); return err }, syscall.ENOTDIR},
		{"create exists", func(tr *debugfs.Tree) error {
			_, err := tr.CreateFile("kprobes/list", 0o400, debugfs.FileOps{})
			return err
		}, syscall.EEXIST},
		{"create in file", func(tr *debugfs.Tree) error {
			_, err := tr.CreateFile("kprobes/list/x", 0o400, debugfs.FileOps{})
			return err
		}, syscall.ENOTDIR},
		{"remove file", func(tr *debugfs.Tree) error { return tr.Remove("kprobes/list") }, 0},
		{"remove empty dir", func(tr *debugfs.Tree) error { return tr.Remove("tracing/events/kprobes") }, 0},
		{"remove nonempty dir", func(tr *debugfs.Tree) error { return tr.Remove("tracing/events") }, syscall.ENOTEMPTY},
		{"remove missing", func(tr *debugfs.Tree) error { return tr.Remove("nope") }, syscall.ENOENT},
		{"remove root", func(tr *debugfs.Tree) error { return tr.Remove("/") }, syscall.EINVAL},
		{"removeall", func(tr *debugfs.Tree) error { return tr.RemoveAll("tracing") }, 0},
		{"readdir file", func(tr *debugfs.Tree) error { _, err := tr.ReadDir("kprobes/list"); return err }, syscall.ENOTDIR},
		{"open dir", func(tr *debugfs.Tree) error {
			_, err := tr.Open(context.Background(), "kprobes", os.O_RDONLY)
			return err
		}, syscall.EISDIR},
		{"read missing", func(tr *debugfs.Tree) error { _, err := tr.ReadFile("kprobes/nope"); return err }, syscall.ENOENT},
		{"setmode bad", func(tr *debugfs.Tree) error {
			n, _ := tr.Lookup("kprobes/list")
			return n.SetMode(fs.ModeDir | 0o755)
		}, syscall.EINVAL},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTestTree(t)
			if got := errnoOf(t, tc.op(tr)); got != tc.want {
				t.Errorf("errno = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestBadNames(t *testing.T) {
	tr := debugfs.NewTree()
	for _, name := range []string{"", ".", "..", "a/b", "nul\x00"} {
		if _, err := tr.Root().Mkdir(name, 0o755); errnoOf(t, err) != syscall.EINVAL {
			t.Errorf("Mkdir(%q) = %v, want EINVAL", name, err)
		}
		if _, err := tr.Root().CreateFile(name, 0o644, debugfs.FileOps{}); errnoOf(t, err) != syscall.EINVAL {
			t.Errorf("CreateFile(%q) = %v, want EINVAL", name, err)
		}
	}
}

func TestNodeAttributes(t *testing.T) {
	tr := newTestTree(t)
	tests := []struct {
		path     string
		wantMode fs.FileMode
		wantName string
	}{
		{"", fs.ModeDir | 0o700, ""},
		{"/kprobes", fs.ModeDir | 0o755, "kprobes"},
		{"kprobes/list", 0o400, "list"},
		{"kprobes/enabled", 0o600, "enabled"},
		{"tracing/kprobe_events", 0o644, "kprobe_events"},
	}
	inos := map[uint64]string{}
	for _, tc := range tests {
		n, err := tr.Lookup(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		if n.Mode() != tc.wantMode || n.Name() != tc.wantName {
			t.Errorf("%q: mode %v name %q, want %v %q", tc.path, n.Mode(), n.Name(), tc.wantMode, tc.wantName)
		}
		if want := strings.TrimPrefix(tc.path, "/"); n.Path() != want {
			t.Errorf("%q: Path() = %q, want %q", tc.path, n.Path(), want)
		}
		if other, dup := inos[n.Ino()]; dup {
			t.Errorf("%q and %q share inode %d", tc.path, other, n.Ino())
		}
		inos[n.Ino()] = tc.path
	}
	if tr.Root().Ino() != 1 {
		t.Errorf("root inode = %d, want 1", tr.Root().Ino())
	}
	n, _ := tr.Lookup("kprobes/list")
	if err := n.SetMode(0o644); err != nil {
		t.Fatal(err)
	}
	if n.Mode() != 0o644 {
		t.Errorf("after SetMode: %v", n.Mode())
	}
	d, _ := tr.Lookup("kprobes")
	if err := d.SetMode(0o700); err != nil || d.Mode() != fs.ModeDir|0o700 {
		t.Errorf("dir SetMode: %v %v", d.Mode(), err)
	}
}

func TestReadDirAndWalk(t *testing.T) {
	tr := newTestTree(t)
	for _, name := range []string{"zeta", "alpha", "mid"} {
		if _, err := tr.Mkdir("tracing/events/kprobes/"+name, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	nodes, err := tr.ReadDir("tracing/events/kprobes")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range nodes {
		names = append(names, n.Name())
	}
	if want := []string{"alpha", "mid", "zeta"}; !slices.Equal(names, want) {
		t.Errorf("ReadDir = %q, want %q", names, want)
	}

	var walked []string
	err = tr.Walk("", func(p string, n debugfs.Node) error {
		if p == "tracing/events" {
			return fs.SkipDir
		}
		walked = append(walked, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"", "kprobes", "kprobes/enabled", "kprobes/list", "tracing", "tracing/kprobe_events"}
	if !slices.Equal(walked, want) {
		t.Errorf("Walk = %q, want %q", walked, want)
	}
	stop := errors.New("stop")
	if err := tr.Walk("kprobes", func(string, debugfs.Node) error { return stop }); err != stop {
		t.Errorf("Walk error = %v, want %v", err, stop)
	}
}

func TestSnapshotPerOpen(t *testing.T) {
	tr := debugfs.NewTree()
	var calls atomic.Int32
	_, err := tr.CreateFile("counter", 0o444, debugfs.FileOps{
		Show: func(_ context.Context, w *bytes.Buffer) error {
			n := calls.Add(1)
			fmt.Fprintf(w, "generation %d\n", n)
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	h, err := tr.Open(ctx, "counter", os.O_RDONLY)
	if err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 0 {
		t.Errorf("Show ran at open; want on first read")
	}
	reads := []struct {
		off  int64
		size int
		want string
	}{
		{0, 4, "gene"},
		{4, 100, "ration 1\n"},
		{11, 2, "1\n"},
		{13, 10, ""},
		{1000, 10, ""},
		{0, 100, "generation 1\n"},
	}
	for _, r := range reads {
		buf := make([]byte, r.size)
		n, err := h.Read(ctx, buf, r.off)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(buf[:n]); got != r.want {
			t.Errorf("Read(off %d, %d) = %q, want %q", r.off, r.size, got, r.want)
		}
	}
	if calls.Load() != 1 {
		t.Errorf("Show calls = %d, want 1 for one open", calls.Load())
	}
	h.Release()
	if _, err := h.Read(ctx, make([]byte, 1), 0); errnoOf(t, err) != syscall.EBADF {
		t.Errorf("read after release = %v, want EBADF", err)
	}

	for i := 2; i <= 3; i++ {
		got, err := tr.ReadFile("counter")
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("generation %d\n", i); string(got) != want {
			t.Errorf("ReadFile #%d = %q, want %q", i, got, want)
		}
	}
}

func TestReadLarge(t *testing.T) {
	tr := debugfs.NewTree()
	big := strings.Repeat("0123456789abcdef", 1000)
	if _, err := tr.CreateFile("big", 0o444, debugfs.FileOps{Show: showString(big)}); err != nil {
		t.Fatal(err)
	}
	got, err := tr.ReadFile("big")
	if err != nil || string(got) != big {
		t.Errorf("ReadFile = %d bytes, %v; want %d bytes", len(got), err, len(big))
	}
}

func TestShowErrorNotCached(t *testing.T) {
	tr := debugfs.NewTree()
	fail := true
	_, err := tr.CreateFile("flaky", 0o444, debugfs.FileOps{
		Show: func(_ context.Context, w *bytes.Buffer) error {
			if fail {
				return syscall.ENODEV
			}
			w.WriteString("ok")
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	h, err := tr.Open(ctx, "flaky", os.O_RDONLY)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	buf := make([]byte, 10)
	if _, err := h.Read(ctx, buf, 0); errnoOf(t, err) != syscall.ENODEV {
		t.Errorf("read = %v, want ENODEV", err)
	}
	fail = false
	if n, err := h.Read(ctx, buf, 0); err != nil || string(buf[:n]) != "ok" {
		t.Errorf("read after error = %q, %v", buf[:n], err)
	}
}

// recorder is a control file that records its writes and truncations.
type recorder struct {
	mu        sync.Mutex
	writes    []string
	offs      []int64
	truncs    int
	writeErr  error
	truncErr  error
	maxAccept int // 0: accept all
}

func (r *recorder) ops() debugfs.FileOps {
	return debugfs.FileOps{
		Show: func(_ context.Context, w *bytes.Buffer) error {
			r.mu.Lock()
			defer r.mu.Unlock()
			w.WriteString(strings.Join(r.writes, ""))
			return nil
		},
		Write: func(_ context.Context, p []byte, off int64) (int, error) {
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.writeErr != nil {
				return 0, r.writeErr
			}
			n := len(p)
			if r.maxAccept > 0 && n > r.maxAccept {
				n = r.maxAccept
			}
			r.writes = append(r.writes, string(p[:n]))
			r.offs = append(r.offs, off)
			return n, nil
		},
		Truncate: func(context.Context) error {
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.truncErr != nil {
				return r.truncErr
			}
			r.truncs++
			r.writes = nil
			return nil
		},
	}
}

func TestWriteAndTruncate(t *testing.T) {
	tests := []struct {
		name       string
		rec        recorder // template: only its error and limit fields are set
		data       string
		trunc      bool
		want       syscall.Errno
		wantWrites []string
		wantTruncs int
	}{
		{name: "append", data: "p:a do_fork\n", wantWrites: []string{"p:a do_fork\n"}},
		{name: "trunc", data: "1\n", trunc: true, wantWrites: []string{"1\n"}, wantTruncs: 1},
		{name: "trunc empty", data: "", trunc: true, wantTruncs: 1},
		{name: "write einval", rec: recorder{writeErr: syscall.EINVAL}, data: "garbage\n", want: syscall.EINVAL},
		{name: "wrapped errno", rec: recorder{writeErr: fmt.Errorf("parse: %w", syscall.ENOENT)}, data: "-:nope\n", want: syscall.ENOENT},
		{name: "trunc ebusy", rec: recorder{truncErr: syscall.EBUSY}, data: "x\n", trunc: true, want: syscall.EBUSY},
		{name: "short writes", rec: recorder{maxAccept: 3}, data: "abcdefgh", wantWrites: []string{"abc", "def", "gh"}},
	}
	for i := range tests {
		tc := &tests[i]
		t.Run(tc.name, func(t *testing.T) {
			tr := debugfs.NewTree()
			rec := &recorder{writeErr: tc.rec.writeErr, truncErr: tc.rec.truncErr, maxAccept: tc.rec.maxAccept}
			if _, err := tr.CreateFile("ctl", 0o644, rec.ops()); err != nil {
				t.Fatal(err)
			}
			err := tr.WriteFile("ctl", []byte(tc.data), tc.trunc)
			if got := errnoOf(t, err); got != tc.want {
				t.Fatalf("WriteFile errno = %v (%v), want %v", got, err, tc.want)
			}
			if !slices.Equal(rec.writes, tc.wantWrites) {
				t.Errorf("writes = %q, want %q", rec.writes, tc.wantWrites)
			}
			if rec.truncs != tc.wantTruncs {
				t.Errorf("truncs = %d, want %d", rec.truncs, tc.wantTruncs)
			}
		})
	}
}

func TestShortWriteOffsets(t *testing.T) {
	tr := debugfs.NewTree()
	rec := &recorder{maxAccept: 2}
	if _, err := tr.CreateFile("ctl", 0o644, rec.ops()); err != nil {
		t.Fatal(err)
	}
	if err := tr.WriteFile("ctl", []byte("abcde"), false); err != nil {
		t.Fatal(err)
	}
	if want := []int64{0, 2, 4}; !slices.Equal(rec.offs, want) {
		t.Errorf("offsets = %v, want %v", rec.offs, want)
	}
}

func TestHandleErrnos(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		ops   debugfs.FileOps
		flags int
		io    func(h *debugfs.Handle) error
		want  syscall.Errno
	}{
		{"read without show", debugfs.FileOps{}, os.O_RDONLY,
			func(h *debugfs.Handle) error { _, err := h.Read(ctx, make([]byte, 8), 0); return err }, syscall.EINVAL},
		{"write without write", debugfs.FileOps{Show: showString("x")}, os.O_WRONLY,
			func(h *debugfs.Handle) error { _, err := h.Write(ctx, []byte("1"), 0); return err }, syscall.EINVAL},
		{"read on write-only", debugfs.FileOps{Show: showString("x")}, os.O_WRONLY,
			func(h *debugfs.Handle) error { _, err := h.Read(ctx, make([]byte, 8), 0); return err }, syscall.EBADF},
		{"write on read-only", debugfs.FileOps{Write: acceptAll}, os.O_RDONLY,
			func(h *debugfs.Handle) error { _, err := h.Write(ctx, []byte("1"), 0); return err }, syscall.EBADF},
		{"read-write both", debugfs.FileOps{Show: showString("x"), Write: acceptAll}, os.O_RDWR,
			func(h *debugfs.Handle) error {
				if _, err := h.Write(ctx, []byte("1"), 0); err != nil {
					return err
				}
				_, err := h.Read(ctx, make([]byte, 8), 0)
				return err
			}, 0},
		{"negative offset", debugfs.FileOps{Show: showString("x")}, os.O_RDONLY,
			func(h *debugfs.Handle) error { _, err := h.Read(ctx, make([]byte, 8), -1); return err }, syscall.EINVAL},
		{"bad write count", debugfs.FileOps{Write: func(context.Context, []byte, int64) (int, error) { return 99, nil }}, os.O_WRONLY,
			func(h *debugfs.Handle) error { _, err := h.Write(ctx, []byte("1"), 0); return err }, syscall.EIO},
		{"ftruncate", debugfs.FileOps{Truncate: func(context.Context) error { return syscall.EBUSY }}, os.O_WRONLY,
			func(h *debugfs.Handle) error { return h.Truncate(ctx, 0) }, syscall.EBUSY},
		{"ftruncate nonzero", debugfs.FileOps{Truncate: func(context.Context) error { return syscall.EBUSY }}, os.O_WRONLY,
			func(h *debugfs.Handle) error { return h.Truncate(ctx, 5) }, 0},
		{"ftruncate read-only", debugfs.FileOps{}, os.O_RDONLY,
			func(h *debugfs.Handle) error { return h.Truncate(ctx, 0) }, syscall.EBADF},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := debugfs.NewTree()
			if _, err := tr.CreateFile("f", 0o600, tc.ops); err != nil {
				t.Fatal(err)
			}
			h, err := tr.Open(ctx, "f", tc.flags)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Release()
			if got := errnoOf(t, tc.io(h)); got != tc.want {
				t.Errorf("errno = %v, want %v", got, tc.want)
			}
		})
	}
}

func acceptAll(_ context.Context, p []byte, _ int64) (int, error) { return len(p), nil }

func TestTruncateOnlyForWriters(t *testing.T) {
	tr := debugfs.NewTree()
	rec := &recorder{}
	f, err := tr.CreateFile("trace", 0o644, rec.ops())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// Linux's probes_open clears only when opened for writing.
	h, err := f.Open(ctx, os.O_RDONLY|os.O_TRUNC)
	if err != nil {
		t.Fatal(err)
	}
	h.Release()
	if rec.truncs != 0 {
		t.Errorf("O_RDONLY|O_TRUNC truncated")
	}
	if err := f.Truncate(ctx, 0); err != nil || rec.truncs != 1 {
		t.Errorf("Truncate(0): %v, truncs %d", err, rec.truncs)
	}
	if err := f.Truncate(ctx, -1); errnoOf(t, err) != syscall.EINVAL {
		t.Errorf("Truncate(-1) = %v", err)
	}
}

func TestRemovedFile(t *testing.T) {
	tr := debugfs.NewTree()
	if _, err := tr.MkdirAll("events/kprobes/p1", 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := tr.CreateFile("events/kprobes/p1/enable", 0o644, debugfs.FileOps{Show: showString("0\n"), Write: acceptAll})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	h, err := f.Open(ctx, os.O_RDWR)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	if err := tr.RemoveAll("events/kprobes/p1"); err != nil {
		t.Fatal(err)
	}
	if !f.Removed() {
		t.Error("file below removed dir not marked removed")
	}
	if _, err := h.Read(ctx, make([]byte, 4), 0); errnoOf(t, err) != syscall.EIO {
		t.Errorf("read of removed = %v, want EIO", err)
	}
	if _, err := h.Write(ctx, []byte("1"), 0); errnoOf(t, err) != syscall.EIO {
		t.Errorf("write of removed = %v, want EIO", err)
	}
	if _, err := f.Open(ctx, os.O_RDONLY); errnoOf(t, err) != syscall.ENOENT {
		t.Errorf("open of removed = %v, want ENOENT", err)
	}
	if _, err := tr.Lookup("events/kprobes/p1/enable"); errnoOf(t, err) != syscall.ENOENT {
		t.Errorf("lookup of removed = %v, want ENOENT", err)
	}
	// A re-created directory of the same name is a new node.
	d, err := tr.Mkdir("events/kprobes/p1", 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if d.Ino() == f.Parent().Ino() {
		t.Error("re-created dir reuses the inode number")
	}
	if _, err := f.Parent().Mkdir("x", 0o755); errnoOf(t, err) != syscall.ENOENT {
		t.Errorf("mkdir in removed dir = %v, want ENOENT", err)
	}
}

// TestCallbackMayChangeTree checks that callbacks run without tree locks:
// a write to a control file creates a directory, as kprobe_events does.
func TestCallbackMayChangeTree(t *testing.T) {
	tr := debugfs.NewTree()
	events, err := tr.MkdirAll("events/kprobes", 0o755)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tr.CreateFile("kprobe_events", 0o644, debugfs.FileOps{
		Write: func(_ context.Context, p []byte, _ int64) (int, error) {
			if _, err := events.Mkdir(strings.TrimSpace(string(p)), 0o755); err != nil {
				return 0, err
			}
			return len(p), nil
		},
		Truncate: func(context.Context) error {
			for _, n := range events.Names() {
				if err := events.RemoveAll(n); err != nil {
					return err
				}
			}
			return nil
		},
		Show: func(_ context.Context, w *bytes.Buffer) error {
			_, err := tr.ReadDir("events/kprobes")
			return err
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range []string{"a", "b"} {
		if err := tr.WriteFile("kprobe_events", []byte(ev+"\n"), false); err != nil {
			t.Fatal(err)
		}
	}
	if got := events.Names(); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("events = %q", got)
	}
	if err := tr.WriteFile("kprobe_events", []byte("a\n"), false); errnoOf(t, err) != syscall.EEXIST {
		t.Errorf("duplicate = %v, want EEXIST", err)
	}
	if err := tr.WriteFile("kprobe_events", nil, true); err != nil {
		t.Fatal(err)
	}
	if got := events.Names(); len(got) != 0 {
		t.Errorf("after truncate: %q", got)
	}
	if _, err := tr.ReadFile("kprobe_events"); err != nil {
		t.Fatal(err)
	}
}

func TestStreamRead(t *testing.T) {
	tr := debugfs.NewTree()
	var consumed atomic.Int32
	_, err := tr.CreateFile("trace_pipe", 0o444, debugfs.FileOps{
		Read: func(_ context.Context, p []byte, _ int64) (int, error) {
			if consumed.Add(1) > 2 {
				return 0, nil
			}
			return copy(p, "line\n"), nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := tr.ReadFile("trace_pipe")
	if err != nil || string(got) != "line\nline\n" {
		t.Errorf("ReadFile = %q, %v", got, err)
	}
}

// TestConcurrentAddRemove adds and removes event directories while other
// goroutines list, walk and read; run with -race.
func TestConcurrentAddRemove(t *testing.T) {
	tr := debugfs.NewTree()
	events, err := tr.MkdirAll("tracing/events/kprobes", 0o755)
	if err != nil {
		t.Fatal(err)
	}
	const workers, rounds = 4, 200
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range rounds {
				name := fmt.Sprintf("ev%d_%d", w, i%5)
				d, err := tr.MkdirAll("tracing/events/kprobes/"+name, 0o755)
				if err != nil {
					t.Error(err)
					return
				}
				// The directory may be removed by now by RemoveAll of
				// another round of this worker; either result is fine.
				_, _ = d.CreateFile("enable", 0o644, debugfs.FileOps{Show: showString("0\n")})
				if i%2 == 1 {
					if err := events.RemoveAll(name); err != nil && errnoOf(t, err) != syscall.ENOENT {
						t.Error(err)
					}
				}
			}
		})
		wg.Go(func() {
			for range rounds {
				for _, n := range events.Children() {
					_, _ = tr.ReadFile(n.Path() + "/enable")
				}
				_ = tr.Walk("tracing", func(string, debugfs.Node) error { return nil })
			}
		})
	}
	wg.Wait()
	for _, n := range events.Children() {
		if n.Removed() {
			t.Errorf("%s listed but removed", n.Path())
		}
	}
}

// A stream file with OpenRead gets a reader per open, which keeps its
// own state (trace_pipe keeps the rest of a line per open); the open's
// flags reach it, and its error is the open's.
func TestOpenReadPerOpen(t *testing.T) {
	tr := debugfs.NewTree()
	var flagsSeen []int
	_, err := tr.CreateFile("pipe", 0o440, debugfs.FileOps{
		OpenRead: func(_ context.Context, flags int) (debugfs.Reader, error) {
			if flags&syscall.O_NONBLOCK != 0 && flags&syscall.O_SYNC != 0 {
				return nil, syscall.EINVAL
			}
			flagsSeen = append(flagsSeen, flags)
			n := 0
			return debugfs.ReadFunc(func(_ context.Context, p []byte, _ int64) (int, error) {
				n++
				return copy(p, fmt.Sprintf("read %d\n", n)), nil
			}), nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, err := tr.Open(ctx, "pipe", os.O_RDONLY|syscall.O_NONBLOCK)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	b, err := tr.Open(ctx, "pipe", os.O_RDONLY)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	if !a.Stream() {
		t.Error("a file with OpenRead is not a stream")
	}
	buf := make([]byte, 16)
	for _, tc := range []struct {
		h    *debugfs.Handle
		want string
	}{{a, "read 1\n"}, {a, "read 2\n"}, {b, "read 1\n"}, {a, "read 3\n"}} {
		n, err := tc.h.Read(ctx, buf, 0)
		if err != nil || string(buf[:n]) != tc.want {
			t.Errorf("read = %q, %v; want %q", buf[:n], err, tc.want)
		}
	}
	if len(flagsSeen) != 2 || flagsSeen[0]&syscall.O_NONBLOCK == 0 || flagsSeen[1]&syscall.O_NONBLOCK != 0 {
		t.Errorf("flags seen %#x", flagsSeen)
	}
	if _, err := tr.Open(ctx, "pipe", os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_SYNC); errnoOf(t, err) != syscall.EINVAL {
		t.Errorf("open with a failing OpenRead = %v, want EINVAL", err)
	}
	w, err := tr.Open(ctx, "pipe", os.O_WRONLY)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Release()
	if _, err := w.Read(ctx, buf, 0); errnoOf(t, err) != syscall.EBADF {
		t.Errorf("read of a write-only open = %v, want EBADF", err)
	}
	if len(flagsSeen) != 2 {
		t.Error("OpenRead ran for an open for writing")
	}
}

// A directory with DirOps has its mkdir(2) and rmdir(2) made by them;
// one without is EPERM for both. Busy sees an open file below.
func TestDirOpsAndBusy(t *testing.T) {
	tree := debugfs.NewTree()
	d, err := tree.Mkdir("inst", 0o750)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.UserMkdir("x"); !errors.Is(err, syscall.EPERM) {
		t.Errorf("mkdir without ops = %v, want EPERM", err)
	}
	if err := d.UserRmdir("x"); !errors.Is(err, syscall.EPERM) {
		t.Errorf("rmdir without ops = %v, want EPERM", err)
	}
	d.SetOps(debugfs.DirOps{
		Mkdir: func(name string) error {
			c, err := d.Mkdir(name, 0o750)
			if err != nil {
				return err
			}
			_, err = c.CreateFile("f", 0o640, debugfs.FileOps{})
			return err
		},
		Rmdir: func(name string) error {
			n, err := d.Lookup(name)
			if err != nil {
				return err
			}
			if n.(*debugfs.Dir).Busy() {
				return syscall.EBUSY
			}
			return d.RemoveAll(name)
		},
	})
	if err := d.UserMkdir("a/b"); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("mkdir a/b = %v, want EINVAL", err)
	}
	if err := d.UserMkdir("a"); err != nil {
		t.Fatal(err)
	}
	if err := d.UserMkdir("a"); !errors.Is(err, syscall.EEXIST) {
		t.Errorf("second mkdir = %v, want EEXIST", err)
	}
	h, err := tree.Open(context.Background(), "inst/a/f", os.O_RDONLY)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.UserRmdir("a"); !errors.Is(err, syscall.EBUSY) {
		t.Errorf("rmdir with a file open = %v, want EBUSY", err)
	}
	a, err := tree.LookupDir("inst/a")
	if err != nil {
		t.Fatal(err)
	}
	if a.WaitIdle(0) {
		t.Error("WaitIdle(0) with a file open = true")
	}
	go func() { h.Release(); h.Release() }() // twice is harmless, and counts once
	if !a.WaitIdle(time.Hour) {              // returns at the release
		t.Error("WaitIdle after the release = false")
	}
	if err := d.UserRmdir("a"); err != nil {
		t.Errorf("rmdir after release: %v", err)
	}
}
