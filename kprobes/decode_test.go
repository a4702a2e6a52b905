package kprobes

import "testing"

func TestDecodeInsn(t *testing.T) {
	tests := []struct {
		name string
		insn uint32
		want insnClass
	}{
		{"stp x29, x30, [sp, #-32]!", 0xa9be7bfd, insnGood},
		{"mov x29, sp", 0x910003fd, insnGood},
		{"ldr x0, [x1]", 0xf9400020, insnGood},
		{"add x0, x1, x2", 0x8b020020, insnGood},
		{"nop", 0xd503201f, insnGood},
		{"paciasp", 0xd503233f, insnGood},
		{"bti c", 0xd503245f, insnGood},
		{"dmb ish", 0xd5033bbf, insnGood},
		{"mrs x0, tpidr_el1", 0xd538d080, insnGood},
		{"b .+64", 0x14000010, insnGoodNoSlot},
		{"bl .+64", 0x94000010, insnGoodNoSlot},
		{"b.eq .+8", 0x54000040, insnGoodNoSlot},
		{"cbz x0, .+8", 0xb4000040, insnGoodNoSlot},
		{"cbnz w0, .+8", 0x35000040, insnGoodNoSlot},
		{"tbz w0, #0, .+8", 0x36000040, insnGoodNoSlot},
		{"tbnz x0, #63, .+8", 0xb7f80040, insnGoodNoSlot},
		{"adr x0, .", 0x10000000, insnGoodNoSlot},
		{"adrp x0, .", 0x90000000, insnGoodNoSlot},
		{"br x0", 0xd61f0000, insnGoodNoSlot},
		{"blr x1", 0xd63f0020, insnGoodNoSlot},
		{"ret", 0xd65f03c0, insnGoodNoSlot},
		{"ldr x0, literal", 0x58000040, insnGoodNoSlot},
		{"ldr w0, literal", 0x18000040, insnGoodNoSlot},
		{"ldrsw x0, literal", 0x98000040, insnGoodNoSlot},
		{"prfm literal", 0xd8000040, insnRejected},
		{"msr daifset, #0xf", 0xd5034fdf, insnRejected},
		{"msr vbar_el1, x0", 0xd518c000, insnRejected},
		{"mrs x0, daif", 0xd53b4220, insnRejected},
		{"svc #0", 0xd4000001, insnRejected},
		{"hvc #0", 0xd4000002, insnRejected},
		{"brk #4", 0xd4200080, insnRejected},
		{"eret", 0xd69f03e0, insnRejected},
		{"wfi", 0xd503207f, insnRejected},
		{"yield", 0xd503203f, insnRejected},
		{"ldxr x0, [x1]", 0xc85f7c20, insnRejected},
		{"stxr w2, x0, [x1]", 0xc8027c20, insnRejected},
		{"ldaxr w0, [x1]", 0x885ffc20, insnRejected},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := decodeInsn(tt.insn); got != tt.want {
				t.Errorf("decodeInsn(%#08x) = %v, want %v", tt.insn, got, tt.want)
			}
		})
	}
}

func TestDecodeAtomicContext(t *testing.T) {
	const (
		ldxr = 0xc85f7c20
		stxr = 0xc8027c20
		add  = 0x8b020020
	)
	tests := []struct {
		name string
		prev []uint32 // prev[0] is the instruction just before the probe
		want insnClass
	}{
		{"no exclusive", []uint32{add, add}, insnGood},
		{"inside ldxr..stxr", []uint32{add, ldxr, add}, insnRejected},
		{"after the stxr", []uint32{stxr, add, ldxr}, insnGood},
		{"ldxr beyond 32 instructions", append(make32(add), ldxr), insnGood},
		{"function start stops the scan", nil, insnGood},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prev := func(i int) (uint32, bool) {
				if i > len(tt.prev) {
					return 0, false
				}
				return tt.prev[i-1], true
			}
			if got := decodeAtAddr(add, prev); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func make32(insn uint32) []uint32 {
	s := make([]uint32, maxAtomicContext)
	for i := range s {
		s[i] = insn
	}
	return s
}

func TestKstrToBool(t *testing.T) {
	// The matrix Linux 6.1 returned for writes to kprobes/enabled.
	tests := []struct {
		in   string
		want bool
		err  bool
	}{
		{"1", true, false}, {"1\n", true, false}, {"10", true, false}, {"1abc", true, false},
		{"1\n\n", true, false}, {"y", true, false}, {"Y", true, false}, {"yes", true, false},
		{"t", true, false}, {"true", true, false}, {"on", true, false}, {"On", true, false},
		{"y\x00", true, false},
		{"0", false, false}, {"0\n", false, false}, {"01", false, false}, {"0x1", false, false},
		{"n", false, false}, {"N", false, false}, {"no", false, false}, {"f", false, false},
		{"false", false, false}, {"off", false, false}, {"OFF", false, false}, {"of", false, false},
		{"2", false, true}, {"-1", false, true}, {"abc", false, true}, {"o", false, true},
		{"ox", false, true}, {" 1", false, true}, {"\n", false, true}, {"\x00", false, true},
		{"", false, true}, {"e", false, true}, {"d", false, true},
	}
	for _, tt := range tests {
		got, err := KstrToBool([]byte(tt.in))
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("KstrToBool(%q) = %v, %v; want %v, err %v", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func TestListEntryString(t *testing.T) {
	tests := []struct {
		e    ListEntry
		want string
	}{
		{ListEntry{Addr: 0xffffc357819ab520, Type: TypeKprobe, Symbol: "vfs_read"}, "ffffc357819ab520  k  vfs_read+0x0    \n"},
		{ListEntry{Addr: 0xffffc357819ab528, Type: TypeKprobe, Symbol: "vfs_read", Offset: 8, Disabled: true}, "ffffc357819ab528  k  vfs_read+0x8    [DISABLED]\n"},
		{ListEntry{Addr: 0xffffc3577a766250, Type: TypeKprobe, Symbol: "dummy_dev_init", Module: "dummy"}, "ffffc3577a766250  k  dummy_dev_init+0x0  dummy \n"},
		{ListEntry{Addr: 0xffffc3577a766250, Type: TypeKprobe, Symbol: "dummy_get_stats64", Module: "dummy", Disabled: true}, "ffffc3577a766250  k  dummy_get_stats64+0x0  dummy [DISABLED]\n"},
		{ListEntry{Addr: 0xffffc3577a766250, Type: TypeKprobe, Gone: true, Disabled: true}, "ffffc3577a766250  k  0xffffc3577a766250 [GONE]\n"},
		{ListEntry{Addr: 0x40081a3c, Type: TypeKprobe, Symbol: "vfs_read", Offset: 0x1c}, "0000000040081a3c  k  vfs_read+0x1c    \n"},
	}
	for _, tt := range tests {
		if got := tt.e.String(); got != tt.want {
			t.Errorf("got  %q\nwant %q", got, tt.want)
		}
	}
}

func TestHashPtr(t *testing.T) {
	// hash_64_generic(val, 6) = val * GOLDEN_RATIO_64 >> 58.
	for _, a := range []uint64{0, 0x40081a3c, 0xffffc357819ab520, ^uint64(0)} {
		want := int((a * 0x61C8864680B583EB) >> 58)
		if got := hashPtr(a); got != want || got < 0 || got > 63 {
			t.Errorf("hashPtr(%#x) = %d, want %d", a, got, want)
		}
	}
}
