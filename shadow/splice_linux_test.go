//go:build linux && (amd64 || arm64)

package shadow

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/kpemu/kpemu/debugfs"
)

// fakeStream is a stream file whose splice the test feeds: chunks taken
// in order, a wait that tells the test it waits and ends when a chunk
// comes (again) or the test says stop (0).
type fakeStream struct {
	mu      sync.Mutex
	chunks  [][]byte
	wake    chan struct{} // closed when a chunk is added or stop is set
	stop    bool
	waiting chan struct{} // receives once a splice waits
}

func newFakeStream() *fakeStream {
	return &fakeStream{wake: make(chan struct{}), waiting: make(chan struct{}, 16)}
}

func (f *fakeStream) add(chunk []byte, stop bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if chunk != nil {
		f.chunks = append(f.chunks, chunk)
	}
	f.stop = f.stop || stop
	close(f.wake)
	f.wake = make(chan struct{})
}

func (f *fakeStream) Read(context.Context, []byte, int64) (int, error) { return 0, syscall.EINVAL }

func (f *fakeStream) SpliceRead(_ context.Context, p []byte, want int) (int, error) {
	if want == 0 {
		return 0, nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.chunks) == 0 {
		return 0, syscall.EAGAIN
	}
	n := copy(p, f.chunks[0])
	f.chunks = f.chunks[1:]
	return n, nil
}

func (f *fakeStream) SpliceWait(ctx context.Context) (bool, error) {
	for {
		f.mu.Lock()
		ready, stop, wake := len(f.chunks) > 0, f.stop, f.wake
		f.mu.Unlock()
		switch {
		case ready:
			return true, nil
		case stop:
			return false, nil
		}
		f.waiting <- struct{}{}
		select {
		case <-ctx.Done():
			return false, syscall.EINTR
		case <-wake:
		}
	}
}

// spliceHelper splices the file args[0] into a pipe as each of args[1:]
// says ("block": blocking; "nonblock": SPLICE_F_NONBLOCK; "offset": with
// an off_in; "noreader": into a pipe whose read end is closed;
// "tofile": into a regular file), printing what each returned
// and what the pipe got.
func spliceHelper(args []string) error {
	in, err := unix.Open(args[0], unix.O_RDONLY, 0)
	if err != nil {
		return err
	}
	var p [2]int
	if err := unix.Pipe(p[:]); err != nil {
		return err
	}
	for _, how := range args[1:] {
		out, flags := p[1], 0
		var off *int64
		switch how {
		case "nonblock":
			flags = unix.SPLICE_F_NONBLOCK
		case "offset":
			off = new(int64)
		case "noreader":
			var q [2]int
			if err := unix.Pipe(q[:]); err != nil {
				return err
			}
			unix.Close(q[0])
			defer unix.Close(q[1])
			out = q[1]
		case "tofile":
			f, err := os.CreateTemp("", "splice")
			if err != nil {
				return err
			}
			defer os.Remove(f.Name())
			out = int(f.Fd())
		}
		n, err := unix.Splice(in, off, out, nil, 65536, flags)
		if err != nil {
			fmt.Printf("%s: %v\n", how, err)
			continue
		}
		buf := make([]byte, n)
		if n > 0 {
			if _, err := unix.Read(p[0], buf); err != nil {
				return err
			}
		}
		fmt.Printf("%s: %d %q\n", how, n, bytes.TrimRight(buf, "\x00"))
	}
	return nil
}

// A sealed process's splice(2) of a kpemu stream gets what the stream's
// splice takes (package internal/splicectl), waits in the stream's wait
// when there is nothing, and fails as Linux's does for bad arguments.
func TestSealSplice(t *testing.T) {
	stream := newFakeStream()
	tree := debugfs.NewTree()
	if _, err := tree.CreateFile("raw", 0o440, debugfs.FileOps{
		OpenRead: func(context.Context, int) (debugfs.Reader, error) { return stream, nil },
	}); err != nil {
		t.Fatal(err)
	}
	mnt, tables := mountTree(t, tree)

	page := bytes.Repeat([]byte("p"), 8)
	stream.add(append([]byte("one"), page...), false)
	stream.add([]byte("two"), false)
	// The third splice waits: feed it once it does, then stop the one
	// after.
	go func() {
		<-stream.waiting
		stream.add([]byte("late"), false)
		<-stream.waiting
		stream.add(nil, true)
	}()
	sup := &Supervisor{Replay: (&recorder{}).replay, Log: testLogger(t), Seal: &Seal{Tracefs: mnt, Dir: tables}}
	out := string(supervise(t, sup, []string{"SHADOW_MODE=seal", "SHADOW_THEN=splice"}, "exec", os.Args[0],
		filepath.Join(mnt, "raw"), "block", "nonblock", "block", "block", "offset", "noreader", "tofile"))
	want := strings.Join([]string{
		`block: 14 "onepppppppptwo"`,
		`nonblock: resource temporarily unavailable`,
		`block: 4 "late"`,
		`block: 0 ""`,
		`offset: invalid argument`,
		`noreader: broken pipe`, // and SIGPIPE, which Go ignores there
		`tofile: invalid argument`,
	}, "\n") + "\n"
	if out != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
}
