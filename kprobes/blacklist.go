package kprobes

import (
	"fmt"
	"strings"

	"github.com/kpemu/kpemu/kernel"
)

// BlacklistEntry is one range kprobes refuses, as struct
// kprobe_blacklist_entry.
type BlacklistEntry struct {
	Start, End uint64
	Name       string

	mod string // the module the entry belongs to, "" for the kernel
}

// Module is the module whose entry this is, "" for the core kernel.
func (e BlacklistEntry) Module() string { return e.mod }

// String formats the entry as kprobes/blacklist does: "0x%px-0x%px\t%ps\n"
// (%ps of a module symbol adds " [mod]").
func (e BlacklistEntry) String() string {
	if e.mod != "" {
		return fmt.Sprintf("0x%016x-0x%016x\t%s [%s]\n", e.Start, e.End, e.Name, e.mod)
	}
	return fmt.Sprintf("0x%016x-0x%016x\t%s\n", e.Start, e.End, e.Name)
}

// populateBlacklist is populate_kprobe_blacklist: the NOKPROBE_SYMBOL
// entries first, then every symbol in .kprobes.text, then the arch areas
// (arm64's arch_populate_kprobe_blacklist: the entry text, then the irq
// entry text), in that order.
func populateBlacklist(k *kernel.Kernel) []BlacklistEntry {
	syms := k.Kallsyms()
	l := k.Layout()
	var out []BlacklistEntry
	add := func(addr uint64) uint64 {
		if !k.IsText(addr) {
			return 0
		}
		s, off, ok := syms.LookupAddr(addr)
		if !ok {
			return 0
		}
		start := addr - off
		out = append(out, BlacklistEntry{Start: start, End: start + s.Size, Name: s.Name})
		return s.Size - off
	}
	for a := l.Blacklist.Start; a+8 <= l.Blacklist.End; a += 8 {
		v, err := k.ReadU64(a)
		if err == nil {
			add(v)
		}
	}
	area := func(r kernel.Range) {
		for a := r.Start; a < r.End; {
			n := add(a)
			if n == 0 {
				n = 4
			}
			a += n
		}
	}
	area(l.KprobesText)
	area(l.EntryText)
	area(l.IrqEntryText)
	return out
}

// withinBlacklist is within_kprobe_blacklist.
func (kp *Kprobes) withinBlacklist(addr uint64) (BlacklistEntry, bool) {
	l := kp.k.Layout()
	if l.KprobesText.Contains(addr) {
		s, _, _ := kp.k.Kallsyms().LookupAddr(addr)
		return BlacklistEntry{Start: l.KprobesText.Start, End: l.KprobesText.End, Name: s.Name}, true
	}
	if m, _, ok := kp.k.ModuleAt(addr); ok && m.KprobesText.Contains(addr) {
		s, _, _ := kp.k.Kallsyms().LookupAddr(addr)
		return BlacklistEntry{Start: m.KprobesText.Start, End: m.KprobesText.End, Name: s.Name, mod: m.Name}, true
	}
	for _, e := range kp.blacklist {
		if addr >= e.Start && addr < e.End {
			return e, true
		}
	}
	// foo.isra.0 is blacklisted when foo is.
	if s, _, ok := kp.k.Kallsyms().LookupAddr(addr); ok {
		if i := strings.IndexByte(s.Name, '.'); i > 0 {
			base := s.Name[:i]
			for _, e := range kp.blacklist {
				if e.Name == base && e.mod == s.Module {
					return e, true
				}
			}
		}
	}
	return BlacklistEntry{}, false
}

// Blacklist returns the blacklist in kprobes/blacklist order.
func (kp *Kprobes) Blacklist() []BlacklistEntry {
	kp.mu.Lock()
	defer kp.mu.Unlock()
	return append([]BlacklistEntry(nil), kp.blacklist...)
}
