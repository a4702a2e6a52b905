package kprobes

import (
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/kpemu/kpemu/kernel"
)

// BRK immediates, as arch/arm64/include/asm/brk-imm.h (Linux 6.1).
const (
	KprobesBrkImm   = 0x004
	KprobesBrkSSImm = 0x006
)

// BRK opcodes: AARCH64_BREAK_MON | imm << 5.
const (
	brkOpcodeKprobes   = 0xd4200000 | KprobesBrkImm<<5   // BRK64_OPCODE_KPROBES
	brkOpcodeKprobesSS = 0xd4200000 | KprobesBrkSSImm<<5 // BRK64_OPCODE_KPROBES_SS
)

// Probe flags, as include/linux/kprobes.h.
const (
	flagGone     = 1
	flagDisabled = 2
)

// Per-CPU kprobe status (kprobe_ctlblk.kprobe_status).
const (
	statusNone      = 0
	statusHitActive = 0x1
	statusHitSS     = 0x2
	statusReenter   = 0x4
	statusHitSSDone = 0x8
)

// hashBits is KPROBE_HASH_BITS: 64 buckets.
const hashBits = 6

// pstateDAIF is the DAIF mask in SPSR format.
const pstateDAIF = 0xf << 6

// Type is the kind of probe, the letter kprobes/list shows.
type Type byte

// Probe kinds.
const (
	TypeKprobe    Type = 'k'
	TypeKretprobe Type = 'r'
	TypeJprobe    Type = 'j'
)

// Kprobe is one probe, as Linux's struct kprobe. Set either Symbol (with an
// optional Offset) or Addr, and the handlers, then Register it.
type Kprobe struct {
	Symbol string
	Offset uint64
	Addr   uint64 // resolved address once registered

	// PreHandler runs before the probed instruction, on the vCPU that hit
	// the probe. It may change regs; returning true means it changed the
	// PC and the instruction must not be stepped (Linux: non-zero).
	PreHandler func(p *Kprobe, regs *Regs) bool
	// PostHandler runs after the probed instruction was stepped.
	PostHandler func(p *Kprobe, regs *Regs)
	// Disabled registers the probe disabled (KPROBE_FLAG_DISABLED).
	Disabled bool

	flags uint32 // changed under kp.mu with the machine stopped
	typ   Type   // 0 means TypeKprobe
	// breakHandler is a jprobe's longjmp_break_handler, run when the
	// guest handler's jprobe_return hits its BRK.
	breakHandler func(p *Kprobe, regs *Regs) bool
	point        *probePoint
	nhit         atomic.Uint64
	nmissed      atomic.Uint64
}

// Hits is how many times the probe's pre handler ran.
func (p *Kprobe) Hits() uint64 { return p.nhit.Load() }

// Missed is Linux's nmissed: hits whose handlers were skipped.
func (p *Kprobe) Missed() uint64 { return p.nmissed.Load() }

// Opcode is the instruction the probe's BRK replaced (0 if unregistered).
func (p *Kprobe) Opcode() uint32 {
	if p.point == nil {
		return 0
	}
	return p.point.opcode
}

// Slot is the address of the probe's out-of-line slot, 0 when its
// instruction is simulated or it is unregistered.
func (p *Kprobe) Slot() uint64 {
	if p.point == nil {
		return 0
	}
	return p.point.slot
}

// Type is the probe's kind: k, or r for the kprobe behind a kretprobe.
func (p *Kprobe) Type() Type {
	if p.typ == 0 {
		return TypeKprobe
	}
	return p.typ
}

func (p *Kprobe) disabled() bool { return p.flags&(flagDisabled|flagGone) != 0 }

// probePoint is one patched address. It plays Linux's aggregate probe: all
// probes on one address share its BRK and slot, newest first.
type probePoint struct {
	addr     uint64
	opcode   uint32       // the original instruction
	slot     uint64       // out-of-line slot {opcode, BRK #6}; 0 when simulated
	simulate simulateFunc // for instructions that read or write the PC
	// slotReady: the slot holds the instruction. A point registered
	// without stopping the machine gets its slot filled when it is first
	// armed: the host writes guest memory only with the world stopped.
	slotReady bool
	// probes, oldest first (Linux's list, newest first, read backwards):
	// never changed below a published length, so that a probe can come
	// or go while a vCPU runs through the list (list). A new probe is
	// appended in place where the array has room (no reader sees past
	// its own length), so that a point's thousandth probe costs what its
	// first did; a removal copies.
	probes atomic.Pointer[[]*Kprobe]
	armed  bool
	// gone: the text under the point was freed (its module unloaded); the
	// point is out of byAddr, kept in its bucket for kprobes/list only.
	gone bool
}

// list returns the point's probes, oldest first: Linux's order (newest
// first, list_add_rcu) is this read from the end.
func (pt *probePoint) list() []*Kprobe {
	if l := pt.probes.Load(); l != nil {
		return *l
	}
	return nil
}

// setList replaces the point's probes; kp.mu is held.
func (pt *probePoint) setList(l []*Kprobe) { pt.probes.Store(&l) }

// pointAt is the hit path's look-up of the point at addr.
func (kp *Kprobes) pointAt(addr uint64) *probePoint {
	kp.byAddrMu.RLock()
	defer kp.byAddrMu.RUnlock()
	return kp.byAddr[addr]
}

// kprobeCtlblk is the per-CPU kprobe_ctlblk.
type kprobeCtlblk struct {
	cur          *probePoint
	instance     *Kprobe // the probe whose pre handler took over (kprobe_instance)
	ssPending    bool    // StepHW: a software step is in flight (ss_ctx)
	ssMatch      uint64  // StepHW: where it must land
	status       int
	savedIrqflag uint64
	prev         struct {
		cur    *probePoint
		status int
	}
}

// Kprobes is the probe subsystem of one kernel.
type Kprobes struct {
	k   *kernel.Kernel
	log *slog.Logger

	regsPool sync.Pool // the Regs the hit path reads pt_regs into

	mu      sync.Mutex // serialises registration; see the package doc
	buckets [1 << hashBits][]*probePoint
	// byAddr is the points by address. Changed under kp.mu and, as the
	// hit path reads it while the machine runs, byAddrMu.
	byAddr      map[uint64]*probePoint
	byAddrMu    sync.RWMutex
	allDisarmed bool
	// guestReady: the guest can take a BRK (its vectors, break hooks and
	// every CPU are up; HC_KERNEL_READY). Until then points are registered
	// but not armed. Changed only with the machine stopped.
	guestReady atomic.Bool
	slots      slotAllocator
	blacklist  []BlacklistEntry

	kcb []kprobeCtlblk // per vCPU; touched only on that vCPU or with the machine stopped

	trampoline uint64 // __kretprobe_trampoline
	instances  kretprobeInstances
	jprobes    []jprobeState // per vCPU

	observer func(Observation) // see Observe

	allowBlacklisted bool // see SetAllowBlacklisted

	stepMode atomic.Int32 // StepMode; read on the hit path

	guest guestAPI // module-registered probes with guest handlers; see guest.go

	uprobes uprobes // user-space probes; see uprobes.go

	// listGen counts the changes kprobes/list shows (a probe registered
	// or unregistered, disabled, enabled or gone); listed is the list as
	// last rendered. Both under mu.
	listGen uint64
	listed  listCache
}

// listCache is kprobes/list's text as rendered at a listGen and a symbol
// table generation: an open of the list with 10,000 probes copies it
// rather than render 10,000 lines again.
type listCache struct {
	valid       bool
	gen, symGen uint64
	text        []byte // never changed once stored
}

// New attaches the probe subsystem to k: it builds the blacklist and
// installs the hostcalls behind the guest's break hooks.
func New(k *kernel.Kernel, log *slog.Logger) (*Kprobes, error) {
	if log == nil {
		log = k.Logger()
	}
	kp := &Kprobes{
		k:      k,
		log:    log,
		byAddr: make(map[uint64]*probePoint),
		kcb:    make([]kprobeCtlblk, k.Machine().NumCPUs()),
	}
	kp.jprobes = make([]jprobeState, len(kp.kcb))
	l := k.Layout()
	if l.InsnSlots.End-l.InsnSlots.Start < slotSize {
		return nil, fmt.Errorf("kernel image reserves no instruction slots")
	}
	kp.slots = slotAllocator{area: l.InsnSlots}
	kp.blacklist = populateBlacklist(k)
	k.SetHostcall(kernel.HCKprobeBrk, kp.hcBreakpoint)
	k.SetHostcall(kernel.HCKprobeSSBrk, kp.hcSSBreakpoint)
	k.SetHostcall(kernel.HCKprobeFault, kp.hcFault)
	kp.setupKretprobes()
	kp.setupGuestAPI()
	kp.setupUprobes()
	k.RegisterModuleNotifier(kp.moduleCallback)
	if !k.OnReady(kp.armDeferred) {
		kp.guestReady.Store(true)
	}
	return kp, nil
}

// armDeferred arms the points registered before the guest could take
// probes. A BRK the guest hits before debug_traps_init and
// arch_init_kprobes have run is an unexpected kernel BRK, and the guest
// dies (a probe on preempt_count_add hits in kmem_cache_init); in Linux
// no probe can exist that early, as init_kprobes is an initcall. It runs
// in HC_KERNEL_READY with every vCPU stopped, the condition for changing
// arming, but without kp.mu, which a goroutine waiting to stop the machine
// may hold: it only flips armed states, which only the stopped machine
// reads and writes.
func (kp *Kprobes) armDeferred() {
	kp.guestReady.Store(true)
	for _, b := range kp.buckets {
		for _, pt := range b {
			if err := kp.updateArming(pt); err != nil {
				kp.log.Error("kprobes: arming", "addr", pt.addr, "err", err)
			}
		}
	}
}

// Kernel returns the kernel the probes live in.
func (kp *Kprobes) Kernel() *kernel.Kernel { return kp.k }

func hashPtr(addr uint64) int { return int((addr * 0x61C8864680B583EB) >> (64 - hashBits)) }

func einval(format string, args ...any) error {
	return fmt.Errorf("%w: %s", syscall.EINVAL, fmt.Sprintf(format, args...))
}

// resolve is _kprobe_addr: the address a probe's symbol+offset or address
// names, and that it lies inside some symbol.
func (kp *Kprobes) resolve(p *Kprobe) (uint64, error) {
	syms := kp.k.Kallsyms()
	var addr uint64
	switch {
	case p.Symbol != "" && p.Addr != 0:
		return 0, einval("both symbol %q and address %#x given", p.Symbol, p.Addr)
	case p.Symbol != "":
		s, ok := syms.LookupName(p.Symbol)
		if !ok {
			return 0, fmt.Errorf("%w: no symbol %q", syscall.ENOENT, p.Symbol)
		}
		addr = s.Addr + p.Offset
	case p.Addr != 0:
		addr = p.Addr + p.Offset
	default:
		return 0, einval("neither symbol nor address given")
	}
	if _, _, ok := syms.LookupAddr(addr); !ok {
		return 0, fmt.Errorf("%w: %#x is in no symbol", syscall.ENOENT, addr)
	}
	return addr, nil
}

// OnFuncEntry is kprobe_on_func_entry: whether symbol+offset (or
// addr+offset) is the first instruction of the function that contains it,
// wherever symbol is: perf probe writes _text+OFF for a function's entry.
// The error wraps ENOENT when it names no symbol.
func (kp *Kprobes) OnFuncEntry(symbol string, addr, offset uint64) (bool, error) {
	a, err := kp.resolve(&Kprobe{Symbol: symbol, Addr: addr, Offset: offset})
	if err != nil {
		return false, err
	}
	_, off, _ := kp.k.Kallsyms().LookupAddr(a)
	return off == 0, nil
}

// Register arms a probe (register_kprobe). Errors wrap the errno Linux
// returns: ENOENT for an unknown symbol, EINVAL for a blacklisted,
// misaligned, non-text or unprobeable address, ENOMEM when the slots run out.
// A probe registered before the guest kernel is ready (kernel.Ready) is
// registered and listed at once, and armed when the guest becomes ready.
func (kp *Kprobes) Register(p *Kprobe) error {
	kp.mu.Lock()
	defer kp.mu.Unlock()
	return kp.register(p, kp.k.StopMachine)
}

// register is Register with kp.mu held; stop runs its argument with the
// machine stopped (kernel.StopMachine, or a direct call in a hostcall,
// where the world is stopped already).
func (kp *Kprobes) register(p *Kprobe, stop func(func())) error {
	if p.point != nil {
		return einval("probe at %#x is already registered", p.Addr)
	}
	addr, err := kp.resolve(p)
	if err != nil {
		return err
	}
	if err := kp.checkAddressSafe(addr); err != nil {
		return err
	}
	p.flags = 0
	if p.Disabled {
		p.flags = flagDisabled
	}
	p.nmissed.Store(0)

	// A disabled probe arms nothing: it joins the table without stopping
	// the machine (as Linux's register_kprobe does not stop_machine for
	// it), which a write of thousands of kprobe events would otherwise
	// wait for, once a probe. The hit path sees the new list or the old.
	disabled := p.flags&flagDisabled != 0

	if pt := kp.byAddr[addr]; pt != nil {
		if p.breakHandler != nil {
			for _, q := range pt.list() {
				if q.breakHandler != nil {
					return fmt.Errorf("%w: %s already has a jprobe", syscall.EEXIST, kp.k.Kallsyms().Format(addr))
				}
			}
		}
		add := func() {
			p.Addr = addr
			p.point = pt
			pt.setList(append(pt.list(), p))
			kp.listGen++
		}
		if disabled {
			add()
			return nil
		}
		var perr error
		stop(func() {
			add()
			perr = kp.updateArming(pt)
		})
		return perr
	}

	opcode, class, err := kp.prepare(addr)
	if err != nil {
		return err
	}
	pt := &probePoint{addr: addr, opcode: opcode}
	pt.setList([]*Kprobe{p})
	add := func() {
		p.Addr = addr
		p.point = pt
		kp.listGen++
		h := hashPtr(addr)
		kp.buckets[h] = append([]*probePoint{pt}, kp.buckets[h]...)
		kp.byAddrMu.Lock()
		kp.byAddr[addr] = pt
		kp.byAddrMu.Unlock()
	}
	if class == insnGoodNoSlot {
		pt.simulate = simulatorFor(opcode)
	} else if disabled {
		// A never-used slot needs no look at the vCPUs (alloc does, to
		// reuse a freed one); its instruction goes in at the first arming.
		if slot, ok := kp.slots.allocFresh(); ok {
			pt.slot = slot
		}
	}
	if disabled && (pt.slot != 0 || pt.simulate != nil) {
		add()
		return nil
	}
	var perr error
	stop(func() {
		if pt.simulate == nil && pt.slot == 0 {
			slot, ok := kp.slots.alloc(kp.kcb)
			if !ok {
				perr = fmt.Errorf("%w: out of instruction slots", syscall.ENOMEM)
				return
			}
			pt.slot = slot
		}
		if pt.slot != 0 {
			if perr = kp.prepareSlot(pt); perr != nil {
				kp.slots.free(pt.slot)
				return
			}
		}
		add()
		perr = kp.updateArming(pt)
	})
	return perr
}

// prepareSlot is arch_prepare_ss_slot: the instruction, then BRK #6. The
// machine must be stopped.
func (kp *Kprobes) prepareSlot(pt *probePoint) error {
	if err := kp.k.PatchTextNosync(pt.slot, pt.opcode); err != nil {
		return err
	}
	if err := kp.k.PatchTextNosync(pt.slot+4, brkOpcodeKprobesSS); err != nil {
		return err
	}
	pt.slotReady = true
	return nil
}

// checkAddressSafe is check_kprobe_address_safe: core kernel text, or
// the text of a module that is not going away (its init text only while
// it is coming, before init is freed).
func (kp *Kprobes) checkAddressSafe(addr uint64) error {
	// check_ftrace_location: arm64 Linux 6.1 has no KPROBES_ON_FTRACE, so
	// a function's ftrace call site (the BL slot, its second instruction)
	// cannot be probed. Its first address maps to that site too
	// (ftrace_location's sym+0 rule), but is not the site itself, so
	// SYM+0 stays probeable.
	if kp.k.FtraceLocation(addr) == addr {
		return einval("%s is an ftrace location", kp.k.Kallsyms().Format(addr))
	}
	// jump_label_text_reserved: a tracepoint's flips rewrite its site
	// under a BRK, and the probe's restore would then undo the flip,
	// leaving the tracepoint dead while its key says on.
	if kp.k.JumpLabelReserved(addr) {
		return einval("%s is a jump label site", kp.k.Kallsyms().Format(addr))
	}
	if !kp.k.IsText(addr) {
		m, st, ok := kp.k.ModuleAt(addr)
		if !ok || !m.IsText(addr) {
			return einval("%#x is not kernel text", addr)
		}
		if st == kernel.ModuleGoing {
			return fmt.Errorf("%w: module %s is going", syscall.ENOENT, m.Name)
		}
		if m.IsInitText(addr) && st != kernel.ModuleComing {
			return fmt.Errorf("%w: the init text of %s is gone", syscall.ENOENT, m.Name)
		}
	}
	if e, ok := kp.withinBlacklist(addr); ok {
		if !kp.allowBlacklisted {
			return einval("%s is on the kprobe blacklist", e.Name)
		}
		kp.log.Warn("kprobes: probing a blacklisted function; the guest will likely recurse and panic", "function", e.Name)
	}
	return nil
}

// SetAllowBlacklisted lets probes be placed on the blacklist (kpemu run
// --unsafe-allow-blacklisted), to watch what the blacklist prevents: the
// recursion is detected and the guest panics, and kpemu stays up.
func (kp *Kprobes) SetAllowBlacklisted(allow bool) {
	kp.mu.Lock()
	defer kp.mu.Unlock()
	kp.allowBlacklisted = allow
}

// prepare is arch_prepare_kprobe up to the slot: alignment and decoding.
func (kp *Kprobes) prepare(addr uint64) (uint32, insnClass, error) {
	if addr&3 != 0 {
		return 0, insnRejected, einval("%#x is not 4-byte aligned", addr)
	}
	opcode, err := kp.k.ReadInsn(addr)
	if err != nil {
		return 0, insnRejected, einval("%v", err)
	}
	sym, off, _ := kp.k.Kallsyms().LookupAddr(addr)
	prev := func(i int) (uint32, bool) {
		if uint64(i)*4 > off {
			return 0, false
		}
		a := addr - uint64(i)*4
		if pt := kp.byAddr[a]; pt != nil {
			return pt.opcode, true
		}
		v, err := kp.k.ReadInsn(a)
		return v, err == nil
	}
	class := decodeAtAddr(opcode, prev)
	if class == insnRejected {
		return opcode, class, einval("instruction %#08x at %s+0x%x cannot be probed", opcode, sym.Name, off)
	}
	return opcode, class, nil
}

// shouldArm: a point is armed when the guest can take probes, probes are
// globally armed and any of its probes is enabled.
func (kp *Kprobes) shouldArm(pt *probePoint) bool {
	if kp.allDisarmed || !kp.guestReady.Load() {
		return false
	}
	for _, p := range pt.list() {
		if !p.disabled() {
			return true
		}
	}
	return false
}

// updateArming patches the BRK in or out to match shouldArm. The machine
// must be stopped.
func (kp *Kprobes) updateArming(pt *probePoint) error {
	if pt.gone {
		return nil // its text is freed: never touch it again
	}
	want := kp.shouldArm(pt)
	if want == pt.armed {
		return nil
	}
	insn := pt.opcode
	if want {
		insn = brkOpcodeKprobes
		if pt.slot != 0 && !pt.slotReady {
			if err := kp.prepareSlot(pt); err != nil {
				return fmt.Errorf("%w: %w", syscall.EINVAL, err)
			}
		}
	}
	if err := kp.k.PatchTextNosync(pt.addr, insn); err != nil {
		return fmt.Errorf("%w: %w", syscall.EINVAL, err)
	}
	pt.armed = want
	return nil
}

// Unregister removes a probe (unregister_kprobe). The point's BRK is taken
// out when its last probe goes. Unregistering an unregistered probe is a
// no-op.
func (kp *Kprobes) Unregister(p *Kprobe) {
	kp.mu.Lock()
	defer kp.mu.Unlock()
	kp.unregister(p, kp.k.StopMachine)
}

// unregister is Unregister with kp.mu held; see register for stop.
func (kp *Kprobes) unregister(p *Kprobe, stop func(func())) {
	pt := p.point
	if pt == nil {
		return
	}
	if p.disabled() && !pt.armed && !kp.shouldArm(pt) {
		// Nothing to patch: as in register, no stop of the machine.
		kp.dropProbe(pt, p)
		return
	}
	stop(func() { kp.dropProbe(pt, p) })
}

// dropProbe takes p off pt, and pt out of the table with its last probe;
// kp.mu is held, and the machine stopped unless pt is not armed.
func (kp *Kprobes) dropProbe(pt *probePoint, p *Kprobe) {
	kp.listGen++
	l := pt.list()
	for i, c := range l {
		if c == p {
			pt.setList(append(l[:i:i], l[i+1:]...))
			break
		}
	}
	p.point = nil
	if len(pt.list()) > 0 {
		if err := kp.updateArming(pt); err != nil {
			kp.log.Error("kprobes: disarming", "addr", pt.addr, "err", err)
		}
		return
	}
	if pt.armed && !pt.gone {
		if err := kp.k.PatchTextNosync(pt.addr, pt.opcode); err != nil {
			kp.log.Error("kprobes: restoring text", "addr", pt.addr, "err", err)
		}
		pt.armed = false
	}
	if kp.byAddr[pt.addr] == pt {
		kp.byAddrMu.Lock()
		delete(kp.byAddr, pt.addr)
		kp.byAddrMu.Unlock()
	}
	h := hashPtr(pt.addr)
	for i, q := range kp.buckets[h] {
		if q == pt {
			kp.buckets[h] = append(kp.buckets[h][:i:i], kp.buckets[h][i+1:]...)
			break
		}
	}
	if pt.slot != 0 {
		kp.slots.free(pt.slot)
	}
}

// Enable clears a probe's DISABLED flag (enable_kprobe) and arms its
// address unless probes are globally disarmed.
func (kp *Kprobes) Enable(p *Kprobe) error { return kp.setDisabled(p, false) }

// Disable sets a probe's DISABLED flag (disable_kprobe); the address is
// disarmed when no enabled probe is left on it.
func (kp *Kprobes) Disable(p *Kprobe) error { return kp.setDisabled(p, true) }

// SetDisabledMany is Disable (disabled) or Enable of every probe in ps,
// with the machine stopped once for all of them, not once a probe: how
// enabling every event of a group arms its thousands of probes. It goes
// on past a failing probe and returns the first error.
func (kp *Kprobes) SetDisabledMany(ps []*Kprobe, disabled bool) error {
	if len(ps) == 0 {
		return nil
	}
	kp.mu.Lock()
	defer kp.mu.Unlock()
	var first error
	kp.k.StopMachine(func() {
		for _, p := range ps {
			if err := kp.setDisabledLocked(p, disabled, direct); err != nil && first == nil {
				first = err
			}
		}
	})
	return first
}

func (kp *Kprobes) setDisabled(p *Kprobe, disabled bool) error {
	kp.mu.Lock()
	defer kp.mu.Unlock()
	return kp.setDisabledLocked(p, disabled, kp.k.StopMachine)
}

func (kp *Kprobes) setDisabledLocked(p *Kprobe, disabled bool, stop func(func())) error {
	pt := p.point
	if pt == nil {
		return einval("probe is not registered")
	}
	if !disabled && p.flags&flagGone != 0 {
		return einval("probe is gone")
	}
	var err error
	stop(func() {
		kp.listGen++
		if disabled {
			p.flags |= flagDisabled
		} else {
			p.flags &^= flagDisabled
		}
		err = kp.updateArming(pt)
	})
	return err
}

// Gone reports whether the probe's text went away with its module
// (kprobe_gone): it stays registered, listed [GONE], and cannot be enabled.
func (kp *Kprobes) Gone(p *Kprobe) bool {
	kp.mu.Lock()
	defer kp.mu.Unlock()
	return p.flags&flagGone != 0
}

// Armed reports whether probes are globally armed (kprobes/enabled).
func (kp *Kprobes) Armed() bool {
	kp.mu.Lock()
	defer kp.mu.Unlock()
	return !kp.allDisarmed
}

// ArmAll is arm_all_kprobes: re-arm every point that has an enabled probe,
// leaving each probe's own DISABLED state alone.
func (kp *Kprobes) ArmAll() error { return kp.setAllDisarmed(false) }

// DisarmAll is disarm_all_kprobes: take every BRK out of kernel text.
func (kp *Kprobes) DisarmAll() error { return kp.setAllDisarmed(true) }

func (kp *Kprobes) setAllDisarmed(disarm bool) error {
	kp.mu.Lock()
	defer kp.mu.Unlock()
	if kp.allDisarmed == disarm {
		return nil
	}
	var failed, total int
	kp.k.StopMachine(func() {
		kp.allDisarmed = disarm
		for _, b := range kp.buckets {
			for _, pt := range b {
				total++
				if err := kp.updateArming(pt); err != nil {
					failed++
				}
			}
		}
	})
	verb := "enabled"
	if disarm {
		verb = "disabled"
	}
	if failed > 0 {
		kp.log.Warn(fmt.Sprintf("kprobes: Kprobes globally %s, but failed to arm %d out of %d probes", verb, failed, total))
		return fmt.Errorf("%w: %d of %d probes failed", syscall.EINVAL, failed, total)
	}
	kp.log.Info("kprobes: Kprobes globally " + verb)
	return nil
}

// ListEntry is one line of kprobes/list.
type ListEntry struct {
	Addr     uint64
	Type     Type
	Symbol   string // "" when the address has no symbol
	Offset   uint64
	Module   string
	Gone     bool
	Disabled bool
}

// List returns the registered probes in kprobes/list order: hash buckets
// 0..63, newest point first in a bucket, newest probe first on a point.
func (kp *Kprobes) List() []ListEntry {
	kp.mu.Lock()
	defer kp.mu.Unlock()
	var out []ListEntry
	kp.eachListedLocked(func(e *ListEntry) { out = append(out, *e) })
	return out
}

// listText returns kprobes/list's bytes, rendered again only if what it
// shows changed since the last call. The caller must not modify them.
func (kp *Kprobes) listText() []byte {
	kp.mu.Lock()
	defer kp.mu.Unlock()
	symGen := kp.k.Kallsyms().Generation()
	if c := &kp.listed; c.valid && c.gen == kp.listGen && c.symGen == symGen {
		return c.text
	}
	var b []byte
	kp.eachListedLocked(func(e *ListEntry) { b = e.appendLine(b) })
	kp.listed = listCache{valid: true, gen: kp.listGen, symGen: symGen, text: b}
	return b
}

// eachListedLocked calls f with each probe's entry in List's order; kp.mu
// is held. f must not keep e, which is reused.
func (kp *Kprobes) eachListedLocked(f func(e *ListEntry)) {
	syms := kp.k.Kallsyms()
	var e ListEntry
	for _, b := range kp.buckets {
		for _, pt := range b {
			sym, off, ok := syms.LookupAddr(pt.addr)
			l := pt.list()
			for i := len(l) - 1; i >= 0; i-- {
				p := l[i]
				e = ListEntry{Addr: pt.addr, Type: p.Type(), Offset: off, Gone: p.flags&flagGone != 0, Disabled: p.flags&flagDisabled != 0}
				if ok {
					e.Symbol, e.Module = sym.Name, sym.Module
				}
				f(&e)
			}
		}
	}
}

// String formats the entry exactly as Linux 6.1's report_probe.
func (e ListEntry) String() string { return string(e.appendLine(nil)) }

// appendLine appends the entry's line to b: String without fmt, since
// kprobes/list makes thousands of them.
func (e ListEntry) appendLine(b []byte) []byte {
	b = appendHex16(b, e.Addr)
	b = append(b, "  "...)
	b = append(b, byte(e.Type))
	b = append(b, "  "...)
	if e.Symbol != "" {
		mod := " "
		if e.Module != "" {
			mod = e.Module
		}
		b = append(b, e.Symbol...)
		b = append(b, "+0x"...)
		b = strconv.AppendUint(b, e.Offset, 16)
		b = append(b, "  "...)
		b = append(b, mod...)
	} else {
		b = append(b, "0x"...)
		b = appendHex16(b, e.Addr)
	}
	b = append(b, ' ')
	if e.Gone {
		b = append(b, "[GONE]"...)
	} else if e.Disabled {
		b = append(b, "[DISABLED]"...)
	}
	return append(b, '\n')
}

// appendHex16 appends v as %016x does.
func appendHex16(b []byte, v uint64) []byte {
	const digits = "0123456789abcdef"
	for i := 60; i >= 0; i -= 4 {
		b = append(b, digits[v>>uint(i)&0xf])
	}
	return b
}

// Regs is the guest's struct pt_regs as a handler sees it, and the vCPU
// that took the exception (what Linux's handlers get from smp_processor_id).
type Regs struct {
	X      [31]uint64
	SP     uint64
	PC     uint64
	Pstate uint64
	CPU    int // not part of pt_regs

	frame uint64 // the guest's pt_regs the values came from
}

const regsBytes = kernel.PtRegsPstate + 8

// Regs's X, SP, PC and Pstate lie as pt_regs's: an offset that differs
// makes one of these array lengths negative or its type a mismatch.
var (
	_ [0]struct{} = [unsafe.Offsetof(Regs{}.SP) - kernel.PtRegsSP]struct{}{}
	_ [0]struct{} = [unsafe.Offsetof(Regs{}.PC) - kernel.PtRegsPC]struct{}{}
	_ [0]struct{} = [unsafe.Offsetof(Regs{}.Pstate) - kernel.PtRegsPstate]struct{}{}
)

// frameBytes is r's pt_regs part as bytes, in the guest's layout: on a
// little-endian host (as the machine's RAM accessors assume) the frame
// copies in and out in one move. Word by word, through a buffer, the
// copies were some 950 host instructions of each kprobe hit.
func (r *Regs) frameBytes() []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(r)), regsBytes)
}

// readRegs reads the guest's pt_regs at addr. The Regs comes from a
// pool: the kprobe hit path's hostcalls give it back (putRegs) when they
// return, as a pt_regs is the handlers' only while they run; with an
// event on each of the 100 hottest functions, allocating them was a
// tenth of the guest's run.
func (kp *Kprobes) readRegs(addr uint64) (*Regs, error) {
	r, _ := kp.regsPool.Get().(*Regs)
	if r == nil {
		r = &Regs{}
	}
	if err := kp.k.ReadMem(addr, r.frameBytes()); err != nil {
		kp.regsPool.Put(r)
		return nil, fmt.Errorf("reading pt_regs at %#x: %w", addr, err)
	}
	r.CPU = 0
	r.frame = addr
	return r, nil
}

// putRegs gives r, which readRegs returned, back to the pool once
// nothing holds it.
func (kp *Kprobes) putRegs(r *Regs) { kp.regsPool.Put(r) }

func (kp *Kprobes) writeRegs(addr uint64, r *Regs) error {
	if err := kp.k.WriteMem(addr, r.frameBytes()); err != nil {
		return fmt.Errorf("writing pt_regs at %#x: %w", addr, err)
	}
	return nil
}
