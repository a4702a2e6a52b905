// Package image holds kpemu's guest kernel: kpemu.elf, built from the C and
// AArch64 assembly in this directory by clang and ld.lld (see README.md and
// the Makefile), committed, and embedded here.
//
// The ELF is linked at Linux arm64's KIMAGE_VADDR (0xffff800008000000) and
// loaded at physical 0x40200000 (its segments' physical addresses; the entry
// point is physical, as the CPU starts with the MMU off), keeps its
// symbol table (the host builds kallsyms from it) and its DWARF, and exports
// the section bracket symbols the host reads: _text, _stext, _etext,
// __entry_text_start/end, __kprobes_text_start/end, __insn_slots_start/end,
// __start_kprobe_blacklist/__stop_kprobe_blacklist, __bss_start/__bss_stop,
// _end.
//
// The loadable modules are embedded too: modules/<name>/<name>.ko, ELF
// relocatable objects for kernel.Kernel.LoadModule (Module, Modules).
package image

import (
	"embed"
	"io/fs"
	"path"
	"sort"
	"strings"
)

//go:embed kpemu.elf
var elfImage string

//go:embed modules/*/*.ko
var moduleFiles embed.FS

// Module returns a fresh copy of the named module's object file, and
// whether the image has such a module.
func Module(name string) ([]byte, bool) {
	if name == "" || strings.ContainsAny(name, "/.") {
		return nil, false
	}
	b, err := moduleFiles.ReadFile(path.Join("modules", name, name+".ko"))
	if err != nil {
		return nil, false
	}
	return b, true
}

// Modules lists the embedded modules' names, sorted.
func Modules() []string {
	var names []string
	matches, _ := fs.Glob(moduleFiles, "modules/*/*.ko")
	for _, m := range matches {
		dir, file := path.Split(m)
		name := strings.TrimSuffix(file, ".ko")
		if path.Base(dir) == name {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// Reader reads the embedded image in place. Boot reads it so: a copy
// (ELF) costs a page fault for each of its 4 KiB pages, twice, which on a
// virtual machine was several milliseconds of kpemu run's start.
func Reader() *strings.Reader {
	return strings.NewReader(elfImage)
}

// ELF returns a fresh copy of the guest kernel image (an AArch64 ELF
// executable); callers may modify it.
func ELF() []byte {
	return []byte(elfImage)
}
