package machine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
)

// The physical memory map, as on QEMU's virt board.
const (
	RAMBase  = 0x40000000 // first byte of RAM
	UARTBase = 0x09000000 // PL011 UART, 4 KiB of registers
	PageSize = 4096       // translation granule and decode-cache page
)

const (
	defaultRAMSize = 128 << 20
	defaultQuantum = 10000
)

// ErrBadAddress is wrapped by host memory accessors for ranges outside RAM.
var ErrBadAddress = errors.New("machine: address outside RAM")

// Config configures a new Machine. The zero value is usable.
type Config struct {
	RAMSize uint64       // bytes; 0 means 128 MiB; rounded up to a page
	NumCPUs int          // 0 means 1; CPU 0 boots, the others start powered off
	Console io.Writer    // receives bytes the guest writes to the PL011 data register; nil discards them
	Logger  *slog.Logger // nil means slog.Default()
	Quantum int          // instructions per vCPU slice in the run loop; 0 means 10000
}

// HostcallFunc handles HVC #imm from EL1 for a registered imm. It runs on the
// goroutine driving the machine, between instructions, with every other vCPU
// stopped; it must not call Machine.Exclusive (the world is already stopped).
// The CPU's PC already points past the HVC; the handler may change it with
// SetPC. A non-nil error stops Run or Step, which return it wrapped.
type HostcallFunc func(cpu *CPU) error

// Stats are cumulative counters of a Machine.
type Stats struct {
	Instructions  uint64 // instructions executed by all CPUs
	Exceptions    uint64 // exceptions taken to EL1
	Hostcalls     uint64 // hostcall handlers invoked
	DecodedPages  int    // pages currently holding a decode cache
	Invalidations uint64 // decode-cache pages dropped by stores
	Undefined     uint64 // undefined-instruction exceptions taken
}

// Machine is an AArch64 machine: CPUs, memory, UART and firmware (PSCI).
type Machine struct {
	log     *slog.Logger
	quantum uint64

	ram  []byte
	code []*codePage // decode cache per RAM page; nil where no code was fetched
	bus  bus
	uart *pl011

	cpus []*CPU

	// reservations counts valid exclusive monitors, so that stores can skip
	// the snoop of other CPUs' monitors in the common case of none.
	reservations int

	hcMu      sync.RWMutex
	hostcalls map[uint16]HostcallFunc

	// mu is held by whoever executes guest instructions or runs an
	// Exclusive function; cond wakes Run when Exclusive work finished or the
	// context was cancelled.
	mu      sync.Mutex
	cond    *sync.Cond
	pending atomic.Int32 // Exclusive callers waiting for mu
	off     atomic.Bool  // powered off
	err     error        // hostcall failure that stops the run loop

	// The scheduler position survives across Run and Step calls so that the
	// interleaving does not depend on how execution was chunked.
	sched     int
	sliceUsed uint64

	instructions  atomic.Uint64
	exceptions    atomic.Uint64
	hostcallCount atomic.Uint64
	decodedPages  atomic.Int64
	invalidations atomic.Uint64
	undefined     atomic.Uint64
}

// New builds a machine with its CPUs reset and powered off; call Boot to
// start CPU 0.
func New(cfg Config) (*Machine, error) {
	if cfg.RAMSize == 0 {
		cfg.RAMSize = defaultRAMSize
	}
	cfg.RAMSize = (cfg.RAMSize + PageSize - 1) &^ (PageSize - 1)
	if cfg.RAMSize > 1<<36 {
		return nil, fmt.Errorf("machine: RAM size %#x too large", cfg.RAMSize)
	}
	if cfg.NumCPUs == 0 {
		cfg.NumCPUs = 1
	}
	if cfg.NumCPUs < 0 || cfg.NumCPUs > 256 {
		return nil, fmt.Errorf("machine: bad CPU count %d", cfg.NumCPUs)
	}
	if cfg.Quantum < 0 {
		return nil, fmt.Errorf("machine: bad quantum %d", cfg.Quantum)
	}
	if cfg.Quantum == 0 {
		cfg.Quantum = defaultQuantum
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Console == nil {
		cfg.Console = io.Discard
	}
	m := &Machine{
		log:       cfg.Logger,
		quantum:   uint64(cfg.Quantum),
		ram:       make([]byte, cfg.RAMSize),
		code:      make([]*codePage, cfg.RAMSize/PageSize),
		hostcalls: make(map[uint16]HostcallFunc),
	}
	m.cond = sync.NewCond(&m.mu)
	m.uart = newPL011(cfg.Console, cfg.Logger)
	m.bus.add(region{name: "pl011", base: UARTBase, size: PageSize, read: m.uart.read, write: m.uart.write})
	for i := 0; i < cfg.NumCPUs; i++ {
		c := &CPU{m: m, index: i}
		c.reset()
		m.cpus = append(m.cpus, c)
	}
	return m, nil
}

// NumCPUs returns the number of CPUs.
func (m *Machine) NumCPUs() int { return len(m.cpus) }

// CPU returns CPU i (0 ≤ i < NumCPUs).
func (m *Machine) CPU(i int) *CPU { return m.cpus[i] }

// SetHostcall registers fn for HVC #imm (imm != 0; 0 is PSCI). A nil fn
// unregisters. Safe to call at any time, including from a handler.
func (m *Machine) SetHostcall(imm uint16, fn HostcallFunc) {
	m.hcMu.Lock()
	defer m.hcMu.Unlock()
	if fn == nil {
		delete(m.hostcalls, imm)
		return
	}
	m.hostcalls[imm] = fn
}

func (m *Machine) hostcall(imm uint16) HostcallFunc {
	m.hcMu.RLock()
	defer m.hcMu.RUnlock()
	return m.hostcalls[imm]
}

// Boot resets every CPU, then puts CPU 0 at EL1h with DAIF masked, PC=entry
// and x0=arg; the other CPUs stay powered off. It also clears a previous
// power-off. RAM is left as it is. Call it while the machine is not running
// (not from a hostcall handler or Exclusive: it takes the machine lock).
func (m *Machine) Boot(entry, arg uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range m.cpus {
		c.reset()
	}
	m.reservations = 0
	m.sched, m.sliceUsed = 0, 0
	m.off.Store(false)
	m.err = nil
	c := m.cpus[0]
	c.on = true
	c.pc = entry
	c.r[0] = arg
}

// PoweredOff reports whether the guest powered the machine off.
func (m *Machine) PoweredOff() bool { return m.off.Load() }

// Stats returns a snapshot of the counters; safe from any goroutine.
func (m *Machine) Stats() Stats {
	return Stats{
		Instructions:  m.instructions.Load(),
		Exceptions:    m.exceptions.Load(),
		Hostcalls:     m.hostcallCount.Load(),
		DecodedPages:  int(m.decodedPages.Load()),
		Invalidations: m.invalidations.Load(),
		Undefined:     m.undefined.Load(),
	}
}

// Run runs the vCPUs until ctx is done (returns nil), the guest powers off
// (returns nil) or a hostcall fails (returns its error, wrapped). When every
// powered-on CPU waits in WFI and nothing can wake it, Run blocks until ctx
// is done, still serving Exclusive calls. Only one goroutine may drive the
// machine (Run or Step) at a time.
func (m *Machine) Run(ctx context.Context) error {
	if ctx.Err() != nil {
		return nil
	}
	var cancelled atomic.Bool
	stop := context.AfterFunc(ctx, func() {
		cancelled.Store(true)
		// Taking mu orders the store before a waiter's re-check.
		m.mu.Lock()
		m.cond.Broadcast()
		m.mu.Unlock()
	})
	defer stop()

	m.mu.Lock()
	defer m.mu.Unlock()
	for {
		for m.pending.Load() > 0 && !cancelled.Load() {
			m.cond.Wait()
		}
		if cancelled.Load() || m.off.Load() {
			return nil
		}
		n, err := m.runSome(m.quantum)
		if err != nil {
			return err
		}
		if m.off.Load() {
			return nil
		}
		if n == 0 {
			// Every powered-on CPU sleeps and no interrupt source exists
			// yet: sleep until cancelled, serving Exclusive meanwhile.
			for !cancelled.Load() && !m.runnable() {
				m.cond.Wait()
			}
		}
	}
}

// Step runs exactly n instructions (summed over CPUs, same interleaving as
// Run) and returns. It holds the machine lock throughout, so an Exclusive
// call from another goroutine waits for Step to return. It returns early with nil when the guest powers off or
// when no CPU can run (all off or waiting in WFI), and with a hostcall's
// error when one fails.
func (m *Machine) Step(n uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for n > 0 && !m.off.Load() {
		done, err := m.runSome(n)
		if err != nil {
			return err
		}
		if done == 0 {
			return nil
		}
		n -= done
	}
	return nil
}

// Exclusive runs fn while every vCPU is stopped at an instruction boundary,
// like Linux's stop_machine. It may be called from any goroutine while Run
// is active (it gets in within one quantum) or while nothing runs. It must
// not be called from a hostcall handler: the world is already stopped there
// and the call would deadlock.
func (m *Machine) Exclusive(fn func()) {
	m.pending.Add(1)
	m.mu.Lock()
	defer func() {
		m.pending.Add(-1)
		m.cond.Broadcast()
		m.mu.Unlock()
	}()
	fn()
}

// runnable reports whether some CPU is powered on and not waiting.
func (m *Machine) runnable() bool {
	for _, c := range m.cpus {
		if c.on && !c.wfi {
			return true
		}
	}
	return false
}

// runSome executes up to budget instructions following the round-robin
// schedule. It returns the number executed; 0 means no CPU could run.
// The caller holds m.mu.
func (m *Machine) runSome(budget uint64) (uint64, error) {
	var done uint64
	skipped := 0
	for done < budget && !m.off.Load() {
		c := m.cpus[m.sched]
		if !c.on || c.wfi {
			m.nextCPU()
			skipped++
			if skipped >= len(m.cpus) {
				break
			}
			continue
		}
		skipped = 0
		want := m.quantum - m.sliceUsed
		if budget-done < want {
			want = budget - done
		}
		n := c.run(want)
		done += n
		m.sliceUsed += n
		m.instructions.Add(n)
		if m.err != nil {
			err := m.err
			m.err = nil
			return done, err
		}
		if m.sliceUsed >= m.quantum || c.wfi {
			m.nextCPU()
		}
	}
	return done, nil
}

func (m *Machine) nextCPU() {
	m.sched++
	if m.sched == len(m.cpus) {
		m.sched = 0
	}
	m.sliceUsed = 0
}

// SMCCC / PSCI function identifiers and results (Arm DEN0022).
const (
	psciVersion     = 0x84000000
	psciSystemOff   = 0x84000008
	psciSystemReset = 0x84000009
	psciFeatures    = 0x8400000a

	psciSuccess      = 0
	psciNotSupported = ^uint64(0) // -1
)

// psci implements the firmware side of HVC #0. It reports whether the
// machine powered off.
func (c *CPU) psci() bool {
	m := c.m
	switch fid := uint32(c.r[0]); fid {
	case psciVersion:
		c.r[0] = 0x00010000
	case psciSystemOff:
		m.log.Info("machine: PSCI SYSTEM_OFF", "cpu", c.index, "pc", fmt.Sprintf("%#x", c.pc-4))
		m.off.Store(true)
		return true
	case psciSystemReset:
		// Reset would need the host to reload the image; stop instead.
		m.log.Info("machine: PSCI SYSTEM_RESET treated as power off", "cpu", c.index, "pc", fmt.Sprintf("%#x", c.pc-4))
		m.off.Store(true)
		return true
	case psciFeatures:
		switch uint32(c.r[1]) {
		case psciVersion, psciSystemOff, psciSystemReset, psciFeatures:
			c.r[0] = psciSuccess
		default:
			c.r[0] = psciNotSupported
		}
	default:
		c.r[0] = psciNotSupported
	}
	return false
}
