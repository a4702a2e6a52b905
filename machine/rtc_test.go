package machine

import (
	"log/slog"
	"testing"
	"time"
)

func TestRTC(t *testing.T) {
	epoch := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	m, err := New(Config{RAMSize: testRAM, Epoch: epoch, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	m.Boot(testCode, 0)
	r := m.rtc
	if got := r.read(0, rtcDR, 4); got != uint64(epoch.Unix()) {
		t.Fatalf("DR = %d, want %d", got, epoch.Unix())
	}
	for off, want := range map[uint64]uint64{rtcCR: 1, 0xfe0: 0x31, 0xff0: 0x0d, 0xffc: 0xb1} {
		if got := r.read(0, off, 4); got != want {
			t.Errorf("read %#x = %#x, want %#x", off, got, want)
		}
	}
	// Two seconds of counter later the clock reads two more.
	m.counterSkew.Store(2 * cntFrequency)
	if got := r.read(0, rtcDR, 4); got != uint64(epoch.Unix())+2 {
		t.Fatalf("DR after 2 s = %d", got)
	}
	// LR sets the time; MR 3 seconds ahead raises the match interrupt.
	r.write(0, rtcLR, 4, 1000)
	if got := r.read(0, rtcDR, 4); got != 1000 {
		t.Fatalf("DR after LR = %d", got)
	}
	r.write(0, rtcMR, 4, 1003)
	r.write(0, rtcIMSC, 4, 1)
	d := m.evalTimers()
	if d != 5*cntFrequency {
		t.Fatalf("alarm deadline %d, want %d", d, 5*cntFrequency)
	}
	if r.read(0, rtcRIS, 4) != 0 {
		t.Fatal("RIS early")
	}
	m.counterSkew.Store(d)
	m.evalTimers()
	if r.read(0, rtcRIS, 4) != 1 || r.read(0, rtcMIS, 4) != 1 || !m.gic.state(0, IRQRTC).level {
		t.Fatalf("match: RIS %d MIS %d line %v", r.read(0, rtcRIS, 4), r.read(0, rtcMIS, 4), m.gic.state(0, IRQRTC).level)
	}
	r.write(0, rtcICR, 4, 1)
	if r.read(0, rtcRIS, 4) != 0 || m.gic.state(0, IRQRTC).level {
		t.Fatal("ICR did not clear the interrupt")
	}
}
