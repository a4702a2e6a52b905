package gdbstub

import (
	"context"
	"errors"
	"sync"
)

// fakeTarget is a Target with a few CPUs, one RAM range, and a scripted Run:
// a step advances the stepped CPU's PC by 4; otherwise Run returns the next
// scripted event, or, with none left, waits for its context.
type fakeTarget struct {
	mu      sync.Mutex
	regs    [][numRegs]uint64
	info    []CPUInfo
	base    uint64
	mem     []byte
	bps     map[uint64]bool
	wps     map[wpKey]bool
	script  []StopEvent
	runs    []int // stepCPU of each Run call
	writes  []Reg // registers written, in order
	running chan struct{}
	failBP  bool // SetBreakpoint fails
}

var errFakeFault = errors.New("fake: bad address")

func newFake(ncpu int) *fakeTarget {
	f := &fakeTarget{
		regs:    make([][numRegs]uint64, ncpu),
		info:    make([]CPUInfo, ncpu),
		base:    0x40000000,
		mem:     make([]byte, 0x2000),
		bps:     make(map[uint64]bool),
		wps:     make(map[wpKey]bool),
		running: make(chan struct{}, 100),
	}
	for i := range f.regs {
		for r := range f.regs[i] {
			f.regs[i][r] = uint64(i)<<32 | uint64(r)
		}
		f.regs[i][RegPC] = 0x40000000 + uint64(i)*0x100
		f.regs[i][RegCPSR] = 0x3c5
		f.info[i] = CPUInfo{PoweredOn: true, EL: 1}
	}
	for i := range f.mem {
		f.mem[i] = byte(i)
	}
	return f
}

func (f *fakeTarget) NumCPUs() int { return len(f.regs) }

func (f *fakeTarget) CPUInfo(cpu int) CPUInfo {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.info[cpu]
}

func (f *fakeTarget) ReadReg(cpu int, r Reg) (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v := f.regs[cpu][r]
	if r.size() == 4 {
		v = uint64(uint32(v))
	}
	return v, nil
}

func (f *fakeTarget) WriteReg(cpu int, r Reg, v uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.regs[cpu][r] = v
	f.writes = append(f.writes, r)
	return nil
}

func (f *fakeTarget) span(va uint64, n int) ([]byte, error) {
	if va < f.base || va-f.base > uint64(len(f.mem)) || uint64(n) > uint64(len(f.mem))-(va-f.base) {
		return nil, errFakeFault
	}
	return f.mem[va-f.base : va-f.base+uint64(n)], nil
}

func (f *fakeTarget) ReadVirt(cpu int, va uint64, p []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, err := f.span(va, len(p))
	if err != nil {
		return err
	}
	copy(p, m)
	return nil
}

func (f *fakeTarget) WriteVirt(cpu int, va uint64, p []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, err := f.span(va, len(p))
	if err != nil {
		return err
	}
	copy(m, p)
	return nil
}

func (f *fakeTarget) SetBreakpoint(va uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failBP {
		return errors.New("fake: no breakpoints")
	}
	f.bps[va] = true
	return nil
}

func (f *fakeTarget) ClearBreakpoint(va uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.bps, va)
	return nil
}

func (f *fakeTarget) SetWatchpoint(va, length uint64, kind WatchKind) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.wps[wpKey{va, length, kind}] = true
	return nil
}

func (f *fakeTarget) ClearWatchpoint(va, length uint64, kind WatchKind) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.wps, wpKey{va, length, kind})
	return nil
}

func (f *fakeTarget) Run(ctx context.Context, stepCPU int) StopEvent {
	f.mu.Lock()
	f.runs = append(f.runs, stepCPU)
	if stepCPU >= 0 {
		f.regs[stepCPU][RegPC] += 4
		f.mu.Unlock()
		return StopEvent{CPU: stepCPU, Reason: StopStep}
	}
	if len(f.script) > 0 {
		ev := f.script[0]
		f.script = f.script[1:]
		if ev.Reason == StopBreakpoint {
			// Stand at the first breakpoint, as the machine would.
			for a := range f.bps {
				f.regs[ev.CPU][RegPC] = a
				break
			}
		}
		f.mu.Unlock()
		return ev
	}
	f.mu.Unlock()
	f.running <- struct{}{}
	<-ctx.Done()
	return StopEvent{CPU: 0, Reason: StopInterrupted}
}

func (f *fakeTarget) counts() (bps, wps int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.bps), len(f.wps)
}

var _ Target = (*fakeTarget)(nil)
