package machine

import (
	"fmt"
	"log/slog"
	"testing"
)

// gicOp is one step of a GIC script: an access by a CPU, a device input,
// or a check of the published lines.
type gicOp struct {
	cpu  int
	op   string // "dw", "dr", "db" (byte write), "dbr" (byte read), "cw", "cr", "ppi", "spi", "lines"
	off  uint64
	v    uint64 // value written, input level (0/1), or lines
	want uint64 // for reads
}

func newGICMachine(t *testing.T, ncpu int) *Machine {
	t.Helper()
	m, err := New(Config{RAMSize: testRAM, NumCPUs: ncpu, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func runGICScript(t *testing.T, m *Machine, ops []gicOp) {
	t.Helper()
	g := m.gic
	for i, o := range ops {
		var got uint64
		check := false
		switch o.op {
		case "dw":
			g.distWrite(o.cpu, o.off, 4, o.v)
		case "db":
			g.distWrite(o.cpu, o.off, 1, o.v)
		case "dr":
			got, check = g.distRead(o.cpu, o.off, 4), true
		case "dbr":
			got, check = g.distRead(o.cpu, o.off, 1), true
		case "cw":
			g.cpuWrite(o.cpu, o.off, 4, o.v)
		case "cr":
			got, check = g.cpuRead(o.cpu, o.off, 4), true
		case "ppi":
			g.setPPI(o.cpu, int(o.off), o.v != 0)
		case "spi":
			g.setSPI(int(o.off), o.v != 0)
		case "lines":
			if l := m.CPU(o.cpu).interruptLines(); uint64(l) != o.v {
				t.Fatalf("step %d: cpu%d lines = %d, want %d", i, o.cpu, l, o.v)
			}
		default:
			t.Fatalf("step %d: bad op %q", i, o.op)
		}
		if check && got != o.want {
			t.Fatalf("step %d: cpu%d %s %#x = %#x, want %#x", i, o.cpu, o.op, o.off, got, o.want)
		}
	}
}

// gicOn enables the distributor and CPU interfaces of the first n CPUs for
// group 0 with every priority unmasked.
func gicOn(n int) []gicOp {
	ops := []gicOp{{op: "dw", off: gicdCTLR, v: 3}}
	for i := 0; i < n; i++ {
		ops = append(ops, gicOp{cpu: i, op: "cw", off: giccCTLR, v: 1}, gicOp{cpu: i, op: "cw", off: giccPMR, v: 0xff})
	}
	return ops
}

func TestGIC(t *testing.T) {
	cases := []struct {
		name string
		ncpu int
		ops  []gicOp
	}{
		{"identification", 4, []gicOp{
			{op: "dr", off: gicdTYPER, want: 8 | 3<<5},
			{op: "dr", off: gicdIIDR, want: gicdIIDRValue},
			{op: "dr", off: 0xfe0, want: 0x90},
			{op: "dr", off: 0xfe8, want: 0x2b},
			{op: "dr", off: 0xff0, want: 0x0d},
			{op: "dr", off: 0xffc, want: 0xb1},
			{op: "cr", off: giccIIDR, want: giccIIDRValue},
			{op: "cr", off: giccIAR, want: gicSpurious},
			{op: "cr", off: giccRPR, want: 0xff},
			{op: "dr", off: gicdICFGR, want: 0xaaaaaaaa},     // SGIs edge
			{op: "dr", off: gicdISENABLER, want: 0x0000ffff}, // SGIs always on
		}},
		{"spi to one target", 2, append(gicOn(2),
			gicOp{op: "db", off: gicdIPRIORITYR + 40, v: 0x80},
			gicOp{op: "db", off: gicdITARGETSR + 40, v: 2},
			gicOp{op: "dbr", off: gicdITARGETSR + 40, want: 2},
			gicOp{op: "dw", off: gicdISENABLER + 4, v: 1 << 8},
			gicOp{op: "spi", off: 40, v: 1},
			gicOp{cpu: 0, op: "lines", v: 0},
			gicOp{cpu: 1, op: "lines", v: lineIRQ},
			gicOp{cpu: 1, op: "cr", off: giccHPPIR, want: 40},
			gicOp{cpu: 1, op: "cr", off: giccIAR, want: 40},
			gicOp{cpu: 1, op: "lines", v: 0},
			gicOp{cpu: 1, op: "cr", off: giccRPR, want: 0x80},
			gicOp{op: "dr", off: gicdISACTIVER + 4, want: 1 << 8},
			gicOp{op: "spi", off: 40, v: 0},
			gicOp{cpu: 1, op: "cw", off: giccEOIR, v: 40},
			gicOp{cpu: 1, op: "cr", off: giccRPR, want: 0xff},
			gicOp{op: "dr", off: gicdISACTIVER + 4, want: 0},
			gicOp{cpu: 1, op: "lines", v: 0},
		)},
		{"level input stays pending while high", 1, append(gicOn(1),
			gicOp{op: "dw", off: gicdISENABLER, v: 1 << ppiVirtTimer},
			gicOp{op: "ppi", off: ppiVirtTimer, v: 1},
			gicOp{op: "lines", v: lineIRQ},
			gicOp{op: "cr", off: giccIAR, want: ppiVirtTimer},
			// Active and pending: not signalled again until EOI.
			gicOp{op: "lines", v: 0},
			gicOp{op: "dr", off: gicdISPENDR, want: 0x0 | 1<<ppiVirtTimer},
			gicOp{op: "cw", off: giccEOIR, v: ppiVirtTimer},
			gicOp{op: "lines", v: lineIRQ},
			gicOp{op: "ppi", off: ppiVirtTimer, v: 0},
			gicOp{op: "lines", v: 0},
			gicOp{op: "cr", off: giccIAR, want: gicSpurious},
		)},
		{"edge input latches", 1, append(gicOn(1),
			gicOp{op: "dw", off: gicdICFGR + 12, v: 2 << 2}, // INTID 49 edge
			gicOp{op: "dw", off: gicdISENABLER + 4, v: 1 << 17},
			gicOp{op: "spi", off: 49, v: 1},
			gicOp{op: "spi", off: 49, v: 0},
			gicOp{op: "lines", v: lineIRQ},
			gicOp{op: "dw", off: gicdICPENDR + 4, v: 1 << 17},
			gicOp{op: "lines", v: 0},
			gicOp{op: "dw", off: gicdISPENDR + 4, v: 1 << 17},
			gicOp{op: "cr", off: giccIAR, want: 49},
			gicOp{op: "cw", off: giccEOIR, v: 49},
			gicOp{op: "lines", v: 0},
		)},
		{"an input held high pends again when made level-sensitive", 1, append(gicOn(1),
			gicOp{op: "dw", off: gicdICFGR + 12, v: 2 << 2}, // INTID 49 edge
			gicOp{op: "dw", off: gicdISENABLER + 4, v: 1 << 17},
			gicOp{op: "spi", off: 49, v: 1},
			gicOp{op: "cr", off: giccIAR, want: 49},
			gicOp{op: "cw", off: giccEOIR, v: 49},
			gicOp{op: "lines", v: 0}, // the edge was taken; the input stays high
			gicOp{op: "dw", off: gicdICFGR + 12, v: 0},
			gicOp{op: "lines", v: lineIRQ},
			gicOp{op: "cr", off: giccIAR, want: 49},
		)},
		{"sgi filters and source", 4, append(gicOn(4),
			gicOp{cpu: 2, op: "dw", off: gicdSGIR, v: 0b1010<<16 | 5}, // list: CPUs 1 and 3
			gicOp{cpu: 0, op: "lines", v: 0},
			gicOp{cpu: 1, op: "lines", v: lineIRQ},
			gicOp{cpu: 2, op: "lines", v: 0},
			gicOp{cpu: 3, op: "lines", v: lineIRQ},
			gicOp{cpu: 1, op: "dbr", off: gicdSPENDSGIR + 5, want: 1 << 2},
			gicOp{cpu: 1, op: "cr", off: giccIAR, want: 2<<10 | 5},
			gicOp{cpu: 1, op: "cw", off: giccEOIR, v: 2<<10 | 5},
			gicOp{cpu: 3, op: "dbr", off: gicdCPENDSGIR + 5, want: 1 << 2},
			gicOp{cpu: 3, op: "db", off: gicdCPENDSGIR + 5, v: 1 << 2},
			gicOp{cpu: 3, op: "lines", v: 0},
			gicOp{cpu: 0, op: "dw", off: gicdSGIR, v: 1<<24 | 7}, // all but self
			gicOp{cpu: 0, op: "lines", v: 0},
			gicOp{cpu: 2, op: "cr", off: giccIAR, want: 7},
			gicOp{cpu: 3, op: "dw", off: gicdSGIR, v: 2<<24 | 1}, // self
			gicOp{cpu: 3, op: "cr", off: giccIAR, want: 3<<10 | 1},
		)},
		{"priority, preemption and mask", 1, append(gicOn(1),
			gicOp{op: "dw", off: gicdIPRIORITYR + 32, v: 0x40a0}, // 32: 0xa0, 33: 0x40
			gicOp{op: "dw", off: gicdISENABLER + 4, v: 3},
			gicOp{op: "spi", off: 32, v: 1},
			gicOp{op: "cr", off: giccIAR, want: 32},
			gicOp{op: "spi", off: 33, v: 1}, // higher priority preempts
			gicOp{op: "lines", v: lineIRQ},
			gicOp{op: "cr", off: giccIAR, want: 33},
			gicOp{op: "cr", off: giccRPR, want: 0x40},
			gicOp{op: "cw", off: giccEOIR, v: 33},
			gicOp{op: "cr", off: giccRPR, want: 0xa0},
			gicOp{op: "cw", off: giccEOIR, v: 32},
			gicOp{op: "cw", off: giccPMR, v: 0x40}, // masks both
			gicOp{op: "lines", v: 0},
			gicOp{op: "cr", off: giccIAR, want: gicSpurious},
			gicOp{op: "cr", off: giccHPPIR, want: gicSpurious},
			gicOp{op: "cw", off: giccPMR, v: 0x50},
			gicOp{op: "cr", off: giccHPPIR, want: 33},
			gicOp{op: "cr", off: giccIAR, want: 33},
		)},
		{"groups", 1, []gicOp{
			{op: "dw", off: gicdCTLR, v: 3},
			{op: "cw", off: giccPMR, v: 0xff},
			{op: "dw", off: gicdIGROUPR + 4, v: 1}, // 32 in group 1
			{op: "dw", off: gicdISENABLER + 4, v: 3},
			{op: "spi", off: 32, v: 1},
			{op: "lines", v: 0}, // group 1 disabled at the CPU interface
			{op: "cw", off: giccCTLR, v: giccEnableGrp1},
			{op: "lines", v: lineIRQ},
			{op: "cr", off: giccIAR, want: gicGroup1Ack},
			{op: "cr", off: giccAIAR, want: 32},
			{op: "cw", off: giccAEOIR, v: 32},
			{op: "spi", off: 32, v: 0},
			{op: "cw", off: giccCTLR, v: giccEnableGrp0 | giccFIQEn},
			{op: "spi", off: 33, v: 1},
			{op: "lines", v: lineFIQ},
			{op: "dr", off: gicdIGROUPR + 4, want: 1},
		}},
		{"eoimode split", 1, append(gicOn(1),
			gicOp{op: "cw", off: giccCTLR, v: giccEnableGrp0 | giccEOImode},
			gicOp{op: "dw", off: gicdISENABLER + 4, v: 1},
			gicOp{op: "dw", off: gicdISPENDR + 4, v: 1},
			gicOp{op: "cr", off: giccIAR, want: 32},
			gicOp{op: "cw", off: giccEOIR, v: 32},
			gicOp{op: "cr", off: giccRPR, want: 0xff},
			gicOp{op: "dr", off: gicdISACTIVER + 4, want: 1},
			gicOp{op: "cw", off: giccDIR, v: 32},
			gicOp{op: "dr", off: gicdISACTIVER + 4, want: 0},
		)},
		{"banked ppi state and targets", 2, append(gicOn(2),
			gicOp{cpu: 1, op: "dw", off: gicdISENABLER, v: 1 << ppiPhysTimer},
			gicOp{cpu: 0, op: "dr", off: gicdISENABLER, want: 0xffff},
			gicOp{cpu: 1, op: "dr", off: gicdISENABLER, want: 0xffff | 1<<ppiPhysTimer},
			gicOp{cpu: 1, op: "dbr", off: gicdITARGETSR + ppiPhysTimer, want: 2},
			gicOp{cpu: 1, op: "db", off: gicdITARGETSR + ppiPhysTimer, v: 1},
			gicOp{cpu: 1, op: "dbr", off: gicdITARGETSR + ppiPhysTimer, want: 2},
			gicOp{cpu: 0, op: "ppi", off: ppiPhysTimer, v: 1},
			gicOp{cpu: 0, op: "lines", v: 0}, // not enabled on CPU 0
			gicOp{cpu: 1, op: "ppi", off: ppiPhysTimer, v: 1},
			gicOp{cpu: 1, op: "lines", v: lineIRQ},
		)},
		{"distributor disabled", 1, []gicOp{
			{op: "cw", off: giccCTLR, v: 1},
			{op: "cw", off: giccPMR, v: 0xff},
			{op: "dw", off: gicdISENABLER + 4, v: 1},
			{op: "spi", off: 32, v: 1},
			{op: "lines", v: 0},
			{op: "dw", off: gicdCTLR, v: 1},
			{op: "lines", v: lineIRQ},
		}},
		{"uniprocessor targets raz", 1, append(gicOn(1),
			gicOp{op: "db", off: gicdITARGETSR + 40, v: 0},
			gicOp{op: "dbr", off: gicdITARGETSR + 40, want: 0},
			gicOp{op: "dw", off: gicdISENABLER + 4, v: 1 << 8},
			gicOp{op: "spi", off: 40, v: 1},
			gicOp{op: "lines", v: lineIRQ},
		)},
		{"bad accesses ignored", 1, []gicOp{
			{op: "dw", off: 0x4000, v: 1},
			{op: "dr", off: 0x4000, want: 0},
			{op: "cw", off: 0x800, v: 1},
			{op: "cr", off: 0x800, want: 0},
			{op: "cw", off: giccEOIR, v: 1023},
			{op: "cw", off: giccEOIR, v: 5}, // nothing active
			{op: "cr", off: giccRPR, want: 0xff},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			runGICScript(t, newGICMachine(t, tc.ncpu), tc.ops)
		})
	}
}

// TestGICGuestAccess goes through the bus: a guest store to GICD_SGIR
// pends an SGI on the sending CPU's own interface.
func TestGICGuestAccess(t *testing.T) {
	m, c, _ := newTestMachine(t, dprog(
		"mov x1, #0x8000000", "mov w2, #3", "str w2, [x1]", // GICD_CTLR
		"mov x1, #0x8010000", "mov w2, #1", "str w2, [x1]", // GICC_CTLR
		"mov w2, #0xff", "str w2, [x1, #4]", // GICC_PMR
		"mov x1, #0x8000000", "mov w2, #0x2000000", "movk w2, #6", "str w2, [x1, #0xf00]", // SGIR: self, SGI 6
		"mov x1, #0x8010000", "ldr w3, [x1, #0xc]", // IAR
		"ldr w4, [x1, #0x14]", // RPR
		"str w3, [x1, #0x10]", // EOIR
		"ldr w5, [x1, #0x14]",
	))
	if err := m.Step(17); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%#x %#x %#x", c.X(3), c.X(4), c.X(5)); got != "0x6 0x0 0xff" {
		t.Fatalf("IAR, RPR, RPR after EOI = %s", got)
	}
}
