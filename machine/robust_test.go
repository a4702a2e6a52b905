package machine

import (
	"math/rand/v2"
	"testing"
)

// executeWord runs one arbitrary instruction word at EL1 or EL0 with
// registers pointing into RAM, to check that no encoding can hurt the host.
func executeWord(t testing.TB, m *Machine, w uint32, el0 bool, rng *rand.Rand) {
	m.Boot(testCode, 0)
	c := m.CPU(0)
	c.SetSysReg(VBAR_EL1, testVBAR)
	for r := 0; r < 31; r++ {
		switch rng.IntN(3) {
		case 0:
			c.SetX(r, testData+rng.Uint64N(0x1000))
		case 1:
			c.SetX(r, rng.Uint64())
		}
	}
	c.SetSP(testData + 0x8000)
	// FP/SIMD enabled most of the time, so its handlers run (not just
	// the access trap), with random V registers and FPCR.
	if rng.IntN(4) != 0 {
		c.SetSysReg(CPACR_EL1, 3<<20)
		c.fp.cr = uint32(rng.Uint64()) & fpcrMask
		for i := range c.vr {
			c.vr[i] = [2]uint64{rng.Uint64(), rng.Uint64()}
		}
	}
	if el0 {
		c.SetPSTATE(0)
	}
	if err := m.Write32(testCode, w); err != nil {
		t.Fatal(err)
	}
	if err := m.Step(2); err != nil {
		t.Fatalf("word %#08x: %v", w, err)
	}
}

// TestRandomWords executes many random instruction words: whatever they
// decode to, the machine must not panic and must take an exception or
// move on.
func TestRandomWords(t *testing.T) {
	m, _, _ := newTestMachine(t, nil)
	rng := rand.New(rand.NewPCG(1, 2))
	n := 200000
	if testing.Short() {
		n = 20000
	}
	for i := 0; i < n; i++ {
		w := rng.Uint32()
		switch i % 3 {
		case 1: // FP/SIMD data processing
			w |= 7 << 25
		case 2: // SIMD&FP loads and stores
			w = w&^(5<<25) | 4<<25 | 1<<26
		}
		executeWord(t, m, w, i%4 == 0, rng)
	}
	st := m.Stats()
	if st.Undefined == 0 || st.Instructions == 0 {
		t.Fatalf("stats %+v", st)
	}
}

// FuzzExecute is the fuzzing form of TestRandomWords.
func FuzzExecute(f *testing.F) {
	for _, w := range []uint32{0, 0xd4200000, 0xd65f03c0, 0xf9400020, 0xd503207f, 0x9ac20c20,
		0x1e222820, 0x1f420c20, 0x4e21d420, 0x4cdf7800, 0x0d40a020, 0x4f000420, 0x5e61b820} {
		f.Add(w, false)
	}
	m, _, _ := newTestMachine(f, nil)
	f.Fuzz(func(t *testing.T, w uint32, el0 bool) {
		executeWord(t, m, w, el0, rand.New(rand.NewPCG(uint64(w), 0)))
	})
}
