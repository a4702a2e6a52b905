package machine

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"testing"
)

// Test memory layout inside RAM.
const (
	testVBAR = RAMBase + 0x8000  // vector table: every entry is WFI, so an exception parks the CPU
	testCode = RAMBase + 0x10000 // the program under test
	testData = RAMBase + 0x20000 // scratch data
	testRAM  = 4 << 20
)

var asmOnce = sync.OnceValue(asmTable)

// I returns the encoding of one line of assembly (see testdata/genasm.sh).
func I(line string) uint32 {
	w, ok := asmOnce()[line]
	if !ok {
		panic(fmt.Sprintf("instruction %q missing from asm_table_test.go: run testdata/genasm.sh", line))
	}
	return w
}

// prog encodes lines of assembly.
func prog(lines ...string) []uint32 {
	out := make([]uint32, len(lines))
	for i, l := range lines {
		out[i] = I(l)
	}
	return out
}

// newTestMachine returns a booted machine with code at testCode and a
// parking vector table at VBAR_EL1.
func newTestMachine(t testing.TB, code []uint32) (*Machine, *CPU, *bytes.Buffer) {
	t.Helper()
	return newTestMachineCfg(t, code, false)
}

// newTestMachineCfg is newTestMachine, in parallel mode if asked (Step
// then runs the CPUs on the calling goroutine, through parallel mode's
// thread-safe paths).
func newTestMachineCfg(t testing.TB, code []uint32, parallel bool) (*Machine, *CPU, *bytes.Buffer) {
	t.Helper()
	return newTestMachineWith(t, code, Config{Parallel: parallel})
}

// newTestMachineWith is newTestMachine with cfg's mode (Parallel,
// Interpret).
func newTestMachineWith(t testing.TB, code []uint32, cfg Config) (*Machine, *CPU, *bytes.Buffer) {
	t.Helper()
	var console bytes.Buffer
	cfg.RAMSize, cfg.Console, cfg.Logger = testRAM, &console, slog.New(slog.DiscardHandler)
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	wfi := I("wfi")
	for off := uint64(0); off < 0x800; off += 4 {
		mustWrite32(t, m, testVBAR+off, wfi)
	}
	for i, w := range code {
		mustWrite32(t, m, testCode+uint64(4*i), w)
	}
	m.Boot(testCode, 0)
	c := m.CPU(0)
	c.SetSysReg(VBAR_EL1, testVBAR)
	c.SetSP(testData + 0x8000)
	return m, c, &console
}

func mustWrite32(t testing.TB, m *Machine, addr uint64, v uint32) {
	t.Helper()
	if err := m.Write32(addr, v); err != nil {
		t.Fatal(err)
	}
}

func mustWrite64(t testing.TB, m *Machine, addr uint64, v uint64) {
	t.Helper()
	if err := m.Write64(addr, v); err != nil {
		t.Fatal(err)
	}
}

func mustRead64(t testing.TB, m *Machine, addr uint64) uint64 {
	t.Helper()
	v, err := m.Read64(addr)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// flags renders NZCV as e.g. "nZCv" (upper case = set).
func flags(c *CPU) string {
	p := c.PSTATE()
	s := []byte("nzcv")
	for i := 0; i < 4; i++ {
		if p>>(31-i)&1 != 0 {
			s[i] -= 'a' - 'A'
		}
	}
	return string(s)
}

// setFlags sets NZCV from a string like "nZCv".
func setFlags(c *CPU, f string) {
	p := c.PSTATE() &^ (0xf << 28)
	for i := 0; i < 4 && i < len(f); i++ {
		if f[i] >= 'A' && f[i] <= 'Z' {
			p |= 1 << (31 - i)
		}
	}
	c.SetPSTATE(p)
}

// regCase is a table entry: run code from the given registers and flags,
// then compare registers and flags.
type regCase struct {
	name  string
	code  []string
	in    map[int]uint64
	flags string // initial NZCV, "" = all clear
	want  map[int]uint64
	nzcv  string // expected NZCV, "" = not checked
}

func runRegCases(t *testing.T, cases []regCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, c, _ := newTestMachine(t, prog(tc.code...))
			for r, v := range tc.in {
				if r == 31 {
					c.SetSP(v)
				} else {
					c.SetX(r, v)
				}
			}
			setFlags(c, tc.flags)
			if err := m.Step(uint64(len(tc.code))); err != nil {
				t.Fatal(err)
			}
			if got, want := c.PC(), testCode+4*uint64(len(tc.code)); got != want {
				t.Fatalf("pc = %#x, want %#x (ESR %#x)", got, want, c.SysReg(ESR_EL1))
			}
			for r, want := range tc.want {
				got := c.X(r)
				if r == 31 {
					got = c.SP()
				}
				if got != want {
					t.Errorf("x%d = %#x, want %#x", r, got, want)
				}
			}
			if tc.nzcv != "" && flags(c) != tc.nzcv {
				t.Errorf("nzcv = %s, want %s", flags(c), tc.nzcv)
			}
		})
	}
}

// envCount returns the positive count in environment variable name, or
// def if it is unset: how a randomized test is told to search further.
func envCount(t testing.TB, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive count", name, v)
	}
	return n
}
