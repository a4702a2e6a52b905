package machine

import (
	"sync"
	"time"
)

// PL031 register offsets (Arm PrimeCell RTC PL031 TRM, DDI 0224).
const (
	rtcDR   = 0x00 // data: the current time in seconds
	rtcMR   = 0x04 // match
	rtcLR   = 0x08 // load: sets the time
	rtcCR   = 0x0c // control: start
	rtcIMSC = 0x10
	rtcRIS  = 0x14
	rtcMIS  = 0x18
	rtcICR  = 0x1c
	rtcIDs  = 0xfe0
)

// pl031IDs are PeriphID0..3 then PCellID0..3, one byte per word.
const pl031IDs = "\x31\x10\x14\x00\x0d\xf0\x05\xb1"

// defaultEpoch is the deterministic RTC's time at counter zero.
var defaultEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// pl031 is the real-time clock. In deterministic mode it counts seconds of
// the system counter from a fixed epoch, so that guest time of day is
// reproducible; in parallel mode it reads the host's wall clock. The match
// interrupt is raised when the seconds counter reaches MR.
type pl031 struct {
	m     *Machine
	epoch int64 // seconds at counter zero (deterministic mode)
	irq   func(level bool)

	mu     sync.Mutex
	offset int64 // added to the clock by writes to LR
	lr, mr uint32
	imsc   uint32
	ris    uint32
	last   uint32 // seconds at the last poll, to detect MR being reached
	level  bool
	alarm  *time.Timer // parallel mode: fires when MR is reached
}

func newPL031(m *Machine, epoch time.Time, irq func(bool)) *pl031 {
	if epoch.IsZero() {
		epoch = defaultEpoch
	}
	r := &pl031{m: m, epoch: epoch.Unix(), irq: irq}
	r.reset()
	return r
}

func (r *pl031) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.offset, r.lr, r.mr, r.imsc, r.ris = 0, 0, 0, 0, 0
	if r.alarm != nil {
		r.alarm.Stop()
	}
	r.last = r.seconds(r.m.systemCounter(0))
	r.update()
}

// seconds returns the RTC value at system counter value now. r.mu held.
func (r *pl031) seconds(now uint64) uint32 {
	if r.m.parallel {
		return uint32(time.Now().Unix() + r.offset)
	}
	return uint32(r.epoch + int64(now/cntFrequency) + r.offset)
}

func (r *pl031) update() {
	level := r.ris&r.imsc != 0
	if level != r.level {
		r.level = level
		r.irq(level)
	}
}

// poll raises the match interrupt if the clock reached MR since the last
// poll, and returns the system counter value at which it next will (or
// noDeadline), for the deterministic scheduler.
func (r *pl031) poll(now uint64) uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.seconds(now)
	if s != r.last {
		if r.mr-r.last-1 < s-r.last { // MR in (last, s], modulo 2^32
			r.ris |= 1
			r.update()
		}
		r.last = s
	}
	if r.m.parallel || r.imsc == 0 {
		return noDeadline // nothing would be signalled; no need to stop for it
	}
	ahead := uint64(r.mr - s)
	if ahead == 0 {
		return noDeadline
	}
	// The counter value at which seconds() becomes MR.
	return (now/cntFrequency + ahead) * cntFrequency
}

// armAlarm schedules, in parallel mode, a poll when the clock reaches MR.
// r.mu held.
func (r *pl031) armAlarm() {
	if !r.m.parallel {
		return
	}
	if r.alarm != nil {
		r.alarm.Stop()
	}
	ahead := time.Duration(r.mr-r.seconds(0)) * time.Second
	r.alarm = time.AfterFunc(ahead, func() { r.poll(0) })
}

func (r *pl031) read(_ int, off uint64, _ int) uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch off {
	case rtcDR:
		return uint64(r.seconds(r.m.systemCounter(0)))
	case rtcMR:
		return uint64(r.mr)
	case rtcLR:
		return uint64(r.lr)
	case rtcCR:
		return 1 // always running, as QEMU's model
	case rtcIMSC:
		return uint64(r.imsc)
	case rtcRIS:
		return uint64(r.ris)
	case rtcMIS:
		return uint64(r.ris & r.imsc)
	}
	if off >= rtcIDs && off < rtcIDs+32 && off%4 == 0 {
		return uint64(pl031IDs[(off-rtcIDs)/4])
	}
	return 0
}

func (r *pl031) write(_ int, off uint64, _ int, v uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.m.systemCounter(0)
	switch off {
	case rtcMR:
		r.mr = uint32(v)
		r.armAlarm()
	case rtcLR:
		r.lr = uint32(v)
		r.offset += int64(uint32(v)) - int64(r.seconds(now))
		r.last = uint32(v)
		r.armAlarm()
	case rtcIMSC:
		r.imsc = uint32(v) & 1
	case rtcICR:
		r.ris &^= uint32(v) & 1
	case rtcCR:
		// Writes are ignored: the clock always runs and cannot be stopped.
	}
	r.update()
}

// RTCTime is the time of day the PL031 keeps, to the nanosecond: in
// deterministic mode its epoch plus the system counter's time, in
// parallel mode the host's clock, and either moved by what the guest
// loaded into it. It is for a wall clock on the host's side of the
// guest (the trace clock "tai" reads it).
func (m *Machine) RTCTime() time.Time {
	r := m.rtc
	r.mu.Lock()
	defer r.mu.Unlock()
	if m.parallel {
		return time.Now().Add(time.Duration(r.offset) * time.Second)
	}
	now := m.systemCounter(0)
	ns := now % cntFrequency * uint64(time.Second) / cntFrequency
	return time.Unix(r.epoch+int64(now/cntFrequency)+r.offset, int64(ns))
}
