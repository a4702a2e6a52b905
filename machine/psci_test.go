package machine

import (
	"log/slog"
	"testing"
)

// TestPSCICalls drives the firmware directly with SMCCC arguments and
// checks the exact return codes.
func TestPSCICalls(t *testing.T) {
	const entry = testCode + 0x100
	cases := []struct {
		name   string
		setup  func(m *Machine) // before the call
		args   [4]uint64
		want   uint64
		stop   bool
		verify func(t *testing.T, m *Machine)
	}{
		{name: "version", args: [4]uint64{psciVersion}, want: psciVersion10},
		{name: "migrate info type", args: [4]uint64{psciMigrateInfoType}, want: psciTOSNotPresent},
		{name: "migrate", args: [4]uint64{0xc4000005, 1}, want: psciNotSupported},
		{name: "migrate info up cpu", args: [4]uint64{0x84000007}, want: psciNotSupported},
		{name: "unknown", args: [4]uint64{0x8400ffff}, want: psciNotSupported},
		{name: "features cpu_on64", args: [4]uint64{psciFeatures, psciCPUOn | psci64}, want: psciSuccess},
		{name: "features affinity_info", args: [4]uint64{psciFeatures, psciAffinityInfo}, want: psciSuccess},
		{name: "features migrate", args: [4]uint64{psciFeatures, 0x84000005}, want: psciNotSupported},
		{name: "features smccc version", args: [4]uint64{psciFeatures, 0x80000000}, want: psciNotSupported},
		{name: "cpu_on", args: [4]uint64{psciCPUOn | psci64, 1, entry, 0x1234}, want: psciSuccess,
			verify: func(t *testing.T, m *Machine) {
				c := m.CPU(1)
				if !c.PoweredOn() || c.PC() != entry || c.X(0) != 0x1234 || c.EL() != 1 || c.PSTATE()&0x3c5 != 0x3c5 {
					t.Fatalf("cpu1 on %v pc %#x x0 %#x pstate %#x", c.PoweredOn(), c.PC(), c.X(0), c.PSTATE())
				}
			}},
		{name: "cpu_on smc32 ignores high bits", args: [4]uint64{psciCPUOn, 1<<32 | 2, entry, 7}, want: psciSuccess},
		{name: "cpu_on already on", args: [4]uint64{psciCPUOn | psci64, 0}, want: psciAlreadyOn},
		{name: "cpu_on no such cpu", args: [4]uint64{psciCPUOn | psci64, 4, entry}, want: psciInvalidParameters},
		{name: "cpu_on bad affinity bits", args: [4]uint64{psciCPUOn | psci64, 1 << 24, entry}, want: psciInvalidParameters},
		{name: "affinity on", args: [4]uint64{psciAffinityInfo | psci64, 0, 0}, want: psciAffinityOn},
		{name: "affinity off", args: [4]uint64{psciAffinityInfo, 3, 0}, want: psciAffinityOff},
		{name: "affinity level 1", args: [4]uint64{psciAffinityInfo, 0, 1}, want: psciInvalidParameters},
		{name: "affinity no such cpu", args: [4]uint64{psciAffinityInfo, 8, 0}, want: psciInvalidParameters},
		{name: "cpu_off", args: [4]uint64{psciCPUOff}, want: psciCPUOff, stop: true,
			verify: func(t *testing.T, m *Machine) {
				if m.CPU(0).PoweredOn() || m.PoweredOff() {
					t.Fatal("cpu0 still on, or the machine off")
				}
			}},
		{name: "system_off", args: [4]uint64{psciSystemOff}, want: psciSystemOff, stop: true,
			verify: func(t *testing.T, m *Machine) {
				if !m.PoweredOff() {
					t.Fatal("not powered off")
				}
			}},
		{name: "cpu_suspend", args: [4]uint64{psciCPUSuspend | psci64, 0}, want: psciSuccess, stop: true,
			verify: func(t *testing.T, m *Machine) {
				if !m.CPU(0).Waiting() {
					t.Fatal("cpu0 not in standby")
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := New(Config{RAMSize: testRAM, NumCPUs: 4, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			m.Boot(testCode, 0)
			c := m.CPU(0)
			for i, v := range tc.args {
				c.SetX(i, v)
			}
			if stop := c.psci(); stop != tc.stop {
				t.Fatalf("psci() = %v, want %v", stop, tc.stop)
			}
			if c.X(0) != tc.want {
				t.Fatalf("x0 = %#x, want %#x", c.X(0), tc.want)
			}
			if tc.verify != nil {
				tc.verify(t, m)
			}
		})
	}
}

// smpProg: CPU 0 starts CPU 1 with PSCI CPU_ON (context id in x0), then
// both add to a shared counter with LDXR/STXR; CPU 1 powers itself off and
// CPU 0 waits for AFFINITY_INFO to say OFF.
func smpProg() []uint32 {
	return dprog(
		// CPU 0 at testCode.
		"mov x0, #3", "movk x0, #0xc400, lsl #16", // CPU_ON64
		"mov x1, #1", "adr x2, #84", "mov x3, #0x42", "hvc #0",
		"mov x19, x0", // result
		"bl #32",      // add 1000 times
		"mov x0, #4", "movk x0, #0x8400, lsl #16", "mov x1, #1", "mov x2, #0", "hvc #0",
		"cbz x0, #-20", // ON (0): ask again
		"b #0",
		// add: x9 = testData, 1000 atomic increments.
		"mov x9, #0x40020000", "mov x10, #1000",
		"ldxr x11, [x9]", "add x11, x11, #1", "stxr w12, x11, [x9]", "cbnz w12, #-12",
		"subs x10, x10, #1", "b.ne #-20", "ret",
		// CPU 1 entry, instruction 24.
		"mov x20, x0", "bl #-40",
		"mov x0, #2", "movk x0, #0x8400, lsl #16", "hvc #0", // CPU_OFF
		"b #0",
	)
}

// TestSMPDeterministic runs the two-CPU program with different quanta
// chunkings: the result is exact and the per-CPU instruction counts are
// identical between runs with the same quantum.
func TestSMPDeterministic(t *testing.T) {
	run := func(quantum int, chunks []uint64) (counter, r0, r1 uint64) {
		m, err := New(Config{RAMSize: testRAM, NumCPUs: 2, Quantum: quantum, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range smpProg() {
			mustWrite32(t, m, testCode+uint64(4*i), w)
		}
		m.Boot(testCode, 0)
		for _, n := range chunks {
			if err := m.Step(n); err != nil {
				t.Fatal(err)
			}
		}
		c0, c1 := m.CPU(0), m.CPU(1)
		if c0.X(19) != psciSuccess || c1.X(20) != 0x42 || c1.PoweredOn() {
			t.Fatalf("CPU_ON result %#x, context %#x, cpu1 on %v", c0.X(19), c1.X(20), c1.PoweredOn())
		}
		if c0.PC() != testCode+14*4 {
			t.Fatalf("cpu0 pc %#x: did not see cpu1 off", c0.PC())
		}
		return mustRead64(t, m, testData), c0.Retired(), c1.Retired()
	}
	for _, q := range []int{7, 50, 10000} {
		a, a0, a1 := run(q, []uint64{30000})
		b, b0, b1 := run(q, []uint64{3, 1000, 17, 28980})
		if a != 2000 || b != 2000 {
			t.Fatalf("quantum %d: counter %d and %d, want 2000", q, a, b)
		}
		if a0 != b0 || a1 != b1 {
			t.Fatalf("quantum %d: instructions %d/%d vs %d/%d", q, a0, a1, b0, b1)
		}
	}
}
