package kernel

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
)

// The AArch64 relocations a module object may carry, as Linux's
// arch/arm64/kernel/module.c applies them (apply_relocate_add), with the
// overflow checks of the ELF for the Arm 64-bit Architecture (AAELF64).
// S is the symbol's address, A the addend, P the address of the place.

// ErrRelocRange is wrapped by a relocation whose value does not fit its
// field (Linux: "overflow in relocation type %d val %Lx", -ENOEXEC).
var ErrRelocRange = errors.New("relocation out of range")

// ErrRelocType is wrapped for a relocation type the loader does not know
// (Linux: "unsupported RELA relocation: %llu", -ENOEXEC).
var ErrRelocType = errors.New("unsupported relocation")

// applyReloc patches the place loc (at address p) for a relocation of
// type typ with value s+a. loc must hold the whole field: 8 bytes for the
// 64-bit data relocations, 4 for instructions and 32-bit data, 2 for
// 16-bit data.
func applyReloc(typ elf.R_AARCH64, loc []byte, p, s uint64, a int64) error {
	sa := s + uint64(a)
	need := 4
	switch typ {
	case elf.R_AARCH64_NONE:
		return nil
	case elf.R_AARCH64_ABS64, elf.R_AARCH64_PREL64:
		need = 8
	case elf.R_AARCH64_ABS16, elf.R_AARCH64_PREL16:
		need = 2
	}
	if len(loc) < need {
		return fmt.Errorf("%v at %#x: the place runs past its section", typ, p)
	}
	rangeErr := func(v int64) error {
		return fmt.Errorf("%w: %v at %#x: value %#x (target %#x)", ErrRelocRange, typ, p, v, sa)
	}
	// Data relocations.
	switch typ {
	case elf.R_AARCH64_ABS64:
		binary.LittleEndian.PutUint64(loc, sa)
		return nil
	case elf.R_AARCH64_PREL64:
		binary.LittleEndian.PutUint64(loc, sa-p)
		return nil
	case elf.R_AARCH64_ABS32:
		// -2^31 <= X < 2^32: signed or unsigned 32 bits.
		if v := int64(sa); v < -(1<<31) || v >= 1<<32 {
			return rangeErr(v)
		}
		binary.LittleEndian.PutUint32(loc, uint32(sa))
		return nil
	case elf.R_AARCH64_PREL32:
		if v := int64(sa - p); v < -(1<<31) || v >= 1<<32 {
			return rangeErr(v)
		}
		binary.LittleEndian.PutUint32(loc, uint32(sa-p))
		return nil
	case elf.R_AARCH64_ABS16:
		if v := int64(sa); v < -(1<<15) || v >= 1<<16 {
			return rangeErr(v)
		}
		binary.LittleEndian.PutUint16(loc, uint16(sa))
		return nil
	case elf.R_AARCH64_PREL16:
		if v := int64(sa - p); v < -(1<<15) || v >= 1<<16 {
			return rangeErr(v)
		}
		binary.LittleEndian.PutUint16(loc, uint16(sa-p))
		return nil
	}

	// Instruction relocations: an immediate field of the word at loc.
	insn := binary.LittleEndian.Uint32(loc)
	put := func(v uint32) { binary.LittleEndian.PutUint32(loc, v) }
	// field sets bits [lsb, lsb+width) of insn to v's low bits.
	field := func(v uint64, lsb, width uint) {
		mask := uint32(1)<<width - 1
		insn = insn&^(mask<<lsb) | (uint32(v)&mask)<<lsb
		put(insn)
	}
	// branch checks a PC-relative word offset of bits significant bits.
	branch := func(bits uint, lsb uint) error {
		v := int64(sa - p)
		if v&3 != 0 {
			return fmt.Errorf("%w: %v at %#x: target %#x is not 4-byte aligned", ErrRelocRange, typ, p, sa)
		}
		if v < -(1<<(bits-1)) || v >= 1<<(bits-1) {
			return rangeErr(v)
		}
		field(uint64(v)>>2, lsb, bits-2)
		return nil
	}
	movw := func(shift uint, check bool) error {
		if check && shift < 48 && sa>>(shift+16) != 0 {
			return rangeErr(int64(sa))
		}
		field(sa>>shift, 5, 16)
		return nil
	}
	switch typ {
	case elf.R_AARCH64_CALL26, elf.R_AARCH64_JUMP26:
		return branch(28, 0) // ±128 MiB
	case elf.R_AARCH64_CONDBR19:
		return branch(21, 5) // ±1 MiB
	case elf.R_AARCH64_TSTBR14:
		return branch(16, 5) // ±32 KiB
	case elf.R_AARCH64_ADR_PREL_PG_HI21, elf.R_AARCH64_ADR_PREL_PG_HI21_NC:
		v := int64(sa&^0xfff-p&^0xfff) >> 12
		if typ == elf.R_AARCH64_ADR_PREL_PG_HI21 && (v < -(1<<20) || v >= 1<<20) {
			return rangeErr(v << 12)
		}
		field(uint64(v)&3, 29, 2)
		field(uint64(v)>>2, 5, 19)
		return nil
	case elf.R_AARCH64_ADR_PREL_LO21:
		v := int64(sa - p)
		if v < -(1<<20) || v >= 1<<20 {
			return rangeErr(v)
		}
		field(uint64(v)&3, 29, 2)
		field(uint64(v)>>2, 5, 19)
		return nil
	case elf.R_AARCH64_ADD_ABS_LO12_NC, elf.R_AARCH64_LDST8_ABS_LO12_NC:
		field(sa&0xfff, 10, 12)
		return nil
	case elf.R_AARCH64_LDST16_ABS_LO12_NC:
		field((sa&0xfff)>>1, 10, 12)
		return nil
	case elf.R_AARCH64_LDST32_ABS_LO12_NC:
		field((sa&0xfff)>>2, 10, 12)
		return nil
	case elf.R_AARCH64_LDST64_ABS_LO12_NC:
		field((sa&0xfff)>>3, 10, 12)
		return nil
	case elf.R_AARCH64_LDST128_ABS_LO12_NC:
		field((sa&0xfff)>>4, 10, 12)
		return nil
	case elf.R_AARCH64_MOVW_UABS_G0:
		return movw(0, true)
	case elf.R_AARCH64_MOVW_UABS_G0_NC:
		return movw(0, false)
	case elf.R_AARCH64_MOVW_UABS_G1:
		return movw(16, true)
	case elf.R_AARCH64_MOVW_UABS_G1_NC:
		return movw(16, false)
	case elf.R_AARCH64_MOVW_UABS_G2:
		return movw(32, true)
	case elf.R_AARCH64_MOVW_UABS_G2_NC:
		return movw(32, false)
	case elf.R_AARCH64_MOVW_UABS_G3:
		return movw(48, false)
	}
	return fmt.Errorf("%w: %v (%d) at %#x", ErrRelocType, typ, uint32(typ), p)
}
