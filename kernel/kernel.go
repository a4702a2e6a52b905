package kernel

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kpemu/kpemu/kernel/image"
	"github.com/kpemu/kpemu/machine"
)

// Config describes the kernel to boot.
type Config struct {
	Image   []byte       // the guest ELF; nil selects the embedded image
	RAMSize uint64       // 0: the machine's default
	NumCPUs int          // 0: one
	Console io.Writer    // the guest's UART output; nil discards it
	Logger  *slog.Logger // nil: slog.Default()
	// Parallel runs one host thread per vCPU (machine.Config.Parallel)
	// instead of the deterministic interleaving.
	Parallel bool
	// Interpret turns the machine's block translation off
	// (machine.Config.Interpret).
	Interpret bool
	// PerfMap receives perf's map of translated code
	// (machine.Config.PerfMap).
	PerfMap io.Writer
	// GuestWait bounds how long a host caller waits for the guest to
	// answer a request (a module's init or cleanup, a tracefs change, a
	// shadowed system call) before it gives up; 0 keeps the defaults
	// (10s for modules, 2s for the others). Tests set it long: on a
	// loaded host the guest may take that long, and they must wait for
	// its answer, not for a clock.
	GuestWait time.Duration
	// HostPIDMax is the host's pid_max when the guest is to mirror host
	// processes (Shadow): the guest then keeps its own tasks' pids out
	// of the host's, so that each host process's twin can take its pid.
	// 0: no host processes to make room for.
	HostPIDMax uint32
}

// Range is a half-open address range [Start, End).
type Range struct{ Start, End uint64 }

// Contains reports whether addr lies in the range.
func (r Range) Contains(addr uint64) bool { return addr >= r.Start && addr < r.End }

// Layout is where the image put the regions the probe subsystem cares about,
// read from the linker script's bracket symbols, and where it runs, from its
// program headers. Every address but Entry is a kernel virtual address.
type Layout struct {
	// Entry is the ELF entry point: the physical address of _start, where
	// the CPU starts with the MMU off. It is not a kernel address.
	Entry uint64
	// KimageVoffset is Linux's kimage_voffset, the image's VA minus its PA
	// (Vaddr - Paddr of its PT_LOAD segments).
	KimageVoffset uint64
	Image         Range  // _text.._end: the whole image, mapped at KimageVoffset
	Text          Range  // _stext.._etext: core kernel text
	EntryText     Range  // __entry_text_start..__entry_text_end
	KprobesText   Range  // __kprobes_text_start..__kprobes_text_end
	IrqEntryText  Range  // __irqentry_text_start..__irqentry_text_end; empty in older images
	InsnSlots     Range  // __insn_slots_start..__insn_slots_end: out-of-line slots
	Blacklist     Range  // __start_kprobe_blacklist..__stop_kprobe_blacklist: NOKPROBE_SYMBOL addresses
	End           uint64 // _end, Image.End
}

// Kernel is a booted guest kernel on its machine.
type Kernel struct {
	m      *machine.Machine
	syms   *Kallsyms
	layout Layout
	log    *slog.Logger
	// ramSize bounds the linear map (Phys); kept here so that the
	// translation needs no machine.
	ramSize uint64

	ready     chan struct{}
	readyOnce sync.Once
	// readyFns run in HC_KERNEL_READY (OnReady); isReady is set there.
	// Both under mu.
	readyFns []func()
	isReady  bool

	// dwarf is done once task and params hold what the image's DWARF
	// says (readDWARF, on a goroutine of its own from Boot on); read them
	// through taskStruct and FuncParams, which wait for it.
	dwarf  sync.WaitGroup
	task   taskLayout
	params *funcParams
	// lastComm is, by CPU, the comm Current last read there: an event's
	// hit asks for it each time, and a fresh string was an allocation.
	lastComm []atomic.Pointer[taskComm]

	mu      sync.Mutex
	panicky string // panic message, once the guest panicked

	mods    modules        // see module.go
	tracefs tracefsMirror  // see tracefs.go
	shadow  shadowReplayer // see shadow.go
	running atomic.Bool    // inside Run: the guest makes progress by itself
	ftrace  ftrace         // see ftrace.go
	fgraph  fgraph         // see fgraph.go
	tps     tracepoints    // see jumplabel.go
	paths   guestPaths     // guest path lookup; see path.go
	mms     guestMms       // address spaces, for uprobes; see usermm.go
}

// ErrBadImage is wrapped by every error about a malformed guest image.
var ErrBadImage = errors.New("bad kernel image")

// Boot loads the image into a new machine and points CPU 0 at its entry.
// The machine does not run until Run is called.
func Boot(cfg Config) (*Kernel, error) {
	var img io.ReaderAt = image.Reader()
	if cfg.Image != nil {
		img = bytes.NewReader(cfg.Image)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	f, err := elf.NewFile(img)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadImage, err)
	}
	if f.Class != elf.ELFCLASS64 || f.Machine != elf.EM_AARCH64 || f.Type != elf.ET_EXEC {
		return nil, fmt.Errorf("%w: want an AArch64 ELF64 executable, got %v %v %v", ErrBadImage, f.Class, f.Machine, f.Type)
	}
	m, err := machine.New(machine.Config{RAMSize: cfg.RAMSize, NumCPUs: cfg.NumCPUs, Console: cfg.Console, Logger: log, Parallel: cfg.Parallel, Interpret: cfg.Interpret, PerfMap: cfg.PerfMap, HostPIDMax: cfg.HostPIDMax})
	if err != nil {
		return nil, fmt.Errorf("creating machine: %w", err)
	}
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD {
			continue
		}
		if p.Filesz > p.Memsz {
			return nil, fmt.Errorf("%w: segment at %#x has filesz > memsz", ErrBadImage, p.Paddr)
		}
		if end := p.Paddr + p.Memsz; p.Paddr < machine.RAMBase || end < p.Paddr || end > machine.RAMBase+m.RAMSize() {
			return nil, fmt.Errorf("%w: segment at %#x (%d bytes) does not fit in RAM", ErrBadImage, p.Paddr, p.Memsz)
		}
		// Only the file's bytes: the rest (.bss) is zero in fresh RAM.
		// Writing its 9 MiB of zeros from a buffer as large faulted in
		// both, half of kpemu run's time from start to a mounted tree;
		// and the bytes go straight into RAM, with no buffer to fault in.
		if err := m.ReadMemFrom(p.Paddr, p.Open(), int(p.Filesz)); err != nil {
			return nil, fmt.Errorf("%w: segment at %#x: %w", ErrBadImage, p.Paddr, err)
		}
	}
	voff, err := kimageVoffset(f)
	if err != nil {
		return nil, err
	}
	syms, err := newKallsyms(f)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadImage, err)
	}
	k := &Kernel{m: m, syms: syms, log: log, ready: make(chan struct{}), ramSize: m.RAMSize(),
		lastComm: make([]atomic.Pointer[taskComm], m.NumCPUs())}
	if err := k.readLayout(f.Entry, voff); err != nil {
		return nil, err
	}
	// The DWARF was a fifth of kpemu run's time to a mounted tree, parsed
	// in line; the guest needs none of it to boot.
	k.dwarf.Go(func() { k.readDWARF(img) })
	k.paths.img = img
	// ftrace_init: the call sites get MOV X9, LR before the guest runs.
	if err := k.initFtrace(); err != nil {
		return nil, err
	}
	if err := k.initTracepoints(); err != nil {
		return nil, err
	}
	m.SetHostcall(HCKernelReady, k.hcReady)
	m.SetHostcall(HCPanic, k.hcPanic)
	// The probe gates answer "not handled" until a probe subsystem
	// attaches, as under QEMU, where every HVC returns NOT_SUPPORTED (-1).
	for _, imm := range []uint16{HCKprobeBrk, HCKprobeSSBrk, HCKprobeFault, HCKretprobeTrampoline, HCKprobeFlushTask, HCKprobeAPI, HCKprobeCallDone, HCKprobeSoftStep, HCTracePrintk, HCUprobeBrk, HCUprobeSS, HCUprobeMmap, HCUprobeClear, HCUprobeFork} {
		m.SetHostcall(imm, notSupported)
	}
	// As QEMU does, the device tree goes into RAM and its address into x0.
	dtb, err := m.LoadDeviceTree()
	if err != nil {
		return nil, fmt.Errorf("placing the device tree: %w", err)
	}
	k.initModules(dtb)
	k.initTracefsMirror()
	k.initShadow()
	if w := cfg.GuestWait; w > 0 {
		k.mods.timeout, k.tracefs.timeout, k.shadow.timeout = w, w, w
	}
	// The entry is a PA: the CPU starts with the MMU off, as on Linux.
	m.Boot(f.Entry, dtb)
	return k, nil
}

// kimageVoffset is kimage_voffset, Vaddr - Paddr, which must be the same for
// every PT_LOAD segment: the host translates the whole image with it.
func kimageVoffset(f *elf.File) (uint64, error) {
	var voff uint64
	found := false
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD {
			continue
		}
		if d := p.Vaddr - p.Paddr; !found {
			voff, found = d, true
		} else if d != voff {
			return 0, fmt.Errorf("%w: PT_LOAD segments differ in Vaddr - Paddr (kimage_voffset): %#x at %#x, %#x before", ErrBadImage, d, p.Vaddr, voff)
		}
	}
	if !found {
		return 0, fmt.Errorf("%w: no PT_LOAD segment", ErrBadImage)
	}
	return voff, nil
}

func (k *Kernel) readLayout(entry, voff uint64) error {
	addr := func(name string) (uint64, error) {
		s, ok := k.syms.LookupName(name)
		if !ok {
			return 0, fmt.Errorf("%w: symbol %s missing (see kernel/image/kpemu.lds)", ErrBadImage, name)
		}
		return s.Addr, nil
	}
	rng := func(start, end string) (Range, error) {
		a, err := addr(start)
		if err != nil {
			return Range{}, err
		}
		b, err := addr(end)
		if err != nil {
			return Range{}, err
		}
		if b < a {
			return Range{}, fmt.Errorf("%w: %s (%#x) is below %s (%#x)", ErrBadImage, end, b, start, a)
		}
		return Range{a, b}, nil
	}
	var err error
	l := Layout{Entry: entry, KimageVoffset: voff}
	if l.Image, err = rng("_text", "_end"); err != nil {
		return err
	}
	l.End = l.Image.End
	if l.Text, err = rng("_stext", "_etext"); err != nil {
		return err
	}
	if l.EntryText, err = rng("__entry_text_start", "__entry_text_end"); err != nil {
		return err
	}
	if l.KprobesText, err = rng("__kprobes_text_start", "__kprobes_text_end"); err != nil {
		return err
	}
	// Optional: images from before the scheduler have no irq entry text.
	if r, err := rng("__irqentry_text_start", "__irqentry_text_end"); err == nil {
		l.IrqEntryText = r
	}
	if l.InsnSlots, err = rng("__insn_slots_start", "__insn_slots_end"); err != nil {
		return err
	}
	if l.Blacklist, err = rng("__start_kprobe_blacklist", "__stop_kprobe_blacklist"); err != nil {
		return err
	}
	k.layout = l
	return nil
}

// Machine returns the machine the kernel runs on.
func (k *Kernel) Machine() *machine.Machine { return k.m }

// Kallsyms returns the kernel's symbol table.
func (k *Kernel) Kallsyms() *Kallsyms { return k.syms }

// Layout returns where the image placed its special regions.
func (k *Kernel) Layout() Layout { return k.layout }

// Logger returns the kernel's logger.
func (k *Kernel) Logger() *slog.Logger { return k.log }

// Run runs the guest until ctx is done or it powers off.
func (k *Kernel) Run(ctx context.Context) error {
	k.running.Store(true)
	defer k.running.Store(false)
	if err := k.m.Run(ctx); err != nil {
		return fmt.Errorf("running guest: %w", err)
	}
	return nil
}

// Ready is closed once the guest finished booting and its workload started.
func (k *Kernel) Ready() <-chan struct{} { return k.ready }

// OnReady arranges for fn to run when the guest reports it is ready
// (HC_KERNEL_READY): in that hostcall, with every vCPU stopped, before
// Ready is closed, so that no guest instruction runs between the guest
// becoming ready and fn. fn must not stop the machine. If the guest is
// ready already, OnReady keeps nothing and returns false.
func (k *Kernel) OnReady(fn func()) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.isReady {
		return false
	}
	k.readyFns = append(k.readyFns, fn)
	return true
}

// Panicked returns the guest's panic message, if it panicked.
func (k *Kernel) Panicked() (string, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.panicky, k.panicky != ""
}

// SetHostcall routes HVC #imm to fn; see machine.HostcallFunc.
func (k *Kernel) SetHostcall(imm uint16, fn machine.HostcallFunc) { k.m.SetHostcall(imm, fn) }

// StopMachine runs fn with every vCPU stopped at an instruction boundary,
// as Linux's stop_machine. It must not be called from a hostcall handler.
func (k *Kernel) StopMachine(fn func()) { k.m.Exclusive(fn) }

// IsText reports whether addr is core kernel text (core_kernel_text).
func (k *Kernel) IsText(addr uint64) bool { return k.layout.Text.Contains(addr) }

// ReadInsn reads the instruction word at kernel address addr.
func (k *Kernel) ReadInsn(addr uint64) (uint32, error) {
	v, err := k.Read32(addr)
	if err != nil {
		return 0, fmt.Errorf("reading instruction at %#x: %w", addr, err)
	}
	return v, nil
}

// PatchTextNosync writes one instruction into kernel text, a loaded
// module's text or an out-of-line slot (Linux's
// aarch64_insn_patch_text_nosync). The caller must
// have stopped the machine (StopMachine) or be in a hostcall handler; the
// machine drops the decoded copy of the page, which is what the icache flush
// achieves on hardware.
func (k *Kernel) PatchTextNosync(addr uint64, insn uint32) error {
	if addr&3 != 0 {
		return fmt.Errorf("patching %#x: not 4-byte aligned", addr)
	}
	if !k.layout.Text.Contains(addr) && !k.layout.InsnSlots.Contains(addr) && !k.IsModuleText(addr) {
		return fmt.Errorf("patching %#x: not kernel text, module text or an instruction slot", addr)
	}
	// The machine drops the page's decoded copy on the PA it writes.
	if err := k.Write32(addr, insn); err != nil {
		return fmt.Errorf("patching %#x: %w", addr, err)
	}
	return nil
}

// PatchText writes one instruction with the machine stopped
// (aarch64_insn_patch_text).
func (k *Kernel) PatchText(addr uint64, insn uint32) error {
	var err error
	k.StopMachine(func() { err = k.PatchTextNosync(addr, insn) })
	return err
}

// ReadU64 reads a 64-bit value of guest memory at kernel address addr.
func (k *Kernel) ReadU64(addr uint64) (uint64, error) {
	v, err := k.Read64(addr)
	if err != nil {
		return 0, fmt.Errorf("reading %#x: %w", addr, err)
	}
	return v, nil
}

// ReadSymbolU64 reads the 64-bit variable named sym.
func (k *Kernel) ReadSymbolU64(sym string) (uint64, error) {
	s, ok := k.syms.LookupName(sym)
	if !ok {
		return 0, fmt.Errorf("no symbol %q", sym)
	}
	return k.ReadU64(s.Addr)
}

// ReadString reads a NUL-terminated guest string of at most max bytes at
// kernel address addr.
func (k *Kernel) ReadString(addr uint64, max int) (string, error) {
	var out []byte
	buf := make([]byte, 64)
	for len(out) < max {
		n := min(len(buf), max-len(out))
		err := k.ReadMem(addr+uint64(len(out)), buf[:n])
		if err != nil && n > 1 {
			// The chunk may run past the end of a region (the image
			// ends at _end) where the string does not.
			n = 1
			err = k.ReadMem(addr+uint64(len(out)), buf[:n])
		}
		if err != nil {
			return "", fmt.Errorf("reading string at %#x: %w", addr, err)
		}
		if i := bytes.IndexByte(buf[:n], 0); i >= 0 {
			return string(append(out, buf[:i]...)), nil
		}
		out = append(out, buf[:n]...)
	}
	return string(out), nil
}

// notSupported answers a hostcall that nothing serves with -1.
func notSupported(cpu *machine.CPU) error {
	cpu.SetX(0, ^uint64(0))
	return nil
}

func (k *Kernel) hcReady(cpu *machine.CPU) error {
	k.mu.Lock()
	fns := k.readyFns
	k.readyFns, k.isReady = nil, true
	k.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
	k.readyOnce.Do(func() { close(k.ready) })
	k.fillTracefsRing() // what was queued during boot
	k.log.Info("guest kernel ready", "cpu", cpu.Index(), "instructions", cpu.Retired())
	cpu.SetX(0, 0)
	return nil
}

// hcPanic records the guest's panic and logs it with a symbolised
// backtrace; the guest then idles, and the host keeps serving.
func (k *Kernel) hcPanic(cpu *machine.CPU) error {
	msg, err := k.ReadString(cpu.X(0), 256)
	if err != nil {
		msg = fmt.Sprintf("(unreadable message at %#x)", cpu.X(0))
	}
	k.mu.Lock()
	if k.panicky == "" {
		k.panicky = msg
	}
	k.mu.Unlock()
	attrs := []any{"message", msg, "cpu", cpu.Index()}
	if regs := cpu.X(1); regs != 0 {
		if pc, err := k.ReadU64(regs + PtRegsPC); err == nil {
			attrs = append(attrs, "pc", k.syms.Format(pc))
		}
		if fp, err := k.ReadU64(regs + 29*8); err == nil {
			attrs = append(attrs, "backtrace", k.Backtrace(fp, 16))
		}
	}
	k.log.Error("guest kernel panic", attrs...)
	cpu.SetX(0, 0)
	return nil
}

// Backtrace walks AArch64 frame records (x29 chains) from fp and returns
// the symbolised return addresses, at most depth of them. Like Linux's
// unwinder it knows the frame record kernel_entry builds inside pt_regs:
// after a frame in the entry text, the next "return address" is the exact
// PC the exception interrupted, printed as %pS rather than %pB.
func (k *Kernel) Backtrace(fp uint64, depth int) []string {
	var out []string
	exact := false
	for i := 0; i < depth && fp != 0 && fp&7 == 0; i++ {
		next, err1 := k.ReadU64(fp)
		lr, err2 := k.ReadU64(fp + 8)
		if err1 != nil || err2 != nil || lr == 0 {
			break
		}
		if exact {
			out = append(out, k.syms.Format(lr))
		} else {
			out = append(out, k.syms.FormatReturn(lr))
		}
		exact = k.layout.EntryText.Contains(lr)
		if next <= fp {
			break
		}
		fp = next
	}
	return out
}

// Uptime is the guest's time since boot, from its generic timer
// (CNTVCT_EL0 / CNTFRQ_EL0): deterministic, it advances with the
// instructions the guest retires.
func (k *Kernel) Uptime() time.Duration {
	c := k.m.CPU(0)
	ticks, freq := c.SysReg(machine.CNTVCT_EL0), c.SysReg(machine.CNTFRQ_EL0)
	if freq == 0 {
		return 0
	}
	return time.Duration(ticks/freq)*time.Second + time.Duration((ticks%freq)*uint64(time.Second)/freq)
}
