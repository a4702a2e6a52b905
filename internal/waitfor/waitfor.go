// Package waitfor lets tests wait for the event they need instead of for
// wall time: a condition polled until it holds, or a value received from
// a channel. The only clock is an overall bound that turns a hang into a
// failure with a message; it is generous (minutes), since on a loaded
// machine, or under -race, the guest runs many times slower than usual
// and a correct test must still pass there.
package waitfor

import (
	"time"
)

// Bound is how long a wait lasts before the test fails: long enough that
// only a hang reaches it, short enough to fail before go test's default
// 10-minute timeout kills the whole package without saying what hung.
const Bound = 4 * time.Minute

// T is what the helpers need of a *testing.T or *testing.B.
type T interface {
	Helper()
	Fatalf(format string, args ...any)
}

// Deadline is when a wait that starts now gives up: after Bound, or a
// little before the test binary's own deadline (go test -timeout) if
// that comes first, so that the failure names what it waited for. It is
// for a test's own loop whose every step waits for an event.
func Deadline(t T) time.Time {
	d := time.Now().Add(Bound)
	if td, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if end, ok := td.Deadline(); ok {
			if end = end.Add(-5 * time.Second); end.Before(d) {
				d = end
			}
		}
	}
	return d
}

// Until polls cond, more and more sparsely (1 ms up to 20 ms apart, so
// that polling does not steal the guest's CPU), until it returns true.
// It fails the test, naming what, if that takes longer than Bound.
func Until(t T, what string, cond func() bool) {
	t.Helper()
	end := Deadline(t)
	for pause := time.Millisecond; !cond(); pause = min(2*pause, 20*time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("waited %v for %s: a hang", Bound, what)
		}
		time.Sleep(pause)
	}
}

// Recv returns the next value from ch (the zero value once ch is
// closed). It fails the test, naming what, if none comes within Bound.
func Recv[V any](t T, what string, ch <-chan V) V {
	t.Helper()
	timer := time.NewTimer(time.Until(Deadline(t)))
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("waited %v for %s: a hang", Bound, what)
		var zero V
		return zero
	}
}
