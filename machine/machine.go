package machine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// The physical memory map, as on QEMU's virt board.
const (
	RAMBase  = 0x40000000 // first byte of RAM
	UARTBase = 0x09000000 // PL011 UART, 4 KiB of registers
	RTCBase  = 0x09010000 // PL031 real-time clock, 4 KiB of registers
	PageSize = 4096       // translation granule and decode-cache page
)

// Shared peripheral interrupts of the devices, as INTIDs (SPI n is n+32),
// numbered as on QEMU virt.
const (
	IRQUART = 33 // SPI 1
	IRQRTC  = 34 // SPI 2
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

	// ConsoleIn, if not nil, feeds the PL011's receive FIFO. A goroutine
	// reads it and delivers each chunk with the world stopped, so input
	// arrives between instructions but at host-timed points.
	ConsoleIn io.Reader

	// Parallel runs one host goroutine per vCPU, with the system counter
	// following the host clock, instead of interleaving the vCPUs
	// deterministically on one goroutine. See parallel.go.
	Parallel bool

	// Interpret turns block translation (jit.go) off: every instruction
	// goes through the interpreter. For comparisons and debugging; the
	// guest sees no difference.
	Interpret bool

	// PerfMap, if set, receives a line per translated block in the
	// format of Linux perf's /tmp/perf-PID.map ("ADDR SIZE NAME", hex),
	// so that `perf report` names host samples in translated code after
	// the guest code they run (kpemu@PC+N: the guest pc, N instructions).
	PerfMap io.Writer

	// HostPIDMax, if not zero, is the pid_max of the host whose processes
	// the guest mirrors (kpemu's shadowing gives each a twin with its
	// pid); the doorbell tells it to the guest, which keeps its own
	// tasks' pids out of the host's.
	HostPIDMax uint32

	// Epoch is the time the PL031 RTC reports at counter zero in
	// deterministic mode; the zero value means 2000-01-01 00:00:00 UTC.
	// Parallel mode reads the host's wall clock instead.
	Epoch time.Time
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
	Invalidations uint64 // stores that overwrote decoded instructions (or, in parallel mode, a decoded page)
	Undefined     uint64 // undefined-instruction exceptions taken

	// Block translation (jit.go), summed over the code caches.
	TranslatedBlocks uint64 // blocks translated to host code
	CodeCacheBytes   int    // host code the cache holds
	CodeCacheFlushes uint64 // times the full cache was emptied
	// BlockEntries counts the interpreter loop's entries into translated
	// code: a block reached without a chain or the jump cache.
	BlockEntries uint64
}

// Machine is an AArch64 machine: CPUs, memory, UART and firmware (PSCI).
type Machine struct {
	log     *slog.Logger
	quantum uint64

	ram  []byte
	code []atomic.Pointer[codePage] // decode cache per RAM page; nil where no code was fetched
	// jits are the caches of translated code (jit.go): one shared by the
	// CPUs in deterministic mode, one per vCPU goroutine in parallel mode.
	jits []*jitCache
	// codeGen is, per RAM page, 0 while no code was ever fetched from it,
	// else odd and bumped by 2 by every store to it: parallel mode's fetch
	// decodes a page, publishes it, and withdraws it again if a store came
	// in between (parallel.go). Allocated only in parallel mode.
	codeGen []atomic.Uint32
	bus     bus
	uart    *pl011
	gic     *gic
	rtc     *pl031

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

	// The scheduler position survives across Run and Step calls so that the
	// interleaving does not depend on how execution was chunked.
	sched     int
	sliceUsed uint64
	deadline  uint64 // earliest timer deadline at the last evaluation

	// counterSkew is added to the instruction count to form the system
	// counter in deterministic mode: the ticks fast-forwarded while every
	// CPU slept in WFI (timer.go).
	counterSkew atomic.Uint64
	// timerOut holds each CPU's last timer output levels (timerOutPhys,
	// timerOutVirt), so the GIC is told only of changes.
	timerOut []uint8

	parallel bool
	epoch    time.Time // parallel mode: counter zero on the host clock
	par      *parallelState
	doorbell *doorbell

	instructions  atomic.Uint64
	exceptions    atomic.Uint64
	hostcallCount atomic.Uint64
	// hostcallInSlice is, while a hostcall handler runs in deterministic
	// mode, the instructions its CPU retired in the current slice and not
	// yet added to instructions: the host then reads the counter as the
	// guest would at that instruction, not as of the slice's start.
	hostcallInSlice atomic.Uint64
	decodedPages    atomic.Int64
	invalidations   atomic.Uint64
	undefined       atomic.Uint64
	undefs          undefStats // per mnemonic (undefstats.go)
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
	if cfg.NumCPUs < 0 || cfg.NumCPUs > gicMaxCPUs {
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
	ram, err := newRAM(cfg.RAMSize)
	if err != nil {
		return nil, err
	}
	m := &Machine{
		log:       cfg.Logger,
		quantum:   uint64(cfg.Quantum),
		ram:       ram,
		code:      make([]atomic.Pointer[codePage], cfg.RAMSize/PageSize),
		hostcalls: make(map[uint16]HostcallFunc),
		deadline:  noDeadline,
	}
	caches := 1
	perfMap := cfg.PerfMap
	if cfg.Parallel {
		caches = cfg.NumCPUs
		if perfMap != nil {
			perfMap = &lockedWriter{w: perfMap}
		}
	}
	for range caches {
		j := newJITCache(cfg.Interpret, perfMap)
		m.jits = append(m.jits, j)
		// The code caches and RAM are mapped outside the Go heap: unmap
		// them with the machine.
		runtime.AddCleanup(m, (*jitCache).free, j)
	}
	runtime.AddCleanup(m, freeRAM, m.ram)
	m.cond = sync.NewCond(&m.mu)
	m.parallel = cfg.Parallel
	m.epoch = time.Now()
	for i := 0; i < cfg.NumCPUs; i++ {
		c := &CPU{m: m, index: i, jit: m.jits[0]}
		if cfg.Parallel {
			c.jit, c.jitOwner = m.jits[i], uint8(i)
		}
		c.fillFlagBits()
		c.reset()
		m.cpus = append(m.cpus, c)
	}
	m.timerOut = make([]uint8, cfg.NumCPUs)
	m.gic = newGIC(m, cfg.NumCPUs)
	m.uart = newPL011(cfg.Console, cfg.Logger, func(level bool) { m.gic.setSPI(IRQUART, level) })
	m.rtc = newPL031(m, cfg.Epoch, func(level bool) { m.gic.setSPI(IRQRTC, level) })
	m.addDevice("gicd", GICDBase, gicRegionSize, m.gic.distRead, m.gic.distWrite)
	m.addDevice("gicc", GICCBase, gicRegionSize, m.gic.cpuRead, m.gic.cpuWrite)
	m.addDevice("pl011", UARTBase, PageSize, m.uart.read, m.uart.write)
	m.addDevice("pl031", RTCBase, PageSize, m.rtc.read, m.rtc.write)
	m.addVirtnet()
	m.addDoorbell(cfg.HostPIDMax)
	if cfg.Parallel {
		m.par = newParallelState(m)
		m.codeGen = make([]atomic.Uint32, cfg.RAMSize/PageSize)
		if m.jits[0].enabled() {
			if registerFence() {
				m.par.fence = true
			} else {
				m.log.Warn("machine: block translation off in parallel mode: no membarrier(2) on this host")
				for _, j := range m.jits {
					j.disable()
				}
			}
		}
	}
	if cfg.ConsoleIn != nil {
		go m.feedConsole(cfg.ConsoleIn)
	}
	return m, nil
}

// deviceRead and deviceWrite are device register handlers that know which
// CPU accesses them (the GIC banks registers per CPU).
type (
	deviceRead  func(cpu int, off uint64, size int) uint64
	deviceWrite func(cpu int, off uint64, size int, v uint64)
)

// addDevice maps a device's registers into the physical address space.
func (m *Machine) addDevice(name string, base, size uint64, rd deviceRead, wr deviceWrite) {
	m.bus.add(region{
		name: name, base: base, size: size,
		read:  func(c *CPU, off uint64, n int) uint64 { return rd(cpuIndex(c), off, n) },
		write: func(c *CPU, off uint64, n int, v uint64) { wr(cpuIndex(c), off, n, v) },
	})
}

// cpuIndex returns the number of the CPU making a device access; the host
// (nil) sees CPU 0's banked registers.
func cpuIndex(c *CPU) int {
	if c == nil {
		return 0
	}
	return c.index
}

// NumCPUs returns the number of CPUs.
func (m *Machine) NumCPUs() int { return len(m.cpus) }

// RAMSize returns the size of RAM in bytes; RAM is [RAMBase, RAMBase+RAMSize).
func (m *Machine) RAMSize() uint64 { return uint64(len(m.ram)) }

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
	m.sched, m.sliceUsed, m.deadline = 0, 0, noDeadline
	m.off.Store(false)
	m.counterSkew.Store(0)
	for i := range m.timerOut {
		m.timerOut[i] = 0
	}
	m.gic.reset()
	m.uart.reset()
	m.rtc.reset()
	c := m.cpus[0]
	c.on = true
	c.pc = entry
	c.r[0] = arg
}

// PoweredOff reports whether the guest powered the machine off.
func (m *Machine) PoweredOff() bool { return m.off.Load() }

// Stats returns a snapshot of the counters; safe from any goroutine.
func (m *Machine) Stats() Stats {
	s := Stats{
		Instructions:  m.instructions.Load(),
		Exceptions:    m.exceptions.Load(),
		Hostcalls:     m.hostcallCount.Load(),
		DecodedPages:  int(m.decodedPages.Load()),
		Invalidations: m.invalidations.Load(),
		Undefined:     m.undefined.Load(),
	}
	for _, j := range m.jits {
		s.TranslatedBlocks += j.blocks.Load()
		s.CodeCacheBytes += int(j.bytes.Load())
		s.CodeCacheFlushes += j.flushes.Load()
		s.BlockEntries += j.entries.Load()
	}
	return s
}

// lockedWriter serializes the writes of parallel mode's code caches to
// one perf map.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
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
	if m.parallel {
		return m.runParallel(ctx)
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
			// Every powered-on CPU sleeps and no timer is armed: only the
			// host can wake one (through Exclusive, e.g. console input), so
			// sleep until cancelled, serving Exclusive meanwhile.
			for !cancelled.Load() && !m.runnable() {
				m.cond.Wait()
			}
		}
	}
}

// Step runs exactly n instructions (summed over CPUs, same interleaving as
// Run) and returns. It holds the machine lock throughout, so an Exclusive
// call from another goroutine waits for Step to return. It returns early
// with nil when the guest powers off or when no CPU can run (all off, or
// waiting in WFI with no armed timer), and with a hostcall's error when
// one fails. In parallel mode Step still interleaves the CPUs on the
// calling goroutine.
func (m *Machine) Step(n uint64) error {
	if m.par != nil {
		m.par.world.Lock()
		defer m.par.world.Unlock()
	}
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
	if m.par != nil {
		m.exclusiveParallel(fn)
		return
	}
	m.pending.Add(1)
	m.mu.Lock()
	defer func() {
		m.pending.Add(-1)
		m.cond.Broadcast()
		m.mu.Unlock()
	}()
	fn()
}

// runnable reports whether some CPU is powered on and either not waiting
// or woken by an asserted interrupt line (masked or not, as WFI requires).
func (m *Machine) runnable() bool {
	for _, c := range m.cpus {
		if c.on && (!c.wfi || c.interruptLines() != 0) {
			return true
		}
	}
	return false
}

// runSome executes up to budget instructions following the round-robin
// schedule. It returns the number executed; 0 means no CPU could run and
// no timer can wake one. The caller holds m.mu.
//
// Timers are evaluated at the start of every slice (the guest may have
// written a timer register in the last one) and when the counter reaches
// the earliest deadline seen then; a slice never runs past that deadline,
// so a timer interrupt is raised at the same instruction count in every
// run. Evaluation points depend only on the schedule, never on how Run or
// Step chunked execution. When every CPU sleeps in WFI, the counter jumps
// to the next deadline instead (fastForward).
func (m *Machine) runSome(budget uint64) (uint64, error) {
	var done uint64
	skipped := 0
	for done < budget && !m.off.Load() {
		if m.debugStop() { // a host debugger event (hostdebug.go) ends the run at once
			break
		}
		if m.sliceUsed == 0 || m.systemCounter(0) >= m.deadline {
			m.deadline = m.evalTimers()
		}
		c := m.cpus[m.sched]
		if c.wfi && c.interruptLines() != 0 {
			c.wfi = false
		}
		if !c.on || c.wfi {
			m.nextCPU()
			skipped++
			if skipped >= len(m.cpus) {
				if m.fastForward(m.deadline) {
					skipped = 0
					continue
				}
				break
			}
			continue
		}
		skipped = 0
		want := m.quantum - m.sliceUsed
		if budget-done < want {
			want = budget - done
		}
		if m.deadline != noDeadline {
			// evalTimers returns only deadlines in the future.
			want = min(want, m.deadline-m.systemCounter(0))
		}
		if m.par != nil && m.sliceUsed == 0 {
			c.syncCode() // as at a slice of vcpuLoop
		}
		n := c.run(want)
		done += n
		m.sliceUsed += n
		m.instructions.Add(n)
		if c.err != nil {
			err := c.err
			c.err = nil
			return done, err
		}
		if m.sliceUsed >= m.quantum || c.wfi || !c.on || c.yielded {
			c.yielded = false
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
