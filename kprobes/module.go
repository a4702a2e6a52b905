package kprobes

import (
	"github.com/kpemu/kpemu/kernel"
)

// What kprobes does when modules come and go, after Linux 6.1's
// kprobes_module_callback, kill_kprobe and the module blacklist
// (kprobe_add_area_blacklist on the module's .kprobes.text and its
// _kprobe_blacklist). The kernel calls moduleCallback on the goroutine
// that loads or unloads, never on a vCPU: it may stop the machine.

func (kp *Kprobes) moduleCallback(ev kernel.ModuleEvent) {
	m := ev.Module
	switch ev.State {
	case kernel.ModuleComing:
		kp.addModuleBlacklist(m)
	case kernel.ModuleLive:
		// The init text is freed once init succeeded.
		kp.killProbes(m.IsInitText)
	case kernel.ModuleGoing:
		kp.dropGuestProbes(m)
		kp.killProbes(func(addr uint64) bool { return m.Contains(addr) })
		kp.removeModuleBlacklist(m.Name)
	}
}

// killProbes is kill_kprobe for every point whose address in: the point
// and each of its probes are GONE, the slot is freed, and the text, which
// is being freed, is not touched. The point stays in its bucket so that
// kprobes/list shows "[GONE]" until the probes are unregistered; it leaves
// byAddr, so that a probe registered later at the same address (the module
// loaded again) gets a fresh point, and no hit can find the dead one.
func (kp *Kprobes) killProbes(in func(addr uint64) bool) {
	kp.mu.Lock()
	defer kp.mu.Unlock()
	kp.k.StopMachine(func() {
		for _, b := range kp.buckets {
			for _, pt := range b {
				if pt.gone || !in(pt.addr) {
					continue
				}
				pt.gone = true
				pt.armed = false
				kp.listGen++
				for _, p := range pt.list() {
					p.flags |= flagGone
				}
				if kp.byAddr[pt.addr] == pt {
					kp.byAddrMu.Lock()
					delete(kp.byAddr, pt.addr)
					kp.byAddrMu.Unlock()
				}
				if pt.slot != 0 {
					kp.slots.free(pt.slot)
					pt.slot = 0
				}
				kp.log.Info("kprobes: probe gone with its module text", "addr", pt.addr)
			}
		}
	})
}

// addModuleBlacklist adds the module's NOKPROBE_SYMBOL entries and every
// symbol of its .kprobes.text, in that order, as Linux's
// add_module_kprobe_blacklist.
func (kp *Kprobes) addModuleBlacklist(m *kernel.Module) {
	syms := kp.k.Kallsyms()
	var add []BlacklistEntry
	entry := func(addr uint64) uint64 {
		if !m.IsText(addr) {
			return 0
		}
		s, off, ok := syms.LookupAddr(addr)
		if !ok || s.Module != m.Name {
			return 0
		}
		start := addr - off
		add = append(add, BlacklistEntry{Start: start, End: start + s.Size, Name: s.Name, mod: m.Name})
		return s.Size - off
	}
	for a := m.Blacklist.Start; a+8 <= m.Blacklist.End; a += 8 {
		if v, err := kp.k.ReadU64(a); err == nil {
			entry(v)
		}
	}
	for a := m.KprobesText.Start; a < m.KprobesText.End; {
		n := entry(a)
		if n == 0 {
			n = 4
		}
		a += n
	}
	if len(add) == 0 {
		return
	}
	kp.mu.Lock()
	defer kp.mu.Unlock()
	kp.blacklist = append(append([]BlacklistEntry(nil), kp.blacklist...), add...)
}

// removeModuleBlacklist drops the module's entries (on GOING).
func (kp *Kprobes) removeModuleBlacklist(mod string) {
	kp.mu.Lock()
	defer kp.mu.Unlock()
	var keep []BlacklistEntry
	for _, e := range kp.blacklist {
		if e.mod != mod {
			keep = append(keep, e)
		}
	}
	kp.blacklist = keep
}
