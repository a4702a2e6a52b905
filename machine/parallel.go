package machine

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Parallel mode (Config.Parallel): one host goroutine per vCPU.
//
// Stopping the world. Every vCPU goroutine holds world for reading while it
// executes a slice (at most one quantum) and releases it between slices and
// while it sleeps in WFI. Exclusive, Step and hostcall handlers take it for
// writing, so they run with every vCPU parked at an instruction boundary,
// as in deterministic mode.
//
// Power state. c.on and c.wfi of any CPU may be written by another CPU's
// goroutine (PSCI CPU_ON) and are read by the host; in parallel mode they
// are accessed only under powerMu or with the world stopped.
//
// Guest memory. Plain []byte accesses from several goroutines are data
// races, so in parallel mode the interpreter must reach RAM through
// ramLoad, ramStore and ramCAS below (sync/atomic on the aligned words
// holding the access), and store-exclusive becomes a compare-and-swap
// against the value the load-exclusive returned, as QEMU's MTTCG does
// (a store of the same value in between goes unnoticed: the ABA case,
// harmless for the locks and counters built on exclusives). The LSE
// atomics are compare-and-swap loops too; 16-byte pairs (LDXP/STXP/CASP
// of X registers) go under pairMu (atomic.go).
//
// Translated code (jit.go) is not Go: its plain x86 accesses are the
// hardware's, single-copy atomic when aligned and ordered as x86 orders
// them (TSO), which is stronger than A64 except that a store may pass a
// later load. So DMB and DSB become MFENCE there (but the load-only and
// store-only kinds), STLR an XCHG, and STXR a LOCK CMPXCHG against what
// LDXR read, as in the interpreter.
// Each vCPU translates into its own code cache and keeps its own blocks
// and jump cache, so nothing translated is shared.
//
// Decode cache. A vCPU decodes a whole page before publishing it in
// m.code with an atomic pointer, so published pages are immutable and
// shared without locks. Stores bump the page's generation (codeGen) and
// withdraw it; a fetch uses a page only if its generation is current, so
// once a store happened before a fetch (a flag handshake), the fetch sees
// the new code. A vCPU executing from a page someone else invalidated
// keeps its decoded copy, and its blocks, until its next context
// synchronization (ISB) or slice boundary (syncCode), as the
// architecture allows for cross-modified code without an ISB. A store
// checks the generation after it lands; translated code does so without
// a fence, so marking a page as code first fences every vCPU
// (fetchPagePar).
//
// Exclusive monitors belong to their vCPU's goroutine; nothing snoops
// them except the host, whose stores happen with the world stopped.
type parallelState struct {
	m       *Machine
	world   sync.RWMutex
	powerMu sync.Mutex
	pairMu  sync.Mutex      // 16-byte pair atomics
	wakeCh  []chan struct{} // per CPU, capacity 1: an interrupt line rose or power changed
	stop    chan struct{}   // closed by powerOff
	stopped atomic.Bool
	errMu   sync.Mutex
	err     error
	// fence: vCPUs run translated code, whose stores fenceAll must
	// drain when a page becomes code (fetchPagePar).
	fence bool
}

func newParallelState(m *Machine) *parallelState {
	p := &parallelState{m: m, stop: make(chan struct{})}
	for range m.cpus {
		p.wakeCh = append(p.wakeCh, make(chan struct{}, 1))
	}
	return p
}

// wake nudges CPU i's goroutine if it sleeps; a no-op in deterministic
// mode, where the scheduler polls the lines itself. It takes an index, not
// a *CPU, because CPU_ON may be resetting that CPU's struct concurrently.
func (m *Machine) wake(i int) {
	if m.par == nil {
		return
	}
	select {
	case m.par.wakeCh[i] <- struct{}{}:
	default:
	}
}

// lockPower and unlockPower guard CPU power state (on, wfi) against other
// vCPU goroutines in parallel mode; deterministic mode has one goroutine.
func (m *Machine) lockPower() {
	if m.par != nil {
		m.par.powerMu.Lock()
	}
}

func (m *Machine) unlockPower() {
	if m.par != nil {
		m.par.powerMu.Unlock()
	}
}

// powered tells c's goroutine that c was powered on or off.
func (p *parallelState) powered(i int) { p.m.wake(i) }

// stopAll wakes every goroutine so that it sees the machine powered off.
func (p *parallelState) stopAll() {
	if p.stopped.CompareAndSwap(false, true) {
		close(p.stop)
	}
}

// fail records the first error of a vCPU goroutine and stops the others.
func (p *parallelState) fail(err error) {
	p.errMu.Lock()
	if p.err == nil {
		p.err = err
	}
	p.errMu.Unlock()
	p.stopAll()
}

// runParallel is Run in parallel mode.
func (m *Machine) runParallel(ctx context.Context) error {
	p := m.par
	if m.off.Load() {
		return nil
	}
	p.errMu.Lock()
	p.err = nil
	p.errMu.Unlock()
	if p.stopped.Load() {
		p.stop = make(chan struct{})
		p.stopped.Store(false)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for i, c := range m.cpus {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.vcpuLoop(ctx, c, i)
		}()
	}
	select {
	case <-ctx.Done():
	case <-p.stop:
	}
	cancel()
	wg.Wait()
	p.errMu.Lock()
	defer p.errMu.Unlock()
	return p.err
}

// vcpuLoop runs c until ctx ends or the machine stops.
func (m *Machine) vcpuLoop(ctx context.Context, c *CPU, idx int) {
	p := m.par
	for {
		if ctx.Err() != nil || p.stopped.Load() {
			return
		}
		p.powerMu.Lock()
		on := c.on
		if c.wfi && c.interruptLines() != 0 {
			c.wfi = false
		}
		sleeping := c.wfi
		p.powerMu.Unlock()
		if !on || sleeping {
			m.sleep(ctx, c, idx, on)
			continue
		}
		p.world.RLock()
		// The slice ends early enough for this CPU's timers to fire
		// within one quantum of their deadline.
		m.evalTimer(c, m.systemCounter(0))
		// A slice boundary bounds how long this CPU runs code that
		// another one patched.
		c.syncCode()
		c.inSlice = true
		n := c.run(m.quantum)
		c.inSlice = false
		m.instructions.Add(n)
		m.evalTimer(c, m.systemCounter(0))
		err := c.err
		c.err = nil
		p.world.RUnlock()
		if err != nil {
			p.fail(err)
			return
		}
		if m.off.Load() {
			p.stopAll()
			return
		}
	}
}

// sleep blocks c's goroutine until an interrupt line rises, its power
// changes, one of its timers is due, or the run ends.
func (m *Machine) sleep(ctx context.Context, c *CPU, idx int, on bool) {
	p := m.par
	var timeout <-chan time.Time
	if on {
		p.world.RLock()
		d := m.evalTimer(c, m.systemCounter(0))
		p.world.RUnlock()
		if d != noDeadline {
			wait := time.Duration(d-m.systemCounter(0)) * nsPerTick
			t := time.NewTimer(wait)
			defer t.Stop()
			timeout = t.C
		}
		if c.interruptLines() != 0 {
			return
		}
	}
	select {
	case <-ctx.Done():
	case <-p.stop:
	case <-p.wakeCh[idx]:
	case <-timeout:
		p.world.RLock()
		m.evalTimer(c, m.systemCounter(0))
		p.world.RUnlock()
	}
}

// syncCode makes c run code that other vCPUs stored since c last did
// this: it refetches the code page and, if any published page was
// withdrawn meanwhile, empties c's jump cache, whose entries lead into
// blocks of the pages c used (its chains stay within one page).
func (c *CPU) syncCode() {
	c.pageVA = noPage
	c.syncJumps()
}

// syncJumps empties c's jump cache if a published page was withdrawn
// since it last did.
func (c *CPU) syncJumps() {
	if n := c.m.invalidations.Load(); n != c.codeSeen {
		c.codeSeen = n
		c.flushJumps()
	}
}

// exclusiveParallel is Exclusive in parallel mode.
func (m *Machine) exclusiveParallel(fn func()) {
	m.par.world.Lock()
	defer m.par.world.Unlock()
	fn()
}

// callHostcall runs a hostcall handler for c. In parallel mode the vCPU
// gives up its share of the world and takes it whole, so the handler runs
// with every other vCPU parked, as HostcallFunc promises. Under Step the
// caller already holds the world whole (c.inSlice is clear).
func (m *Machine) callHostcall(c *CPU, fn HostcallFunc) error {
	if m.par == nil || !c.inSlice {
		return fn(c)
	}
	m.par.world.RUnlock()
	m.par.world.Lock()
	defer func() {
		m.par.world.Unlock()
		m.par.world.RLock()
	}()
	return fn(c)
}

// Atomic RAM accessors for parallel mode. off is a RAM offset with
// off+1<<lg <= len(ram); the interpreter has checked the range. Accesses
// within one aligned 8-byte word are single-copy atomic; wider unaligned
// ones are split into bytes, which the architecture permits.

// word64 returns the aligned 64-bit word of RAM holding offset off.
func (m *Machine) word64(off uint64) *uint64 {
	return (*uint64)(unsafe.Pointer(&m.ram[off&^7]))
}

// fits reports whether an access of 1<<lg bytes at off stays in one
// aligned 8-byte word.
func fits(off uint64, lg uint8) bool { return off&7+1<<lg <= 8 }

// ramLoad reads 1<<lg bytes of RAM at off, little-endian, zero-extended.
func (m *Machine) ramLoad(off uint64, lg uint8) uint64 {
	if fits(off, lg) {
		w := atomic.LoadUint64(m.word64(off))
		v := w >> (8 * (off & 7))
		if lg < 3 {
			v &= 1<<(8<<lg) - 1
		}
		return v
	}
	var v uint64
	for i := uint64(1<<lg) - 1; ; i-- {
		v = v<<8 | m.ramLoad(off+i, 0)
		if i == 0 {
			return v
		}
	}
}

// ramStore writes the low 1<<lg bytes of v to RAM at off.
func (m *Machine) ramStore(off uint64, lg uint8, v uint64) {
	if lg == 3 && off&7 == 0 {
		atomic.StoreUint64(m.word64(off), v)
		return
	}
	if !fits(off, lg) {
		for i := uint64(0); i < 1<<lg; i++ {
			m.ramStore(off+i, 0, v>>(8*i))
		}
		return
	}
	sh := 8 * (off & 7)
	mask := uint64(1<<(8<<lg)-1) << sh
	p := m.word64(off)
	for {
		old := atomic.LoadUint64(p)
		if atomic.CompareAndSwapUint64(p, old, old&^mask|v<<sh&mask) {
			return
		}
	}
}

// ramCAS replaces the 1<<lg bytes at off (aligned to their size, as
// exclusives require) with new if they hold old, atomically, and reports
// whether it did: the store-exclusive of parallel mode.
func (m *Machine) ramCAS(off uint64, lg uint8, old, new uint64) bool {
	if lg == 3 {
		return atomic.CompareAndSwapUint64(m.word64(off), old, new)
	}
	sh := 8 * (off & 7)
	mask := uint64(1<<(8<<lg)-1) << sh
	p := m.word64(off)
	for {
		w := atomic.LoadUint64(p)
		if (w&mask)>>sh != old&(mask>>sh) {
			return false
		}
		if atomic.CompareAndSwapUint64(p, w, w&^mask|new<<sh&mask) {
			return true
		}
	}
}

// fetchPagePar returns the decode cache of RAM page pg in parallel mode,
// decoding the whole page first if no current one is published (see the
// decode cache in parallelState's doc).
func (m *Machine) fetchPagePar(pg uint64) *codePage {
	gen, slot := &m.codeGen[pg], &m.code[pg]
	for {
		g := gen.Load()
		if g&1 == 0 {
			// Mark the page as code, so stores start bumping g. Translated
			// stores check g after they land, with no fence between (see
			// codeCheck): a store still in its CPU's store buffer may
			// have read g as 0 already. The barrier on every vCPU
			// makes such a store visible to the decode below.
			g = gen.Or(1) | 1
			if m.par.fence {
				fenceAll()
			}
		}
		p := slot.Load()
		if p != nil && p.gen == g {
			return p
		}
		np := &codePage{gen: g}
		base := pg * PageSize
		for i := range np.insts {
			decode(&np.insts[i], uint32(m.ramLoad(base+uint64(4*i), 2)))
		}
		if gen.Load() != g {
			continue // a store raced with the decode
		}
		if !slot.CompareAndSwap(p, np) {
			continue
		}
		if p == nil {
			m.decodedPages.Add(1)
		}
		// A store that bumped g after the check above withdrew p, or
		// nothing, not np: it may have changed an instruction np holds.
		// Once np is published, every later store withdraws np itself
		// (and counts, which other vCPUs' syncCode sees).
		if gen.Load() != g {
			continue
		}
		return np
	}
}

// storedPar is stored for a store by vCPU c in parallel mode: it
// invalidates the decode cache of the pages holding code.
func (m *Machine) storedPar(c *CPU, off, n uint64) {
	for pg := off / PageSize; pg <= (off+n-1)/PageSize; pg++ {
		gen := &m.codeGen[pg]
		if gen.Load() == 0 {
			continue // never held code
		}
		gen.Add(2)
		if m.code[pg].Swap(nil) != nil {
			m.decodedPages.Add(-1)
			m.invalidations.Add(1)
		}
		// This CPU's blocks of the page, which its jump cache may
		// reach, are stale now even if another vCPU withdrew the page.
		c.syncJumps()
		if c.pagePA == pg*PageSize+RAMBase {
			// Self-modifying code takes effect at once, as in
			// deterministic mode.
			c.pageVA = noPage
		}
	}
}
