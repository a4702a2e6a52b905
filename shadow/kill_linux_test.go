//go:build linux && (amd64 || arm64)

package shadow

import (
	"math"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

func TestKillErrno(t *testing.T) {
	self := os.Getpid()
	tests := []struct {
		name string
		pid  int
		sig  int32
		want unix.Errno
	}{
		{"self", self, 15, 0},
		{"signal 0", self, 0, 0},
		{"own group", 0, 15, 0},
		{"bad signal", self, 65, unix.EINVAL},
		{"negative signal", self, -1, unix.EINVAL},
		{"INT_MIN", math.MinInt32, 9, unix.ESRCH},
		{"no such process", 1 << 22, 9, unix.ESRCH}, // past any pid_max
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := killErrno(unix.Gettid(), tt.pid, tt.sig); got != tt.want {
				t.Errorf("killErrno(%d, %d) = %v, want %v", tt.pid, tt.sig, got, tt.want)
			}
		})
	}
}
