package fuse_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/kpemu/kpemu/debugfs"
)

// readAll reads the file at p with read(2) to EOF.
func readAll(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Each way a program can read a file: the bytes it got, or its error.
var readWays = []struct {
	name string
	read func(t *testing.T, p string) ([]byte, error)
}{
	{"pread", func(t *testing.T, p string) ([]byte, error) {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		// Backwards, at odd offsets, as tail(1) reads.
		var chunks [][]byte
		for off := int64(0); ; off += 1000 {
			b := make([]byte, 1000)
			n, err := unix.Pread(int(f.Fd()), b, off)
			if err != nil {
				return nil, err
			}
			if n == 0 {
				break
			}
			chunks = append(chunks, b[:n])
		}
		return bytes.Join(chunks, nil), nil
	}},
	{"readv", func(t *testing.T, p string) ([]byte, error) {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		var out []byte
		for {
			a, b := make([]byte, 7), make([]byte, 4093)
			n, err := unix.Readv(int(f.Fd()), [][]byte{a, b})
			if err != nil {
				return nil, err
			}
			if n == 0 {
				return out, nil
			}
			out = append(out, append(a, b...)[:n]...)
		}
	}},
	{"sendfile", func(t *testing.T, p string) ([]byte, error) {
		return copyVia(t, p, func(in, out int) (int, error) { return unix.Sendfile(out, in, nil, 1<<20) })
	}},
	{"fstat+sendfile", func(t *testing.T, p string) ([]byte, error) {
		// Python's shutil.copyfile sizes its sendfile by fstat(2).
		return copyVia(t, p, func(in, out int) (int, error) {
			var st unix.Stat_t
			if err := unix.Fstat(in, &st); err != nil {
				return 0, err
			}
			return unix.Sendfile(out, in, nil, max(int(st.Size), 1<<20))
		})
	}},
	{"splice", func(t *testing.T, p string) ([]byte, error) {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r, w, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		defer r.Close()
		var out []byte
		for {
			n, err := unix.Splice(int(f.Fd()), nil, int(w.Fd()), nil, 1<<16, 0)
			if err != nil {
				w.Close()
				return nil, err
			}
			if n == 0 {
				w.Close()
				rest, err := io.ReadAll(r)
				return append(out, rest...), err
			}
			b := make([]byte, n)
			if _, err := io.ReadFull(r, b); err != nil {
				return nil, err
			}
			out = append(out, b...)
		}
	}},
	{"copy_file_range", func(t *testing.T, p string) ([]byte, error) {
		return copyVia(t, p, func(in, out int) (int, error) { return unix.CopyFileRange(in, nil, out, nil, 1<<20, 0) })
	}},
}

// copyVia copies the file at p to a temporary file with op until op
// returns 0, and returns what arrived.
func copyVia(t *testing.T, p string, op func(in, out int) (int, error)) ([]byte, error) {
	in, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	dst := filepath.Join(t.TempDir(), "copy")
	out, err := os.Create(dst)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	for {
		n, err := op(int(in.Fd()), int(out.Fd()))
		if err != nil {
			return nil, err
		}
		if n == 0 {
			break
		}
	}
	return os.ReadFile(dst)
}

// TestReadPaths reads snapshot files every way a program reads a file
// and requires the bytes read(2) gives, or an errno after which programs
// fall back to read(2) (copy_file_range across file systems is EXDEV, as
// for Linux's debugfs).
func TestReadPaths(t *testing.T) {
	tr := debugfs.NewTree()
	var big strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&big, "line %d\n", i)
	}
	files := map[string]string{
		"small": "c0080000  k  do_fork+0x0    [DISABLED]\n",
		"big":   big.String(),
		"empty": "",
	}
	for name, content := range files {
		if _, err := tr.CreateFile(name, 0o444, debugfs.FileOps{Show: showString(content)}); err != nil {
			t.Fatal(err)
		}
	}
	dir := mount(t, tr)
	for name, content := range files {
		p := filepath.Join(dir, name)
		if got := readAll(t, p); string(got) != content {
			t.Fatalf("%s: read(2) got %d bytes, want %d", name, len(got), len(content))
		}
		for _, way := range readWays {
			t.Run(name+"/"+way.name, func(t *testing.T) {
				got, err := way.read(t, p)
				if way.name == "copy_file_range" && errors.Is(err, syscall.EXDEV) {
					return
				}
				if err != nil {
					t.Fatalf("%v", err)
				}
				if string(got) != content {
					t.Errorf("got %d bytes, want the %d that read(2) gives", len(got), len(content))
				}
			})
		}
		var st syscall.Stat_t
		if err := syscall.Stat(p, &st); err != nil || st.Size != 0 {
			t.Errorf("%s: stat size %d (%v), want 0 as debugfs", name, st.Size, err)
		}
	}
}

// TestStreamSendfile: a blocking stream cannot be spliced through the
// page cache; sendfile fails with EINVAL (busybox cat and Python then
// read(2)), never with a silent 0, and read(2) still blocks for data.
func TestStreamSendfile(t *testing.T) {
	tr := debugfs.NewTree()
	data := make(chan string, 1)
	if _, err := tr.CreateFile("pipe", 0o440, debugfs.FileOps{Read: func(ctx context.Context, p []byte, _ int64) (int, error) {
		select {
		case s := <-data:
			return copy(p, s), nil
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}}); err != nil {
		t.Fatal(err)
	}
	dir := mount(t, tr)
	p := filepath.Join(dir, "pipe")
	for _, way := range readWays {
		switch way.name {
		case "sendfile", "fstat+sendfile", "splice":
		default:
			continue
		}
		t.Run(way.name, func(t *testing.T) {
			if _, err := way.read(t, p); !errors.Is(err, syscall.EINVAL) {
				t.Errorf("err = %v, want EINVAL", err)
			}
		})
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data <- "hit\n"
	b := make([]byte, 100)
	if n, err := f.Read(b); err != nil || string(b[:n]) != "hit\n" {
		t.Errorf("read = %q, %v", b[:n], err)
	}
}

// TestStatWhileOpen: a process that has a file open sees its open's
// length, so that sendfile sized by fstat copies it all; any other
// process sees 0, as on debugfs.
func TestStatWhileOpen(t *testing.T) {
	tr := debugfs.NewTree()
	if _, err := tr.CreateFile("f", 0o444, debugfs.FileOps{Show: showString("twelve bytes")}); err != nil {
		t.Fatal(err)
	}
	dir := mount(t, tr)
	f, err := os.Open(filepath.Join(dir, "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() != 12 {
		t.Errorf("fstat by the opener: size %v (%v), want 12", st.Size(), err)
	}
	if r := sh(t, dir, `stat -c %s "$D/f"`); r.stdout != "0\n" {
		t.Errorf("stat by another process: %q %q, want 0", r.stdout, r.stderr)
	}
}
