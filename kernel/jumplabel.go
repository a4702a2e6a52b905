package kernel

import (
	"encoding/binary"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kpemu/kpemu/machine"
)

// Static keys and tracepoints, the host half, after Linux 6.1's
// kernel/jump_label.c, arch/arm64/kernel/jump_label.c and
// kernel/tracepoint.c.
//
// The guest's static_branch_unlikely(&key) (linux/jump_label.h) is a NOP
// with a __jump_table entry {code, target, key}, each relative to its own
// field, as arm64 Linux lays them out. A tracepoint (linux/tracepoint.h)
// is a struct tracepoint, __tracepoint_<name>, whose key guards the
// call of __traceiter_<name> at every trace_<name>() site. Turning a
// tracepoint on writes key->enabled = 1 and patches each of its key's
// NOPs into B target, with every vCPU stopped, as
// arch_jump_label_transform does (Linux arm64 patches without
// stop_machine, a NOP and a B being safe to swap under a running CPU;
// kpemu stops the machine because its interpreter caches decoded pages).
// So a tracepoint that is off costs the guest one NOP per site: the
// checked byte of a "load, compare, branch" scheme would cost a load and
// a branch on every pass through the scheduler.
//
// The iterator of an enabled tracepoint fills the event's record and
// makes HC_TRACEPOINT (x0 = the tracepoint, x1 = the record, x2 = its
// size), which calls the handler the tracing layer set.

// Tracepoint is one of the guest's tracepoints.
type Tracepoint struct {
	Name  string
	Addr  uint64 // &__tracepoint_<name>
	key   uint64 // &__tracepoint_<name>.key (the entries' key)
	sites []jumpSite
	on    bool // the tracing layer wants it; guarded by tracepoints.mu
	graph bool // the graph's sched_switch probe wants it; guarded by tracepoints.mu
	keyOn bool // its key is on: on || graph; guarded by tracepoints.mu
}

// jumpSite is one __jump_table entry: the NOP and where B goes.
type jumpSite struct{ code, target uint64 }

// TracepointHit is one call of an enabled tracepoint, as the handler sees
// it, on the vCPU that made it, inside its hostcall.
type TracepointHit struct {
	CPU *machine.CPU
	TP  *Tracepoint
	// Record is the event's record as the guest filled it (its
	// struct trace_entry, which the tracer fills, first); it is the
	// handler's to keep.
	Record []byte
	// RecordAddr is where the record is in the guest's memory (an
	// event probe's $FIELD of a char array is its address there).
	RecordAddr uint64
	// PC and FP are where the guest made the hostcall (in
	// __traceiter_<name>) and its frame pointer, for stack traces.
	PC, FP uint64
}

// MaxTracepointRecord bounds what a hit may pass: no record of the
// guest's events comes near it.
const MaxTracepointRecord = 512

// tracepoints is the kernel's tracepoint table, made at boot and never
// changed after but for each tracepoint's state.
type tracepoints struct {
	mu      sync.Mutex // jump_label_mutex: serialises the patching
	byName  map[string]*Tracepoint
	byAddr  map[uint64]*Tracepoint
	handler atomic.Pointer[func(TracepointHit)]
}

// jumpEntrySize is sizeof(struct jump_entry) on arm64.
const jumpEntrySize = 16

// initTracepoints reads __start___jump_table..__stop___jump_table and the
// __tracepoint_* symbols, and routes HC_TRACEPOINT. An image without a
// jump table has no tracepoints.
func (k *Kernel) initTracepoints() error {
	tps := &k.tps
	tps.byName = make(map[string]*Tracepoint)
	tps.byAddr = make(map[uint64]*Tracepoint)
	k.m.SetHostcall(HCTracepoint, k.hcTracepoint)
	start, ok1 := k.syms.LookupName("__start___jump_table")
	stop, ok2 := k.syms.LookupName("__stop___jump_table")
	if !ok1 || !ok2 || stop.Addr <= start.Addr {
		return nil
	}
	var keyed []*Tracepoint
	for _, s := range k.syms.Symbols() {
		name, ok := strings.CutPrefix(s.Name, "__tracepoint_")
		if !ok || s.Module != "" || s.ObjSize < TracepointKeyOff+4 {
			continue
		}
		tp := &Tracepoint{Name: name, Addr: s.Addr, key: s.Addr + TracepointKeyOff}
		tps.byName[name] = tp
		tps.byAddr[s.Addr] = tp
		keyed = append(keyed, tp)
	}
	sort.Slice(keyed, func(i, j int) bool { return keyed[i].Addr < keyed[j].Addr })
	var buf [jumpEntrySize]byte
	for e := start.Addr; e+jumpEntrySize <= stop.Addr; e += jumpEntrySize {
		if err := k.ReadMem(e, buf[:]); err != nil {
			return fmt.Errorf("%w: reading __jump_table: %w", ErrBadImage, err)
		}
		code := e + uint64(int64(int32(binary.LittleEndian.Uint32(buf[0:]))))
		target := e + 4 + uint64(int64(int32(binary.LittleEndian.Uint32(buf[4:]))))
		key := (e + 8 + binary.LittleEndian.Uint64(buf[8:])) &^ 3 // the low bits are the branch's flags
		insn, err := k.ReadInsn(code)
		if err != nil || insn != insnNop || !k.IsText(code) || !k.IsText(target) {
			return fmt.Errorf("%w: __jump_table entry at %#x: no NOP in text at %#x", ErrBadImage, e, code)
		}
		i := sort.Search(len(keyed), func(i int) bool { return keyed[i].key >= key })
		if i == len(keyed) || keyed[i].key != key {
			continue // a static key that is no tracepoint's: none in kpemu yet
		}
		keyed[i].sites = append(keyed[i].sites, jumpSite{code: code, target: target})
	}
	k.fgraph.schedSwitch = tps.byName["sched_switch"] // the graph's probe (fgraph.go)
	return nil
}

// Tracepoint returns the tracepoint __tracepoint_<name>.
func (k *Kernel) Tracepoint(name string) (*Tracepoint, bool) {
	tp, ok := k.tps.byName[name]
	return tp, ok
}

// SetTracepointHandler sets the function every enabled tracepoint's hit
// calls (nil: hits are dropped). It must neither block nor stop the
// machine.
func (k *Kernel) SetTracepointHandler(fn func(TracepointHit)) {
	if fn == nil {
		k.tps.handler.Store(nil)
		return
	}
	k.tps.handler.Store(&fn)
}

// SetTracepointEnabled turns tp's static key on or off
// (static_key_enable/static_key_disable): key->enabled and every site
// of the key, with the machine stopped. Call it from no hostcall.
func (k *Kernel) SetTracepointEnabled(tp *Tracepoint, on bool) error {
	tps := &k.tps
	tps.mu.Lock()
	defer tps.mu.Unlock()
	if tp.on == on {
		return nil
	}
	if err := k.setTracepointKey(tp, on || tp.graph); err != nil {
		return err
	}
	tp.on = on
	return nil
}

// setTracepointGraph registers or unregisters the graph's probe on tp
// (register_trace_sched_switch(ftrace_graph_probe_sched_switch)): the
// key stays on while the tracing layer or the graph wants it.
func (k *Kernel) setTracepointGraph(tp *Tracepoint, on bool) error {
	tps := &k.tps
	tps.mu.Lock()
	defer tps.mu.Unlock()
	if err := k.setTracepointKey(tp, on || tp.on); err != nil {
		return err
	}
	tp.graph = on
	return nil
}

// setTracepointKey turns tp's static key on or off; tracepoints.mu is
// held.
func (k *Kernel) setTracepointKey(tp *Tracepoint, on bool) error {
	if tp.keyOn == on {
		return nil
	}
	var err error
	k.StopMachine(func() {
		enabled := uint32(0)
		if on {
			enabled = 1
		}
		if err = k.Write32(tp.key, enabled); err != nil {
			err = fmt.Errorf("tracepoint %s: writing its key: %w", tp.Name, err)
			return
		}
		for _, s := range tp.sites {
			insn := uint32(insnNop)
			if on {
				if insn, err = genBranch(s.code, s.target); err != nil {
					return
				}
			}
			if err = k.PatchTextNosync(s.code, insn); err != nil {
				return
			}
		}
	})
	if err != nil {
		return err
	}
	tp.keyOn = on
	return nil
}

// JumpLabelReserved is jump_label_text_reserved for one instruction: a
// static branch's site, which kprobes must leave alone.
func (k *Kernel) JumpLabelReserved(addr uint64) bool {
	for _, tp := range k.tps.byName {
		for _, s := range tp.sites {
			if s.code == addr {
				return true
			}
		}
	}
	return false
}

// TracepointSite is the first static-branch site of tp, if it has one.
func (k *Kernel) TracepointSite(tp *Tracepoint) (uint64, bool) {
	if len(tp.sites) == 0 {
		return 0, false
	}
	return tp.sites[0].code, true
}

// genBranch is aarch64_insn_gen_branch_imm(pc, addr, AARCH64_INSN_BRANCH_NOLINK).
func genBranch(pc, addr uint64) (uint32, error) {
	off := int64(addr - pc)
	if off&3 != 0 || off < -(1<<27) || off >= 1<<27 {
		return 0, fmt.Errorf("branch from %#x to %#x: out of range", pc, addr)
	}
	return 0x14000000 | uint32(off>>2)&0x03ffffff, nil
}

// hcTracepoint is HC_TRACEPOINT: x0 = the tracepoint, x1 = its record,
// x2 = the record's size. A hit of a tracepoint the host does not know,
// or with a record it cannot read, is dropped.
func (k *Kernel) hcTracepoint(cpu *machine.CPU) error {
	fn := k.tps.handler.Load()
	tp := k.tps.byAddr[cpu.X(0)]
	size := cpu.X(2)
	if tp == nil || size < 8 || size > MaxTracepointRecord {
		return nil
	}
	rec := make([]byte, size)
	if err := k.ReadMem(cpu.X(1), rec); err != nil {
		return nil
	}
	if tp == k.fgraph.schedSwitch {
		k.fgraphProbeSchedSwitch(cpu, rec)
	}
	if fn == nil {
		return nil
	}
	(*fn)(TracepointHit{CPU: cpu, TP: tp, Record: rec, RecordAddr: cpu.X(1), PC: cpu.PC() - 4, FP: cpu.X(29)})
	return nil
}
