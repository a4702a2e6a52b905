package machine

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"log/slog"
	"testing"
	"time"
)

// coremarkProg is the compute-bound benchmark program (testdata/coremark/),
// which scripts/bench-vs-qemu.sh also runs on QEMU.
const coremarkProg = "testdata/coremark.elf"

// coremarkCRC is the CRC every iteration of coremarkProg computes, as QEMU
// computes it: the program prints it whatever the iteration count.
const coremarkCRC = 0x0b51

// runCoreMark boots coremarkProg on a fresh deterministic single-CPU
// machine with its iteration count patched to iters, runs it to power-off,
// checks what it printed, and returns the instructions retired and the
// host time the run took (loading the image excluded).
func runCoreMark(tb testing.TB, iters uint32) (uint64, time.Duration) {
	tb.Helper()
	return runCoreMarkWith(tb, iters, false)
}

// runCoreMarkWith is runCoreMark, with block translation off if interpret.
func runCoreMarkWith(tb testing.TB, iters uint32, interpret bool) (uint64, time.Duration) {
	tb.Helper()
	var out bytes.Buffer
	m, err := New(Config{NumCPUs: 1, Console: &out, Logger: slog.New(slog.DiscardHandler), Interpret: interpret})
	if err != nil {
		tb.Fatal(err)
	}
	entry := loadELF(tb, m, coremarkProg)
	// The program reads its count from this .data word; patching guest
	// RAM after loading leaves the committed image as QEMU runs it.
	var word [4]byte
	binary.LittleEndian.PutUint32(word[:], iters)
	if err := m.WriteMem(elfSymbol(tb, coremarkProg, "iterations"), word[:]); err != nil {
		tb.Fatal(err)
	}
	m.Boot(entry, 0)
	if b, ok := tb.(*testing.B); ok {
		b.ResetTimer() // ns/op is the guest's run, not building the machine
	}
	start := time.Now()
	for !m.PoweredOff() {
		if err := m.Step(1 << 24); err != nil {
			tb.Fatal(err)
		}
	}
	el := time.Since(start)
	want := fmt.Sprintf("coremark iterations %d crc 0x%04x chain ", iters, coremarkCRC)
	if got := out.String(); !bytes.HasPrefix(out.Bytes(), []byte(want)) ||
		!bytes.HasSuffix(out.Bytes(), []byte(" errors 0\ndone\n")) {
		tb.Fatalf("coremark printed %q, want %q...errors 0", got, want)
	}
	return m.Stats().Instructions, el
}

// elfSymbol returns the address of a symbol of an ELF image; for these
// images, run with the MMU off, it is also the physical address.
func elfSymbol(tb testing.TB, path, name string) uint64 {
	tb.Helper()
	f, err := elf.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		tb.Fatal(err)
	}
	for _, s := range syms {
		if s.Name == name {
			return s.Value
		}
	}
	tb.Fatalf("%s: no symbol %s", path, name)
	return 0
}

// BenchmarkCoreMark runs the CoreMark-like program from boot to power-off
// with b.N iterations of its workload (about 200k guest instructions
// each), so ns/op is the host time of one iteration and MIPS the guest
// instructions retired per host second: the same figure `make bench`
// (scripts/bench-vs-qemu.sh) compares with QEMU's. The check of the
// printed CRC keeps a speed-up from being a wrong answer.
func BenchmarkCoreMark(b *testing.B) {
	b.ReportAllocs()
	insns, el := runCoreMark(b, uint32(b.N))
	b.ReportMetric(float64(insns)/el.Seconds()/1e6, "MIPS")
	b.ReportMetric(float64(insns)/float64(b.N), "insns/op")
}

// BenchmarkCoreMarkInterpreted is BenchmarkCoreMark with block translation
// off: the baseline the translator's speed-up is the ratio to.
func BenchmarkCoreMarkInterpreted(b *testing.B) {
	b.ReportAllocs()
	insns, el := runCoreMarkWith(b, uint32(b.N), true)
	b.ReportMetric(float64(insns)/el.Seconds()/1e6, "MIPS")
	b.ReportMetric(float64(insns)/float64(b.N), "insns/op")
}

// TestCoreMark runs a few iterations of the benchmark program: its CRC must
// stay what QEMU computes (scripts/bench-vs-qemu.sh compares the full run).
func TestCoreMark(t *testing.T) {
	runCoreMark(t, 3)
}
