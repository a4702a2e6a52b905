package kernel

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kpemu/kpemu/kernel/image"
	"github.com/kpemu/kpemu/machine"
)

// Loadable modules, after Linux's kernel/module/main.c. A module is an
// AArch64 ELF relocatable object (kernel/image/modules/<name>/<name>.ko).
// The host does what load_module() does — lay out the allocated sections
// in the module area, resolve undefined symbols against kallsyms, apply the
// relocations (reloc.go), add the module's symbols to kallsyms — and then
// has the guest run init_module() on a vCPU (do_init_module), through the
// workload's mailbox (kernel/module.c). Unloading runs cleanup_module()
// the same way, then frees the area. Module notifiers (Linux's
// register_module_notifier) hear COMING before init runs, LIVE after it
// succeeded, and GOING when it failed or the module is being removed.

// ModuleState is Linux's enum module_state.
type ModuleState int

// Module states.
const (
	ModuleLive ModuleState = iota
	ModuleComing
	ModuleGoing
)

// String is what /proc/modules prints for the state.
func (s ModuleState) String() string {
	switch s {
	case ModuleComing:
		return "Loading"
	case ModuleGoing:
		return "Unloading"
	}
	return "Live"
}

// Module is a loaded module. Its fields do not change once it is loaded.
type Module struct {
	Name string
	Base uint64 // start of its memory in the module area, a kernel VA
	Size uint64 // bytes of module area, page-rounded

	Text        []Range // its executable sections
	InitText    []Range // .init.text*: probes there go when init is done
	KprobesText Range   // .kprobes.text, empty if none
	Blacklist   Range   // _kprobe_blacklist: NOKPROBE_SYMBOL addresses
	// TraceBprintkFmt is __trace_printk_fmt (mod->trace_bprintk_fmt_start):
	// a pointer to the format of each trace_printk() call, 0 for one whose
	// format is not a constant. Empty if none.
	TraceBprintkFmt Range

	init, exit uint64 // init_module, cleanup_module; 0 if none
}

// Contains reports whether addr lies in the module's memory.
func (m *Module) Contains(addr uint64) bool { return addr >= m.Base && addr < m.Base+m.Size }

// IsText reports whether addr is in one of the module's text sections.
func (m *Module) IsText(addr uint64) bool {
	for _, r := range m.Text {
		if r.Contains(addr) {
			return true
		}
	}
	return false
}

// IsInitText reports whether addr is in the module's init text.
func (m *Module) IsInitText(addr uint64) bool {
	for _, r := range m.InitText {
		if r.Contains(addr) {
			return true
		}
	}
	return false
}

// ModuleInfo is one line of /proc/modules.
type ModuleInfo struct {
	Name     string
	Size     uint64
	Refcount int
	State    ModuleState
	Addr     uint64
}

// String formats the line as Linux's m_show: name, size, refcount, the
// modules that use it ("-" for none), state and address.
func (mi ModuleInfo) String() string {
	return fmt.Sprintf("%s %d %d - %s 0x%016x\n", mi.Name, mi.Size, mi.Refcount, mi.State, mi.Addr)
}

// ModuleEvent is what a module notifier hears.
type ModuleEvent struct {
	State  ModuleState
	Module *Module
}

// ErrBadModule is wrapped, with EINVAL, by every error about a malformed
// module object.
var ErrBadModule = errors.New("bad module object")

type loadedModule struct {
	mod   *Module
	state ModuleState
}

type moduleDone struct {
	cookie uint64
	ret    int64
}

// modules is the kernel's module list and loader state.
type modules struct {
	op sync.Mutex // serialises loads and unloads; held while the guest runs init/exit

	mu        sync.RWMutex    // guards list and the states
	list      []*loadedModule // newest first, as /proc/modules
	notifiers []func(ModuleEvent)

	ok      bool   // the module area is usable (the image and RAM allow it)
	mailbox uint64 // kmod_mailbox in the guest, 0 if the image has none
	cookie  uint64
	done    chan moduleDone
	timeout time.Duration
}

func (k *Kernel) initModules(dtb uint64) {
	mm := &k.mods
	mm.done = make(chan moduleDone, 4)
	mm.timeout = 10 * time.Second
	mm.ok = moduleAreaUsable(k.layout.End-k.layout.KimageVoffset, k.ramSize, dtb)
	if s, ok := k.syms.LookupName("kmod_mailbox"); ok {
		mm.mailbox = s.Addr
	}
	k.m.SetHostcall(HCModuleDone, func(cpu *machine.CPU) error {
		select {
		case mm.done <- moduleDone{cookie: cpu.X(0), ret: int64(cpu.X(1))}:
		default: // nobody waits (a timed-out call finishing late)
		}
		cpu.SetX(0, 0)
		return nil
	})
}

// moduleAreaUsable reports whether the RAM behind the module area,
// [ModulesPhys, +ModulesVsize), is free: the image (ending at PA imageEnd)
// is below it, RAM covers it, and the device tree at PA dtb, which
// machine.LoadDeviceTree places in the last 2 MiB of RAM and which
// reaches at most to RAM's end, lies above it.
func moduleAreaUsable(imageEnd, ramSize, dtb uint64) bool {
	areaEnd := uint64(ModulesPhys + ModulesVsize)
	return imageEnd <= ModulesPhys && PhysOffset+ramSize >= areaEnd && dtb >= areaEnd
}

// SetModuleTimeout bounds how long LoadModule and UnloadModule wait for the
// guest to run init_module or cleanup_module (default 10s).
func (k *Kernel) SetModuleTimeout(d time.Duration) {
	k.mods.op.Lock()
	defer k.mods.op.Unlock()
	k.mods.timeout = d
}

// RegisterModuleNotifier adds fn to the module notifiers, which are called
// in registration order on the goroutine that loads or unloads, never on
// a vCPU: fn may stop the machine (e.g. to patch text).
func (k *Kernel) RegisterModuleNotifier(fn func(ModuleEvent)) {
	k.mods.mu.Lock()
	defer k.mods.mu.Unlock()
	k.mods.notifiers = append(k.mods.notifiers, fn)
}

func (k *Kernel) notifyModule(state ModuleState, m *Module) {
	k.mods.mu.RLock()
	ns := append([](func(ModuleEvent)){}, k.mods.notifiers...)
	k.mods.mu.RUnlock()
	for _, fn := range ns {
		fn(ModuleEvent{State: state, Module: m})
	}
}

// Modules lists the loaded modules, newest first, as /proc/modules.
func (k *Kernel) Modules() []ModuleInfo {
	k.mods.mu.RLock()
	defer k.mods.mu.RUnlock()
	out := make([]ModuleInfo, 0, len(k.mods.list))
	for _, lm := range k.mods.list {
		out = append(out, ModuleInfo{Name: lm.mod.Name, Size: lm.mod.Size, State: lm.state, Addr: lm.mod.Base})
	}
	return out
}

// Module returns the loaded module called name.
func (k *Kernel) Module(name string) (*Module, ModuleState, bool) {
	k.mods.mu.RLock()
	defer k.mods.mu.RUnlock()
	for _, lm := range k.mods.list {
		if lm.mod.Name == name {
			return lm.mod, lm.state, true
		}
	}
	return nil, 0, false
}

// ModuleAt returns the module whose memory holds addr (__module_address).
func (k *Kernel) ModuleAt(addr uint64) (*Module, ModuleState, bool) {
	if addr < ModulesVaddr || addr >= ModulesEnd {
		return nil, 0, false
	}
	k.mods.mu.RLock()
	defer k.mods.mu.RUnlock()
	for _, lm := range k.mods.list {
		if lm.mod.Contains(addr) {
			return lm.mod, lm.state, true
		}
	}
	return nil, 0, false
}

// IsModuleText reports whether addr is text of a loaded module
// (is_module_text_address).
func (k *Kernel) IsModuleText(addr uint64) bool {
	m, _, ok := k.ModuleAt(addr)
	return ok && m.IsText(addr)
}

func (k *Kernel) setModuleState(m *Module, st ModuleState) {
	k.mods.mu.Lock()
	defer k.mods.mu.Unlock()
	for _, lm := range k.mods.list {
		if lm.mod == m {
			lm.state = st
		}
	}
}

func (k *Kernel) removeModuleFromList(m *Module) {
	k.mods.mu.Lock()
	defer k.mods.mu.Unlock()
	for i, lm := range k.mods.list {
		if lm.mod == m {
			k.mods.list = append(k.mods.list[:i:i], k.mods.list[i+1:]...)
			return
		}
	}
}

// LoadEmbeddedModule loads the module of that name from the embedded image
// (kernel/image.Module): ENOENT if there is none.
func (k *Kernel) LoadEmbeddedModule(name string) error {
	obj, ok := image.Module(name)
	if !ok {
		return fmt.Errorf("%w: no module %q in the image (have %s)", syscall.ENOENT, name, strings.Join(image.Modules(), ", "))
	}
	return k.LoadModule(name, obj)
}

// LoadModule loads a module object under name and runs its init_module on
// the guest (init_module(2)). It needs the machine running (Run on another
// goroutine) and the workload started. Errors wrap Linux's errnos: EEXIST
// if loaded already, EINVAL (and ErrBadModule) for a malformed object,
// ENOENT for an undefined symbol kallsyms lacks, ENOMEM when the module
// area is full, ETIMEDOUT when the guest did not run init in time, and
// init_module's own negative return as its errno, after which the module
// is gone again. A refused module changes nothing in the guest.
func (k *Kernel) LoadModule(name string, obj []byte) error {
	mm := &k.mods
	mm.op.Lock()
	defer mm.op.Unlock()
	if name == "" || strings.ContainsAny(name, " \t\n:/[]") {
		return fmt.Errorf("%w: bad module name %q", syscall.EINVAL, name)
	}
	if !mm.ok || mm.mailbox == 0 {
		return fmt.Errorf("%w: this kernel has no module area (image end %#x, RAM, or no kmod_mailbox)", syscall.ENOSYS, k.layout.End)
	}
	if _, _, ok := k.Module(name); ok {
		return fmt.Errorf("%w: module %s is already loaded", syscall.EEXIST, name)
	}
	lo, err := k.linkModule(name, obj)
	if err != nil {
		return err
	}
	m := lo.mod
	if err := k.syms.addModule(name, lo.syms); err != nil {
		return fmt.Errorf("%w: %w", syscall.EEXIST, err)
	}
	var werr error
	k.StopMachine(func() { werr = k.WriteMem(m.Base, lo.mem) })
	if werr != nil {
		k.syms.removeModule(name)
		return fmt.Errorf("%w: writing module %s at %#x: %w", syscall.ENOMEM, name, m.Base, werr)
	}
	mm.mu.Lock()
	mm.list = append([]*loadedModule{{mod: m, state: ModuleComing}}, mm.list...)
	mm.mu.Unlock()
	k.log.Info("module loading", "module", name, "base", fmt.Sprintf("%#x", m.Base), "size", m.Size)
	// As prepare_coming_module: ftrace_module_enable, then the notifiers.
	k.ftraceModuleEnable(m, lo.ftraceIPs)
	k.notifyModule(ModuleComing, m)

	ret, err := k.callGuest(m.init)
	if err != nil {
		// The guest may still run init later: keep the memory, mark it.
		k.log.Error("module init did not complete; the module stays Loading", "module", name, "err", err)
		return fmt.Errorf("module %s: init_module: %w", name, err)
	}
	if ret < 0 {
		// do_init_module's failure path: GOING, then free.
		k.setModuleState(m, ModuleGoing)
		k.notifyModule(ModuleGoing, m)
		k.freeModule(m)
		errno := syscall.Errno(-ret)
		k.log.Warn("module init failed", "module", name, "ret", ret)
		return fmt.Errorf("%w: module %s: init_module returned %d", errno, name, ret)
	}
	if ret > 0 {
		k.log.Warn(fmt.Sprintf("do_init_module: '%s'->init suspiciously returned %d, it should follow 0/-E convention", name, ret))
	}
	k.setModuleState(m, ModuleLive)
	k.notifyModule(ModuleLive, m)
	// do_free_init: the init text's symbols and ftrace records go (Linux
	// keeps only the core kallsyms; ftrace_free_mem), and its bytes are
	// zeroed; the area stays reserved.
	k.syms.removeModuleSymbols(name, func(s Symbol) bool { return m.IsInitText(s.Addr) })
	k.ftraceFreeMem(m, m.IsInitText)
	k.StopMachine(func() {
		for _, r := range m.InitText {
			if err := k.WriteMem(r.Start, make([]byte, r.End-r.Start)); err != nil {
				k.log.Error("freeing module init text", "module", name, "err", err)
			}
		}
	})
	k.log.Info("module loaded", "module", name)
	return nil
}

// UnloadModule runs the module's cleanup_module on the guest and frees it
// (delete_module(2)): ENOENT if it is not loaded, EBUSY if it is not Live
// or has init but no cleanup (Linux: "[permanent]").
func (k *Kernel) UnloadModule(name string) error {
	mm := &k.mods
	mm.op.Lock()
	defer mm.op.Unlock()
	m, st, ok := k.Module(name)
	if !ok {
		return fmt.Errorf("%w: module %s is not loaded", syscall.ENOENT, name)
	}
	if st != ModuleLive {
		return fmt.Errorf("%w: module %s is %s", syscall.EBUSY, name, st)
	}
	if m.init != 0 && m.exit == 0 {
		return fmt.Errorf("%w: module %s has no cleanup_module", syscall.EBUSY, name)
	}
	k.setModuleState(m, ModuleGoing)
	if _, err := k.callGuest(m.exit); err != nil {
		k.log.Error("module cleanup did not complete; the module stays Unloading", "module", name, "err", err)
		return fmt.Errorf("module %s: cleanup_module: %w", name, err)
	}
	k.notifyModule(ModuleGoing, m)
	k.freeModule(m)
	k.log.Info("module unloaded", "module", name)
	return nil
}

// freeModule drops the module's symbols, list entry and memory (zeroed,
// so that nothing stale runs if a pointer into it survived).
func (k *Kernel) freeModule(m *Module) {
	k.ftraceFreeMem(m, func(uint64) bool { return true }) // ftrace_release_mod
	k.syms.removeModule(m.Name)
	k.removeModuleFromList(m)
	k.StopMachine(func() {
		if err := k.WriteMem(m.Base, make([]byte, m.Size)); err != nil {
			k.log.Error("freeing module memory", "module", m.Name, "err", err)
		}
	})
}

// callGuest has the workload call fn() (an int (void) function) and
// returns its result; fn 0 returns 0 at once.
func (k *Kernel) callGuest(fn uint64) (int64, error) {
	if fn == 0 {
		return 0, nil
	}
	mm := &k.mods
	deadline := time.NewTimer(mm.timeout)
	defer deadline.Stop()
	select {
	case <-k.ready:
	case <-deadline.C:
		return 0, fmt.Errorf("%w: the guest's workload has not started (is the machine running?)", syscall.ETIMEDOUT)
	}
	mm.cookie++
	cookie := mm.cookie
	var werr error
	k.StopMachine(func() {
		// Stale answers of calls that timed out must not count.
		for len(mm.done) > 0 {
			<-mm.done
		}
		if werr = k.Write64(mm.mailbox+KmodMailboxFn, fn); werr != nil {
			return
		}
		if werr = k.Write64(mm.mailbox+KmodMailboxCookie, cookie); werr != nil {
			return
		}
		werr = k.Write64(mm.mailbox+KmodMailboxOp, KmodOpCall)
	})
	if werr != nil {
		return 0, fmt.Errorf("%w: writing the module mailbox: %w", syscall.EIO, werr)
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case d := <-mm.done:
			if d.cookie == cookie {
				return int64(int32(d.ret)), nil
			}
		case <-tick.C:
			if msg, ok := k.Panicked(); ok {
				return 0, fmt.Errorf("%w: the guest panicked: %s", syscall.EFAULT, msg)
			}
		case <-deadline.C:
			return 0, fmt.Errorf("%w: the guest did not call %s within %v", syscall.ETIMEDOUT, k.syms.Format(fn), mm.timeout)
		}
	}
}

// linked is a module laid out and relocated, not yet in the guest.
type linked struct {
	mod  *Module
	mem  []byte
	syms []Symbol

	ftraceIPs []uint64 // its ftrace records' ips (ftraceModuleInit)
}

func badModule(name, format string, args ...any) error {
	return fmt.Errorf("%w: %w: module %s: %s", syscall.EINVAL, ErrBadModule, name, fmt.Sprintf(format, args...))
}

// linkModule is load_module up to the point where the guest sees it:
// check the object, lay it out in a free part of the module area, resolve
// its symbols and relocate it, in a host buffer.
func (k *Kernel) linkModule(name string, obj []byte) (*linked, error) {
	f, err := parseModuleObject(name, obj)
	if err != nil {
		return nil, err
	}
	o := &moduleObject{name: name, f: f}
	size, err := o.layoutSections()
	if err != nil {
		return nil, err
	}
	base, err := k.allocModuleArea(size)
	if err != nil {
		return nil, fmt.Errorf("module %s: %w", name, err)
	}
	m := &Module{Name: name, Base: base, Size: size}
	if err := o.copySections(m); err != nil {
		return nil, err
	}
	syms, err := k.resolveModuleSymbols(o)
	if err != nil {
		return nil, err
	}
	moduleSymbolSizes(syms.kallsyms, m, f, o.secAddr, o.loaded)
	if err := o.applyRelocations(syms); err != nil {
		return nil, err
	}
	// ftrace_module_init, on the host copy, before the guest sees the module.
	locs, err := o.ftraceLocs()
	if err != nil {
		return nil, err
	}
	ftraceIPs, err := k.ftraceModuleInit(name, locs, base, o.mem)
	if err != nil {
		return nil, err
	}
	m.init, m.exit = moduleInitExit(syms.kallsyms)
	return &linked{mod: m, mem: o.mem, syms: syms.kallsyms, ftraceIPs: ftraceIPs}, nil
}

// moduleObject is a module's ELF object while it is linked: where each of
// its sections goes and the host buffer that holds the laid-out module.
type moduleObject struct {
	name    string
	f       *elf.File
	secAddr []uint64 // by section index: offset in the module, then (copySections) its kernel VA
	loaded  []bool   // by section index: SHF_ALLOC, part of the module's memory
	base    uint64   // the module's kernel VA
	mem     []byte   // the module's memory, from base
}

// parseModuleObject is elf_validity_check: an AArch64 little-endian ELF64
// relocatable object.
func parseModuleObject(name string, obj []byte) (*elf.File, error) {
	f, err := elf.NewFile(bytes.NewReader(obj))
	if err != nil {
		return nil, badModule(name, "not an ELF object: %v", err)
	}
	if f.Class != elf.ELFCLASS64 || f.Data != elf.ELFDATA2LSB || f.Machine != elf.EM_AARCH64 || f.Type != elf.ET_REL {
		return nil, badModule(name, "want an AArch64 little-endian ELF64 relocatable object, got %v %v %v %v", f.Class, f.Data, f.Machine, f.Type)
	}
	return f, nil
}

// layoutSections is layout_sections: text, read-only data, data, bss, each
// section at its alignment. It sets each allocated section's offset and
// returns the module's size in whole pages.
func (o *moduleObject) layoutSections() (uint64, error) {
	o.secAddr = make([]uint64, len(o.f.Sections))
	o.loaded = make([]bool, len(o.f.Sections))
	var size uint64
	class := func(s *elf.Section) int {
		switch {
		case s.Flags&elf.SHF_EXECINSTR != 0:
			return 0
		case s.Flags&elf.SHF_WRITE == 0:
			return 1
		case s.Type != elf.SHT_NOBITS:
			return 2
		}
		return 3
	}
	for c := 0; c < 4; c++ {
		for i, s := range o.f.Sections {
			if s.Flags&elf.SHF_ALLOC == 0 || class(s) != c {
				continue
			}
			if s.Type != elf.SHT_PROGBITS && s.Type != elf.SHT_NOBITS && s.Type != elf.SHT_INIT_ARRAY && s.Type != elf.SHT_FINI_ARRAY {
				return 0, badModule(o.name, "allocated section %s has type %v", s.Name, s.Type)
			}
			align := max(s.Addralign, 1)
			if align&(align-1) != 0 || align > 4096 {
				return 0, badModule(o.name, "section %s has alignment %d", s.Name, s.Addralign)
			}
			if s.Size > ModulesVsize {
				return 0, badModule(o.name, "section %s is %d bytes", s.Name, s.Size)
			}
			size = (size + align - 1) &^ (align - 1)
			o.secAddr[i] = size
			o.loaded[i] = true
			size += s.Size
		}
	}
	return max((size+machine.PageSize-1)&^(machine.PageSize-1), machine.PageSize), nil
}

// copySections is move_module: it places the laid-out sections at m.Base,
// copies their contents into a host buffer of m.Size bytes, and records in
// m the ranges that kprobes and the tracer look up (text, init text,
// .kprobes.text, the blacklist, trace_printk formats).
func (o *moduleObject) copySections(m *Module) error {
	o.base, o.mem = m.Base, make([]byte, m.Size)
	for i, s := range o.f.Sections {
		if !o.loaded[i] {
			continue
		}
		o.secAddr[i] += o.base
		r := Range{o.secAddr[i], o.secAddr[i] + s.Size}
		if s.Type != elf.SHT_NOBITS {
			data, err := s.Data()
			if err != nil || uint64(len(data)) != s.Size {
				return badModule(o.name, "section %s is truncated", s.Name)
			}
			copy(o.mem[r.Start-o.base:], data)
		}
		switch {
		case s.Flags&elf.SHF_EXECINSTR != 0:
			m.Text = append(m.Text, r)
			if strings.HasPrefix(s.Name, ".init.text") {
				m.InitText = append(m.InitText, r)
			}
			if s.Name == ".kprobes.text" {
				m.KprobesText = r
			}
		case s.Name == "_kprobe_blacklist":
			m.Blacklist = r
		case s.Name == "__trace_printk_fmt":
			m.TraceBprintkFmt = r
		}
	}
	return nil
}

// moduleSymbols are a module's ELF symbols with their values.
type moduleSymbols struct {
	elf      []elf.Symbol // as the object lists them; ELF index i is elf[i-1]
	addr     []uint64     // by ELF symbol index (0 is the null symbol)
	ok       []bool       // by ELF symbol index: addr is known
	kallsyms []Symbol     // the module's own symbols, for kallsyms
}

// resolveModuleSymbols is simplify_symbols: defined symbols at their
// section's address; undefined ones from kallsyms (global symbols of the
// kernel and of other modules).
func (k *Kernel) resolveModuleSymbols(o *moduleObject) (*moduleSymbols, error) {
	esyms, err := o.f.Symbols()
	if err != nil {
		return nil, badModule(o.name, "symbol table: %v", err)
	}
	ms := &moduleSymbols{elf: esyms, addr: make([]uint64, len(esyms)+1), ok: make([]bool, len(esyms)+1)}
	ms.ok[0] = true
	for i, s := range esyms {
		idx := i + 1
		bind := elf.ST_BIND(s.Info)
		switch {
		case s.Section == elf.SHN_UNDEF:
			if addr, ok := k.resolveModuleSymbol(s.Name); ok {
				ms.addr[idx], ms.ok[idx] = addr, true
			} else if bind == elf.STB_WEAK {
				ms.ok[idx] = true // an unresolved weak reference is 0
			} else {
				return nil, fmt.Errorf("%w: module %s: Unknown symbol %s (err -2)", syscall.ENOENT, o.name, s.Name)
			}
		case s.Section == elf.SHN_ABS:
			ms.addr[idx], ms.ok[idx] = s.Value, true
		case s.Section == elf.SHN_COMMON:
			return nil, badModule(o.name, "common symbol %s (build with -fno-common)", s.Name)
		case s.Section >= elf.SHN_LORESERVE:
			return nil, badModule(o.name, "symbol %s in reserved section %#x", s.Name, uint16(s.Section))
		case int(s.Section) >= len(o.f.Sections):
			return nil, badModule(o.name, "symbol %s in section %d of %d", s.Name, s.Section, len(o.f.Sections))
		case o.loaded[s.Section]:
			sec := o.f.Sections[s.Section]
			if s.Value > sec.Size {
				return nil, badModule(o.name, "symbol %s lies past its section %s", s.Name, sec.Name)
			}
			ms.addr[idx], ms.ok[idx] = o.secAddr[s.Section]+s.Value, true
			st := elf.ST_TYPE(s.Info)
			if s.Name != "" && !strings.HasPrefix(s.Name, "$") && st != elf.STT_SECTION && st != elf.STT_FILE {
				ms.kallsyms = append(ms.kallsyms, Symbol{Name: s.Name, Addr: ms.addr[idx], ObjSize: s.Size, Type: symType(sec, bind)})
			}
		}
	}
	if len(ms.kallsyms) == 0 {
		return nil, badModule(o.name, "no symbols")
	}
	return ms, nil
}

// applyRelocations is apply_relocations: every RELA section that applies
// to a loaded section, into the host copy only.
func (o *moduleObject) applyRelocations(syms *moduleSymbols) error {
	for _, rs := range o.f.Sections {
		switch rs.Type {
		case elf.SHT_REL:
			return badModule(o.name, "REL section %s (AArch64 uses RELA)", rs.Name)
		case elf.SHT_RELA:
		default:
			continue
		}
		if int(rs.Info) >= len(o.f.Sections) {
			return badModule(o.name, "%s applies to section %d of %d", rs.Name, rs.Info, len(o.f.Sections))
		}
		if !o.loaded[rs.Info] {
			continue // debug info and the like, not loaded
		}
		if err := o.applyRelaSection(rs, syms); err != nil {
			return err
		}
	}
	return nil
}

// applyRelaSection applies one RELA section rs to the section it names.
func (o *moduleObject) applyRelaSection(rs *elf.Section, syms *moduleSymbols) error {
	target := o.f.Sections[rs.Info]
	if target.Type == elf.SHT_NOBITS {
		return badModule(o.name, "%s relocates NOBITS section %s", rs.Name, target.Name)
	}
	data, err := rs.Data()
	if err != nil || len(data)%24 != 0 {
		return badModule(o.name, "relocation section %s is truncated", rs.Name)
	}
	for off := 0; off < len(data); off += 24 {
		roff := binary.LittleEndian.Uint64(data[off:])
		info := binary.LittleEndian.Uint64(data[off+8:])
		addend := int64(binary.LittleEndian.Uint64(data[off+16:]))
		si, typ := info>>32, elf.R_AARCH64(uint32(info))
		if si >= uint64(len(syms.addr)) {
			return badModule(o.name, "%s: symbol index %d of %d", rs.Name, si, len(syms.addr))
		}
		if !syms.ok[si] {
			return badModule(o.name, "%s: %v refers to %s, which is not loaded", rs.Name, typ, syms.elf[si-1].Name)
		}
		if roff > target.Size || target.Size-roff < 2 {
			return badModule(o.name, "%s: offset %#x outside %s", rs.Name, roff, target.Name)
		}
		place := o.secAddr[rs.Info] + roff
		loc := o.mem[place-o.base : o.secAddr[rs.Info]+target.Size-o.base]
		if err := applyReloc(typ, loc, place, syms.addr[si], addend); err != nil {
			return fmt.Errorf("%w: %w: module %s: %s+%#x: %w", syscall.EINVAL, ErrBadModule, o.name, target.Name, roff, err)
		}
	}
	return nil
}

// ftraceLocs returns the function tracer's call sites, relocated: the
// contents of __patchable_function_entries.
func (o *moduleObject) ftraceLocs() ([]uint64, error) {
	var locs []uint64
	for i, s := range o.f.Sections {
		if !o.loaded[i] || s.Name != "__patchable_function_entries" {
			continue
		}
		if s.Size%8 != 0 {
			return nil, badModule(o.name, "section %s is %d bytes, not a multiple of 8", s.Name, s.Size)
		}
		for off := o.secAddr[i] - o.base; off < o.secAddr[i]-o.base+s.Size; off += 8 {
			locs = append(locs, binary.LittleEndian.Uint64(o.mem[off:]))
		}
	}
	return locs, nil
}

// moduleInitExit returns the addresses of a module's init_module and
// cleanup_module, 0 for one it lacks.
func moduleInitExit(syms []Symbol) (initFn, exitFn uint64) {
	for _, s := range syms {
		if s.Type == 'T' && s.Name == "init_module" {
			initFn = s.Addr
		}
		if s.Type == 'T' && s.Name == "cleanup_module" {
			exitFn = s.Addr
		}
	}
	return initFn, exitFn
}

// resolveModuleSymbol is resolve_symbol: a global symbol of the kernel or
// of a loaded module. (Linux resolves only EXPORT_SYMBOLs; this kernel
// exports every global.)
func (k *Kernel) resolveModuleSymbol(name string) (uint64, bool) {
	if name == "" {
		return 0, false
	}
	for _, s := range k.syms.Lookup(name) {
		if s.Type >= 'A' && s.Type <= 'Z' {
			return s.Addr, true
		}
	}
	return 0, false
}

// moduleSymbolSizes sets each symbol's Size as the distance to the next
// symbol in its section, the last one reaching the section's end, so that
// addresses resolve within the module only.
func moduleSymbolSizes(syms []Symbol, m *Module, f *elf.File, secAddr []uint64, loaded []bool) {
	end := func(addr uint64) uint64 {
		for i, s := range f.Sections {
			if loaded[i] && addr >= secAddr[i] && addr < secAddr[i]+max(s.Size, 1) {
				return secAddr[i] + max(s.Size, 1)
			}
		}
		return m.Base + m.Size
	}
	sort.SliceStable(syms, func(i, j int) bool { return syms[i].Addr < syms[j].Addr })
	for i := range syms {
		e := end(syms[i].Addr)
		syms[i].Size = e - syms[i].Addr
		for j := i + 1; j < len(syms); j++ {
			if syms[j].Addr != syms[i].Addr {
				if syms[j].Addr < e {
					syms[i].Size = syms[j].Addr - syms[i].Addr
				}
				break
			}
		}
	}
}

// allocModuleArea finds size free bytes in the module area (first fit,
// page-aligned), as module_alloc, and returns their kernel VA.
func (k *Kernel) allocModuleArea(size uint64) (uint64, error) {
	k.mods.mu.RLock()
	var used []Range
	for _, lm := range k.mods.list {
		used = append(used, Range{lm.mod.Base, lm.mod.Base + lm.mod.Size})
	}
	k.mods.mu.RUnlock()
	sort.Slice(used, func(i, j int) bool { return used[i].Start < used[j].Start })
	next := uint64(ModulesVaddr)
	for _, r := range used {
		if r.Start >= next && r.Start-next >= size {
			break
		}
		next = max(next, r.End)
	}
	if next+size > ModulesEnd || next+size < next {
		return 0, fmt.Errorf("%w: no %d bytes free in the module area", syscall.ENOMEM, size)
	}
	return next, nil
}
