package machine

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/kpemu/kpemu/internal/waitfor"
)

// SMP tests with guests that share memory, run in deterministic and in
// parallel mode (where `go test -race` checks the host side).
//
// Layout: CPU 0 boots at testCode into smpPrologue, which powers on CPUs
// 1..ncpu-1 (x20 = ncpu) at smpWorker with x0 = their index and then
// joins them there with x0 = 0. The worker runs the case's body, then
// smpEpilogue: each CPU sets its done flag (data+0x100+8*index) with
// STLR; CPU 0 waits for every flag and powers the machine off, the
// others power themselves off. Bodies keep x0 and x20.
const (
	smpWorker  = RAMBase + 0x30000
	smpVectors = RAMBase + 0x50000 // VBAR for the cases with a handler
)

var smpPrologue = []string{
	"mov x19, #1",
	"mov x0, #3", "movk x0, #0xc400, lsl #16", // CPU_ON (SMC64)
	"mov x1, x19", "mov x2, #0x40030000", "mov x3, x19", "hvc #0",
	"add x19, x19, #1", "cmp x19, x20", "b.ne #-32",
	"mov x0, #0", "mov x9, #0x40030000", "br x9",
}

var smpEpilogue = []string{
	"mov x9, #0x40020000",
	"add x10, x9, #0x100",
	"mov x11, #1",
	"add x12, x10, x0, lsl #3",
	"stlr x11, [x12]",
	"cbnz x0, #44",
	"mov x13, #0",
	"add x15, x10, x13, lsl #3",
	"ldar x14, [x15]",
	"cbz x14, #-4",
	"add x13, x13, #1",
	"cmp x13, x20",
	"b.ne #-20",
	"mov x0, #8", "movk x0, #0x8400, lsl #16", "hvc #0", // SYSTEM_OFF
	"mov x0, #2", "movk x0, #0x8400, lsl #16", "hvc #0", // CPU_OFF
}

type smpCase struct {
	name    string
	ncpu    int
	body    []string
	handler []string // IRQ handler at smpVectors+0x280, if any
	setup   func(t *testing.T, m *Machine)
	want    map[uint64]uint64 // offset from testData → 64-bit value after
	check   func(t *testing.T, m *Machine)
}

// smpFunc is where the cases that call a function on another page than
// their body's (x23) keep it, written by their setup.
const smpFunc = RAMBase + 0x38000

// sbRounds is how many rounds the store-buffering case runs.
const sbRounds = 5000

// The spinlock bodies increment data+0 without atomics inside the lock
// (data+0x40); a broken lock loses increments.
var smpCases = []smpCase{
	{
		name: "ldxr-stxr-counter", ncpu: 4,
		body: []string{
			"mov x9, #0x40020000",
			"mov x1, #10000",
			"ldxr x2, [x9]",
			"add x2, x2, #1",
			"stxr w3, x2, [x9]",
			"cbnz w3, #-12",
			"subs x1, x1, #1",
			"b.ne #-20",
		},
		want: map[uint64]uint64{0: 40000},
	},
	{
		name: "ldadd-counter", ncpu: 4,
		body: []string{
			"mov x9, #0x40020000",
			"add x8, x9, #8",
			"mov x1, #10000",
			"mov x2, #1",
			"ldaddal x2, x3, [x9]",
			"staddl w2, [x8]",
			"subs x1, x1, #1",
			"b.ne #-12",
		},
		want: map[uint64]uint64{0: 40000, 8: 40000},
	},
	{
		name: "spinlock-ldaxr-stxr", ncpu: 4,
		body: []string{
			"mov x9, #0x40020000",
			"add x8, x9, #0x40",
			"mov x1, #3000",
			"mov w4, #1",
			"ldaxr w5, [x8]",
			"cbnz w5, #-4",
			"stxr w6, w4, [x8]",
			"cbnz w6, #-12",
			"ldr x2, [x9]",
			"add x2, x2, #1",
			"str x2, [x9]",
			"stlr wzr, [x8]",
			"subs x1, x1, #1",
			"b.ne #-36",
		},
		want: map[uint64]uint64{0: 12000, 0x40: 0},
	},
	{
		name: "spinlock-casa", ncpu: 4,
		body: []string{
			"mov x9, #0x40020000",
			"add x8, x9, #0x40",
			"mov x1, #3000",
			"mov w4, #1",
			"mov w5, #0",
			"casa w5, w4, [x8]",
			"cbnz w5, #-8",
			"ldr x2, [x9]",
			"add x2, x2, #1",
			"str x2, [x9]",
			"stlr wzr, [x8]",
			"subs x1, x1, #1",
			"b.ne #-32",
		},
		want: map[uint64]uint64{0: 12000, 0x40: 0},
	},
	{
		name: "spinlock-swpa", ncpu: 4,
		body: []string{
			"mov x9, #0x40020000",
			"add x8, x9, #0x40",
			"mov x1, #3000",
			"mov w4, #1",
			"swpa w4, w5, [x8]",
			"cbnz w5, #-4",
			"ldr x2, [x9]",
			"add x2, x2, #1",
			"str x2, [x9]",
			"swpl wzr, w6, [x8]",
			"subs x1, x1, #1",
			"b.ne #-28",
		},
		want: map[uint64]uint64{0: 12000, 0x40: 0},
	},
	{
		// CPU 0 publishes data+0x200 = i, then the flag data+0x208 = i
		// with STLR and waits for the ack data+0x210 = i; CPU 1 waits for
		// the flag with LDAR and records a stale data word in data+0x218.
		name: "message-passing", ncpu: 2,
		body: []string{
			"mov x9, #0x40020000",
			"add x5, x9, #0x208",
			"add x6, x9, #0x210",
			"mov x1, #0",
			"mov x2, #10000",
			"cbnz x0, #40",
			"add x1, x1, #1",
			"str x1, [x9, #0x200]",
			"stlr x1, [x5]",
			"ldar x7, [x6]",
			"cmp x7, x1",
			"b.ne #-8",
			"cmp x1, x2",
			"b.ne #-28",
			"b #48",
			"add x1, x1, #1",
			"ldar x7, [x5]",
			"cmp x7, x1",
			"b.ne #-8",
			"ldr x3, [x9, #0x200]",
			"cmp x3, x1",
			"b.eq #8",
			"str x1, [x9, #0x218]",
			"stlr x1, [x6]",
			"cmp x1, x2",
			"b.ne #-40",
		},
		want: map[uint64]uint64{0x210: 10000, 0x218: 0},
	},
	{
		// CPU 0 sends SGI 0 to CPU 1; each handler counts in x18 and
		// replies to the other CPU, CPU 0 only until it has 1000. Each
		// CPU stores its count at data+0x400+8*index.
		name: "sgi-ping-pong", ncpu: 2,
		body: []string{
			"mov x18, #0",
			"mov x16, #0x40050000",
			"msr vbar_el1, x16",
			"mov x16, #0x8000000",
			"mov w17, #1",
			"str w17, [x16]",
			"mov x16, #0x8010000",
			"str w17, [x16]",
			"mov w17, #0xff",
			"str w17, [x16, #4]",
			"msr daifclr, #2",
			"cbnz x0, #20",
			"mov x16, #0x8000000",
			"mov w17, #0x20000",
			"str w17, [x16, #0xf00]",
			"nop",
			"wfi",
			"cmp x18, #1000",
			"b.lo #-8",
			"msr daifset, #2",
			"mov x9, #0x40020000",
			"add x10, x9, #0x400",
			"str x18, [x10, x0, lsl #3]",
		},
		handler: []string{
			"mov x16, #0x8010000",
			"ldr w17, [x16, #0xc]",
			"str w17, [x16, #0x10]",
			"add x18, x18, #1",
			"cbnz x0, #12",
			"cmp x18, #1000",
			"b.hs #28",
			"mov x16, #0x8000000",
			"mov w17, #0x10000",
			"eor w15, w0, #1",
			"lsl w17, w17, w15",
			"str w17, [x16, #0xf00]",
			"nop",
			"eret",
		},
		want: map[uint64]uint64{0x400: 1000, 0x408: 1000},
	},
	{
		// CPU 1 spins on a loop holding the instruction "mov x3, #1"
		// until it sees CPU 0's flag (data+0x288), then executes ISB and
		// that instruction once more and stores x3 at data+0x300. CPU 0
		// waits until CPU 1 has run the old code (flag data+0x280), then
		// patches it to "mov x3, #2" with the cache maintenance Linux
		// uses, and sets the flag with STLR. The decode cache must not
		// run the stale instruction after the ISB.
		name: "code-patching", ncpu: 2,
		body: []string{
			"mov x9, #0x40020000",
			"add x5, x9, #0x280",
			"add x6, x9, #0x288",
			"cbnz x0, #40",
			"ldar x7, [x5]",
			"cbz x7, #-4",
			"str w21, [x22]",
			"dc cvau, x22",
			"dsb ish",
			"ic ivau, x22",
			"dsb ish",
			"stlr x7, [x6]",
			"b #28",
			"ldar x7, [x6]",
			"isb",
			"mov x3, #1", // patched: body index 15
			"stlr x3, [x5]",
			"cbz x7, #-16",
			"str x3, [x9, #0x300]",
		},
		setup: func(t *testing.T, m *Machine) {
			m.CPU(0).SetX(21, uint64(I("mov x3, #2")))
			m.CPU(0).SetX(22, smpWorker+4*15)
		},
		want: map[uint64]uint64{0x300: 2},
	},
}

// The cases that check parallel mode's translated code, whose stores and
// fences differ there.
var smpCodeCases = []smpCase{
	{
		// CPU 1 calls a function on another page (smpFunc: "mov x3, #1;
		// ret"), counting its calls in data+0x280, until it sees CPU 0's
		// flag (data+0x288); then it executes ISB, calls it once more
		// and stores x3 at data+0x300. CPU 0 waits for 100 calls, so
		// that CPU 1 runs them translated, then patches the function to
		// "mov x3, #2" and sets the flag. Translated code reaches the
		// function's block through the jump cache, which must not keep
		// the stale block after the ISB.
		name: "code-patching-call", ncpu: 2,
		body: []string{
			"mov x9, #0x40020000",
			"add x5, x9, #0x280",
			"add x6, x9, #0x288",
			"mov x23, #0x8000",
			"movk x23, #0x4003, lsl #16",
			"mov x8, #0",
			"cbnz x0, #44",
			"ldar x7, [x5]",
			"cmp x7, #100",
			"b.lo #-8",
			"str w21, [x23]",
			"dc cvau, x23",
			"dsb ish",
			"ic ivau, x23",
			"dsb ish",
			"stlr x7, [x6]",
			"b #32",
			"ldar x7, [x6]",
			"isb",
			"blr x23",
			"add x8, x8, #1",
			"stlr x8, [x5]",
			"cbz x7, #-20",
			"str x3, [x9, #0x300]",
		},
		setup: func(t *testing.T, m *Machine) {
			for i, w := range prog("mov x3, #1", "ret") {
				mustWrite32(t, m, smpFunc+uint64(4*i), w)
			}
			m.CPU(0).SetX(21, uint64(I("mov x3, #2")))
		},
		want: map[uint64]uint64{0x300: 2},
	},
	{
		// CPU 0 stores "mov x3, #i" into smpFunc and calls it, for i
		// from 0 to 63, counting calls that returned another x3 in
		// data+0x300. Its first store maps smpFunc for stores before
		// the page holds code, so that later ones, once translated, go
		// straight to RAM: they must still invalidate the page.
		name: "self-modifying-store", ncpu: 2,
		body: []string{
			"cbnz x0, #76",
			"mov x9, #0x40020000",
			"mov x22, #0x8000",
			"movk x22, #0x4003, lsl #16",
			"mov x1, #0",
			"mov x10, #0",
			"mov w4, #3",
			"movk w4, #0xd280, lsl #16",
			"add w4, w4, w1, lsl #5",
			"str w4, [x22]",
			"blr x22",
			"cmp x3, x1",
			"b.eq #8",
			"add x10, x10, #1",
			"add x1, x1, #1",
			"cmp x1, #64",
			"b.ne #-40",
			"str x10, [x9, #0x300]",
			"str x1, [x9, #0x308]",
		},
		setup: func(t *testing.T, m *Machine) {
			mustWrite32(t, m, smpFunc+4, I("ret"))
		},
		want: map[uint64]uint64{0x300: 0, 0x308: 64},
	},
	{
		// Store buffering, in lockstep rounds k = 1..sbRounds: each CPU
		// stores k to its flag (data+0x400+64*index), DMB ISH, loads the
		// other's flag and records in its byte array (data+0x1000+
		// 0x4000*index) whether it was older than k, then waits for it
		// to be k. Sequential consistency, which DMB restores, forbids
		// both CPUs seeing the old value in the same round; x86 without
		// a fence allows it (a store waits in the store buffer).
		name: "store-buffering", ncpu: 2,
		body: []string{
			"mov x9, #0x40020000",
			"add x10, x9, #0x400",
			"add x11, x10, x0, lsl #6",
			"eor x12, x0, #1",
			"add x12, x10, x12, lsl #6",
			"add x13, x9, #0x1000",
			"add x13, x13, x0, lsl #14",
			"mov x1, #1",
			"mov x2, #5000", // sbRounds
			"str x1, [x11]",
			"dmb ish",
			"ldr x3, [x12]",
			"cmp x3, x1",
			"cset w4, lo",
			"strb w4, [x13, x1]",
			"ldr x3, [x12]",
			"cmp x3, x1",
			"b.lo #-8",
			"add x1, x1, #1",
			"cmp x1, x2",
			"b.ls #-44",
		},
		check: func(t *testing.T, m *Machine) {
			both := 0
			for k := uint64(1); k <= sbRounds; k++ {
				b0, b1 := make([]byte, 1), make([]byte, 1)
				if err := m.ReadMem(testData+0x1000+k, b0); err != nil {
					t.Fatal(err)
				}
				if err := m.ReadMem(testData+0x5000+k, b1); err != nil {
					t.Fatal(err)
				}
				if b0[0] == 1 && b1[0] == 1 {
					both++
				}
			}
			if both != 0 {
				t.Errorf("both CPUs saw the other's old flag in %d of %d rounds", both, sbRounds)
			}
		},
	},
}

// runSMP runs an smpCase to power-off and checks the memory it wants.
func runSMP(t *testing.T, tc smpCase, parallel bool) {
	m, err := New(Config{RAMSize: testRAM, NumCPUs: tc.ncpu, Parallel: parallel, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range prog(smpPrologue...) {
		mustWrite32(t, m, testCode+uint64(4*i), w)
	}
	for i, w := range prog(append(append([]string{}, tc.body...), smpEpilogue...)...) {
		mustWrite32(t, m, smpWorker+uint64(4*i), w)
	}
	for i, w := range prog(tc.handler...) {
		mustWrite32(t, m, smpVectors+0x280+uint64(4*i), w)
	}
	m.Boot(testCode, 0)
	m.CPU(0).SetX(20, uint64(tc.ncpu))
	if tc.setup != nil {
		tc.setup(t, m)
	}
	ctx, cancel := context.WithDeadline(context.Background(), waitfor.Deadline(t))
	defer cancel()
	if err := m.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if !m.PoweredOff() {
		t.Fatalf("did not power off; cpu pcs %#x %#x", m.CPU(0).PC(), m.CPU(1).PC())
	}
	for off, want := range tc.want {
		if got := mustRead64(t, m, testData+off); got != want {
			t.Errorf("mem[data+%#x] = %d, want %d", off, got, want)
		}
	}
	if tc.check != nil {
		tc.check(t, m)
	}
}

func TestSMPSharedMemory(t *testing.T) {
	for _, tc := range append(smpCases, smpCodeCases...) {
		for _, mode := range []struct {
			name     string
			parallel bool
		}{{"deterministic", false}, {"parallel", true}} {
			t.Run(tc.name+"/"+mode.name, func(t *testing.T) {
				runSMP(t, tc, mode.parallel)
			})
		}
	}
}

// BenchmarkSMP2 compares deterministic and parallel throughput on two
// vCPUs that each run the benchmark loop on their own data, sharing one
// LDADD counter every iteration.
func BenchmarkSMP2(b *testing.B) {
	body := []string{
		"mov x9, #0x40020000",
		"add x9, x9, x0, lsl #12",
		"mov x8, #0x40020000",
		"mov x1, #0x100000",
		"mov x2, #1",
		"ldr x3, [x9, #8]",
		"add x3, x3, x1",
		"str x3, [x9, #8]",
		"stadd x2, [x8]",
		"eor x4, x3, x1, lsl #3",
		"subs x1, x1, #1",
		"b.ne #-24",
	}
	for _, mode := range []struct {
		name     string
		parallel bool
	}{{"deterministic", false}, {"parallel", true}} {
		b.Run(mode.name, func(b *testing.B) {
			var insts uint64
			start := time.Now()
			for i := 0; i < b.N; i++ {
				m, err := New(Config{RAMSize: testRAM, NumCPUs: 2, Parallel: mode.parallel, Logger: slog.New(slog.DiscardHandler)})
				if err != nil {
					b.Fatal(err)
				}
				for i, w := range prog(smpPrologue...) {
					mustWrite32(b, m, testCode+uint64(4*i), w)
				}
				for i, w := range prog(append(append([]string{}, body...), smpEpilogue...)...) {
					mustWrite32(b, m, smpWorker+uint64(4*i), w)
				}
				m.Boot(testCode, 0)
				m.CPU(0).SetX(20, 2)
				if err := m.Run(context.Background()); err != nil {
					b.Fatal(err)
				}
				if got := mustRead64(b, m, testData); got != 2*0x100000 {
					b.Fatalf("counter %d", got)
				}
				insts += m.Stats().Instructions
			}
			b.ReportMetric(float64(insts)/time.Since(start).Seconds()/1e6, "MIPS")
		})
	}
}

// TestWFEYields: in deterministic mode a WFE or YIELD ends the vCPU's
// slice, so that a vCPU waiting for another (a spinlock's, a flag's)
// lets it run rather than spinning out its quantum.
func TestWFEYields(t *testing.T) {
	for _, hint := range []string{"wfe", "yield"} {
		for _, interpret := range []bool{false, true} {
			m, err := New(Config{RAMSize: testRAM, NumCPUs: 2, Interpret: interpret, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			for i, w := range prog("add x1, x1, #1", hint, "b #-8") {
				mustWrite32(t, m, testCode+uint64(4*i), w)
			}
			for i, w := range prog("add x2, x2, #1", "b #-4") {
				mustWrite32(t, m, testCode+0x100+uint64(4*i), w)
			}
			m.Boot(testCode, 0)
			waiter, other := m.CPU(0), m.CPU(1)
			other.on = true
			other.SetPC(testCode + 0x100)
			if err := m.Step(100_000); err != nil {
				t.Fatal(err)
			}
			// The waiter runs to its hint each turn, the other its
			// quantum (10,000 instructions): some ten turns each.
			if w, o := waiter.X(1), other.X(2); w > 20 || o < 45_000 {
				t.Errorf("%s, interpret %v: the waiter's loop ran %d times, the other's %d", hint, interpret, w, o)
			}
		}
	}
}
