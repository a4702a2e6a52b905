package kernel

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"testing"
)

// TestApplyReloc checks each relocation type: the bits it writes, and its
// overflow check, on instruction words taken from real code.
func TestApplyReloc(t *testing.T) {
	// A place in the module area, relocated against kernel text and data
	// in the image, as a module's references to the kernel are.
	const (
		p     = ModulesVaddr + 0x100
		ktext = KimageVaddr + 0x80000
		kdata = KimageVaddr + 0xb8720
	)
	tests := []struct {
		name    string
		typ     elf.R_AARCH64
		insn    uint64 // the place's initial contents
		size    int
		s       uint64
		a       int64
		want    uint64
		wantErr error
	}{
		{"ABS64", elf.R_AARCH64_ABS64, 0, 8, ktext, 0x10, ktext + 0x10, nil},
		{"PREL64", elf.R_AARCH64_PREL64, 0, 8, p + 0x40, 0, 0x40, nil},
		{"ABS32", elf.R_AARCH64_ABS32, 0, 4, 0x40080000, 4, 0x40080004, nil},
		{"ABS32 too big", elf.R_AARCH64_ABS32, 0, 4, 1 << 32, 0, 0, ErrRelocRange},
		{"PREL32 back", elf.R_AARCH64_PREL32, 0, 4, p - 8, 0, 0xfffffff8, nil},
		{"PREL32 too far", elf.R_AARCH64_PREL32, 0, 4, p + 1<<33, 0, 0, ErrRelocRange},
		{"ABS16", elf.R_AARCH64_ABS16, 0, 2, 0x1234, 0, 0x1234, nil},
		{"PREL16 too far", elf.R_AARCH64_PREL16, 0, 2, p + 1<<17, 0, 0, ErrRelocRange},
		// bl: 0x94000000 | imm26
		{"CALL26 into the kernel", elf.R_AARCH64_CALL26, 0x94000000, 4, ktext, 0, 0x94000000 | callImm(ktext-p), nil},
		{"CALL26 forward", elf.R_AARCH64_CALL26, 0x94000000, 4, p + 0x100, 0, 0x94000040, nil},
		{"CALL26 beyond 128 MiB", elf.R_AARCH64_CALL26, 0x94000000, 4, p + 128<<20, 0, 0, ErrRelocRange},
		{"CALL26 just within -128 MiB", elf.R_AARCH64_CALL26, 0x94000000, 4, p - 128<<20, 0, 0x96000000, nil},
		{"JUMP26", elf.R_AARCH64_JUMP26, 0x14000000, 4, p + 8, 0, 0x14000002, nil},
		{"JUMP26 misaligned", elf.R_AARCH64_JUMP26, 0x14000000, 4, p + 2, 0, 0, ErrRelocRange},
		// b.eq: 0x54000000 | imm19<<5
		{"CONDBR19", elf.R_AARCH64_CONDBR19, 0x54000000, 4, p - 4, 0, 0x54ffffe0, nil},
		{"CONDBR19 too far", elf.R_AARCH64_CONDBR19, 0x54000000, 4, p + 1<<20, 0, 0, ErrRelocRange},
		// tbz w0, #0: 0x36000000 | imm14<<5
		{"TSTBR14", elf.R_AARCH64_TSTBR14, 0x36000000, 4, p + 16, 0, 0x36000080, nil},
		{"TSTBR14 too far", elf.R_AARCH64_TSTBR14, 0x36000000, 4, p + 1<<15, 0, 0, ErrRelocRange},
		// adrp x0: 0x90000000; page delta from the module's page to kdata's
		{"ADR_PREL_PG_HI21", elf.R_AARCH64_ADR_PREL_PG_HI21, 0x90000000, 4, kdata, 0, adrp(0x90000000, kdata&^0xfff-p&^0xfff), nil},
		{"ADR_PREL_PG_HI21 beyond 4 GiB", elf.R_AARCH64_ADR_PREL_PG_HI21, 0x90000000, 4, p + 1<<32, 0, 0, ErrRelocRange},
		{"ADR_PREL_PG_HI21_NC wraps", elf.R_AARCH64_ADR_PREL_PG_HI21_NC, 0x90000000, 4, p&^0xfff + 1<<33 + 0x1000, 0, adrp(0x90000000, 0x1000), nil},
		{"ADR_PREL_LO21", elf.R_AARCH64_ADR_PREL_LO21, 0x10000000, 4, p + 5, 0, 0x30000020, nil},
		// add x0, x0, #lo12: 0x91000000 | imm12<<10
		{"ADD_ABS_LO12_NC", elf.R_AARCH64_ADD_ABS_LO12_NC, 0x91000000, 4, kdata, 0, 0x91000000 | 0x720<<10, nil},
		{"LDST8_ABS_LO12_NC", elf.R_AARCH64_LDST8_ABS_LO12_NC, 0x39400000, 4, 0x40000fff, 0, 0x39400000 | 0xfff<<10, nil},
		{"LDST16_ABS_LO12_NC", elf.R_AARCH64_LDST16_ABS_LO12_NC, 0x79400000, 4, 0x40000ffe, 0, 0x79400000 | 0x7ff<<10, nil},
		{"LDST32_ABS_LO12_NC", elf.R_AARCH64_LDST32_ABS_LO12_NC, 0xb9400000, 4, 0x40000ffc, 0, 0xb9400000 | 0x3ff<<10, nil},
		{"LDST64_ABS_LO12_NC", elf.R_AARCH64_LDST64_ABS_LO12_NC, 0xf9400000, 4, 0x400b8728, 0, 0xf9400000 | 0xe5<<10, nil},
		{"LDST128_ABS_LO12_NC", elf.R_AARCH64_LDST128_ABS_LO12_NC, 0x3dc00000, 4, 0x40000ff0, 0, 0x3dc00000 | 0xff<<10, nil},
		// movz/movk x0: imm16 at bits 5..20
		{"MOVW_UABS_G0", elf.R_AARCH64_MOVW_UABS_G0, 0xd2800000, 4, 0xbeef, 0, 0xd2800000 | 0xbeef<<5, nil},
		{"MOVW_UABS_G0 overflow", elf.R_AARCH64_MOVW_UABS_G0, 0xd2800000, 4, 0x1beef, 0, 0, ErrRelocRange},
		{"MOVW_UABS_G0_NC", elf.R_AARCH64_MOVW_UABS_G0_NC, 0xf2800000, 4, 0x1beef, 0, 0xf2800000 | 0xbeef<<5, nil},
		{"MOVW_UABS_G1", elf.R_AARCH64_MOVW_UABS_G1, 0xd2a00000, 4, 0x40c00000, 0, 0xd2a00000 | 0x40c0<<5, nil},
		{"MOVW_UABS_G1 overflow", elf.R_AARCH64_MOVW_UABS_G1, 0xd2a00000, 4, 1 << 32, 0, 0, ErrRelocRange},
		{"MOVW_UABS_G1_NC", elf.R_AARCH64_MOVW_UABS_G1_NC, 0xf2a00000, 4, 1<<32 | 0x40c00000, 0, 0xf2a00000 | 0x40c0<<5, nil},
		{"MOVW_UABS_G2", elf.R_AARCH64_MOVW_UABS_G2, 0xd2c00000, 4, 0x1234_0000_0000, 0, 0xd2c00000 | 0x1234<<5, nil},
		{"MOVW_UABS_G2 overflow", elf.R_AARCH64_MOVW_UABS_G2, 0xd2c00000, 4, 1 << 48, 0, 0, ErrRelocRange},
		{"MOVW_UABS_G2_NC", elf.R_AARCH64_MOVW_UABS_G2_NC, 0xf2c00000, 4, 1<<48 | 0x1234_0000_0000, 0, 0xf2c00000 | 0x1234<<5, nil},
		{"MOVW_UABS_G3", elf.R_AARCH64_MOVW_UABS_G3, 0xf2e00000, 4, 0xffff_0000_0000_0000, 0, 0xf2e00000 | 0xffff<<5, nil},
		{"NONE", elf.R_AARCH64_NONE, 0x12345678, 4, 1, 0, 0x12345678, nil},
		{"unknown type", elf.R_AARCH64_TLSDESC, 0, 4, 1, 0, 0, ErrRelocType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loc := make([]byte, tt.size)
			switch tt.size {
			case 8:
				binary.LittleEndian.PutUint64(loc, tt.insn)
			case 4:
				binary.LittleEndian.PutUint32(loc, uint32(tt.insn))
			case 2:
				binary.LittleEndian.PutUint16(loc, uint16(tt.insn))
			}
			before := append([]byte(nil), loc...)
			err := applyReloc(tt.typ, loc, p, tt.s, tt.a)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				if string(loc) != string(before) {
					t.Error("a refused relocation changed the place")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got uint64
			switch tt.size {
			case 8:
				got = binary.LittleEndian.Uint64(loc)
			case 4:
				got = uint64(binary.LittleEndian.Uint32(loc))
			case 2:
				got = uint64(binary.LittleEndian.Uint16(loc))
			}
			if got != tt.want {
				t.Errorf("got %#x, want %#x", got, tt.want)
			}
		})
	}
	if err := applyReloc(elf.R_AARCH64_ABS64, make([]byte, 4), p, 0, 0); err == nil {
		t.Error("an 8-byte relocation at the end of its section was applied")
	}
}

// callImm is a bl's imm26 for a byte offset.
func callImm(delta int64) uint64 { return uint64(delta>>2) & 0x3ffffff }

// adrp returns the adrp word base with the page delta (bytes) encoded.
func adrp(base uint32, delta int64) uint64 {
	v := uint64(delta>>12) & 0x1fffff
	return uint64(base) | (v&3)<<29 | (v>>2)<<5
}
