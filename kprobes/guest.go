package kprobes

import (
	"encoding/binary"
	"errors"
	"iter"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/machine"
)

// The kprobes API for guest modules (include/linux/kprobes.h): modules
// call register_kprobe() and friends, gates that hostcall HC_KPROBE_API
// with a pointer to their struct kprobe, kretprobe or jprobe. The probe
// is a Go Kprobe like any other, and this package stays the single owner
// of every probe's state; only the handlers are guest functions.
//
// Calling a guest handler from a hit: the hit path (hcBreakpoint,
// hcSSBreakpoint, hcKretprobeTrampoline) runs as a coroutine (iter.Pull)
// when guest handlers exist. A handler call writes the Go Regs into the
// guest's pt_regs, suspends the coroutine and answers the gate's hostcall
// with HC_CALL_REQUEST: the gate, still inside the exception, calls the
// handler and hostcalls HC_KPROBE_CALL_DONE with its return value, which
// resumes the coroutine where it stopped. The kprobe control block stays
// as the hit left it, so a probe that the handler hits is a re-entry, run
// without handlers and counted missed, as on Linux.

// Operations of HC_KPROBE_API, as include/linux/kprobes.h.
const (
	apiRegisterKprobe     = 1
	apiUnregisterKprobe   = 2
	apiRegisterKretprobe  = 3
	apiUnregisterKretprob = 4
	apiRegisterJprobe     = 5
	apiUnregisterJprobe   = 6
	apiEnableKprobe       = 7
	apiDisableKprobe      = 8

	apiRetry = 1 // KPROBE_API_RETRY: kp.mu was busy, ask again
)

// Offsets in the guest's structs (checked by _Static_assert in
// kernel/image/arch/arm64/kernel/probes/kprobes.c).
const (
	gkpNmissed      = 0
	gkpAddr         = 8
	gkpSymbolName   = 16
	gkpOffset       = 24
	gkpFlags        = 28
	gkpPreHandler   = 32
	gkpPostHandler  = 40
	gkpOpcode       = 48
	grpHandler      = 56
	grpEntryHandler = 64
	grpMaxactive    = 72
	grpNmissed      = 76
	grpDataSize     = 80
	grpPool         = 88
	grpPoolStride   = 96
	gjpEntry        = 56
	grpSize         = 104
	griRp           = 0
	griRetAddr      = 8
	griFp           = 16
)

type guestCall struct{ fn, a0, a1, a2 uint64 }

// guestCPU is one vCPU's hit in progress as a coroutine.
type guestCPU struct {
	next   func() (guestCall, bool)
	stop   func()
	yield  func(guestCall) bool
	result uint64 // what the guest call returned
	active bool   // the hit's code is running (not suspended in a call)
}

// guestProbe is one probe a module registered.
type guestProbe struct {
	addr     uint64 // its struct in the guest
	kp       *Kprobe
	rp       *Kretprobe
	jp       *Jprobe
	handlers []uint64 // guest handler addresses

	mu   sync.Mutex
	free []uint64 // a kretprobe's free guest instances
}

type guestAPI struct {
	count  atomic.Int64           // probes with guest handlers; the gates use coroutines while > 0
	probes map[uint64]*guestProbe // by struct address; under kp.mu
	cpus   []guestCPU
	busy   probePoint // kprobe_busy: current while a handler runs outside a hit
}

func (kp *Kprobes) setupGuestAPI() {
	kp.guest.probes = make(map[uint64]*guestProbe)
	kp.guest.cpus = make([]guestCPU, len(kp.kcb))
	kp.k.SetHostcall(kernel.HCKprobeBrk, kp.gate(kp.hcBreakpoint))
	kp.k.SetHostcall(kernel.HCKprobeSSBrk, kp.gate(kp.hcSSBreakpoint))
	kp.k.SetHostcall(kernel.HCKprobeSoftStep, kp.gate(kp.hcSoftStep))
	kp.k.SetHostcall(kernel.HCKretprobeTrampoline, kp.gate(kp.hcKretprobeTrampoline))
	kp.k.SetHostcall(kernel.HCKprobeCallDone, kp.hcCallDone)
	kp.k.SetHostcall(kernel.HCKprobeAPI, kp.hcAPI)
}

// gate runs a hit path as a coroutine when guest handlers may be called.
func (kp *Kprobes) gate(body machine.HostcallFunc) machine.HostcallFunc {
	return func(cpu *machine.CPU) error {
		g := &kp.guest.cpus[cpu.Index()]
		if kp.guest.count.Load() == 0 || g.next != nil {
			// No guest handlers; or a hit inside a guest handler's call,
			// which runs without guest calls (they are missed).
			return body(cpu)
		}
		var berr error
		g.next, g.stop = iter.Pull(func(yield func(guestCall) bool) {
			g.yield = yield
			berr = body(cpu)
		})
		kp.resume(cpu, g)
		return berr
	}
}

// resume runs the hit until it needs a guest call (answered with
// HC_CALL_REQUEST) or finishes (its own answer is in x0 already).
func (kp *Kprobes) resume(cpu *machine.CPU, g *guestCPU) {
	g.active = true
	call, ok := g.next()
	g.active = false
	if !ok {
		g.stop()
		g.next, g.stop, g.yield = nil, nil, nil
		return
	}
	cpu.SetX(0, kernel.HCCallRequest)
	cpu.SetX(1, call.fn)
	cpu.SetX(2, call.a0)
	cpu.SetX(3, call.a1)
	cpu.SetX(4, call.a2)
}

// hcCallDone is HC_KPROBE_CALL_DONE: the guest call returned x0.
func (kp *Kprobes) hcCallDone(cpu *machine.CPU) error {
	g := &kp.guest.cpus[cpu.Index()]
	if g.next == nil {
		kp.log.Error("kprobes: HC_KPROBE_CALL_DONE with no call in flight")
		cpu.SetX(0, kernel.DbgHookError)
		return nil
	}
	g.result = cpu.X(0)
	kp.resume(cpu, g)
	return nil
}

// callGuest calls fn(a0, a1, a2) on the guest from a hit path and returns
// what it returned; false when it cannot (no coroutine: a hit nested in a
// guest call, or the hit path ran plain). The guest sees and may change
// regs through its pt_regs frame.
func (kp *Kprobes) callGuest(regs *Regs, fn, a0, a1, a2 uint64) (uint64, bool) {
	g := &kp.guest.cpus[regs.CPU]
	if !g.active || g.yield == nil || regs.frame == 0 {
		return 0, false
	}
	if err := kp.writeRegs(regs.frame, regs); err != nil {
		return 0, false
	}
	kcb := &kp.kcb[regs.CPU]
	busy := kcb.cur == nil
	if busy {
		// kprobe_busy_begin: probes hit by the handler are missed.
		kcb.cur, kcb.status = &kp.guest.busy, statusHitActive
	}
	g.active = false
	ok := g.yield(guestCall{fn, a0, a1, a2})
	if busy {
		kcb.cur, kcb.status = nil, statusNone
	}
	if !ok {
		return 0, false
	}
	if nr, err := kp.readRegs(regs.frame); err == nil {
		cpu, frame := regs.CPU, regs.frame
		*regs = *nr
		regs.CPU, regs.frame = cpu, frame
	}
	return g.result, true
}

// hcAPI is HC_KPROBE_API. It runs with the world stopped, so it changes
// probes without StopMachine; kp.mu may be held by a goroutine that waits
// to stop the machine, so it only tries the lock and otherwise asks the
// guest to retry.
func (kp *Kprobes) hcAPI(cpu *machine.CPU) error {
	op, addr := cpu.X(0), cpu.X(1)
	if !kp.mu.TryLock() {
		cpu.SetX(0, apiRetry)
		return nil
	}
	defer kp.mu.Unlock()
	ret := kp.guestOp(op, addr)
	cpu.SetX(0, uint64(ret))
	return nil
}

func errnoOf(err error) int64 {
	if err == nil {
		return 0
	}
	var en syscall.Errno
	if errors.As(err, &en) {
		return -int64(en)
	}
	return -int64(syscall.EINVAL)
}

// direct runs fn at once: the world is stopped in a hostcall.
func direct(fn func()) { fn() }

// guestStruct is a copy of a module's struct kprobe, kretprobe or jprobe
// (the largest, kretprobe, is grpSize bytes), read at addr.
type guestStruct struct {
	addr uint64
	buf  [grpSize]byte
}

func (s *guestStruct) u64(off int) uint64 { return binary.LittleEndian.Uint64(s.buf[off:]) }
func (s *guestStruct) u32(off int) uint32 { return binary.LittleEndian.Uint32(s.buf[off:]) }

// guestOp is one call of the kprobes API by a guest module: op on the
// struct at addr. It returns 0 or -errno, as the C functions do.
func (kp *Kprobes) guestOp(op, addr uint64) int64 {
	s := &guestStruct{addr: addr}
	if addr == 0 || kp.k.ReadMem(addr, s.buf[:]) != nil {
		return -int64(syscall.EFAULT)
	}
	gp := kp.guest.probes[addr]
	isReg := op == apiRegisterKprobe || op == apiRegisterKretprobe || op == apiRegisterJprobe
	if isReg && gp != nil {
		return -int64(syscall.EINVAL) // registered twice
	}
	if !isReg && gp == nil {
		if op == apiEnableKprobe || op == apiDisableKprobe {
			return -int64(syscall.EINVAL)
		}
		return 0 // unregistering an unregistered probe is a no-op
	}
	switch op {
	case apiRegisterKprobe:
		return kp.registerGuestKprobe(s)
	case apiRegisterKretprobe:
		return kp.registerGuestKretprobe(s)
	case apiRegisterJprobe:
		return kp.registerGuestJprobe(s)
	case apiUnregisterKprobe, apiUnregisterKretprob, apiUnregisterJprobe:
		kp.dropGuestProbe(gp, direct)
		kp.writeBackGuestKprobe(addr, gp.kp)
		if gp.rp != nil {
			_ = kp.k.Write32(addr+grpNmissed, uint32(gp.rp.Missed()))
		}
		return 0
	case apiEnableKprobe, apiDisableKprobe:
		return errnoOf(kp.setDisabledLocked(gp.kp, op == apiDisableKprobe, direct))
	}
	return -int64(syscall.EINVAL)
}

// guestKprobe fills p from the struct kprobe part, common to all three
// structs: address, offset, flags and the symbol name.
func (kp *Kprobes) guestKprobe(s *guestStruct, p *Kprobe) int64 {
	p.Addr, p.Offset, p.Disabled = s.u64(gkpAddr), uint64(s.u32(gkpOffset)), s.u32(gkpFlags)&flagDisabled != 0
	if sp := s.u64(gkpSymbolName); sp != 0 {
		name, err := kp.k.ReadString(sp, 256)
		if err != nil {
			return -int64(syscall.EFAULT)
		}
		p.Symbol = name
	}
	return 0
}

// writeBackGuestKprobe writes what registering or unregistering p
// decided into the guest's struct kprobe at addr: the resolved address,
// the saved opcode and the missed count.
func (kp *Kprobes) writeBackGuestKprobe(addr uint64, p *Kprobe) {
	_ = kp.k.Write64(addr+gkpAddr, p.Addr)
	_ = kp.k.Write32(addr+gkpOpcode, p.Opcode())
	_ = kp.k.Write64(addr+gkpNmissed, p.Missed())
}

// registerDirect registers p while the world is stopped in a hostcall.
func (kp *Kprobes) registerDirect(p *Kprobe) error { return kp.register(p, direct) }

// registerGuestKprobe is register_kprobe: the pre and post handlers are
// guest functions, called on the guest from the hit.
func (kp *Kprobes) registerGuestKprobe(s *guestStruct) int64 {
	addr := s.addr
	p := &Kprobe{}
	if e := kp.guestKprobe(s, p); e != 0 {
		return e
	}
	gp := &guestProbe{addr: addr, kp: p}
	if pre := s.u64(gkpPreHandler); pre != 0 {
		gp.handlers = append(gp.handlers, pre)
		p.PreHandler = func(p *Kprobe, regs *Regs) bool {
			r, ok := kp.callGuest(regs, pre, addr, regs.frame, 0)
			if !ok {
				p.nmissed.Add(1)
				return false
			}
			return int32(r) != 0
		}
	}
	if post := s.u64(gkpPostHandler); post != 0 {
		gp.handlers = append(gp.handlers, post)
		p.PostHandler = func(p *Kprobe, regs *Regs) { kp.callGuest(regs, post, addr, regs.frame, 0) }
	}
	if err := kp.registerDirect(p); err != nil {
		return errnoOf(err)
	}
	kp.addGuestProbe(gp)
	kp.writeBackGuestKprobe(addr, p)
	return 0
}

// registerGuestKretprobe is register_kretprobe: the instances are the
// module's own pool of struct kretprobe_instance, and the entry and
// return handlers guest functions.
func (kp *Kprobes) registerGuestKretprobe(s *guestStruct) int64 {
	rp := &Kretprobe{}
	if e := kp.guestKprobe(s, &rp.Kp); e != 0 {
		return e
	}
	maxactive := int(int32(s.u32(grpMaxactive)))
	pool, stride := s.u64(grpPool), s.u64(grpPoolStride)
	if pool == 0 || maxactive <= 0 || maxactive > KretprobeMaxActiveMax || stride < griFp+8 {
		return -int64(syscall.EINVAL)
	}
	if s.u64(grpDataSize) > KretprobeMaxDataSize {
		return -int64(syscall.E2BIG)
	}
	rp.MaxActive = maxactive
	gp := &guestProbe{addr: s.addr, rp: rp, kp: &rp.Kp}
	for i := maxactive - 1; i >= 0; i-- {
		gp.free = append(gp.free, pool+uint64(i)*stride)
	}
	kp.guestKretprobeHandlers(gp, s.u64(grpHandler), s.u64(grpEntryHandler))
	if err := kp.registerKretprobe(rp, kp.registerDirect); err != nil {
		return errnoOf(err)
	}
	kp.addGuestProbe(gp)
	kp.writeBackGuestKprobe(s.addr, &rp.Kp)
	return 0
}

// guestKretprobeHandlers sets gp's kretprobe handlers: each instance takes
// a guest struct kretprobe_instance from gp's free list (none left: the
// hit is missed) and gives it back on release; entry and handler, guest
// functions or 0, are called with it.
func (kp *Kprobes) guestKretprobeHandlers(gp *guestProbe, handler, entry uint64) {
	mem, rp := kp.k, gp.rp
	gp.handlers = []uint64{handler, entry}
	rp.release = func(ri *KretprobeInstance) {
		if ri.guest != 0 {
			gp.mu.Lock()
			gp.free = append(gp.free, ri.guest)
			gp.mu.Unlock()
			ri.guest = 0
		}
	}
	rp.EntryHandler = func(ri *KretprobeInstance, regs *Regs) bool {
		gp.mu.Lock()
		if n := len(gp.free); n > 0 {
			ri.guest = gp.free[n-1]
			gp.free = gp.free[:n-1]
		}
		gp.mu.Unlock()
		if ri.guest == 0 {
			return true
		}
		_ = mem.Write64(ri.guest+griRp, gp.addr)
		_ = mem.Write64(ri.guest+griRetAddr, ri.RetAddr)
		_ = mem.Write64(ri.guest+griFp, ri.Frame)
		if entry != 0 {
			if r, ok := kp.callGuest(regs, entry, ri.guest, regs.frame, 0); ok && int32(r) != 0 {
				return true
			}
		}
		return false
	}
	rp.Handler = func(ri *KretprobeInstance, regs *Regs) {
		if handler != 0 && ri.guest != 0 {
			_ = mem.Write64(ri.guest+griRetAddr, ri.RetAddr)
			kp.callGuest(regs, handler, ri.guest, regs.frame, 0)
		}
	}
}

// registerGuestJprobe is register_jprobe. The handler is entered as plain
// guest code (setjmp), not called: it needs no coroutine.
func (kp *Kprobes) registerGuestJprobe(s *guestStruct) int64 {
	jp := &Jprobe{entry: s.u64(gjpEntry)}
	if e := kp.guestKprobe(s, &jp.Kp); e != 0 {
		return e
	}
	if jp.entry == 0 {
		return -int64(syscall.EINVAL)
	}
	if err := kp.registerJprobe(jp, kp.registerDirect); err != nil {
		return errnoOf(err)
	}
	kp.guest.probes[s.addr] = &guestProbe{addr: s.addr, jp: jp, kp: &jp.Kp}
	kp.writeBackGuestKprobe(s.addr, &jp.Kp)
	return 0
}

func (kp *Kprobes) addGuestProbe(gp *guestProbe) {
	kp.guest.probes[gp.addr] = gp
	if len(gp.handlers) > 0 {
		kp.guest.count.Add(1)
	}
}

// dropGuestProbe unregisters gp; kp.mu is held.
func (kp *Kprobes) dropGuestProbe(gp *guestProbe, stop func(func())) {
	if gp.rp != nil {
		gp.rp.gone.Store(true)
	}
	kp.unregister(gp.kp, stop)
	delete(kp.guest.probes, gp.addr)
	if len(gp.handlers) > 0 {
		kp.guest.count.Add(-1)
	}
}

// dropGuestProbes unregisters the probes a module registered and did not
// unregister (its init failed half-way, or its cleanup forgot): their
// handlers are about to be freed. Linux would crash later; kpemu logs it.
func (kp *Kprobes) dropGuestProbes(m *kernel.Module) {
	kp.mu.Lock()
	defer kp.mu.Unlock()
	for addr, gp := range kp.guest.probes {
		mine := m.Contains(addr)
		for _, h := range gp.handlers {
			mine = mine || m.Contains(h)
		}
		if gp.jp != nil {
			mine = mine || m.Contains(gp.jp.entry)
		}
		if mine {
			kp.log.Warn("kprobes: a module going away left a probe registered; unregistering it", "module", m.Name, "probe", kp.k.Kallsyms().Format(addr))
			kp.dropGuestProbe(gp, kp.k.StopMachine)
		}
	}
}
