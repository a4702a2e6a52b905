package machine

import (
	"hash/crc32"
	"testing"
)

type regs = map[int]uint64

const (
	min64 = 1 << 63
	max64 = 1<<63 - 1
	all64 = ^uint64(0)
)

func TestAddSubImmediate(t *testing.T) {
	runRegCases(t, []regCase{
		{name: "add", code: []string{"add x0, x1, #1"}, in: regs{1: 41}, want: regs{0: 42}},
		{name: "add-lsl12", code: []string{"add x0, x1, #1, lsl #12"}, in: regs{1: 1}, want: regs{0: 0x1001}},
		{name: "add-w-wraps", code: []string{"add w0, w1, #4095"}, in: regs{1: 0xffff_ffff_ffff_ffff}, want: regs{0: 4094}},
		{name: "add-sp", code: []string{"add x0, sp, #16"}, in: regs{31: 0x1000}, want: regs{0: 0x1010}},
		{name: "mov-to-sp", code: []string{"mov sp, x1"}, in: regs{1: 0x4000}, want: regs{31: 0x4000}},
		{name: "sub-sp", code: []string{"sub sp, sp, #32"}, in: regs{31: 0x1000}, want: regs{31: 0xfe0}},
		{name: "subs-zero", code: []string{"subs x0, x1, #1"}, in: regs{1: 1}, want: regs{0: 0}, nzcv: "nZCv"},
		{name: "subs-borrow", code: []string{"subs x0, x1, #1"}, in: regs{1: 0}, want: regs{0: all64}, nzcv: "Nzcv"},
		{name: "subs-w-overflow", code: []string{"subs w0, w1, #1"}, in: regs{1: 0x8000_0000}, want: regs{0: 0x7fff_ffff}, nzcv: "nzCV"},
		{name: "cmp-xzr-dest", code: []string{"cmp x1, #5"}, in: regs{1: 3}, nzcv: "Nzcv"},
		{name: "adds-w-carry", code: []string{"adds w0, w1, #1"}, in: regs{1: 0x1_ffff_ffff}, want: regs{0: 0}, nzcv: "nZCv"},
		{name: "cmn", code: []string{"cmn x1, #1"}, in: regs{1: all64}, nzcv: "nZCv"},
	})
}

func TestAddSubRegister(t *testing.T) {
	runRegCases(t, []regCase{
		{name: "adds-overflow", code: []string{"adds x0, x1, x2"}, in: regs{1: max64, 2: 1}, want: regs{0: min64}, nzcv: "NzcV"},
		{name: "adds-carry", code: []string{"adds x0, x1, x2"}, in: regs{1: all64, 2: 1}, want: regs{0: 0}, nzcv: "nZCv"},
		{name: "adds-both", code: []string{"adds x0, x1, x2"}, in: regs{1: min64, 2: min64}, want: regs{0: 0}, nzcv: "nZCV"},
		{name: "subs-equal", code: []string{"subs x0, x1, x2"}, in: regs{1: 7, 2: 7}, want: regs{0: 0}, nzcv: "nZCv"},
		{name: "subs-overflow", code: []string{"subs x0, x1, x2"}, in: regs{1: min64, 2: 1}, want: regs{0: max64}, nzcv: "nzCV"},
		{name: "subs-w", code: []string{"subs w0, w1, w2"}, in: regs{1: 0xdead_0000_0001, 2: 2}, want: regs{0: 0xffff_ffff}, nzcv: "Nzcv"},
		{name: "add-lsl", code: []string{"add x0, x1, x2, lsl #4"}, in: regs{1: 1, 2: 2}, want: regs{0: 33}},
		{name: "sub-asr", code: []string{"sub x0, x1, x2, asr #1"}, in: regs{1: 0, 2: all64 - 3}, want: regs{0: 2}},
		{name: "add-w-lsr", code: []string{"add w0, w1, w2, lsr #31"}, in: regs{1: 1, 2: 0x8000_0000}, want: regs{0: 2}},
		{name: "neg", code: []string{"neg x0, x1"}, in: regs{1: 5}, want: regs{0: all64 - 4}},
		{name: "negs-min", code: []string{"negs x0, x1"}, in: regs{1: min64}, want: regs{0: min64}, nzcv: "NzcV"},
		{name: "add-uxtb", code: []string{"add x0, x1, w2, uxtb #2"}, in: regs{1: 1, 2: 0x1ff}, want: regs{0: 1 + 0xff*4}},
		{name: "sub-sxth", code: []string{"sub x0, x1, w2, sxth #1"}, in: regs{1: 0, 2: 0xffff}, want: regs{0: 2}},
		{name: "cmp-sxtw", code: []string{"cmp x1, w2, sxtw"}, in: regs{1: all64, 2: 0xffff_ffff}, nzcv: "nZCv"},
		{name: "add-sp-ext", code: []string{"add x0, sp, x2, lsl #3"}, in: regs{31: 0x100, 2: 2}, want: regs{0: 0x110}},
		{name: "add-to-sp-ext", code: []string{"add sp, x1, w2, uxtw"}, in: regs{1: 0x100, 2: 0xffff_ffff_0000_0010}, want: regs{31: 0x110}},
		{name: "adds-w-sxtb", code: []string{"adds w0, w1, w2, sxtb"}, in: regs{1: 1, 2: 0xff}, want: regs{0: 0}, nzcv: "nZCv"},
	})
}

func TestCarryAndConditionalCompare(t *testing.T) {
	runRegCases(t, []regCase{
		{name: "adc", code: []string{"adc x0, x1, x2"}, in: regs{1: 1, 2: 2}, flags: "nzCv", want: regs{0: 4}},
		{name: "adcs-wrap", code: []string{"adcs x0, x1, x2"}, in: regs{1: all64, 2: 0}, flags: "nzCv", want: regs{0: 0}, nzcv: "nZCv"},
		{name: "adcs-w-overflow", code: []string{"adcs w0, w1, w2"}, in: regs{1: 0x7fff_ffff, 2: 0}, flags: "nzCv", want: regs{0: 0x8000_0000}, nzcv: "NzcV"},
		{name: "sbc", code: []string{"sbc x0, x1, x2"}, in: regs{1: 5, 2: 2}, want: regs{0: 2}},
		{name: "sbcs-borrow", code: []string{"sbcs x0, x1, x2"}, in: regs{1: 5, 2: 5}, want: regs{0: all64}, nzcv: "Nzcv"},
		{name: "sbcs-carry-in", code: []string{"sbcs x0, x1, x2"}, in: regs{1: 5, 2: 5}, flags: "nzCv", want: regs{0: 0}, nzcv: "nZCv"},
		{name: "sbcs-w", code: []string{"sbcs w0, w1, w2"}, in: regs{1: 0, 2: 0x8000_0000}, flags: "nzCv", want: regs{0: 0x8000_0000}, nzcv: "NzcV"},
		{name: "ngc", code: []string{"ngc x0, x1"}, in: regs{1: 1}, want: regs{0: all64 - 1}},
		{name: "ccmp-taken", code: []string{"ccmp x1, x2, #0, eq"}, in: regs{1: 3, 2: 3}, flags: "nZcv", nzcv: "nZCv"},
		{name: "ccmp-not-taken", code: []string{"ccmp x1, x2, #9, eq"}, in: regs{1: 3, 2: 3}, nzcv: "NzcV"},
		{name: "ccmp-imm", code: []string{"ccmp x1, #5, #4, ne"}, in: regs{1: 3}, nzcv: "Nzcv"},
		{name: "ccmp-w-overflow", code: []string{"ccmp w1, #1, #0, al"}, in: regs{1: 0x8000_0000}, nzcv: "nzCV"},
		{name: "ccmn-imm", code: []string{"ccmn w1, #1, #2, ge"}, in: regs{1: 0xffff_ffff}, nzcv: "nZCv"},
		{name: "ccmn-reg-not", code: []string{"ccmn x1, x2, #2, lt"}, in: regs{1: 1, 2: 2}, nzcv: "nzCv"},
	})
}

func TestConditionalSelect(t *testing.T) {
	runRegCases(t, []regCase{
		{name: "csel-true", code: []string{"csel x0, x1, x2, eq"}, in: regs{1: 1, 2: 2}, flags: "nZcv", want: regs{0: 1}},
		{name: "csel-false", code: []string{"csel x0, x1, x2, eq"}, in: regs{1: 1, 2: 2}, want: regs{0: 2}},
		{name: "csel-w", code: []string{"csel w0, w1, w2, hi"}, in: regs{1: 0x1_0000_0001, 2: 2}, flags: "nzCv", want: regs{0: 1}},
		{name: "cset", code: []string{"cset x0, ge"}, flags: "NzcV", want: regs{0: 1}},
		{name: "cset-lt", code: []string{"cset w0, lt"}, flags: "Nzcv", want: regs{0: 1}},
		{name: "csetm", code: []string{"csetm x0, ne"}, want: regs{0: all64}},
		{name: "csinc", code: []string{"csinc x0, x1, x2, gt"}, in: regs{1: 1, 2: 7}, flags: "nZcv", want: regs{0: 8}},
		{name: "csinv-w", code: []string{"csinv w0, w1, w2, le"}, in: regs{1: 1, 2: 0}, want: regs{0: 0xffff_ffff}},
		{name: "cneg", code: []string{"cneg x0, x1, mi"}, in: regs{1: 5}, flags: "Nzcv", want: regs{0: all64 - 4}},
		{name: "csneg-w", code: []string{"csneg w0, w1, w2, vs"}, in: regs{1: 9, 2: 1}, want: regs{0: 0xffff_ffff}},
		{name: "ls", code: []string{"cset x0, ls"}, flags: "nZCv", want: regs{0: 1}},
		{name: "cc", code: []string{"cset x0, lo"}, flags: "nzcv", want: regs{0: 1}},
	})
}

func TestLogical(t *testing.T) {
	runRegCases(t, []regCase{
		{name: "and-imm", code: []string{"and x0, x1, #0xff"}, in: regs{1: 0x1234}, want: regs{0: 0x34}},
		{name: "orr-w-imm", code: []string{"orr w0, w1, #0x80000001"}, in: regs{1: 0xf_0000_0010}, want: regs{0: 0x8000_0011}},
		{name: "eor-imm", code: []string{"eor x0, x1, #0x5555555555555555"}, in: regs{1: all64}, want: regs{0: 0xaaaa_aaaa_aaaa_aaaa}},
		{name: "ands-imm", code: []string{"ands x0, x1, #0x8000000000000000"}, in: regs{1: all64}, want: regs{0: min64}, flags: "nzCV", nzcv: "Nzcv"},
		{name: "tst-w", code: []string{"tst w1, #0x1"}, in: regs{1: 2}, nzcv: "nZcv"},
		{name: "and-rotated-imm", code: []string{"and x0, x1, #0xff00ff00ff00ff00"}, in: regs{1: all64}, want: regs{0: 0xff00_ff00_ff00_ff00}},
		{name: "and-imm-to-sp", code: []string{"and sp, x1, #0xfffffffffffffff0"}, in: regs{1: 0x1237}, want: regs{31: 0x1230}},
		{name: "mov-bitmask", code: []string{"mov w0, #0x7ffe"}, want: regs{0: 0x7ffe}},
		{name: "bic", code: []string{"bic x0, x1, x2, lsl #4"}, in: regs{1: 0xff, 2: 1}, want: regs{0: 0xef}},
		{name: "orn-w-ror", code: []string{"orn w0, w1, w2, ror #8"}, in: regs{1: 0, 2: 0xff}, want: regs{0: 0x00ff_ffff}},
		{name: "eon-asr", code: []string{"eon x0, x1, x2, asr #63"}, in: regs{1: 5, 2: min64}, want: regs{0: 5}},
		{name: "bics-w", code: []string{"bics w0, w1, w2"}, in: regs{1: 0x8000_00ff, 2: 0xff}, want: regs{0: 0x8000_0000}, nzcv: "Nzcv"},
		{name: "mov-reg", code: []string{"mov x0, x1"}, in: regs{1: all64}, want: regs{0: all64}},
		{name: "mov-w-zeroes-top", code: []string{"mov w0, w1"}, in: regs{0: all64, 1: all64}, want: regs{0: 0xffff_ffff}},
		{name: "mvn", code: []string{"mvn x0, x1"}, in: regs{1: 0}, want: regs{0: all64}},
		{name: "orr-lsr", code: []string{"orr x0, x1, x2, lsr #60"}, in: regs{1: 1, 2: min64}, want: regs{0: 9}},
	})
}

func TestMoveWide(t *testing.T) {
	runRegCases(t, []regCase{
		{name: "movz", code: []string{"mov x0, #0x12340000"}, want: regs{0: 0x1234_0000}},
		{name: "movz-hw3", code: []string{"movz x0, #0xbeef, lsl #48"}, want: regs{0: 0xbeef_0000_0000_0000}},
		{name: "movn-w", code: []string{"movn w0, #0"}, want: regs{0: 0xffff_ffff}},
		{name: "movn", code: []string{"movn x0, #5, lsl #16"}, want: regs{0: ^uint64(5 << 16)}},
		{name: "movk", code: []string{"movk x0, #0xbeef, lsl #48"}, in: regs{0: 0x1111_2222_3333_4444}, want: regs{0: 0xbeef_2222_3333_4444}},
		{name: "movk-w", code: []string{"movk w0, #0x1234, lsl #16"}, in: regs{0: all64}, want: regs{0: 0x1234_ffff}},
		{name: "movz-xzr", code: []string{"movz xzr, #1"}, want: regs{}},
		{name: "sequence", code: []string{"movz x0, #0x4444", "movk x0, #0x3333, lsl #16", "movk x0, #0x2222, lsl #32", "movk x0, #0x1111, lsl #48"}, want: regs{0: 0x1111_2222_3333_4444}},
	})
}

func TestBitfield(t *testing.T) {
	runRegCases(t, []regCase{
		{name: "lsl", code: []string{"lsl x0, x1, #3"}, in: regs{1: 0xe000_0000_0000_0001}, want: regs{0: 8}},
		{name: "lsl-w", code: []string{"lsl w0, w1, #31"}, in: regs{1: 3}, want: regs{0: 0x8000_0000}},
		{name: "lsr-w", code: []string{"lsr w0, w1, #31"}, in: regs{1: 0x1_8000_0000}, want: regs{0: 1}},
		{name: "asr", code: []string{"asr x0, x1, #63"}, in: regs{1: min64}, want: regs{0: all64}},
		{name: "asr-w", code: []string{"asr w0, w1, #4"}, in: regs{1: 0x8000_0000}, want: regs{0: 0xf800_0000}},
		{name: "ubfx", code: []string{"ubfx x0, x1, #8, #8"}, in: regs{1: 0xabcd}, want: regs{0: 0xab}},
		{name: "sbfx-w", code: []string{"sbfx w0, w1, #4, #4"}, in: regs{1: 0x80}, want: regs{0: 0xffff_fff8}},
		{name: "sbfx", code: []string{"sbfx x0, x1, #60, #4"}, in: regs{1: min64}, want: regs{0: all64 - 7}},
		{name: "bfi", code: []string{"bfi x0, x1, #16, #8"}, in: regs{0: all64, 1: 0x12}, want: regs{0: 0xffff_ffff_ff12_ffff}},
		{name: "bfxil-w", code: []string{"bfxil w0, w1, #4, #4"}, in: regs{0: 0xffff_ffff_0000_0000, 1: 0xa0}, want: regs{0: 0xa}},
		{name: "bfc", code: []string{"bfc x0, #4, #8"}, in: regs{0: all64}, want: regs{0: 0xffff_ffff_ffff_f00f}},
		{name: "sxtb", code: []string{"sxtb x0, w1"}, in: regs{1: 0x80}, want: regs{0: all64 - 0x7f}},
		{name: "sxth-w", code: []string{"sxth w0, w1"}, in: regs{1: 0x8000}, want: regs{0: 0xffff_8000}},
		{name: "sxtw", code: []string{"sxtw x0, w1"}, in: regs{1: 0x8000_0000}, want: regs{0: 0xffff_ffff_8000_0000}},
		{name: "uxtb", code: []string{"uxtb w0, w1"}, in: regs{1: 0x1ff}, want: regs{0: 0xff}},
		{name: "uxth", code: []string{"uxth w0, w1"}, in: regs{1: 0x1ffff}, want: regs{0: 0xffff}},
		{name: "ubfiz", code: []string{"ubfiz x0, x1, #60, #4"}, in: regs{1: 0xff}, want: regs{0: 0xf000_0000_0000_0000}},
		{name: "sbfiz-w", code: []string{"sbfiz w0, w1, #8, #4"}, in: regs{1: 0x8}, want: regs{0: 0xffff_f800}},
		{name: "extr", code: []string{"extr x0, x1, x2, #8"}, in: regs{1: 0xab, 2: 0x1234}, want: regs{0: 0xab00_0000_0000_0012}},
		{name: "extr-w", code: []string{"extr w0, w1, w2, #4"}, in: regs{1: 0xf, 2: 0x10}, want: regs{0: 0xf000_0001}},
		{name: "ror", code: []string{"ror x0, x1, #4"}, in: regs{1: 0x1f}, want: regs{0: 0xf000_0000_0000_0001}},
		{name: "ror-w", code: []string{"ror w0, w1, #1"}, in: regs{1: 1}, want: regs{0: 0x8000_0000}},
	})
}

func TestShiftMulDiv(t *testing.T) {
	runRegCases(t, []regCase{
		{name: "lslv-mod", code: []string{"lsl x0, x1, x2"}, in: regs{1: 1, 2: 65}, want: regs{0: 2}},
		{name: "lsrv-w-mod", code: []string{"lsr w0, w1, w2"}, in: regs{1: 0x8000_0000, 2: 63}, want: regs{0: 1}},
		{name: "asrv", code: []string{"asr x0, x1, x2"}, in: regs{1: min64, 2: 4}, want: regs{0: 0xf800_0000_0000_0000}},
		{name: "asrv-w", code: []string{"asr w0, w1, w2"}, in: regs{1: 0x8000_0000, 2: 31}, want: regs{0: 0xffff_ffff}},
		{name: "rorv", code: []string{"ror x0, x1, x2"}, in: regs{1: 1, 2: 1}, want: regs{0: min64}},
		{name: "mul", code: []string{"mul x0, x1, x2"}, in: regs{1: 3, 2: all64}, want: regs{0: all64 - 2}},
		{name: "mul-w", code: []string{"mul w0, w1, w2"}, in: regs{1: 0x10000, 2: 0x10001}, want: regs{0: 0x10000}},
		{name: "madd", code: []string{"madd x0, x1, x2, x3"}, in: regs{1: 3, 2: 4, 3: 5}, want: regs{0: 17}},
		{name: "msub", code: []string{"msub x0, x1, x2, x3"}, in: regs{1: 3, 2: 4, 3: 5}, want: regs{0: all64 - 6}},
		{name: "mneg-w", code: []string{"mneg w0, w1, w2"}, in: regs{1: 1, 2: 1}, want: regs{0: 0xffff_ffff}},
		{name: "smull", code: []string{"smull x0, w1, w2"}, in: regs{1: 0xffff_ffff, 2: 2}, want: regs{0: all64 - 1}},
		{name: "umull", code: []string{"umull x0, w1, w2"}, in: regs{1: 0xffff_ffff, 2: 2}, want: regs{0: 0x1_ffff_fffe}},
		{name: "smaddl", code: []string{"smaddl x0, w1, w2, x3"}, in: regs{1: 0xffff_fffe, 2: 3, 3: 10}, want: regs{0: 4}},
		{name: "smsubl", code: []string{"smsubl x0, w1, w2, x3"}, in: regs{1: 0xffff_fffe, 2: 3, 3: 10}, want: regs{0: 16}},
		{name: "umaddl", code: []string{"umaddl x0, w1, w2, x3"}, in: regs{1: 0xffff_ffff, 2: 0xffff_ffff, 3: 1}, want: regs{0: 0xffff_fffe_0000_0002}},
		{name: "umsubl", code: []string{"umsubl x0, w1, w2, x3"}, in: regs{1: 2, 2: 3, 3: 1}, want: regs{0: all64 - 4}},
		{name: "umulh", code: []string{"umulh x0, x1, x2"}, in: regs{1: all64, 2: all64}, want: regs{0: all64 - 1}},
		{name: "smulh", code: []string{"smulh x0, x1, x2"}, in: regs{1: all64, 2: all64}, want: regs{0: 0}},
		{name: "smulh-neg", code: []string{"smulh x0, x1, x2"}, in: regs{1: min64, 2: 2}, want: regs{0: all64}},
		{name: "udiv", code: []string{"udiv x0, x1, x2"}, in: regs{1: 100, 2: 7}, want: regs{0: 14}},
		{name: "udiv-zero", code: []string{"udiv x0, x1, x2"}, in: regs{0: 5, 1: 100, 2: 0}, want: regs{0: 0}},
		{name: "udiv-w", code: []string{"udiv w0, w1, w2"}, in: regs{1: 0x1_0000_0010, 2: 0x1_0000_0002}, want: regs{0: 8}},
		{name: "sdiv", code: []string{"sdiv x0, x1, x2"}, in: regs{1: all64 - 99, 2: 7}, want: regs{0: all64 - 13}},
		{name: "sdiv-min", code: []string{"sdiv x0, x1, x2"}, in: regs{1: min64, 2: all64}, want: regs{0: min64}},
		{name: "sdiv-w-min", code: []string{"sdiv w0, w1, w2"}, in: regs{1: 0x8000_0000, 2: 0xffff_ffff}, want: regs{0: 0x8000_0000}},
		{name: "sdiv-zero", code: []string{"sdiv w0, w1, w2"}, in: regs{1: 1, 2: 0}, want: regs{0: 0}},
	})
}

func TestBitOps(t *testing.T) {
	runRegCases(t, []regCase{
		{name: "rbit", code: []string{"rbit x0, x1"}, in: regs{1: 1}, want: regs{0: min64}},
		{name: "rbit-w", code: []string{"rbit w0, w1"}, in: regs{1: 3}, want: regs{0: 0xc000_0000}},
		{name: "rev16", code: []string{"rev16 x0, x1"}, in: regs{1: 0x0102_0304_0506_0708}, want: regs{0: 0x0201_0403_0605_0807}},
		{name: "rev16-w", code: []string{"rev16 w0, w1"}, in: regs{1: 0xff_0102_0304}, want: regs{0: 0x0201_0403}},
		{name: "rev32", code: []string{"rev32 x0, x1"}, in: regs{1: 0x0102_0304_0506_0708}, want: regs{0: 0x0403_0201_0807_0605}},
		{name: "rev", code: []string{"rev x0, x1"}, in: regs{1: 0x0102_0304_0506_0708}, want: regs{0: 0x0807_0605_0403_0201}},
		{name: "rev-w", code: []string{"rev w0, w1"}, in: regs{1: 0xff_0102_0304}, want: regs{0: 0x0403_0201}},
		{name: "clz", code: []string{"clz x0, x1"}, in: regs{1: 1}, want: regs{0: 63}},
		{name: "clz-zero", code: []string{"clz x0, x1"}, in: regs{1: 0}, want: regs{0: 64}},
		{name: "clz-w", code: []string{"clz w0, w1"}, in: regs{1: 0x1_0000_0000}, want: regs{0: 32}},
		{name: "cls", code: []string{"cls x0, x1"}, in: regs{1: all64}, want: regs{0: 63}},
		{name: "cls-pos", code: []string{"cls x0, x1"}, in: regs{1: 1}, want: regs{0: 62}},
		{name: "cls-w", code: []string{"cls w0, w1"}, in: regs{1: 0xf000_0000}, want: regs{0: 3}},
		{name: "cls-w-zero", code: []string{"cls w0, w1"}, in: regs{1: 0}, want: regs{0: 31}},
	})
}

// armCRC is the CRC32 instruction's definition in terms of hash/crc32,
// which inverts before and after.
func armCRC(tab *crc32.Table, acc uint32, v uint64, n int) uint64 {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(v >> (8 * i))
	}
	return uint64(^crc32.Update(^acc, tab, b))
}

func TestCRC32(t *testing.T) {
	ieee, cast := crc32.IEEETable, crc32.MakeTable(crc32.Castagnoli)
	const acc, val = 0x1234_5678, 0xdead_beef_cafe_f00d
	runRegCases(t, []regCase{
		{name: "crc32b", code: []string{"crc32b w0, w1, w2"}, in: regs{1: acc, 2: val}, want: regs{0: armCRC(ieee, acc, val, 1)}},
		{name: "crc32h", code: []string{"crc32h w0, w1, w2"}, in: regs{1: acc, 2: val}, want: regs{0: armCRC(ieee, acc, val, 2)}},
		{name: "crc32w", code: []string{"crc32w w0, w1, w2"}, in: regs{1: acc, 2: val}, want: regs{0: armCRC(ieee, acc, val, 4)}},
		{name: "crc32x", code: []string{"crc32x w0, w1, x2"}, in: regs{1: acc, 2: val}, want: regs{0: armCRC(ieee, acc, val, 8)}},
		{name: "crc32cb", code: []string{"crc32cb w0, w1, w2"}, in: regs{1: acc, 2: val}, want: regs{0: armCRC(cast, acc, val, 1)}},
		{name: "crc32ch", code: []string{"crc32ch w0, w1, w2"}, in: regs{1: acc, 2: val}, want: regs{0: armCRC(cast, acc, val, 2)}},
		{name: "crc32cw", code: []string{"crc32cw w0, w1, w2"}, in: regs{1: acc, 2: val}, want: regs{0: armCRC(cast, acc, val, 4)}},
		{name: "crc32cx", code: []string{"crc32cx w0, w1, x2"}, in: regs{1: acc | 0xf_0000_0000, 2: val}, want: regs{0: armCRC(cast, acc, val, 8)}},
	})
}

func TestPCRelative(t *testing.T) {
	runRegCases(t, []regCase{
		{name: "adr", code: []string{"adr x0, #16"}, want: regs{0: testCode + 16}},
		{name: "adr-neg", code: []string{"nop", "adr x0, #-4"}, want: regs{0: testCode}},
		{name: "adrp", code: []string{"adrp x1, #4096"}, want: regs{1: testCode&^0xfff + 4096}},
		{name: "adrp-neg", code: []string{"adrp x1, #-8192"}, want: regs{1: testCode&^0xfff - 8192}},
	})
}

// condTable against the Arm ARM's ConditionHolds, for every condition code
// and every NZCV.
func TestCondTable(t *testing.T) {
	for cc := uint8(0); cc < 16; cc++ {
		for f := uint8(0); f < 16; f++ {
			n, z, c, v := f&8 != 0, f&4 != 0, f&2 != 0, f&1 != 0
			var want bool
			switch cc >> 1 {
			case 0:
				want = z // EQ
			case 1:
				want = c // CS
			case 2:
				want = n // MI
			case 3:
				want = v // VS
			case 4:
				want = c && !z // HI
			case 5:
				want = n == v // GE
			case 6:
				want = n == v && !z // GT
			case 7:
				want = true // AL
			}
			if cc&1 != 0 && cc != 15 {
				want = !want
			}
			cpu := &CPU{}
			cpu.setNZCV(uint64(f) << 28)
			if got := cpu.cond(cc); got != want {
				t.Errorf("cond %#x with NZCV %04b = %v, want %v", cc, f, got, want)
			}
		}
	}
}
