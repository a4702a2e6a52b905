// Package image holds kpemu's guest kernel: kpemu.elf, built from the C and
// AArch64 assembly in this directory by clang and ld.lld (see README.md and
// the Makefile), committed, and embedded here.
//
// The ELF is linked at 0x40080000 with the MMU off (VA == PA), keeps its
// symbol table (the host builds kallsyms from it) and its DWARF, and exports
// the section bracket symbols the host reads: _text, _stext, _etext,
// __entry_text_start/end, __kprobes_text_start/end, __insn_slots_start/end,
// __start_kprobe_blacklist/__stop_kprobe_blacklist, __bss_start/__bss_stop,
// _end.
package image

import _ "embed"

//go:embed kpemu.elf
var elfImage string

// ELF returns a fresh copy of the guest kernel image (an AArch64 ELF
// executable); callers may modify it.
func ELF() []byte {
	return []byte(elfImage)
}
