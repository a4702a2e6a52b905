//go:build linux && (amd64 || arm64)

package shadow

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// TestForkReplayedOnce holds procTable to one Fork per host fork, whichever
// of the parent's fork event and the child's first stop the tracer sees
// first, and however late the event comes: a second Fork makes a twin
// that never exits, and the guest runs out of tasks. The test process
// plays the child and its parent the forking thread (procStatus reads
// their /proc entries).
func TestForkReplayedOnce(t *testing.T) {
	parent, child := os.Getppid(), os.Getpid()
	type step int
	const (
		event     step = iota // the parent's PTRACE_EVENT_VFORK
		first                 // the child's first stop
		childGone             // the child reaped
		parentGone
	)
	tests := []struct {
		name  string
		steps []step
	}{
		{"event first", []step{event, first, childGone}},
		{"child first", []step{first, event, childGone}},
		{"child reaped before the event", []step{first, childGone, event}},
		{"parent reaped without its event", []step{first, parentGone, childGone}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pt := newProcTable()
			pt.adopt(parent)
			pt.forking(parent, Request{Op: Fork, Flags: cloneVM | cloneVFork | sigchld})
			forks := 0
			for _, s := range tt.steps {
				var r Request
				var ok bool
				switch s {
				case event:
					r, ok = pt.forked(parent, child, unix.PTRACE_EVENT_VFORK)
				case first:
					if !pt.known(child) {
						r, ok = pt.first(child)
					}
				case childGone:
					pt.gone(child)
				case parentGone:
					pt.gone(parent)
				}
				if ok {
					if r.Op != Fork || r.Child != child || r.PID != parent {
						t.Errorf("replayed %+v, want the Fork of %d by %d", r, child, parent)
					}
					forks++
				}
			}
			if forks != 1 {
				t.Errorf("%d Forks replayed, want 1", forks)
			}
			if len(pt.early) != 0 {
				t.Errorf("early = %v after the fork is settled", pt.early)
			}
		})
	}
}
