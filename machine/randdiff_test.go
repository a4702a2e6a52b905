package machine

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/arch/arm64/arm64asm"
)

// The random-instruction differential test: testdata/randtest.elf is a
// template with randSlots slots of randInsns instruction words (NOPs);
// for each encoding group the test fills every slot with a random
// sequence from that group, gives each slot its own seed (the program
// derives the initial registers and scratch memory from it) and FPCR,
// runs the patched image on the machine and on QEMU and compares the
// dumped register file (X0-X30, SP, NZCV, FPSR, V0-V31) and the hashes
// of the scratch buffer, slot by slot.
//
// Harness registers: x28 points at the middle of the 4 KiB scratch buffer
// and is never written, nor is SP; x27 and x26 are the base and index
// registers of generated loads and stores and are set by the instruction
// before each one (so memory accesses stay inside the buffer and are
// naturally aligned: with the MMU off memory is Device memory, where
// unaligned accesses fault).
const (
	randProg  = "testdata/randtest.elf"
	randSlots = 32
	randInsns = 64
)

// randGroups are the encoding groups; gen appends one snippet (one
// instruction, or a short fixed sequence setting up a base register).
var randGroups = []struct {
	name string
	gen  func(g *randGen)
}{
	{"int", (*randGen).genInt},
	{"ldst", (*randGen).genLdSt},
	{"lse", (*randGen).genLSE},
	{"fp", (*randGen).genFP},
	{"simd", (*randGen).genSIMD},
	{"simdsat", (*randGen).genSIMDSat},
}

type randGen struct {
	r     *rand.Rand
	words []uint32
	notes []string // for words arm64asm cannot decode
}

func (g *randGen) emit(w uint32, note string) {
	g.words = append(g.words, w)
	g.notes = append(g.notes, note)
}

func armDecode(w uint32) (arm64asm.Inst, bool) {
	in, err := arm64asm.Decode(binary.LittleEndian.AppendUint32(nil, w))
	return in, err == nil
}

// writesReserved reports whether the first operand, the destination of
// the data-processing instructions, is x28 or SP (also when it is only a
// source, as for CMP x28: that little coverage is not worth a table).
func writesReserved(in arm64asm.Inst) bool {
	switch a := in.Args[0].(type) {
	case arm64asm.Reg:
		return a == arm64asm.X28 || a == arm64asm.W28
	case arm64asm.RegSP:
		return a == arm64asm.RegSP(arm64asm.X28) || a == arm64asm.RegSP(arm64asm.W28) ||
			a == arm64asm.RegSP(arm64asm.SP) || a == arm64asm.RegSP(arm64asm.WSP)
	}
	return false
}

// excludedOp reports instructions outside the machine's architecture
// (Armv8.0 + LSE + LDAPR) that QEMU's -cpu max implements: the
// cryptographic extension (AES, SHA, 64-bit PMULL).
func excludedOp(in arm64asm.Inst) bool {
	op := in.Op.String()
	return strings.HasPrefix(op, "AES") || strings.HasPrefix(op, "SHA") ||
		strings.HasPrefix(op, "PMULL") && strings.Contains(in.String(), ".1Q")
}

// fromClass emits a random word with the fixed bits of one of the
// classes (mask, value) that arm64asm decodes and that neither writes a
// harness register nor is excluded.
func (g *randGen) fromClass(classes ...[2]uint32) {
	for {
		c := classes[g.r.IntN(len(classes))]
		w := c[1] | g.r.Uint32()&^c[0]
		if in, ok := armDecode(w); ok && !writesReserved(in) && !excludedOp(in) {
			g.emit(w, "")
			return
		}
	}
}

// genInt: data processing, immediate (PC-relative addressing, add/sub,
// logical, move wide, bitfield, extract) and register (logical and
// add/sub shifted and extended, add/sub with carry, conditional compare
// and select, 1-, 2- and 3-source incl. CRC32).
func (g *randGen) genInt() {
	g.fromClass([2]uint32{0x1c000000, 0x10000000}, [2]uint32{0x0e000000, 0x0a000000})
}

// genFP: scalar floating point (data processing 1-3 source, compare,
// conditional compare and select, immediate, conversions to and from
// integer and fixed point, FMOV).
func (g *randGen) genFP() {
	g.fromClass([2]uint32{0x5e000000, 0x1e000000})
}

// genSIMD: Advanced SIMD vector and scalar data processing (three same,
// three different, two-register misc, across lanes, copy, permute,
// extract, table lookup, modified immediate, shift by immediate, by
// element) and some scalar FP, which shares the registers.
func (g *randGen) genSIMD() {
	g.fromClass([2]uint32{0x9e000000, 0x0e000000}, [2]uint32{0xdf000000, 0x5e000000},
		[2]uint32{0x9e000000, 0x0e000000}, [2]uint32{0x5e000000, 0x1e000000})
}

// genSIMDSat: the saturating doubling multiplies, the saturating shifts
// by immediate, FCVTXN, FRECPX and the estimates, each in every vector
// and scalar form. Each is a sliver of genSIMD's encoding space, so they
// get their own group, with a class (fixed bits) per form.
func (g *randGen) genSIMDSat() {
	var classes [][2]uint32
	for _, opc := range []uint32{9, 11, 13} { // SQDMLAL, SQDMLSL, SQDMULL
		classes = append(classes, [2]uint32{0xbf20fc00, 0x0e200000 | opc<<12}, [2]uint32{0xff20fc00, 0x5e200000 | opc<<12})
	}
	for _, opc := range []uint32{3, 7, 11, 12, 13} { // the same, SQDMULH, SQRDMULH, by element
		classes = append(classes, [2]uint32{0xbf00f400, 0x0f000000 | opc<<12}, [2]uint32{0xff00f400, 0x5f000000 | opc<<12})
	}
	// SQDMULH, SQRDMULH (vector and scalar)
	classes = append(classes, [2]uint32{0x9f20fc00, 0x0e20b400}, [2]uint32{0xdf20fc00, 0x5e20b400})
	// SQSHL, UQSHL, SQSHLU (immediate); SQ[R]SHRN, SQ[R]SHRUN, UQ[R]SHRN
	for _, uo := range []uint32{0x0e, 0x2e, 0x2c, 0x12, 0x13, 0x30, 0x31, 0x32, 0x33} {
		u, opc := uo>>5, uo&31
		classes = append(classes, [2]uint32{0xbf80fc00, 0x0f000400 | u<<29 | opc<<11}, [2]uint32{0xff80fc00, 0x5f000400 | u<<29 | opc<<11})
	}
	classes = append(classes,
		[2]uint32{0xbfbffc00, 0x0ea1d800}, [2]uint32{0xffbffc00, 0x5ea1d800}, // FRECPE
		[2]uint32{0xbfbffc00, 0x2ea1d800}, [2]uint32{0xffbffc00, 0x7ea1d800}, // FRSQRTE
		[2]uint32{0xbffffc00, 0x0ea1c800}, [2]uint32{0xbffffc00, 0x2ea1c800}, // URECPE, URSQRTE
		[2]uint32{0xffbffc00, 0x5ea1f800},                                    // FRECPX
		[2]uint32{0xbffffc00, 0x2e616800}, [2]uint32{0xfffffc00, 0x7e616800}, // FCVTXN
	)
	g.fromClass(classes...)
}

// reg picks a general register other than x28 and, unless it is in
// also, other than the given ones; 31 (XZR) only if allow31.
func (g *randGen) reg(allow31 bool, not ...uint32) uint32 {
	for {
		r := uint32(g.r.IntN(32))
		if r == 28 || r == 31 && !allow31 {
			continue
		}
		bad := false
		for _, n := range not {
			bad = bad || r == n
		}
		if !bad {
			return r
		}
	}
}

// setBase emits ADD/SUB x27, x28, #k with k a multiple of 16 in
// [-1024, 1024].
func (g *randGen) setBase() {
	k := uint32(g.r.IntN(65)) * 16
	if g.r.IntN(2) == 0 {
		g.emit(0x91000000|k<<10|28<<5|27, "") // ADD
	} else {
		g.emit(0xd1000000|k<<10|28<<5|27, "") // SUB
	}
}

// setIndex emits instructions setting x26 to v; when w32, v is a W value
// and the upper half of x26 is set to junk that the extend must ignore.
func (g *randGen) setIndex(v int64, w32 bool) {
	if v >= 0 {
		g.emit(0xd2800000|uint32(v)<<5|26, "") // MOVZ x26
	} else {
		g.emit(0x92800000|uint32(^v)<<5|26, "") // MOVN x26
		if w32 {
			g.emit(0x2a1a03fa, "") // MOV w26, w26: zero the upper half
		}
	}
	if w32 && g.r.IntN(2) == 0 {
		g.emit(0xf2e00000|uint32(g.r.IntN(0x10000))<<5|26, "") // MOVK x26, #j, LSL #48
	}
}

// genLdSt: loads and stores of the general and SIMD&FP registers in every
// addressing form, pairs, unprivileged, exclusives and acquire/release,
// and the SIMD structure loads and stores.
func (g *randGen) genLdSt() {
	switch g.r.IntN(8) {
	case 0, 1: // single register: unsigned offset, unscaled, pre/post-index, unprivileged, register offset
		for {
			size, v, opc := uint32(g.r.IntN(4)), uint32(g.r.IntN(2)), uint32(g.r.IntN(4))
			sz := int64(1) << size
			if v == 1 && size == 0 && opc&2 != 0 {
				sz = 16
			}
			rt := uint32(g.r.IntN(32))
			if v == 0 && rt == 28 {
				continue
			}
			base := 0x38000000 | size<<30 | v<<26 | opc<<22 | rt
			var pre []uint32
			var w uint32
			switch g.r.IntN(4) {
			case 0: // unsigned offset
				w = base | 1<<24 | uint32(g.r.Int64N(2048/sz))<<10 | 28<<5
			case 1: // unscaled, pre/post-index, unprivileged
				mode := uint32(g.r.IntN(4))
				off := uint32((g.r.Int64N(512/sz) - 256/sz) * sz)
				rn := uint32(28)
				if mode == 1 || mode == 3 {
					if v == 0 && rt == 27 {
						continue
					}
					rn = 27
				}
				w = base | (off&0x1ff)<<12 | mode<<10 | rn<<5
			case 2: // register offset
				opt := []uint32{2, 3, 6, 7}[g.r.IntN(4)]
				s := uint32(g.r.IntN(2))
				e := g.r.Int64N(33)
				if opt&4 != 0 {
					e -= 16
				}
				if s == 0 {
					e *= sz
				}
				w = base | 1<<21 | 26<<16 | opt<<13 | s<<12 | 2<<10 | 28<<5
				save := g.words
				g.words = nil
				g.setIndex(e, opt&1 == 0)
				pre = g.words
				g.words = save
			default:
				continue
			}
			if _, ok := armDecode(w); !ok {
				continue
			}
			if w>>5&31 == 27 {
				g.setBase()
			}
			for _, p := range pre {
				g.emit(p, "")
			}
			g.emit(w, "")
			return
		}
	case 2, 3: // pairs
		for {
			opc, v, mode, l := uint32(g.r.IntN(3)), uint32(g.r.IntN(2)), uint32(g.r.IntN(4)), uint32(g.r.IntN(2))
			rt, rt2 := uint32(g.r.IntN(32)), uint32(g.r.IntN(32))
			wb := mode == 1 || mode == 3
			if v == 0 && (rt == 28 || rt2 == 28 || wb && (rt == 27 || rt2 == 27)) || l == 1 && rt == rt2 {
				continue
			}
			rn := uint32(28)
			if wb {
				rn = 27
			}
			imm := uint32(g.r.IntN(64)-32) & 0x7f
			w := opc<<30 | 0x28000000 | v<<26 | mode<<23 | l<<22 | imm<<15 | rt2<<10 | rn<<5 | rt
			if _, ok := armDecode(w); !ok {
				continue
			}
			if wb {
				g.setBase()
			}
			g.emit(w, "")
			return
		}
	case 4: // exclusive pair LDXR/STXR (or LDXP/STXP) on one address, or LDAR/STLR
		size := uint32(g.r.IntN(4))
		g.setBase()
		switch g.r.IntN(3) {
		case 0: // LDXR; STXR
			rt := g.reg(true, 27)
			g.emit(0x085f7c00|size<<30|uint32(g.r.IntN(2))<<15|27<<5|rt, "")
			rv := g.reg(true)
			rs := g.reg(false, 27, rv)
			g.emit(0x08007c00|size<<30|rs<<16|uint32(g.r.IntN(2))<<15|27<<5|rv, "")
		case 1: // LDXP; STXP
			sz := uint32(g.r.IntN(2))
			rt := g.reg(true, 27)
			rt2 := g.reg(true, 27, rt)
			g.emit(0x887f0000|sz<<30|uint32(g.r.IntN(2))<<15|rt2<<10|27<<5|rt, "")
			rv, rv2 := g.reg(true), g.reg(true)
			rs := g.reg(false, 27, rv, rv2)
			g.emit(0x88200000|sz<<30|rs<<16|uint32(g.r.IntN(2))<<15|rv2<<10|27<<5|rv, "")
		default: // LDAR / STLR
			if g.r.IntN(2) == 0 {
				g.emit(0x08dffc00|size<<30|27<<5|g.reg(true), "")
			} else {
				g.emit(0x089ffc00|size<<30|27<<5|g.reg(true), "")
			}
		}
	default: // SIMD structure loads and stores (LD1-LD4, ST1-ST4, LD1R-LD4R)
		for {
			w := uint32(0x0c000000) | uint32(g.r.IntN(2))<<30 | uint32(g.r.IntN(2))<<24 |
				uint32(g.r.IntN(2))<<22 | uint32(g.r.IntN(2))<<21 | g.r.Uint32()&0xfc1f
			post := g.r.IntN(2) == 0
			if !post {
				w |= 28 << 5
			} else {
				w |= 1<<23 | 27<<5
				if g.r.IntN(2) == 0 {
					w |= 31 << 16
				} else {
					w |= 26 << 16
				}
			}
			if _, ok := armDecode(w); !ok {
				continue
			}
			if post {
				g.setBase()
				if w>>16&31 == 26 {
					g.setIndex(g.r.Int64N(9)*16-64, false)
				}
			}
			g.emit(w, "")
			return
		}
	}
}

var lseOps = [...]string{"LDADD", "LDCLR", "LDEOR", "LDSET", "LDSMAX", "LDSMIN", "LDUMAX", "LDUMIN"}

// genLSE: the Armv8.1 atomics (LD<op>, ST<op>, SWP, CAS, CASP, each with
// the acquire/release forms and all sizes) and LDAPR, on x27 (set before
// each); CAS and CASP often compare with the value just loaded, so that
// both the success and the failure path run.
func (g *randGen) genLSE() {
	g.setBase()
	size := uint32(g.r.IntN(4))
	a, l := uint32(g.r.IntN(2)), uint32(g.r.IntN(2))
	sfx := [4]string{"B", "H", "", ""}[size] + fmt.Sprintf(" a=%d l=%d", a, l)
	rn := func(r uint32) string {
		if size == 3 {
			return fmt.Sprintf("x%d", r)
		}
		return fmt.Sprintf("w%d", r)
	}
	switch g.r.IntN(5) {
	case 0, 1: // LD<op>, SWP
		rs, rt := uint32(g.r.IntN(32)), g.reg(true)
		o3, opc := uint32(0), uint32(g.r.IntN(8))
		name := lseOps[opc]
		if g.r.IntN(5) == 0 {
			o3, opc, name = 1, 0, "SWP"
		}
		g.emit(size<<30|0x38200000|a<<23|l<<22|rs<<16|o3<<15|opc<<12|27<<5|rt,
			fmt.Sprintf("%s%s %s, %s, [x27]", name, sfx, rn(rs), rn(rt)))
	case 2: // LDAPR
		rt := g.reg(true)
		g.emit(size<<30|0x38bfc000|27<<5|rt, fmt.Sprintf("LDAPR%s %s, [x27]", sfx, rn(rt)))
	case 3: // CAS
		rs, rt := g.reg(true, 27), uint32(g.r.IntN(32))
		if g.r.IntN(2) == 0 {
			g.emit(0x39400000|size<<30|27<<5|rs, "") // LDR(B/H) rs, [x27]
		}
		g.emit(0x08a07c00|size<<30|a<<22|rs<<16|l<<15|27<<5|rt,
			fmt.Sprintf("CAS%s %s, %s, [x27]", sfx, rn(rs), rn(rt)))
	default: // CASP
		sz := size & 1
		rs, rt := uint32(g.r.IntN(13))*2, uint32(g.r.IntN(14))*2
		if g.r.IntN(2) == 0 {
			g.emit(0x29400000|sz<<31|27<<5|(rs+1)<<10|rs, "") // LDP rs, rs+1, [x27]
		}
		g.emit(0x08207c00|sz<<30|a<<22|rs<<16|l<<15|27<<5|rt,
			fmt.Sprintf("CASP sz=%d a=%d l=%d r%d, r%d, [x27]", sz, a, l, rs, rt))
	}
}

// randFPCR picks the rounding mode and, sometimes, FZ and DN.
func randFPCR(r *rand.Rand) uint64 {
	v := uint64(r.IntN(4)) << 22
	if r.IntN(4) == 0 {
		v |= 1 << 24
	}
	if r.IntN(4) == 0 {
		v |= 1 << 25
	}
	return v
}

// randSlot is one generated sequence.
type randSlot struct {
	seed, fpcr uint64
	words      []uint32
	notes      []string
}

func (s *randSlot) disasm() string {
	var b strings.Builder
	for i, w := range s.words {
		text := s.notes[i]
		if text == "" {
			if in, ok := armDecode(w); ok {
				text = arm64asm.GNUSyntax(in)
			} else {
				text = "?"
			}
		}
		fmt.Fprintf(&b, "  %2d: %08x  %s\n", i, w, text)
	}
	return b.String()
}

// genSlots generates the sequences of one group; each round draws
// different ones.
func genSlots(gi, round int, gen func(*randGen)) []randSlot {
	r := rand.New(rand.NewPCG(0x72616e64+uint64(round)<<32, uint64(gi)))
	slots := make([]randSlot, randSlots)
	for i := range slots {
		g := &randGen{r: r}
		for len(g.words) < randInsns {
			n := len(g.words)
			if randInsns-n < 5 { // the snippets of ldst and lse may not fit
				g.genInt()
			} else {
				gen(g)
			}
			if len(g.words) > randInsns { // does not fit: drop it
				g.words, g.notes = g.words[:n], g.notes[:n]
			}
		}
		slots[i] = randSlot{seed: r.Uint64(), fpcr: randFPCR(r), words: g.words, notes: g.notes}
	}
	return slots
}

// patchRandProg writes a copy of the template with the slots filled in.
func patchRandProg(t *testing.T, slots []randSlot, path string) {
	t.Helper()
	img, err := os.ReadFile(randProg)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(bytes.NewReader(img))
	if err != nil {
		t.Fatal(err)
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	off := func(name string) int {
		for _, s := range syms {
			if s.Name == name && int(s.Section) < len(f.Sections) {
				sec := f.Sections[s.Section]
				return int(sec.Offset + s.Value - sec.Addr)
			}
		}
		t.Fatalf("%s: no symbol %s", randProg, name)
		return 0
	}
	code, seed, fpcr := off("rand_code"), off("rand_seed"), off("rand_fpcr")
	for i, s := range slots {
		for j, w := range s.words {
			// Each slot is LDR x28, =scratch; the words; B slot_save.
			binary.LittleEndian.PutUint32(img[code+(i*(randInsns+2)+1+j)*4:], w)
		}
		binary.LittleEndian.PutUint64(img[seed+8*i:], s.seed)
		binary.LittleEndian.PutUint64(img[fpcr+8*i:], s.fpcr)
	}
	if err := os.WriteFile(path, img, 0o644); err != nil {
		t.Fatal(err)
	}
}

// splitSlots splits the output into the lines of each slot.
func splitSlots(out []byte) [][]string {
	var slots [][]string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "slot ") {
			slots = append(slots, nil)
		}
		if len(slots) > 0 {
			slots[len(slots)-1] = append(slots[len(slots)-1], l)
		}
	}
	return slots
}

// TestRandomDifferential runs randSlots random sequences of randInsns
// instructions of each group on the machine and on QEMU (-cpu max) and
// requires the same register file and memory afterwards. The environment
// variable KPEMU_RANDROUNDS=n runs n rounds of different sequences
// instead of one, to search further after a change.
func TestRandomDifferential(t *testing.T) {
	rounds := envCount(t, "KPEMU_RANDROUNDS", 1)
	for round := range rounds {
		for gi, grp := range randGroups {
			name := grp.name
			if round > 0 {
				name = fmt.Sprintf("%s-%d", grp.name, round)
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				diffRandGroup(t, name, genSlots(gi, round, grp.gen))
			})
		}
	}
}

// diffRandGroup runs the slots of one group on the machine and on QEMU
// and reports the slots whose results differ.
func diffRandGroup(t *testing.T, group string, slots []randSlot) {
	path := filepath.Join(t.TempDir(), "rand-"+group+".elf")
	patchRandProg(t, slots, path)
	got := runOnMachine(t, path)
	want := runOnQEMU(t, path, "max")
	if !bytes.HasSuffix(want, []byte("done\n")) {
		t.Fatalf("qemu output incomplete:\n%s", want)
	}
	if bytes.Equal(got, want) {
		return
	}
	gs, ws := splitSlots(got), splitSlots(want)
	if len(gs) != len(ws) {
		t.Errorf("machine printed %d slots, qemu %d", len(gs), len(ws))
	}
	bad := 0
	for i := range min(len(gs), len(ws), len(slots)) {
		var diffs []string
		for j := range max(len(gs[i]), len(ws[i])) {
			var g, w string
			if j < len(gs[i]) {
				g = gs[i][j]
			}
			if j < len(ws[i]) {
				w = ws[i][j]
			}
			if g != w {
				diffs = append(diffs, fmt.Sprintf("  machine %-28q qemu %q", g, w))
			}
		}
		if len(diffs) == 0 {
			continue
		}
		if bad++; bad > 3 {
			continue
		}
		s := slots[i]
		t.Errorf("group %s slot %d (seed %#x, fpcr %#x): %d lines differ:\n%s\nsequence:\n%s",
			group, i, s.seed, s.fpcr, len(diffs), strings.Join(diffs[:min(len(diffs), 12)], "\n"), s.disasm())
	}
	if bad > 3 {
		t.Errorf("group %s: %d of %d slots differ", group, bad, len(slots))
	}
}
