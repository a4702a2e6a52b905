package kernel

import (
	"debug/elf"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// Symbol is one kallsyms entry.
type Symbol struct {
	Name    string
	Addr    uint64
	Size    uint64 // distance to the next symbol, as Linux's kallsyms computes it
	ObjSize uint64 // the ELF st_size: what the compiler says the object is
	Type    byte   // /proc/kallsyms type letter: T/t text, D/d data, R/r rodata, B/b bss
	Module  string // "" for the core kernel
}

// Kallsyms is the symbol table of the running kernel, sorted by address:
// the core image's symbols and those of the loaded modules. It is safe for
// concurrent use. A table is never changed in place: loading or unloading
// a module builds a new one and swaps a pointer (copy on write), so that
// lookups, which the probe hit path and tracing make, take no lock, and a
// slice that Symbols returned stays valid.
type Kallsyms struct {
	mu  sync.Mutex // serialises writers
	tab atomic.Pointer[symTable]
}

type symTable struct {
	syms   []Symbol
	byName map[string][]int
	gen    uint64 // the table's place in the sequence of tables
}

func newSymTable(syms []Symbol) *symTable {
	sort.SliceStable(syms, func(i, j int) bool {
		if syms[i].Addr != syms[j].Addr {
			return syms[i].Addr < syms[j].Addr
		}
		return rank(syms[i]) < rank(syms[j])
	})
	t := &symTable{syms: syms, byName: make(map[string][]int)}
	for i, s := range syms {
		t.byName[s.Name] = append(t.byName[s.Name], i)
	}
	return t
}

// addModule adds a module's symbols (their Module set to mod, their sizes
// computed by the caller). It refuses a module that has symbols already.
func (k *Kallsyms) addModule(mod string, syms []Symbol) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	old := k.tab.Load()
	for _, s := range old.syms {
		if s.Module == mod {
			return fmt.Errorf("kallsyms: module %s already has symbols", mod)
		}
	}
	all := make([]Symbol, 0, len(old.syms)+len(syms))
	all = append(all, old.syms...)
	for _, s := range syms {
		s.Module = mod
		all = append(all, s)
	}
	k.store(newSymTable(all))
	return nil
}

// removeModule drops every symbol of mod.
func (k *Kallsyms) removeModule(mod string) {
	k.removeModuleSymbols(mod, func(Symbol) bool { return true })
}

// removeModuleSymbols drops the symbols of mod for which drop is true.
func (k *Kallsyms) removeModuleSymbols(mod string, drop func(Symbol) bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	old := k.tab.Load()
	all := make([]Symbol, 0, len(old.syms))
	for _, s := range old.syms {
		if s.Module != mod || !drop(s) {
			all = append(all, s)
		}
	}
	k.store(newSymTable(all))
}

// store installs t as the table after the current one; k.mu is held.
func (k *Kallsyms) store(t *symTable) {
	t.gen = k.tab.Load().gen + 1
	k.tab.Store(t)
}

// Generation changes whenever the table does (a module's symbols come or
// go): what was rendered from a lookup is current while it is unchanged.
func (k *Kallsyms) Generation() uint64 { return k.tab.Load().gen }

// newKallsyms builds the table from an ELF symbol table. Mapping symbols
// ($x, $d), section and file symbols are dropped, as Linux's kallsyms does.
// Sizes follow Linux: the distance to the next symbol's address, so that an
// address always resolves to the nearest preceding symbol.
func newKallsyms(f *elf.File) (*Kallsyms, error) {
	esyms, err := f.Symbols()
	if err != nil {
		return nil, fmt.Errorf("reading ELF symbol table: %w", err)
	}
	var syms []Symbol
	for _, s := range esyms {
		if s.Name == "" || strings.HasPrefix(s.Name, "$") || s.Section == elf.SHN_UNDEF || s.Section == elf.SHN_ABS {
			continue
		}
		st := elf.ST_TYPE(s.Info)
		if st == elf.STT_SECTION || st == elf.STT_FILE {
			continue
		}
		if int(s.Section) >= len(f.Sections) {
			continue
		}
		sec := f.Sections[s.Section]
		if sec.Flags&elf.SHF_ALLOC == 0 {
			continue
		}
		syms = append(syms, Symbol{Name: s.Name, Addr: s.Value, ObjSize: s.Size, Type: symType(sec, elf.ST_BIND(s.Info))})
	}
	if len(syms) == 0 {
		return nil, fmt.Errorf("ELF has no allocated symbols")
	}
	// Sort by address; at one address prefer functions and globals first so
	// that address lookups name what a reader expects (vfs_read, not a label).
	t := newSymTable(syms)
	syms = t.syms
	for i := range syms {
		// The next symbol at a different address bounds this one.
		for j := i + 1; j < len(syms); j++ {
			if syms[j].Addr != syms[i].Addr {
				syms[i].Size = syms[j].Addr - syms[i].Addr
				break
			}
		}
	}
	k := &Kallsyms{}
	k.tab.Store(t)
	return k, nil
}

func rank(s Symbol) int {
	if s.Module != "" {
		// A module's aliases resolve to the first in its symbol table
		// (find_kallsyms_symbol), where locals come first: init_module
		// yields to the static function that module_init() aliases.
		return 0
	}
	r := 0
	if s.Type >= 'a' { // local
		r++
	}
	if strings.HasPrefix(s.Name, "__") || strings.HasPrefix(s.Name, "_") {
		r += 2 // bracket symbols (_stext, __kprobes_text_start) yield to functions
	}
	return r
}

func symType(sec *elf.Section, bind elf.SymBind) byte {
	var t byte
	switch {
	case sec.Flags&elf.SHF_EXECINSTR != 0:
		t = 'T'
	case sec.Type == elf.SHT_NOBITS:
		t = 'B'
	case sec.Flags&elf.SHF_WRITE != 0:
		t = 'D'
	default:
		t = 'R'
	}
	if bind == elf.STB_LOCAL {
		t += 'a' - 'A'
	}
	return t
}

// Symbols returns every symbol, sorted by address. The slice must not be
// modified; it is a snapshot, unchanged by later module loads.
func (k *Kallsyms) Symbols() []Symbol { return k.tab.Load().syms }

// Lookup returns every symbol with the given name (static functions may share one).
func (k *Kallsyms) Lookup(name string) []Symbol {
	t := k.tab.Load()
	idx := t.byName[name]
	out := make([]Symbol, len(idx))
	for i, j := range idx {
		out[i] = t.syms[j]
	}
	return out
}

// LookupName returns the first symbol with the given name, as Linux's
// kallsyms_lookup_name does. "MOD:SYM" names SYM in module MOD only.
func (k *Kallsyms) LookupName(name string) (Symbol, bool) {
	if mod, sym, ok := strings.Cut(name, ":"); ok {
		return k.LookupModuleName(mod, sym)
	}
	t := k.tab.Load()
	idx := t.byName[name]
	if len(idx) == 0 {
		return Symbol{}, false
	}
	return t.syms[idx[0]], true
}

// LookupModuleName returns the symbol name of module mod ("" for the core
// kernel), as Linux's module_kallsyms_lookup_name does for "mod:sym".
func (k *Kallsyms) LookupModuleName(mod, name string) (Symbol, bool) {
	t := k.tab.Load()
	for _, i := range t.byName[name] {
		if t.syms[i].Module == mod {
			return t.syms[i], true
		}
	}
	return Symbol{}, false
}

// LookupAddr returns the symbol containing addr and the offset into it
// (Linux's kallsyms_lookup_size_offset). An address past the last symbol's
// end is not found.
func (k *Kallsyms) LookupAddr(addr uint64) (Symbol, uint64, bool) {
	syms := k.tab.Load().syms
	i := sort.Search(len(syms), func(i int) bool { return syms[i].Addr > addr })
	if i == 0 {
		return Symbol{}, 0, false
	}
	// Step back over aliases to the preferred name at that address.
	j := i - 1
	for j > 0 && syms[j-1].Addr == syms[j].Addr {
		j--
	}
	s := syms[j]
	if addr-s.Addr >= max(s.Size, 1) {
		return Symbol{}, 0, false
	}
	return s, addr - s.Addr, true
}

// Format renders addr as Linux's %pS does: sym+0xoff/0xsize, or the raw
// address in hex when no symbol contains it.
func (k *Kallsyms) Format(addr uint64) string {
	s, off, ok := k.LookupAddr(addr)
	if !ok {
		return fmt.Sprintf("0x%x", addr)
	}
	name := s.Name
	if s.Module != "" {
		return fmt.Sprintf("%s+0x%x/0x%x [%s]", name, off, s.Size, s.Module)
	}
	return fmt.Sprintf("%s+0x%x/0x%x", name, off, s.Size)
}

// FormatReturn renders a return address as Linux's %pB does: the symbol
// is looked up at addr-1, so that a call that ends a function (a noreturn
// call) names the caller rather than the next function.
func (k *Kallsyms) FormatReturn(addr uint64) string {
	s, off, ok := k.LookupAddr(addr - 1)
	if !ok {
		return fmt.Sprintf("0x%x", addr)
	}
	off++
	if s.Module != "" {
		return fmt.Sprintf("%s+0x%x/0x%x [%s]", s.Name, off, s.Size, s.Module)
	}
	return fmt.Sprintf("%s+0x%x/0x%x", s.Name, off, s.Size)
}
