package kernel

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kpemu/kpemu/internal/waitfor"
)

func TestGuestProgress(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name    string
		reports []uint64 // before the wait
		late    uint64   // reported while waiting, 0: none
		ctx     context.Context
		seq     uint64
		want    error
		at      uint64
	}{
		{"already there", []uint64{3}, 0, context.Background(), 2, nil, 3},
		{"reported while waiting", []uint64{1}, 2, context.Background(), 2, nil, 2},
		{"never backwards", []uint64{5, 3}, 0, context.Background(), 4, nil, 5},
		{"timeout", []uint64{1}, 0, context.Background(), 2, errGuestTimeout, 1},
		{"context", nil, 0, canceled, 1, context.Canceled, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p guestProgress
			for _, r := range tt.reports {
				p.report(r)
			}
			if tt.late != 0 {
				go func() {
					time.Sleep(10 * time.Millisecond)
					p.report(tt.late)
				}()
			}
			// The timeout case times out at once; the others must not
			// time out however late the host runs the reporter.
			timeout := waitfor.Bound
			if errors.Is(tt.want, errGuestTimeout) {
				timeout = time.Millisecond
			}
			if err := p.wait(tt.ctx, tt.seq, timeout); !errors.Is(err, tt.want) {
				t.Errorf("wait = %v, want %v", err, tt.want)
			}
			if got := p.at(); got != tt.at {
				t.Errorf("at = %d, want %d", got, tt.at)
			}
		})
	}
}
