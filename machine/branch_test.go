package machine

import "testing"

func TestBranches(t *testing.T) {
	// Each case runs `steps` instructions and checks the PC it lands on,
	// relative to testCode, and registers.
	cases := []struct {
		name  string
		code  []string
		in    regs
		flags string
		steps uint64
		pc    uint64
		want  regs
	}{
		{name: "b", code: []string{"b #8"}, steps: 1, pc: 8},
		{name: "b-back", code: []string{"nop", "b #-4"}, steps: 2, pc: 0},
		{name: "bl", code: []string{"nop", "bl #12"}, steps: 2, pc: 16, want: regs{30: testCode + 8}},
		{name: "bcond-taken", code: []string{"b.eq #12"}, flags: "nZcv", steps: 1, pc: 12},
		{name: "bcond-not", code: []string{"b.eq #12"}, steps: 1, pc: 4},
		{name: "bcond-gt", code: []string{"b.gt #-16"}, flags: "NzcV", steps: 1, pc: ^uint64(15)},
		{name: "cbz-taken", code: []string{"cbz x0, #8"}, steps: 1, pc: 8},
		{name: "cbz-w-upper", code: []string{"cbz w0, #8"}, in: regs{0: 1 << 32}, steps: 1, pc: 8},
		{name: "cbnz", code: []string{"cbnz x0, #8"}, in: regs{0: 1 << 32}, steps: 1, pc: 8},
		{name: "cbnz-not", code: []string{"cbnz w0, #8"}, in: regs{0: 1 << 32}, steps: 1, pc: 4},
		{name: "tbz", code: []string{"tbz x0, #63, #8"}, in: regs{0: max64}, steps: 1, pc: 8},
		{name: "tbnz", code: []string{"tbnz x0, #40, #12"}, in: regs{0: 1 << 40}, steps: 1, pc: 12},
		{name: "tbnz-w", code: []string{"tbnz w0, #3, #-8"}, in: regs{0: 8}, steps: 1, pc: ^uint64(7)},
		{name: "br", code: []string{"br x1"}, in: regs{1: testCode + 64}, steps: 1, pc: 64},
		{name: "blr", code: []string{"blr x1"}, in: regs{1: testCode + 64}, steps: 1, pc: 64, want: regs{30: testCode + 4}},
		{name: "blr-x30", code: []string{"blr x30"}, in: regs{30: testCode + 64}, steps: 1, pc: 64, want: regs{30: testCode + 4}},
		{name: "ret", code: []string{"ret"}, in: regs{30: testCode + 32}, steps: 1, pc: 32},
		{name: "ret-x1", code: []string{"ret x1"}, in: regs{1: testCode + 32}, steps: 1, pc: 32},
		{name: "call-return", code: []string{"bl #8", "b #0", "mov x0, #7", "ret"}, steps: 4, pc: 4, want: regs{0: 7}},
		{name: "loop", code: []string{"mov x0, #5", "subs x0, x0, #1", "b.ne #-4", "nop"}, steps: 11, pc: 12, want: regs{0: 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, c, _ := newTestMachine(t, prog(tc.code...))
			for r, v := range tc.in {
				c.SetX(r, v)
			}
			setFlags(c, tc.flags)
			if err := m.Step(tc.steps); err != nil {
				t.Fatal(err)
			}
			if got, want := c.PC(), testCode+tc.pc; got != want {
				t.Fatalf("pc = %#x, want %#x", got, want)
			}
			for r, want := range tc.want {
				if got := c.X(r); got != want {
					t.Errorf("x%d = %#x, want %#x", r, got, want)
				}
			}
		})
	}
}
