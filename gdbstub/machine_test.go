package gdbstub

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/kpemu/kpemu/kernel"
)

// TestMachineTarget drives a booted guest through the protocol: the
// adapter over the real machine, interrupts, steps, host breakpoints and
// memory.
func TestMachineTarget(t *testing.T) {
	k, err := kernel.Boot(kernel.Config{NumCPUs: 2, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	vfsRead, ok := k.Kallsyms().LookupName("vfs_read")
	if !ok {
		t.Fatal("no vfs_read")
	}
	insn, err := k.ReadInsn(vfsRead.Addr)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, NewMachineTarget(k.Machine()), Config{Logger: quiet()}) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()

	c := dial(t, ln.Addr().String())
	c.cmd("qSupported:swbreak+;hwbreak+", "PacketSize=4000;qXfer:features:read+;vContSupported+;swbreak+;hwbreak+;QStartNoAckMode+")
	c.cmd("QStartNoAckMode", "OK")
	c.noAck = true
	c.send("?")
	if stop := c.recv(); stop != "T05thread:1;" && stop != "T05thread:2;" {
		t.Errorf("?: reply %q", stop)
	}
	// The guest free-runs until the debugger attaches, so CPU 1 may be up
	// already (a loaded host dials late) and may be the one halted; stepping
	// it is an error only while it is off.
	c.send("qThreadExtraInfo,2")
	switch info := c.recv(); info {
	case string(appendHex(nil, []byte("CPU#1 EL1 (powered off)"))):
		c.cmd("vCont;s:2", "E02")
	case string(appendHex(nil, []byte("CPU#1 EL1 (WFI)"))), string(appendHex(nil, []byte("CPU#1 EL1"))):
	default:
		t.Errorf("qThreadExtraInfo,2: reply %q", info)
	}

	c.send("c")
	time.Sleep(20 * time.Millisecond)
	c.raw("\x03")
	// The guest brings up CPU 1 early, so the interrupt may land on either.
	if got := c.recv(); got != "T02thread:1;" && got != "T02thread:2;" {
		t.Fatalf("after Ctrl-C: %q", got)
	}

	c.cmd(fmt.Sprintf("Z0,%x,4", vfsRead.Addr), "OK")
	// Any vCPU may get to vfs_read first (user processes read on CPU 1).
	c.send("vCont;c")
	stop := c.recv()
	var th int
	if _, err := fmt.Sscanf(stop, "T05thread:%d;swbreak:;", &th); err != nil || th < 1 || th > 2 {
		t.Fatalf("breakpoint stop: %q", stop)
	}
	c.cmd("p20", string(appendRegHex(nil, vfsRead.Addr, 8)))
	// The stub's breakpoint is invisible in memory: vfs_read still opens
	// with its own instruction.
	var word [4]byte
	binary.LittleEndian.PutUint32(word[:], insn)
	c.cmd(fmt.Sprintf("m%x,4", vfsRead.Addr), string(appendHex(nil, word[:])))
	// Continuing from the breakpoint executes it: the next stop is the
	// next call, not the same place again without progress.
	c.cmd(fmt.Sprintf("vCont;s:%d;c", th), fmt.Sprintf("T05thread:%d;", th))
	c.cmd("p20", string(appendRegHex(nil, vfsRead.Addr+4, 8)))
	c.cmd(fmt.Sprintf("z0,%x,4", vfsRead.Addr), "OK")

	// A register write takes effect: x9 round-trips.
	c.cmd("P9=efbeadde00000000", "OK")
	c.cmd("p9", "efbeadde00000000")
	// g and p agree (cpsr is the 32-bit register after x0-x30, sp, pc).
	c.send("g")
	g := c.recv()
	if len(g) != 2*gSize() {
		t.Fatalf("g reply of %d hex digits, want %d", len(g), 2*gSize())
	}
	c.cmd("p21", g[2*8*33:2*8*33+8])
	c.cmd(fmt.Sprintf("m%x,4", uint64(0x1000)), "E14")
	c.cmd("D", "OK")
}
