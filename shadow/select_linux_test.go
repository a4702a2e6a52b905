//go:build linux && (amd64 || arm64)

package shadow

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"testing"

	"golang.org/x/sys/unix"

	"github.com/kpemu/kpemu/debugfs"
)

// pollStream is a fakeStream that polls readable while it has a chunk,
// and tells the test each time the seal asks.
type pollStream struct {
	*fakeStream
	asked chan struct{}
}

func (p *pollStream) PollIn() bool {
	select {
	case p.asked <- struct{}{}:
	default:
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.chunks) > 0
}

// selectHelper selects on the file args[0] (and a pipe) as each of
// args[2:] says, printing what select returned and which were ready:
// "wait50" waits 50 ms for the file; "pipe" waits for the file and a
// pipe that has data; "wait" makes the file args[1], then waits for the
// file without a timeout; "poll50" and "poll" poll(2) it, 50 ms or
// without a timeout.
func selectHelper(args []string) error {
	f, err := unix.Open(args[0], unix.O_RDONLY, 0)
	if err != nil {
		return err
	}
	var p [2]int
	if err := unix.Pipe(p[:]); err != nil {
		return err
	}
	for _, how := range args[2:] {
		if how == "poll50" || how == "poll" {
			// poll(2): 50 ms, or without a timeout
			ms := -1
			if how == "poll50" {
				ms = 50
			}
			fds := []unix.PollFd{{Fd: int32(f), Events: unix.POLLIN}}
			n, err := unix.Poll(fds, ms)
			for err == unix.EINTR { // the Go runtime's signals
				n, err = unix.Poll(fds, ms)
			}
			fmt.Printf("%s: %d %v revents %#x\n", how, n, err, fds[0].Revents)
			continue
		}
		var set unix.FdSet
		set.Set(f)
		var tv *unix.Timeval
		switch how {
		case "wait50":
			tv = &unix.Timeval{Usec: 50000}
		case "wait":
			if err := os.WriteFile(args[1], nil, 0o600); err != nil {
				return err
			}
		case "pipe":
			if _, err := unix.Write(p[1], []byte("x")); err != nil {
				return err
			}
			set.Set(p[0])
		}
		in := set
		n, err := unix.Select(max(f, p[0])+1, &set, nil, nil, tv)
		for err == unix.EINTR { // the Go runtime's signals; tv has the time left
			set = in
			n, err = unix.Select(max(f, p[0])+1, &set, nil, nil, tv)
		}
		if how == "pipe" {
			var b [1]byte
			_, _ = unix.Read(p[0], b[:])
		}
		fmt.Printf("%s: %d %v file %v pipe %v\n", how, n, err, set.IsSet(f), set.IsSet(p[0]))
	}
	return nil
}

// A sealed process's select(2) or poll(2) of a kpemu file that polls
// waits until the file is readable as Linux's poll would say (FUSE's
// would say at once), returns other descriptors that are ready without
// it, and times out.
func TestSealSelect(t *testing.T) {
	stream := &pollStream{fakeStream: newFakeStream(), asked: make(chan struct{}, 1)}
	tree := debugfs.NewTree()
	if _, err := tree.CreateFile("raw", 0o440, debugfs.FileOps{
		OpenRead: func(context.Context, int) (debugfs.Reader, error) { return stream, nil },
	}); err != nil {
		t.Fatal(err)
	}
	mnt, tables := mountTree(t, tree)
	// "wait" is asked twice before the chunk comes: it waits.
	marker := filepath.Join(t.TempDir(), "waiting")
	go func() {
		for n := 0; n < 2; {
			<-stream.asked
			if _, err := os.Stat(marker); err == nil {
				n++
			}
		}
		stream.add([]byte("late"), false)
	}()
	sup := &Supervisor{Replay: (&recorder{}).replay, Log: testLogger(t), Seal: &Seal{Tracefs: mnt, Dir: tables}}
	out := string(supervise(t, sup, []string{"SHADOW_MODE=seal", "SHADOW_THEN=select"}, "exec", os.Args[0],
		filepath.Join(mnt, "raw"), marker, "wait50", "poll50", "pipe", "wait", "pipe", "poll"))
	want := strings.Join([]string{
		`wait50: 0 <nil> file false pipe false`,
		`poll50: 0 <nil> revents 0x0`,
		`pipe: 1 <nil> file false pipe true`,
		`wait: 1 <nil> file true pipe false`,
		`pipe: 2 <nil> file true pipe true`,
		`poll: 1 <nil> revents 0x1`,
	}, "\n") + "\n"
	if out != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
}
