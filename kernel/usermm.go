package kernel

import (
	"debug/dwarf"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"sync"
	"syscall"
)

// The guest's address spaces, from the host: the mm_struct of every task,
// its VMAs (a program's segments name the file they map, as Linux's
// vm_file and vm_pgoff) and its page tables. Uprobes (kprobes/uprobes.go)
// need them to find the pages that map a probed file offset, as Linux's
// register_for_each_vma walks the file's i_mmap. Layouts come from the
// image's DWARF, read the first time they are needed.

// VMA is one of an mm's vm_area_structs.
type VMA struct {
	Start, End uint64 // [vm_start, vm_end)
	Flags      uint64 // vm_flags (VMExec, VMDontCopy, ...)
	File       uint64 // vm_file: the struct inode a program's segment maps, else 0
	Pgoff      uint64 // vm_pgoff: the page of File at Start
}

// vm_flags bits (the guest's linux/mm.h, as Linux's).
const (
	VMExec     = 0x4
	VMDontCopy = 0x20000
)

// mmLayout is where the guest keeps what the walks read.
type mmLayout struct {
	taskMm                         int64 // task_struct.mm
	mmPgd, mmVmas, mmXol           int64 // mm_struct.pgd, .vmas, .xol_vaddr
	nVmas, vmaSize                 int64 // the vmas array
	vmStart, vmEnd, vmFlags        int64 // vm_area_struct
	vmFile, vmPgoff                int64
	iSize, iPrivate, iPages        int64 // inode.i_size, .i_private, .i_pages (-1: none)
	tasksOff                       int64 // task_struct.tasks
	initTask                       uint64
	pteAddrMask, pteValid, pteType uint64
}

type guestMms struct {
	once sync.Once
	l    mmLayout
	err  error
}

func (k *Kernel) mmLayout() (*mmLayout, error) {
	g := &k.mms
	g.once.Do(func() { g.l, g.err = readMmLayout(k.paths.img, k.syms) })
	if g.err != nil {
		return nil, g.err
	}
	return &g.l, nil
}

func readMmLayout(img io.ReaderAt, syms *Kallsyms) (mmLayout, error) {
	var l mmLayout
	missing := func(what string) error {
		return fmt.Errorf("%w: %w: no %s in the image (needed for uprobes)", ErrBadImage, syscall.EOPNOTSUPP, what)
	}
	d, err := imageDWARF(img)
	if err != nil {
		return l, err
	}
	types := findStructs(d, "task_struct", "mm_struct", "vm_area_struct", "inode")
	var t dwarf.Type
	for _, fl := range []struct {
		st, path string
		off      *int64
	}{
		{"task_struct", "mm", &l.taskMm},
		{"task_struct", "tasks", &l.tasksOff},
		{"mm_struct", "pgd", &l.mmPgd},
		{"mm_struct", "xol_vaddr", &l.mmXol},
		{"vm_area_struct", "vm_start", &l.vmStart},
		{"vm_area_struct", "vm_end", &l.vmEnd},
		{"vm_area_struct", "vm_flags", &l.vmFlags},
		{"vm_area_struct", "vm_file", &l.vmFile},
		{"vm_area_struct", "vm_pgoff", &l.vmPgoff},
		{"inode", "i_size", &l.iSize},
		{"inode", "i_private", &l.iPrivate},
	} {
		s := types[fl.st]
		if s == nil {
			return l, missing("struct " + fl.st + " in DWARF")
		}
		off, _, ok := fieldOffset(s, strings.Split(fl.path, ".")...)
		if !ok {
			return l, missing(fl.st + "." + fl.path + " in DWARF")
		}
		*fl.off = off
	}
	var ok bool
	// An image whose exec copies every program has no i_pages: FilePage
	// finds none.
	if l.iPages, _, ok = fieldOffset(types["inode"], "i_pages"); !ok {
		l.iPages = -1
	}
	if l.mmVmas, t, ok = fieldOffset(types["mm_struct"], "vmas"); !ok {
		return l, missing("mm_struct.vmas in DWARF")
	}
	at, isArray := underlying(t).(*dwarf.ArrayType)
	if !isArray || at.Count <= 0 {
		return l, missing("an array mm_struct.vmas")
	}
	l.nVmas, l.vmaSize = at.Count, at.Type.Size()
	sym, found := syms.LookupName("init_task")
	if !found {
		return l, missing("symbol init_task")
	}
	l.initTask = sym.Addr
	// asm/pgtable.h: PTE_ADDR_MASK, PTE_VALID, PTE_TYPE_TABLE (macros,
	// which DWARF does not record; the architecture's encodings).
	l.pteAddrMask, l.pteValid, l.pteType = 0x0000fffffffff000, 1, 3
	return l, nil
}

// UserMms returns the distinct address spaces of the tasks on the task
// list (kernel threads have none). The caller has stopped the machine.
func (k *Kernel) UserMms() ([]uint64, error) {
	l, err := k.mmLayout()
	if err != nil {
		return nil, err
	}
	seen := map[uint64]bool{}
	var out []uint64
	at := l.initTask + uint64(l.tasksOff)
	for next, n := at, 0; n < maxTasks; n++ {
		v, err := k.Read64(next)
		if err != nil {
			return out, fmt.Errorf("walking the task list: %w", err)
		}
		if v == at {
			break
		}
		next = v
		mm, err := k.Read64(v - uint64(l.tasksOff) + uint64(l.taskMm))
		if err != nil {
			return out, fmt.Errorf("reading a task's mm: %w", err)
		}
		if mm != 0 && !seen[mm] {
			seen[mm] = true
			out = append(out, mm)
		}
	}
	return out, nil
}

// MmVMAs returns mm's VMAs in use (vm_flags not 0).
func (k *Kernel) MmVMAs(mm uint64) ([]VMA, error) {
	l, err := k.mmLayout()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, l.nVmas*l.vmaSize)
	if err := k.ReadMem(mm+uint64(l.mmVmas), buf); err != nil {
		return nil, fmt.Errorf("reading the VMAs of mm %#x: %w", mm, err)
	}
	var out []VMA
	for i := int64(0); i < l.nVmas; i++ {
		b := buf[i*l.vmaSize:]
		u := func(off int64) uint64 { return binary.LittleEndian.Uint64(b[off:]) }
		v := VMA{Start: u(l.vmStart), End: u(l.vmEnd), Flags: u(l.vmFlags), File: u(l.vmFile), Pgoff: u(l.vmPgoff)}
		if v.Flags != 0 {
			out = append(out, v)
		}
	}
	return out, nil
}

// MmXolVaddr returns the address of mm's [uprobes] page, 0 if it has none.
func (k *Kernel) MmXolVaddr(mm uint64) (uint64, error) {
	l, err := k.mmLayout()
	if err != nil {
		return 0, err
	}
	return k.Read64(mm + uint64(l.mmXol))
}

// UserPhys walks mm's page tables (the guest's three levels for its one
// gigabyte of user space: pgd[0], then the level 2 and level 3 tables)
// and returns the physical address va maps; false when no page is mapped
// there.
func (k *Kernel) UserPhys(mm, va uint64) (uint64, bool, error) {
	l, err := k.mmLayout()
	if err != nil {
		return 0, false, err
	}
	if va >= TaskSize {
		return 0, false, nil
	}
	pgd, err := k.Read64(mm + uint64(l.mmPgd))
	if err != nil {
		return 0, false, fmt.Errorf("reading mm %#x's pgd: %w", mm, err)
	}
	entry, err := k.Read64(pgd)
	if err != nil {
		return 0, false, fmt.Errorf("reading mm %#x's pgd[0]: %w", mm, err)
	}
	for _, shift := range []uint{21, 12} {
		if entry&l.pteType != l.pteType {
			return 0, false, nil
		}
		var b [8]byte
		pa := entry&l.pteAddrMask + (va>>shift&511)*8
		if err := k.m.ReadMem(pa, b[:]); err != nil {
			return 0, false, fmt.Errorf("reading mm %#x's tables: %w", mm, err)
		}
		entry = binary.LittleEndian.Uint64(b[:])
	}
	if entry&l.pteValid == 0 {
		return 0, false, nil
	}
	return entry&l.pteAddrMask | va&0xfff, true, nil
}

// WritePhys writes p at guest physical address pa; the machine drops the
// decoded copies of the pages it touches (text patching of user pages).
func (k *Kernel) WritePhys(pa uint64, p []byte) error { return k.m.WriteMem(pa, p) }

// FilePage returns the kernel address of page idx of a read-only guest
// file as exec maps it, shared by every process that runs the file
// (inode->i_pages[idx], fs/exec.c's text_page), or 0 if no exec made it.
func (k *Kernel) FilePage(inode, idx uint64) (uint64, error) {
	l, err := k.mmLayout()
	if err != nil {
		return 0, err
	}
	if l.iPages < 0 {
		return 0, nil
	}
	_, size, err := k.FileData(inode)
	if err != nil {
		return 0, err
	}
	pages, err := k.Read64(inode + uint64(l.iPages))
	if err != nil || pages == 0 || idx >= (size+4095)/4096 {
		return 0, err
	}
	return k.Read64(pages + idx*8)
}

// ReadPhys reads guest physical memory at pa.
func (k *Kernel) ReadPhys(pa uint64, p []byte) error { return k.m.ReadMem(pa, p) }

// FileData returns where a guest file's bytes are (inode->i_private, a
// kernel address; the initramfs's programs keep theirs there) and its size.
func (k *Kernel) FileData(inode uint64) (data, size uint64, err error) {
	l, err := k.mmLayout()
	if err != nil {
		return 0, 0, err
	}
	if data, err = k.Read64(inode + uint64(l.iPrivate)); err != nil {
		return 0, 0, err
	}
	if size, err = k.Read64(inode + uint64(l.iSize)); err != nil {
		return 0, 0, err
	}
	return data, size, nil
}
