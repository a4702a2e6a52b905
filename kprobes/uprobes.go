package kprobes

import (
	"encoding/binary"
	"fmt"
	"sync"
	"syscall"

	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/machine"
)

// User-space probes, after Linux 6.1's kernel/events/uprobes.c and
// arch/arm64/kernel/probes/uprobes.c. A uprobe is a (file, offset) place;
// registering its first consumer writes BRK #0x005 into every address
// space that maps that offset of the file, and exec writes it into the new
// ones (HC_UPROBE_MMAP, uprobe_mmap). kpemu's processes share one copy of
// a program's text (the guest's fs/exec.c text_page), so a BRK written
// there reaches every process that runs the program at once, as Linux's
// BRK in each one's copy-on-write page does; the file (the initramfs's
// bytes, which read(2) gives) stays as it was. As that copy outlives the
// processes, removing a probe restores it too (removeFromFilePage).
//
// A hit comes through the guest's EL0 BRK path (el0_dbg, brk_handler, the
// user break hook) to HC_UPROBE_BRK, handle_swbp here: the consumers run on
// the user pt_regs; a uretprobe consumer makes the return address (x30) the
// trampoline, slot 0 of the process's [uprobes] page; then the original
// instruction is simulated (branches, ADR/ADRP, literal loads, as
// arm_probe_decode_insn says) or copied into a slot of the [uprobes] page
// and single-stepped from EL0 (user_enable_single_step: TIF_SINGLESTEP,
// MDSCR_EL1.SS and SPSR.SS), and the step exception (HC_UPROBE_SS,
// handle_singlestep) sets the pc after the probed instruction. The
// [uprobes] page is a guest VMA (xol_add_vma); the gate asks for it with
// UprobeNeedXol the first time one is needed.

// uprobeSwbp is UPROBE_SWBP_INSN, BRK #0x005.
const uprobeSwbp = 0xd42000a0

// maxUretprobeDepth is MAX_URETPROBE_DEPTH.
const maxUretprobeDepth = 64

// xolSlots is how many UPROBE_XOL_SLOT_BYTES (4) slots the page holds.
const xolSlots = 4096 / 4

// UprobeConsumer is struct uprobe_consumer: what a hit runs. Handler runs
// at the probed instruction with the user registers (regs.PC is the probed
// address); RetHandler, for a uretprobe, when the function returns, with
// fn the probed address and regs.PC the address it returns to. Either may
// be nil, not both. They run on the vCPU of the hit, inside its exception.
type UprobeConsumer struct {
	Handler    func(c *UprobeConsumer, regs *Regs)
	RetHandler func(c *UprobeConsumer, fn uint64, regs *Regs)
}

type uprobeKey struct{ inode, offset uint64 }

// uprobe is struct uprobe: one probed place and its consumers.
type uprobe struct {
	key       uprobeKey
	insn      uint32 // the original instruction, from the file
	class     insnClass
	consumers []*UprobeConsumer
}

// returnInstance is struct return_instance: a uretprobe's pending return.
type returnInstance struct {
	up      *uprobe
	fn      uint64 // the probed address
	origRet uint64 // the return address the trampoline replaced
	stack   uint64 // the sp at the hit
	chained bool   // its origRet was the trampoline: returns with the next
}

// uprobeTask is struct uprobe_task, per task_struct.
type uprobeTask struct {
	mm       uint64
	active   *uprobe // being stepped, else nil
	vaddr    uint64  // the probed address of the step
	xolVaddr uint64  // its slot
	rets     []returnInstance
}

// xolArea is struct xol_area: which slots of an mm's [uprobes] page are
// in use; slot 0 is the trampoline.
type xolArea struct {
	vaddr uint64
	used  [xolSlots]bool
}

// uprobes is the subsystem's state. Its mutex is taken by the hit path
// (hostcalls) and, with the machine stopped, by registration: never hold
// it while stopping the machine.
type uprobes struct {
	mu     sync.Mutex
	probes map[uprobeKey]*uprobe
	tasks  map[uint64]*uprobeTask // by task_struct
	areas  map[uint64]*xolArea    // by mm_struct
}

func (kp *Kprobes) setupUprobes() {
	u := &kp.uprobes
	u.probes = make(map[uprobeKey]*uprobe)
	u.tasks = make(map[uint64]*uprobeTask)
	u.areas = make(map[uint64]*xolArea)
	kp.k.SetHostcall(kernel.HCUprobeBrk, kp.hcUprobeBrk)
	kp.k.SetHostcall(kernel.HCUprobeSS, kp.hcUprobeSS)
	kp.k.SetHostcall(kernel.HCUprobeMmap, kp.hcUprobeMmap)
	kp.k.SetHostcall(kernel.HCUprobeClear, kp.hcUprobeClear)
	kp.k.SetHostcall(kernel.HCUprobeFork, kp.hcUprobeFork)
}

// RegisterUprobe is uprobe_register: add c to the uprobe at offset of
// file, placing its BRK in every address space that maps it. Errors wrap
// EINVAL as Linux's: an offset past the file's end or not 4-byte aligned,
// a consumer without handlers, or an instruction arm64 cannot probe
// (arch_uprobe_analyze_insn) in a file that some process maps. Like
// StopMachine, it must not be called from a hostcall handler.
func (kp *Kprobes) RegisterUprobe(file kernel.GuestFile, offset uint64, c *UprobeConsumer) error {
	if c == nil || c.Handler == nil && c.RetHandler == nil {
		return fmt.Errorf("uprobe: %w: a consumer without handlers", syscall.EINVAL)
	}
	var err error
	kp.k.StopMachine(func() { err = kp.registerUprobe(file.Inode, offset, c) })
	return err
}

func (kp *Kprobes) registerUprobe(inode, offset uint64, c *UprobeConsumer) error {
	k := kp.k
	data, size, err := k.FileData(inode)
	if err != nil {
		return fmt.Errorf("uprobe: %w", err)
	}
	switch {
	case offset > size:
		return fmt.Errorf("uprobe: %w: offset %#x is past the file's end (%d bytes)", syscall.EINVAL, offset, size)
	case offset&3 != 0:
		return fmt.Errorf("uprobe: %w: offset %#x is not 4-byte aligned", syscall.EINVAL, offset)
	}
	u := &kp.uprobes
	u.mu.Lock()
	defer u.mu.Unlock()
	key := uprobeKey{inode, offset}
	up := u.probes[key]
	if up != nil {
		for _, o := range up.consumers {
			if o == c {
				return fmt.Errorf("uprobe: %w: consumer already registered", syscall.EINVAL)
			}
		}
		up.consumers = append(up.consumers, c)
		return nil
	}
	up = &uprobe{key: key, class: insnRejected}
	if offset+4 <= size {
		w, err := k.Read32(data + offset)
		if err != nil {
			return fmt.Errorf("uprobe: reading the instruction: %w", err)
		}
		up.insn = w
		up.class = decodeInsn(w)
	}
	mms, err := k.UserMms()
	if err != nil {
		return fmt.Errorf("uprobe: %w", err)
	}
	var done []uint64
	for _, mm := range mms {
		n, err := kp.installUprobe(up, mm)
		if err == nil && n > 0 && up.class == insnRejected {
			err = fmt.Errorf("uprobe: %w: the instruction %#08x at %#x cannot be probed", syscall.EINVAL, up.insn, offset)
		}
		if err != nil {
			for _, d := range done {
				kp.removeUprobe(up, d)
			}
			kp.removeFromFilePage(up)
			return err
		}
		done = append(done, mm)
	}
	up.consumers = []*UprobeConsumer{c}
	u.probes[key] = up
	return nil
}

// UnregisterUprobe is uprobe_unregister: remove c, and with the last
// consumer the BRKs, restoring the original instruction in every address
// space. A return pending in a task still returns to its caller.
func (kp *Kprobes) UnregisterUprobe(file kernel.GuestFile, offset uint64, c *UprobeConsumer) error {
	var err error
	kp.k.StopMachine(func() {
		u := &kp.uprobes
		u.mu.Lock()
		defer u.mu.Unlock()
		up := u.probes[uprobeKey{file.Inode, offset}]
		i := -1
		if up != nil {
			for j, o := range up.consumers {
				if o == c {
					i = j
				}
			}
		}
		if i < 0 {
			err = fmt.Errorf("uprobe: %w: no such consumer at %#x", syscall.ENOENT, offset)
			return
		}
		up.consumers = append(up.consumers[:i:i], up.consumers[i+1:]...)
		if len(up.consumers) > 0 {
			return
		}
		delete(u.probes, up.key)
		mms, merr := kp.k.UserMms()
		for _, mm := range mms {
			if rerr := kp.removeUprobe(up, mm); err == nil {
				err = rerr
			}
		}
		if rerr := kp.removeFromFilePage(up); err == nil {
			err = rerr
		}
		if err == nil {
			err = merr
		}
	})
	return err
}

// uprobeAddrs returns where mm maps up's offset: every VMA of the file
// whose range holds it (valid_vma and offset_to_vaddr).
func uprobeAddrs(vmas []kernel.VMA, key uprobeKey) []uint64 {
	var out []uint64
	for _, v := range vmas {
		if v.File != key.inode || v.Flags&kernel.VMDontCopy != 0 {
			continue
		}
		start := v.Pgoff * 4096
		if key.offset >= start && key.offset-start < v.End-v.Start {
			out = append(out, v.Start+key.offset-start)
		}
	}
	return out
}

// installUprobe is install_breakpoint for each place of up in mm: the BRK
// into the mapped page. A page not mapped gets it when it is (never, as
// exec maps a program's pages whole). It returns how many places it
// found.
func (kp *Kprobes) installUprobe(up *uprobe, mm uint64) (int, error) {
	vmas, err := kp.k.MmVMAs(mm)
	if err != nil {
		return 0, err
	}
	addrs := uprobeAddrs(vmas, up.key)
	if up.class == insnRejected {
		return len(addrs), nil
	}
	for _, va := range addrs {
		if err := kp.writeUserInsn(mm, va, uprobeSwbp); err != nil {
			return 0, err
		}
	}
	return len(addrs), nil
}

// removeUprobe is remove_breakpoint: the original instruction back where
// the BRK is.
func (kp *Kprobes) removeUprobe(up *uprobe, mm uint64) error {
	vmas, err := kp.k.MmVMAs(mm)
	if err != nil {
		return err
	}
	for _, va := range uprobeAddrs(vmas, up.key) {
		if w, ok := kp.readUserInsn(mm, va); !ok || w != uprobeSwbp {
			continue
		}
		if err := kp.writeUserInsn(mm, va, up.insn); err != nil {
			return err
		}
	}
	return nil
}

// removeFromFilePage is remove_breakpoint for the file's shared page
// (kernel.FilePage): every process that maps the program's text maps that
// page, which therefore keeps the BRK when the last of them is gone, for
// the next exec of the file.
func (kp *Kprobes) removeFromFilePage(up *uprobe) error {
	page, err := kp.k.FilePage(up.key.inode, up.key.offset/4096)
	if err != nil || page == 0 {
		return err
	}
	va := page + up.key.offset%4096
	if w, err := kp.k.Read32(va); err != nil || w != uprobeSwbp {
		return err
	}
	if err := kp.k.Write32(va, up.insn); err != nil {
		return fmt.Errorf("uprobe: restoring %#x in the file's page: %w", up.key.offset, err)
	}
	return nil
}

// readUserInsn reads the instruction at va in mm's page.
func (kp *Kprobes) readUserInsn(mm, va uint64) (uint32, bool) {
	pa, ok, err := kp.k.UserPhys(mm, va)
	if err != nil || !ok {
		return 0, false
	}
	var b [4]byte
	if kp.k.ReadPhys(pa, b[:]) != nil {
		return 0, false
	}
	return binary.LittleEndian.Uint32(b[:]), true
}

// writeUserInsn writes one instruction into mm's page at va, through the
// physical address (the page is read-only to the process).
func (kp *Kprobes) writeUserInsn(mm, va uint64, insn uint32) error {
	pa, ok, err := kp.k.UserPhys(mm, va)
	if err != nil || !ok {
		return err
	}
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], insn)
	if err := kp.k.WritePhys(pa, b[:]); err != nil {
		return fmt.Errorf("uprobe: writing %#x in mm %#x: %w", va, mm, err)
	}
	return nil
}

// hcUprobeMmap is uprobe_mmap: exec mapped a program into mm (x0), now
// current's, before the program's first instruction.
func (kp *Kprobes) hcUprobeMmap(cpu *machine.CPU) error {
	u := &kp.uprobes
	u.mu.Lock()
	defer u.mu.Unlock()
	kp.installAll(cpu.X(0))
	return nil
}

// installAll places every registered uprobe in mm; u.mu is held.
func (kp *Kprobes) installAll(mm uint64) {
	u := &kp.uprobes
	if len(u.probes) == 0 {
		return
	}
	vmas, err := kp.k.MmVMAs(mm)
	if err != nil {
		kp.log.Error("uprobe: reading a new mm", "err", err)
		return
	}
	for _, v := range vmas {
		if v.File == 0 {
			continue
		}
		for key, up := range u.probes {
			if key.inode == v.File && up.class != insnRejected {
				for _, va := range uprobeAddrs([]kernel.VMA{v}, key) {
					if err := kp.writeUserInsn(mm, va, uprobeSwbp); err != nil {
						kp.log.Error("uprobe: placing a probe", "err", err)
					}
				}
			}
		}
	}
}

// hcUprobeClear is uprobe_clear_state: mm (x0) is freed, with its
// [uprobes] page; so are the tasks' states in it (exit or exec).
func (kp *Kprobes) hcUprobeClear(cpu *machine.CPU) error {
	mm := cpu.X(0)
	u := &kp.uprobes
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.areas, mm)
	for t, ut := range u.tasks {
		if ut.mm == mm {
			delete(u.tasks, t)
		}
	}
	return nil
}

// hcUprobeFork is uprobe_copy_process: the child (x0, with mm x1) of the
// current task (whose mm is x2) gets the parent's pending returns, and
// the answer is the address of the [uprobes] page it needs for them
// (dup_xol_work), 0 when it needs none.
func (kp *Kprobes) hcUprobeFork(cpu *machine.CPU) error {
	child, childMm, mm := cpu.X(0), cpu.X(1), cpu.X(2)
	cpu.SetX(0, 0)
	task := kp.k.CurrentTask(cpu.Index())
	u := &kp.uprobes
	u.mu.Lock()
	defer u.mu.Unlock()
	// The copy has the parent's BRKs as they were; a probe registered
	// while fork copied (the child is on no task list yet) goes in now.
	kp.installAll(childMm)
	delete(u.tasks, child) // a task_struct used before
	ut := u.tasks[task]
	if ut == nil || ut.mm != mm || len(ut.rets) == 0 {
		return nil
	}
	xol, err := kp.k.MmXolVaddr(mm)
	if err != nil || xol == 0 {
		return nil
	}
	u.tasks[child] = &uprobeTask{mm: childMm, rets: append([]returnInstance(nil), ut.rets...)}
	cpu.SetX(0, xol)
	return nil
}

// find is find_active_uprobe: the uprobe whose BRK is at va in mm; and,
// when va maps a file, the file's instruction there (file true).
func (u *uprobes) find(k *kernel.Kernel, mm, va uint64) (up *uprobe, orig uint32, file bool) {
	vmas, err := k.MmVMAs(mm)
	if err != nil {
		return nil, 0, false
	}
	for _, v := range vmas {
		if v.File == 0 || va < v.Start || va >= v.End || va&3 != 0 {
			continue
		}
		key := uprobeKey{v.File, va - v.Start + v.Pgoff*4096}
		if up := u.probes[key]; up != nil {
			return up, up.insn, true
		}
		data, size, err := k.FileData(v.File)
		if err != nil || key.offset+4 > size {
			return nil, 0, false
		}
		w, err := k.Read32(data + key.offset)
		return nil, w, err == nil
	}
	return nil, 0, false
}

func (u *uprobes) task(task, mm uint64) *uprobeTask {
	ut := u.tasks[task]
	if ut == nil || ut.mm != mm {
		ut = &uprobeTask{mm: mm}
		u.tasks[task] = ut
	}
	return ut
}

// hcUprobeBrk is handle_swbp: x0 the user pt_regs, x1 the ESR, x2 the mm.
func (kp *Kprobes) hcUprobeBrk(cpu *machine.CPU) error {
	regsAddr, mm := cpu.X(0), cpu.X(2)
	answer := func(v uint64) error { cpu.SetX(0, v); return nil }
	regs, err := kp.readRegs(regsAddr)
	if err != nil || mm == 0 {
		kp.log.Error("uprobe: bad pt_regs pointer from guest", "err", err)
		return answer(kernel.DbgHookError)
	}
	regs.CPU = cpu.Index()
	task := kp.k.CurrentTask(cpu.Index())
	xol, err := kp.k.MmXolVaddr(mm)
	if err != nil {
		return answer(kernel.DbgHookError)
	}
	u := &kp.uprobes
	u.mu.Lock()
	bp := regs.PC
	if xol != 0 && bp == xol {
		ret := kp.handleTrampoline(task, mm, regs)
		u.mu.Unlock()
		if ret == kernel.DbgHookHandled {
			if err := kp.writeRegs(regsAddr, regs); err != nil {
				return answer(kernel.DbgHookError)
			}
		}
		return answer(ret)
	}
	up, orig, file := u.find(kp.k, mm, bp)
	if up == nil || up.class == insnRejected {
		defer u.mu.Unlock()
		// is_trap_at_addr: a probe removed since the BRK was hit is
		// gone from the page too; run the instruction again.
		var b [4]byte
		if cpu.ReadVirt(bp, b[:]) == nil && binary.LittleEndian.Uint32(b[:]) != uprobeSwbp {
			return answer(kernel.DbgHookHandled)
		}
		// A BRK of a removed probe that a fork copied into a child
		// the removal did not see yet (Linux's dup_mmap holds
		// registration off; kpemu's fork does not): the file's own
		// instruction goes back, and runs.
		if file && orig != uprobeSwbp && kp.writeUserInsn(mm, bp, orig) == nil {
			return answer(kernel.DbgHookHandled)
		}
		return answer(kernel.DbgHookError)
	}
	needRet := false
	for _, c := range up.consumers {
		needRet = needRet || c.RetHandler != nil
	}
	if xol == 0 && (needRet || up.class == insnGood) {
		u.mu.Unlock()
		return answer(kernel.UprobeNeedXol)
	}
	consumers := append([]*UprobeConsumer(nil), up.consumers...)
	ut := u.task(task, mm)
	u.mu.Unlock()

	// handler_chain
	for _, c := range consumers {
		if c.Handler != nil {
			c.Handler(c, regs)
		}
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if needRet {
		switch prepareUretprobe(ut, up, bp, xol, regs) {
		case uretTooDeep:
			kp.log.Warn(fmt.Sprintf("uprobe: omit uretprobe due to nestedness limit pid/tgid=%d/%d", kp.k.CurrentPid(regs.CPU), kp.k.CurrentTgid(regs.CPU)))
		case uretNoChain: // uprobe_warn
			comm, pid := kp.k.Current(regs.CPU)
			kp.log.Warn(fmt.Sprintf("uprobe: %s:%d failed to handle tail call", comm, pid))
		}
	}
	if up.class == insnGoodNoSlot {
		// arch_uprobe_skip_sstep: simulate at the probed address.
		if !kp.simulateUser(cpu, up.insn, bp, regs) {
			return answer(kernel.DbgHookError)
		}
		if err := kp.writeRegs(regsAddr, regs); err != nil {
			return answer(kernel.DbgHookError)
		}
		return answer(kernel.DbgHookHandled)
	}
	// pre_ssout: a slot of the [uprobes] page, the instruction in it,
	// the pc there (arch_uprobe_pre_xol); the gate enables the step.
	area := u.areas[mm]
	if area == nil || area.vaddr != xol {
		area = &xolArea{vaddr: xol}
		area.used[0] = true
		u.areas[mm] = area
	}
	slot := -1
	for i, used := range area.used {
		if !used {
			slot = i
			break
		}
	}
	if slot < 0 {
		return answer(kernel.DbgHookError)
	}
	xolVaddr := xol + 4*uint64(slot)
	// A slot that holds the instruction already (the same probe's last
	// step) is not written again: a write drops the page's decoded and
	// translated code, which the next step would have to rebuild.
	if w, ok := kp.readUserInsn(mm, xolVaddr); !ok || w != up.insn {
		if err := kp.writeUserInsn(mm, xolVaddr, up.insn); err != nil {
			return answer(kernel.DbgHookError)
		}
	}
	area.used[slot] = true
	ut.active, ut.vaddr, ut.xolVaddr = up, bp, xolVaddr
	regs.PC = xolVaddr
	if err := kp.writeRegs(regsAddr, regs); err != nil {
		return answer(kernel.DbgHookError)
	}
	return answer(kernel.UprobeStep)
}

// simulateUser runs a no-slot instruction on regs; a literal load reads
// the process's memory.
func (kp *Kprobes) simulateUser(cpu *machine.CPU, op uint32, addr uint64, regs *Regs) bool {
	switch {
	case insnLDRLit.is(op), insnLDRSWLit.is(op):
		n := 4
		if insnLDRLit.is(op) && op&(1<<30) != 0 {
			n = 8
		}
		var b [8]byte
		if cpu.ReadVirt(literalAddr(op, addr), b[:n]) != nil {
			return false
		}
		v := binary.LittleEndian.Uint64(b[:])
		if insnLDRSWLit.is(op) {
			v = uint64(int64(int32(v)))
		}
		setX(regs, op&0x1f, v)
		regs.PC = addr + 4
		return true
	}
	sim := simulatorFor(op)
	return sim != nil && sim(kp, op, addr, regs)
}

// What prepareUretprobe did.
type uretResult int

const (
	uretSet     uretResult = iota // x30 is the trampoline
	uretTooDeep                   // MAX_URETPROBE_DEPTH returns pending already
	uretNoChain                   // x30 is the trampoline but nothing is pending
)

// prepareUretprobe is prepare_uretprobe with
// arch_uretprobe_hijack_return_addr: x30 becomes the trampoline, and the
// return is pushed; u.mu is held.
func prepareUretprobe(ut *uprobeTask, up *uprobe, bp, tramp uint64, regs *Regs) uretResult {
	if len(ut.rets) >= maxUretprobeDepth {
		return uretTooDeep
	}
	orig := regs.X[30]
	regs.X[30] = tramp
	// cleanup_return_instances: the ones a longjmp left. A tail call
	// (x30 is the trampoline already) runs on its caller's frame: alive
	// at the same sp (RP_CHECK_CHAIN_CALL), else below it (RP_CHECK_CALL).
	chained := orig == tramp
	for len(ut.rets) > 0 {
		top := ut.rets[len(ut.rets)-1].stack
		if regs.SP < top || chained && regs.SP == top {
			break
		}
		ut.rets = ut.rets[:len(ut.rets)-1]
	}
	if chained {
		if len(ut.rets) == 0 {
			return uretNoChain
		}
		orig = ut.rets[len(ut.rets)-1].origRet
	}
	ut.rets = append(ut.rets, returnInstance{up: up, fn: bp, origRet: orig, stack: regs.SP, chained: chained})
	return uretSet
}

// handleTrampoline is handle_trampoline: the return of the latest
// uretprobed function (and of the ones chained to it); u.mu is held.
func (kp *Kprobes) handleTrampoline(task, mm uint64, regs *Regs) uint64 {
	return handleTrampoline(kp.uprobes.tasks[task], mm, regs)
}

func handleTrampoline(ut *uprobeTask, mm uint64, regs *Regs) uint64 {
	if ut == nil || ut.mm != mm {
		return kernel.DbgHookError
	}
	// The ones whose frames are gone (RP_CHECK_RET).
	for len(ut.rets) > 0 && !(regs.SP <= ut.rets[len(ut.rets)-1].stack) {
		ut.rets = ut.rets[:len(ut.rets)-1]
	}
	if len(ut.rets) == 0 {
		return kernel.DbgHookError
	}
	for {
		ri := ut.rets[len(ut.rets)-1]
		ut.rets = ut.rets[:len(ut.rets)-1]
		regs.PC = ri.origRet
		for _, c := range ri.up.consumers {
			if c.RetHandler != nil {
				c.RetHandler(c, ri.fn, regs)
			}
		}
		if !ri.chained || len(ut.rets) == 0 {
			break
		}
	}
	return kernel.DbgHookHandled
}

// hcUprobeSS is handle_singlestep: x0 the user pt_regs, x1 the ESR, x2
// the mm.
func (kp *Kprobes) hcUprobeSS(cpu *machine.CPU) error {
	regsAddr, mm := cpu.X(0), cpu.X(2)
	answer := func(v uint64) error { cpu.SetX(0, v); return nil }
	regs, err := kp.readRegs(regsAddr)
	if err != nil {
		return answer(kernel.DbgHookError)
	}
	task := kp.k.CurrentTask(cpu.Index())
	u := &kp.uprobes
	u.mu.Lock()
	defer u.mu.Unlock()
	ut := u.tasks[task]
	if ut == nil || ut.mm != mm || ut.active == nil {
		return answer(kernel.DbgHookError)
	}
	ret := uint64(kernel.DbgHookHandled)
	switch regs.PC {
	case ut.xolVaddr:
		// Back from an exception the instruction took (a page fault)
		// before it completed: step it again.
		return answer(kernel.UprobeRewind)
	case ut.xolVaddr + 4:
		regs.PC = ut.vaddr + 4 // arch_uprobe_post_xol
	default:
		// arch_uprobe_abort_xol: the instruction trapped.
		regs.PC = ut.vaddr
		ret = kernel.DbgHookError
	}
	if area := u.areas[mm]; area != nil && ut.xolVaddr >= area.vaddr && ut.xolVaddr < area.vaddr+4096 {
		area.used[(ut.xolVaddr-area.vaddr)/4] = false
	}
	ut.active = nil
	if err := kp.writeRegs(regsAddr, regs); err != nil {
		return answer(kernel.DbgHookError)
	}
	return answer(ret)
}
