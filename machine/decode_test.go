package machine

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"golang.org/x/arch/arm64/arm64asm"
)

// reservedOK lists mnemonics for which arm64asm (a lenient disassembler)
// accepts encodings the Arm ARM reserves or that this machine does not
// implement, so a disagreement is expected: extended-register forms with
// imm3 > 4, all-ones logical immediates, debug-state and halting
// instructions, system registers and SYS operations not modelled, and
// Advanced SIMD structure loads and stores.
func reservedOK(op string) bool {
	switch op {
	case "ADD", "ADDS", "SUB", "SUBS", "CMN", "CMP",
		"AND", "ANDS", "EOR", "ORR", "MOV", "TST",
		"DCPS1", "DCPS2", "DCPS3", "HLT",
		"MRS", "MSR", "SYS", "SYSL", "DC", "IC", "AT", "TLBI":
		return true
	}
	return false
}

// TestDecodeAgainstArm64asm decodes random words with the machine and
// with golang.org/x/arch's reference decoder: every integer instruction
// the reference knows must be implemented (not undefined), except where
// reservedOK explains why not.
func TestDecodeAgainstArm64asm(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	n := 400000
	if testing.Short() {
		n = 40000
	}
	// Bias half of the words toward the integer encoding groups.
	groups := []uint32{0x8, 0x9, 0x4, 0x6, 0xc, 0xe, 0x5, 0xd, 0xa, 0xb}
	failures := 0
	for i := 0; i < n; i++ {
		w := rng.Uint32()
		if i%2 == 0 {
			w = w&^(0xf<<25) | groups[rng.IntN(len(groups))]<<25
		}
		ref, err := arm64asm.Decode([]byte{byte(w), byte(w >> 8), byte(w >> 16), byte(w >> 24)})
		if err != nil || !Decode(w).Undefined || isFPSIMD(ref) {
			continue
		}
		op := ref.Op.String()
		if reservedOK(op) || strings.HasPrefix(op, "LD") && strings.Contains(ref.String(), "{") ||
			strings.HasPrefix(op, "ST") && strings.Contains(ref.String(), "{") {
			continue
		}
		if failures++; failures <= 20 {
			t.Errorf("%08x %v: machine says undefined", w, ref)
		}
	}
}

// isFPSIMD reports whether an instruction uses FP/SIMD registers or is an
// FP operation; the FP/SIMD encodings the machine leaves undefined are
// counted by UndefinedStats rather than checked here.
func isFPSIMD(in arm64asm.Inst) bool {
	if strings.HasPrefix(in.Op.String(), "F") {
		return true
	}
	for _, a := range in.Args {
		if a == nil {
			break
		}
		switch r := a.(type) {
		case arm64asm.Reg:
			if r >= arm64asm.B0 && r <= arm64asm.V31 {
				return true
			}
		case arm64asm.RegisterWithArrangement, arm64asm.RegisterWithArrangementAndIndex:
			return true
		}
	}
	return false
}

// TestDecodeSIMDAgainstArm64asm decodes random words of the FP and
// Advanced SIMD data-processing groups with the machine and with
// arm64asm, which knows exactly Armv8.0's: each must accept what the
// other does, except the cryptographic extension (excludedOp), which the
// machine leaves undefined.
func TestDecodeSIMDAgainstArm64asm(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	n := 400000
	if testing.Short() {
		n = 40000
	}
	classes := [][2]uint32{{0x9e000000, 0x0e000000}, {0xdf000000, 0x5e000000}, {0x5e000000, 0x1e000000}}
	failures := 0
	for i := 0; i < n; i++ {
		c := classes[rng.IntN(len(classes))]
		w := c[1] | rng.Uint32()&^c[0]
		ref, ok := armDecode(w)
		undef := Decode(w).Undefined
		var msg string
		switch {
		case ok && undef && !excludedOp(ref):
			msg = fmt.Sprintf("%08x %v: machine says undefined", w, ref)
		case !ok && !undef:
			msg = fmt.Sprintf("%08x: unallocated, but the machine implements it", w)
		default:
			continue
		}
		if failures++; failures <= 20 {
			t.Error(msg)
		}
	}
}
