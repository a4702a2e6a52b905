package kernel_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/machine"
)

// guestCall calls the kernel function fn(args...) on CPU 0 of a booted,
// stopped kernel by single-stepping it until it returns to a sentinel
// (panic's address, which nothing else reaches while only CPU 0 steps),
// with interrupts masked, and returns x0. It is for leaf functions of
// kernel text such as memset, which touch no per-task state; the CPU's
// registers are restored afterwards.
func guestCall(t *testing.T, k *kernel.Kernel, fn string, args ...uint64) uint64 {
	t.Helper()
	sym, ok := k.Kallsyms().LookupName(fn)
	if !ok {
		t.Fatalf("no symbol %s", fn)
	}
	ret, ok := k.Kallsyms().LookupName("panic")
	if !ok {
		t.Fatal("no symbol panic")
	}
	c := k.Machine().CPU(0)
	var saved [31]uint64
	for i := range saved {
		saved[i] = c.X(i)
	}
	pc, pstate, sp := c.PC(), c.PSTATE(), c.SP()
	defer func() {
		for i, v := range saved {
			c.SetX(i, v)
		}
		c.SetPSTATE(pstate)
		c.SetSP(sp)
		c.SetPC(pc)
	}()

	const el1h, daif = 0x5, 0xf << 6
	c.SetPSTATE(el1h | daif)
	for i, a := range args {
		c.SetX(i, a)
	}
	c.SetX(30, ret.Addr)
	c.SetPC(sym.Addr)
	for steps := 0; c.PC() != ret.Addr; steps++ {
		if steps > 1_000_000 {
			t.Fatalf("%s did not return", fn)
		}
		if ev := k.Machine().DebugRun(context.Background(), 0); ev.Reason == machine.StopError {
			t.Fatalf("%s: %v", fn, ev.Err)
		}
		if c.EL() != 1 || c.PSTATE()&0xf != el1h {
			t.Fatalf("%s took an exception at pc %#x (ELR %#x, ESR %#x)", fn, c.PC(), c.SysReg(machine.ELR_EL1), c.SysReg(machine.ESR_EL1))
		}
	}
	return c.X(0)
}

// The guest's memset, memcpy and memmove (arch/arm64/lib/*.S) against the
// obvious byte loops, for every length up to 80 and a few long ones, and
// every alignment of each end within 16 bytes.
func TestGuestStringFunctions(t *testing.T) {
	k := boot(t)
	stepUntilReady(t, k)
	// Scratch memory no one uses: the linear map 112 MiB into RAM.
	const base = kernel.PageOffset + 0x0700_0000
	const area = 3 * 8192
	rnd := rand.New(rand.NewPCG(1, 2))
	fill := func() []byte {
		b := make([]byte, area)
		for i := range b {
			b[i] = byte(rnd.Uint32())
		}
		if err := k.WriteMem(base, b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	check := func(what string, want []byte) {
		t.Helper()
		got := make([]byte, area)
		if err := k.ReadMem(base, got); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			i := 0
			for got[i] == want[i] {
				i++
			}
			t.Fatalf("%s: first difference at offset %d: got %#x, want %#x", what, i, got[i], want[i])
		}
	}
	var lengths []int
	for n := 0; n <= 80; n++ {
		lengths = append(lengths, n)
	}
	lengths = append(lengths, 127, 128, 129, 255, 256, 257, 300, 4095, 4096, 4097, 8000)

	for _, n := range lengths {
		for da := 0; da < 16; da++ {
			for _, c := range []byte{0, 0xa5} {
				want := fill()
				dst := 64 + da
				for i := 0; i < n; i++ {
					want[dst+i] = c
				}
				what := fmt.Sprintf("memset(base+%d, %#x, %d)", dst, c, n)
				if r := guestCall(t, k, "memset", base+uint64(dst), uint64(c)|0xff00, uint64(n)); r != base+uint64(dst) {
					t.Fatalf("%s returned %#x", what, r)
				}
				check(what, want)
			}
		}
	}
	for _, n := range lengths {
		if n > 4096 {
			continue // dst and src must not overlap in the area
		}
		for da := 0; da < 16; da += 1 {
			for sa := 0; sa < 16; sa += 3 {
				want := fill()
				dst, src := 64+da, 8192+sa
				copy(want[dst:dst+n], want[src:src+n])
				what := fmt.Sprintf("memcpy(base+%d, base+%d, %d)", dst, src, n)
				if r := guestCall(t, k, "memcpy", base+uint64(dst), base+uint64(src), uint64(n)); r != base+uint64(dst) {
					t.Fatalf("%s returned %#x", what, r)
				}
				check(what, want)
			}
		}
	}
	for _, n := range lengths {
		for _, shift := range []int{-4097, -65, -64, -17, -16, -9, -8, -1, 0, 1, 3, 8, 15, 16, 17, 63, 64, 65, 4097} {
			want := fill()
			src := 8192 + 5
			dst := src + shift
			copy(want[dst:dst+n], want[src:src+n]) // Go's copy is memmove
			what := fmt.Sprintf("memmove(base+%d, base+%d, %d)", dst, src, n)
			if r := guestCall(t, k, "memmove", base+uint64(dst), base+uint64(src), uint64(n)); r != base+uint64(dst) {
				t.Fatalf("%s returned %#x", what, r)
			}
			check(what, want)
		}
	}
	// The kernel still runs.
	if err := k.Machine().Step(1_000_000); err != nil {
		t.Fatal(err)
	}
	if msg, ok := k.Panicked(); ok {
		t.Fatalf("guest panicked: %s", msg)
	}
}
