package kernel

import (
	"encoding/binary"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/kpemu/kpemu/machine"
)

// Dynamic ftrace, the host half, after Linux 6.1's kernel/trace/ftrace.c
// and arch/arm64/kernel/ftrace.c (CONFIG_DYNAMIC_FTRACE_WITH_REGS).
//
// The guest is built with -fpatchable-function-entry=2: every traceable
// function opens with two NOPs, and __start_mcount_loc..__stop_mcount_loc
// lists the address of each first NOP (a module's list is its
// __patchable_function_entries section). At boot the host does what
// ftrace_init() and ftrace_init_nop() do: each first NOP becomes MOV X9, LR,
// and a record (dyn_ftrace) is made whose ip is the second instruction
// (ftrace_call_adjust). Tracers register FtraceOps, each with a filter
// and a notrace hash; a record whose ip some registered ops takes has its
// NOP patched to BL ftrace_caller (ftrace_regs_caller if an ops wants
// every register), with every vCPU stopped, as Linux's
// ftrace_run_update_code does under stop_machine. The guest's
// ftrace_caller (entry-ftrace.S) builds a pt_regs and calls ftrace_call's
// target, which is BL ftrace_stub while no ops is registered and BL
// arch_ftrace_ops_list_func while any is: a gate that makes HC_FTRACE_CALL,
// where the host calls every registered ops that takes the ip, as
// ftrace_ops_list_func does.
//
// Locking: ftrace.mu serialises changes (registration, hashes, module
// records) and guards the records' patch state; the call sites change
// only with the machine stopped. The hostcall reads the ops list and each
// ops' hashes through atomic pointers to values that are never changed in
// place, so a call never waits for a change, as Linux's RCU-protected
// ftrace_ops_list.

// Instructions of a call site (arch/arm64/kernel/ftrace.c).
const (
	insnNop     = 0xd503201f // aarch64_insn_gen_nop
	insnMovX9LR = 0xaa1e03e9 // MOV X9, LR: ORR X9, XZR, X30
	insnBL      = 0x94000000 // BL with imm26 = 0
)

// MCountInsnSize is MCOUNT_INSN_SIZE: the BL at a record's ip.
const MCountInsnSize = 4

// ThreadSize is THREAD_SIZE, the size of every kernel stack (the guest's
// asm/asm-offsets.h).
const ThreadSize = 16384

// FtraceCall is one call of a traced function, as a callback sees it
// (ftrace_func_t's ip, parent_ip and regs).
type FtraceCall struct {
	CPU      *machine.CPU // the vCPU that called the function
	IP       uint64       // the record's ip: the function's address + MCountInsnSize
	ParentIP uint64       // the return address into the caller (the callsite's LR)
	Regs     uint64       // the pt_regs that ftrace_caller built (struct ftrace_regs)
}

// FtraceHash is a set of record ips, as struct ftrace_hash. An empty
// hash means "every function" as a filter and "no function" as a notrace
// hash. The zero value is empty.
type FtraceHash struct {
	ips map[uint64]struct{}
	// Mod is FTRACE_HASH_FL_MOD: the filter waits for functions of a
	// module that is not loaded yet, so it is not empty even without ips
	// (ftrace_hash_empty), and takes no function until they come.
	Mod bool
}

// Add puts ip in the hash.
func (h *FtraceHash) Add(ip uint64) {
	if h.ips == nil {
		h.ips = make(map[uint64]struct{})
	}
	h.ips[ip] = struct{}{}
}

// Remove takes ip out of the hash.
func (h *FtraceHash) Remove(ip uint64) { delete(h.ips, ip) }

// Has reports whether ip is in the hash (ftrace_lookup_ip).
func (h FtraceHash) Has(ip uint64) bool {
	_, ok := h.ips[ip]
	return ok
}

// Len is how many ips the hash holds (its count).
func (h FtraceHash) Len() int { return len(h.ips) }

// Empty is ftrace_hash_empty: no ips and no Mod flag.
func (h FtraceHash) Empty() bool { return len(h.ips) == 0 && !h.Mod }

// Clone returns a copy of h that shares nothing with it.
func (h FtraceHash) Clone() FtraceHash {
	c := FtraceHash{Mod: h.Mod}
	for ip := range h.ips {
		c.Add(ip)
	}
	return c
}

// ftraceHashes is an ops' filter and notrace hash; never changed once
// published.
type ftraceHashes struct{ filter, notrace FtraceHash }

// FtraceOps is a tracer's struct ftrace_ops: its callback and which
// functions it wants. The zero value with Func set traces every function.
type FtraceOps struct {
	// Func is called for every call of a function that the ops takes, on
	// the vCPU that made it, inside its hostcall: it must neither block
	// nor stop the machine.
	Func func(FtraceCall)
	// SaveRegs is FTRACE_OPS_FL_SAVE_REGS: the call sites go through
	// ftrace_regs_caller, which saves every register into the pt_regs.
	SaveRegs bool

	hashes  atomic.Pointer[ftraceHashes]
	enabled bool // FTRACE_OPS_FL_ENABLED; guarded by ftrace.mu
	// hashFrom is the ops whose hashes this one uses (graph_ops's
	// func_hash is global_ops'); set only while unregistered.
	hashFrom *FtraceOps
}

func (o *FtraceOps) loadHashes() *ftraceHashes {
	if o.hashFrom != nil {
		return o.hashFrom.loadHashes()
	}
	if h := o.hashes.Load(); h != nil {
		return h
	}
	return &ftraceHashes{}
}

// Filter returns a copy of the ops' filter hash.
func (o *FtraceOps) Filter() FtraceHash { return o.loadHashes().filter.Clone() }

// Notrace returns a copy of the ops' notrace hash.
func (o *FtraceOps) Notrace() FtraceHash { return o.loadHashes().notrace.Clone() }

// test is ftrace_ops_test: ip is in the filter (or the filter is empty)
// and not in the notrace hash.
func (o *FtraceOps) test(ip uint64) bool {
	h := o.loadHashes()
	return (h.filter.Empty() || h.filter.Has(ip)) && (h.notrace.Empty() || !h.notrace.Has(ip))
}

// ftraceRec is a struct dyn_ftrace.
type ftraceRec struct {
	ip  uint64
	mod *Module // nil for the core kernel

	// The site's state (FTRACE_FL_ENABLED, FTRACE_FL_REGS) and how many
	// registered ops take it; guarded by ftrace.mu.
	enabled bool
	regs    bool
	count   int
}

// ftraceTable is the records, never changed once published.
type ftraceTable struct {
	order []*ftraceRec // available_filter_functions order: the core's by address, then each module's, oldest first
	byIP  []*ftraceRec // sorted by ip, for lookups
}

func newFtraceTable(order []*ftraceRec) *ftraceTable {
	byIP := append([]*ftraceRec(nil), order...)
	sort.Slice(byIP, func(i, j int) bool { return byIP[i].ip < byIP[j].ip })
	return &ftraceTable{order: order, byIP: byIP}
}

// lookup is lookup_rec: the record whose call site overlaps [start, end].
func (t *ftraceTable) lookup(start, end uint64) *ftraceRec {
	i := sort.Search(len(t.byIP), func(i int) bool { return t.byIP[i].ip+MCountInsnSize > start })
	if i < len(t.byIP) && t.byIP[i].ip <= end {
		return t.byIP[i]
	}
	return nil
}

// ftrace is the kernel's ftrace core.
type ftrace struct {
	mu      sync.Mutex
	table   atomic.Pointer[ftraceTable]
	ops     atomic.Pointer[[]*FtraceOps] // the registered ops, for the hostcall
	hashed  map[*FtraceOps]bool          // every ops whose hashes were set: clear_mod_from_hashes visits them
	callSet bool                         // ftrace_call is BL arch_ftrace_ops_list_func
	off     bool                         // the ftrace_enabled sysctl is 0

	caller, regsCaller uint64 // ftrace_caller, ftrace_regs_caller
	call               uint64 // ftrace_call: the BL that ftrace_common makes
	stub, listFunc     uint64 // ftrace_stub, arch_ftrace_ops_list_func
}

// initFtrace is ftrace_init: it reads the image's call sites from the
// loaded memory, checks each is two NOPs, makes the first one MOV X9, LR
// (ftrace_init_nop), and routes HC_FTRACE_CALL. An image without
// __start_mcount_loc has no records, and tracers trace nothing.
func (k *Kernel) initFtrace() error {
	ft := &k.ftrace
	ft.hashed = make(map[*FtraceOps]bool)
	empty := []*FtraceOps{}
	ft.ops.Store(&empty)
	ft.table.Store(newFtraceTable(nil))
	k.m.SetHostcall(HCFtraceCall, k.hcFtraceCall)
	defer k.initFgraph()
	start, ok1 := k.syms.LookupName("__start_mcount_loc")
	stop, ok2 := k.syms.LookupName("__stop_mcount_loc")
	if !ok1 || !ok2 || stop.Addr <= start.Addr {
		return nil
	}
	for _, s := range []struct {
		name string
		addr *uint64
	}{
		{"ftrace_caller", &ft.caller}, {"ftrace_regs_caller", &ft.regsCaller}, {"ftrace_call", &ft.call},
		{"ftrace_stub", &ft.stub}, {"arch_ftrace_ops_list_func", &ft.listFunc},
	} {
		sym, ok := k.syms.LookupName(s.name)
		if !ok {
			return fmt.Errorf("%w: the image has call sites but no %s (entry-ftrace.S, kernel/trace/ftrace.c)", ErrBadImage, s.name)
		}
		*s.addr = sym.Addr
	}
	n := (stop.Addr - start.Addr) / 8
	locs := make([]uint64, 0, n)
	for i := uint64(0); i < n; i++ {
		v, err := k.Read64(start.Addr + 8*i)
		if err != nil {
			return fmt.Errorf("%w: reading __mcount_loc: %w", ErrBadImage, err)
		}
		// Linkers may pad between objects' entries: skip zeros, as
		// ftrace_process_locs does.
		if v != 0 {
			locs = append(locs, v)
		}
	}
	sort.Slice(locs, func(i, j int) bool { return locs[i] < locs[j] })
	recs := make([]*ftraceRec, 0, len(locs))
	for _, loc := range locs {
		if err := k.ftraceInitNop(loc); err != nil {
			return fmt.Errorf("%w: %w", ErrBadImage, err)
		}
		recs = append(recs, &ftraceRec{ip: loc + MCountInsnSize})
	}
	ft.table.Store(newFtraceTable(recs))
	return nil
}

// ftraceInitNop is ftrace_init_nop for the call site at loc (the first
// NOP): both instructions must be NOPs; the first becomes MOV X9, LR.
func (k *Kernel) ftraceInitNop(loc uint64) error {
	for _, a := range []uint64{loc, loc + MCountInsnSize} {
		insn, err := k.Read32(a)
		if err != nil {
			return fmt.Errorf("ftrace: call site %#x: %w", loc, err)
		}
		if insn != insnNop {
			return fmt.Errorf("ftrace: call site %s is %#08x, not two NOPs", k.syms.Format(a), insn)
		}
	}
	if err := k.Write32(loc, insnMovX9LR); err != nil {
		return fmt.Errorf("ftrace: call site %#x: %w", loc, err)
	}
	return nil
}

// FtraceRecord is one traceable function's call site, as
// available_filter_functions and enabled_functions show it.
type FtraceRecord struct {
	IP      uint64 // the BL site: the function's address + MCountInsnSize
	Enabled bool   // the site calls the trampoline (FTRACE_FL_ENABLED)
	Regs    bool   // through ftrace_regs_caller (FTRACE_FL_REGS)
	Count   int    // how many registered ops take it (ftrace_rec_count)
}

// FtraceRecords returns the records in available_filter_functions order:
// the core kernel's by address, then each loaded module's, oldest first.
func (k *Kernel) FtraceRecords() []FtraceRecord {
	ft := &k.ftrace
	ft.mu.Lock()
	defer ft.mu.Unlock()
	t := ft.table.Load()
	out := make([]FtraceRecord, len(t.order))
	for i, r := range t.order {
		out[i] = FtraceRecord{IP: r.ip, Enabled: r.enabled, Regs: r.regs, Count: r.count}
	}
	return out
}

// FtraceLocationRange is ftrace_location_range: the ip of a record whose
// call site overlaps [start, end] (end inclusive), or 0.
func (k *Kernel) FtraceLocationRange(start, end uint64) uint64 {
	if r := k.ftrace.table.Load().lookup(start, end); r != nil {
		return r.ip
	}
	return 0
}

// FtraceLocation is ftrace_location: ip itself if it is a record's call
// site, the function's call site if ip is a function's first address
// ("sym+0 maps to the fentry site"), else 0. kprobes refuses an address
// for which this returns the address itself.
func (k *Kernel) FtraceLocation(ip uint64) uint64 {
	if loc := k.FtraceLocationRange(ip, ip); loc != 0 {
		return loc
	}
	s, off, ok := k.syms.LookupAddr(ip)
	if !ok || off != 0 {
		return 0
	}
	return k.FtraceLocationRange(ip, ip+max(s.Size, 1)-1)
}

// RegisterFtraceFunction is register_ftrace_function: the ops' callback
// runs for every call of every function it takes, from now on. EBUSY if
// it is registered already.
func (k *Kernel) RegisterFtraceFunction(ops *FtraceOps) error {
	ft := &k.ftrace
	ft.mu.Lock()
	defer ft.mu.Unlock()
	if ops.enabled {
		return fmt.Errorf("%w: ftrace ops already registered", syscall.EBUSY)
	}
	old := ft.ops.Load()
	ops.enabled = true
	list := append(append([]*FtraceOps(nil), *old...), ops)
	ft.ops.Store(&list)
	if err := k.ftraceUpdateCode(ft.table.Load().order); err != nil {
		// As ftrace_startup's failure path: the ops goes again.
		ops.enabled = false
		ft.ops.Store(old)
		if uerr := k.ftraceUpdateCode(ft.table.Load().order); uerr != nil {
			k.log.Error("ftrace: restoring the call sites", "err", uerr)
		}
		return err
	}
	return nil
}

// UnregisterFtraceFunction is unregister_ftrace_function. Unregistering
// an ops that is not registered is a no-op.
func (k *Kernel) UnregisterFtraceFunction(ops *FtraceOps) error {
	ft := &k.ftrace
	ft.mu.Lock()
	defer ft.mu.Unlock()
	if !ops.enabled {
		return nil
	}
	ops.enabled = false
	var list []*FtraceOps
	for _, o := range *ft.ops.Load() {
		if o != ops {
			list = append(list, o)
		}
	}
	ft.ops.Store(&list)
	return k.ftraceUpdateCode(ft.table.Load().order)
}

// SetFtraceEnabled is a write of /proc/sys/kernel/ftrace_enabled that
// turns it on or off (ftrace_enable_sysctl): off, every call site is a NOP
// and ftrace_call calls the stub while the ops stay registered
// (ftrace_shutdown_sysctl), so that nothing is traced; on, the sites that
// the registered ops take call the trampoline again
// (ftrace_startup_sysctl). Ops registered meanwhile start then.
func (k *Kernel) SetFtraceEnabled(on bool) error {
	ft := &k.ftrace
	ft.mu.Lock()
	defer ft.mu.Unlock()
	if ft.off == !on {
		return nil
	}
	ft.off = !on
	if err := k.ftraceUpdateCode(ft.table.Load().order); err != nil {
		ft.off = on
		return err
	}
	return nil
}

// FtraceSetHash replaces the ops' filter hash (filter true) or notrace
// hash, and, if the ops is registered, retargets the call sites at once
// (ftrace_hash_move_and_update_ops, which set_ftrace_filter's release
// does). The hash is copied.
func (k *Kernel) FtraceSetHash(ops *FtraceOps, filter bool, h FtraceHash) error {
	ft := &k.ftrace
	ft.mu.Lock()
	defer ft.mu.Unlock()
	old := ops.loadHashes()
	nh := &ftraceHashes{filter: old.filter, notrace: old.notrace}
	if filter {
		nh.filter = h.Clone()
	} else {
		nh.notrace = h.Clone()
	}
	ops.hashes.Store(nh)
	ft.hashed[ops] = true
	shared := false // a registered ops uses these hashes (graph_ops)
	for _, o := range *ft.ops.Load() {
		shared = shared || o.hashFrom == ops
	}
	if !ops.enabled && !shared {
		return nil
	}
	return k.ftraceUpdateCode(ft.table.Load().order)
}

// ftraceUpdateCode is ftrace_replace_code for recs and update_ftrace_function:
// each record's site calls the trampoline exactly when a registered ops
// takes it (ftrace_regs_caller when one of those wants registers), and
// ftrace_call calls the list gate exactly when an ops is registered. Only
// changed sites are written, all with the machine stopped. With
// ftrace_enabled off, no ops takes a site. ft.mu is held.
func (k *Kernel) ftraceUpdateCode(recs []*ftraceRec) error {
	ft := &k.ftrace
	ops := *ft.ops.Load()
	if ft.off {
		ops = nil
	}
	type change struct {
		r             *ftraceRec
		enabled, regs bool
		count         int
	}
	var changes []change
	for _, r := range recs {
		c := change{r: r}
		for _, o := range ops {
			if o.test(r.ip) {
				c.count++
				c.enabled = true
				c.regs = c.regs || o.SaveRegs
			}
		}
		if c.enabled != r.enabled || c.enabled && c.regs != r.regs || c.count != r.count {
			changes = append(changes, c)
		}
	}
	wantCall := len(ops) > 0
	if len(changes) == 0 && wantCall == ft.callSet {
		return nil
	}
	// The instructions first, so that nothing is patched when a site
	// cannot reach its trampoline.
	type patch struct{ old, insn uint32 }
	patches := make([]patch, len(changes))
	for i, c := range changes {
		var err error
		if patches[i].old, err = k.ftraceSiteInsn(c.r, c.r.enabled, c.r.regs); err != nil {
			return err
		}
		if patches[i].insn, err = k.ftraceSiteInsn(c.r, c.enabled, c.regs); err != nil {
			return err
		}
	}
	var err error
	k.StopMachine(func() {
		for i, c := range changes {
			r := c.r
			if c.enabled != r.enabled || c.regs != r.regs {
				if err = k.ftraceModifyCode(r.ip, patches[i].old, patches[i].insn); err != nil {
					return
				}
				r.enabled, r.regs = c.enabled, c.regs
			}
			r.count = c.count
		}
		if wantCall != ft.callSet {
			target := ft.stub
			if wantCall {
				target = ft.listFunc
			}
			var insn uint32
			if insn, err = genBranchLink(ft.call, target); err != nil {
				return
			}
			if err = k.PatchTextNosync(ft.call, insn); err != nil {
				return
			}
			ft.callSet = wantCall
		}
	})
	return err
}

// ftraceSiteInsn is the instruction at r's ip for that state: NOP, or BL
// to the trampoline (ftrace_make_call, ftrace_modify_call). kpemu.lds
// keeps every text, the module area's included, within BL range of the
// trampolines, so the EINVAL of ftrace_find_callable_addr (Linux would
// use a module PLT) only comes with an image that breaks that.
func (k *Kernel) ftraceSiteInsn(r *ftraceRec, enabled, regs bool) (uint32, error) {
	if !enabled {
		return insnNop, nil
	}
	target := k.ftrace.caller
	if regs {
		target = k.ftrace.regsCaller
	}
	insn, err := genBranchLink(r.ip, target)
	if err != nil {
		return 0, fmt.Errorf("%w: ftrace: %w", syscall.EINVAL, err)
	}
	return insn, nil
}

// ftraceModifyCode is ftrace_modify_code with validate: the site must
// hold old, as Linux checks before it writes new. The machine is stopped.
func (k *Kernel) ftraceModifyCode(pc uint64, old, insn uint32) error {
	cur, err := k.ReadInsn(pc)
	if err != nil {
		return fmt.Errorf("%w: ftrace: %w", syscall.EFAULT, err)
	}
	if cur != old {
		k.log.Error("ftrace failed to modify", "site", k.syms.Format(pc), "actual", fmt.Sprintf("%08x", cur), "expected", fmt.Sprintf("%08x", old))
		return fmt.Errorf("%w: ftrace: %s holds %#08x, not %#08x", syscall.EINVAL, k.syms.Format(pc), cur, old)
	}
	if err := k.PatchTextNosync(pc, insn); err != nil {
		return fmt.Errorf("%w: ftrace: %w", syscall.EPERM, err)
	}
	return nil
}

// genBranchLink is aarch64_insn_gen_branch_imm(pc, addr, LINK).
func genBranchLink(pc, addr uint64) (uint32, error) {
	off := int64(addr - pc)
	if off&3 != 0 || off < -(128<<20) || off >= 128<<20 {
		return 0, fmt.Errorf("BL from %#x cannot reach %#x", pc, addr)
	}
	return insnBL | uint32(off>>2)&0x03ffffff, nil
}

// hcFtraceCall is HC_FTRACE_CALL, arch_ftrace_ops_list_func's hostcall:
// x0 = ip, x1 = parent_ip, x3 = the pt_regs; every registered ops that
// takes ip is called, as __ftrace_ops_list_func does. Nothing here runs
// guest code, so a callback cannot recurse into the tracer.
func (k *Kernel) hcFtraceCall(cpu *machine.CPU) error {
	c := FtraceCall{CPU: cpu, IP: cpu.X(0), ParentIP: cpu.X(1), Regs: cpu.X(3)}
	for _, o := range *k.ftrace.ops.Load() {
		if o.test(c.IP) {
			o.Func(c)
		}
	}
	return nil
}

// ftraceModuleInit is ftrace_module_init for a module being linked: its
// call sites (the relocated __patchable_function_entries) are checked and
// get MOV X9, LR in the host copy of its memory, before the guest sees
// it. It returns the records' ips.
func (k *Kernel) ftraceModuleInit(name string, locs []uint64, base uint64, mem []byte) ([]uint64, error) {
	var ips []uint64
	for _, loc := range locs {
		if loc == 0 {
			continue
		}
		if loc < base || loc+2*MCountInsnSize > base+uint64(len(mem)) {
			return nil, badModule(name, "call site %#x lies outside the module", loc)
		}
		o := loc - base
		if binary.LittleEndian.Uint32(mem[o:]) != insnNop || binary.LittleEndian.Uint32(mem[o+4:]) != insnNop {
			return nil, badModule(name, "call site %#x is not two NOPs", loc)
		}
		binary.LittleEndian.PutUint32(mem[o:], insnMovX9LR)
		ips = append(ips, loc+MCountInsnSize)
	}
	sort.Slice(ips, func(i, j int) bool { return ips[i] < ips[j] })
	return ips, nil
}

// ftraceModuleEnable adds a coming module's records (in the list, its
// text patchable) and enables the sites that registered ops take, as
// ftrace_module_enable does before the module's init runs.
func (k *Kernel) ftraceModuleEnable(m *Module, ips []uint64) {
	if len(ips) == 0 {
		return
	}
	ft := &k.ftrace
	ft.mu.Lock()
	defer ft.mu.Unlock()
	old := ft.table.Load()
	recs := make([]*ftraceRec, len(ips))
	for i, ip := range ips {
		recs[i] = &ftraceRec{ip: ip, mod: m}
	}
	ft.table.Store(newFtraceTable(append(append([]*ftraceRec(nil), old.order...), recs...)))
	if err := k.ftraceUpdateCode(recs); err != nil {
		k.log.Error("ftrace: enabling a module's call sites", "module", m.Name, "err", err)
	}
}

// ftraceFreeMem drops m's records for which drop is true: its init text
// once init is done (ftrace_free_mem), or all of them when it goes
// (ftrace_release_mod). Their text is freed, not restored. The ips leave
// every hash too, as clear_mod_from_hashes does: each becomes 0, which
// no record has, so that a filter of only those functions stays a filter
// rather than becoming "every function".
func (k *Kernel) ftraceFreeMem(m *Module, drop func(ip uint64) bool) {
	ft := &k.ftrace
	ft.mu.Lock()
	defer ft.mu.Unlock()
	old := ft.table.Load()
	gone := make(map[uint64]bool)
	var keep []*ftraceRec
	for _, r := range old.order {
		if r.mod == m && drop(r.ip) {
			gone[r.ip] = true
			continue
		}
		keep = append(keep, r)
	}
	if len(gone) == 0 {
		return
	}
	ft.table.Store(newFtraceTable(keep))
	zeroGone := func(h FtraceHash) (FtraceHash, bool) {
		changed := false
		for ip := range h.ips {
			if gone[ip] {
				changed = true
			}
		}
		if !changed {
			return h, false
		}
		c := FtraceHash{Mod: h.Mod}
		for ip := range h.ips {
			if gone[ip] {
				ip = 0
			}
			c.Add(ip)
		}
		return c, true
	}
	for o := range ft.hashed {
		h := o.loadHashes()
		f, fc := zeroGone(h.filter)
		n, nc := zeroGone(h.notrace)
		if fc || nc {
			o.hashes.Store(&ftraceHashes{filter: f, notrace: n})
		}
	}
}
