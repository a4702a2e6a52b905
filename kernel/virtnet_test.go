package kernel_test

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/kpemu/kpemu/internal/waitfor"
	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/machine"
)

// netSnapshot is what both sides count of the network path.
type netSnapshot struct {
	host                   machine.VirtnetStats
	tcpRcv, csumBad        uint64
	sshdAccepts, sshdSends uint64
	drvIRQs, drvRX, drvTX  uint64
	iterations             uint64
}

// netCounters reads the guest's counters and the device's statistics with
// the machine stopped; the driver's are zero while it is not loaded.
func netCounters(t *testing.T, k *kernel.Kernel, stopped bool) netSnapshot {
	t.Helper()
	var s netSnapshot
	read := func() {
		rd := func(sym string, off uint64) uint64 {
			sy, ok := k.Kallsyms().LookupName(sym)
			if !ok {
				return 0
			}
			v, err := k.ReadU64(sy.Addr + off)
			if err != nil {
				t.Error(err)
			}
			return v
		}
		s.host = k.Machine().VirtnetStats()
		s.tcpRcv = rd("nr_tcp_rcv", 0)
		s.csumBad = rd("nr_tcp_csum_bad", 0)
		s.sshdAccepts = rd("sock_accepts", 0)
		s.sshdSends = rd("sock_sends", 0)
		s.iterations = rd("workload_iterations", 0)
		s.drvIRQs = rd("virtnet:virtnet_priv", virtnetPrivIRQs)
		s.drvRX = rd("virtnet:virtnet_priv", virtnetPrivIRQs+8)
		s.drvTX = rd("virtnet:virtnet_priv", virtnetPrivIRQs+40)
	}
	if stopped {
		read()
	} else {
		k.StopMachine(read)
	}
	return s
}

// Offset of irqs in the module's struct virtnet_priv: base, irq, dev,
// two ring pointers, 64 + 32 buffer pointers, three u32 indices and a
// spinlock, as modules/virtnet/virtnet.c lays it out.
const virtnetPrivIRQs = 8 + 8 + 8 + 8 + 8 + 64*8 + 32*8 + 4*4

func waitNet(t *testing.T, k *kernel.Kernel, what string, cond func(netSnapshot) bool) netSnapshot {
	t.Helper()
	var s netSnapshot
	waitfor.Until(t, what, func() bool {
		s = netCounters(t, k, false)
		if msg, ok := k.Panicked(); ok {
			t.Fatalf("guest panicked waiting for %s: %s", what, msg)
		}
		return cond(s)
	})
	return s
}

// The virtnet driver module finds the NIC in the device tree, takes its
// interrupt, and carries the device's traffic up to tcp_v4_rcv and
// /bin/sshd (accept4, recvfrom, sendto), whose replies the device sees; unloading gives eth0 back to the packet
// generator and the module loads again, several times.
func TestVirtnetDriver(t *testing.T) {
	con := &syncBuffer{}
	k, err := kernel.Boot(kernel.Config{NumCPUs: 2, Console: con, Logger: quiet(), GuestWait: waitfor.Bound})
	if err != nil {
		t.Fatal(err)
	}
	runGuest(t, k)
	for round := 0; round < 3; round++ {
		before := netCounters(t, k, false)
		if err := k.LoadEmbeddedModule("virtnet"); err != nil {
			t.Fatalf("round %d: %v\n%s", round, err, con.String())
		}
		if err := k.LoadEmbeddedModule("virtnet"); !errors.Is(err, syscall.EEXIST) {
			t.Errorf("second load: %v, want EEXIST", err)
		}
		// Counted from live: on a loaded host the guest may have carried
		// all of this round's traffic while the loads above returned.
		live := netCounters(t, k, false)
		s := waitNet(t, k, "traffic through the NIC", func(s netSnapshot) bool {
			return s.host.RXPackets > live.host.RXPackets+200 &&
				s.host.TXPackets > live.host.TXPackets+5 &&
				s.sshdAccepts > live.sshdAccepts+5 &&
				s.csumBad > live.csumBad+5
		})
		if s.drvIRQs == 0 || s.drvRX == 0 || s.drvTX == 0 {
			t.Errorf("round %d: driver counters %+v", round, s)
		}
		// While the NIC has the link the generator is off, so every
		// checksum failure is one the device made on purpose (one in 16);
		// those still in the RX ring (64) are not counted yet. kworkload
		// may have checked the carrier just before the driver took it and
		// still feed one generated segment, which may be a corrupt one.
		if s.host.TXBadCsum != 0 || s.host.TXErrors != 0 {
			t.Errorf("round %d: bad frames from the guest: %+v", round, s.host)
		}
		bad, corrupt := s.csumBad-live.csumBad, s.host.RXCorrupt-live.host.RXCorrupt
		if bad == 0 || bad > corrupt+1 || bad+64 < corrupt {
			t.Errorf("round %d: checksum failures %d, device corrupted %d", round, bad, corrupt)
		}
		t.Logf("round %d: %+v", round, s)
		if s.tcpRcv <= before.tcpRcv || s.iterations <= before.iterations {
			t.Errorf("round %d: tcp_v4_rcv %d -> %d, iterations %d -> %d", round, before.tcpRcv, s.tcpRcv, before.iterations, s.iterations)
		}
		if err := k.UnloadModule("virtnet"); err != nil {
			t.Fatalf("round %d unload: %v\n%s", round, err, con.String())
		}
		// The device is reset and quiet; the packet generator feeds
		// tcp_v4_rcv again.
		after := netCounters(t, k, false)
		waitNet(t, k, "the packet generator after unload", func(s netSnapshot) bool {
			return s.tcpRcv > after.tcpRcv+100
		})
		if s := netCounters(t, k, false); s.host.RXPackets != after.host.RXPackets {
			t.Errorf("round %d: the device still delivers after unload: %d -> %d", round, after.host.RXPackets, s.host.RXPackets)
		}
	}
	for _, want := range []string{"virtnet: eth0: link up, mmio 0x0b100000 irq 40", "virtnet: eth0: removed"} {
		if !strings.Contains(con.String(), want) {
			t.Errorf("console lacks %q:\n%s", want, con.String())
		}
	}
	if msg, ok := k.Panicked(); ok {
		t.Fatalf("guest panicked: %s", msg)
	}
}

// runGuest runs k on another goroutine until the test ends and waits for
// the workload.
func runGuest(t *testing.T, k *kernel.Kernel) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = k.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	waitfor.Recv(t, "the guest to boot", k.Ready())
}

// Deterministic mode: with the module loaded at the same instruction, two
// runs count the same packets on both sides.
func TestVirtnetDeterministic(t *testing.T) {
	run := func() netSnapshot {
		k, err := kernel.Boot(kernel.Config{NumCPUs: 2, Logger: quiet(), GuestWait: waitfor.Bound})
		if err != nil {
			t.Fatal(err)
		}
		m := k.Machine()
		for {
			if err := m.Step(100000); err != nil {
				t.Fatal(err)
			}
			select {
			case <-k.Ready():
			default:
				continue
			}
			break
		}
		// Loading needs the guest to run; the request lands at a step
		// boundary because nothing else runs while we wait for it.
		loaded := make(chan error, 1)
		go func() { loaded <- k.LoadEmbeddedModule("virtnet") }()
		mailbox, ok := k.Kallsyms().LookupName("kmod_mailbox")
		if !ok {
			t.Fatal("no kmod_mailbox")
		}
		waitfor.Until(t, "the load request in the mailbox", func() bool {
			var op uint64
			k.StopMachine(func() { op, _ = k.ReadU64(mailbox.Addr + kernel.KmodMailboxOp) })
			return op == kernel.KmodOpCall
		})
		const steps = 40_000_000
		for n := 0; n < steps/100000; n++ {
			if err := m.Step(100000); err != nil {
				t.Fatal(err)
			}
		}
		if err := <-loaded; err != nil {
			t.Fatal(err)
		}
		if msg, ok := k.Panicked(); ok {
			t.Fatalf("guest panicked: %s", msg)
		}
		return netCounters(t, k, true)
	}
	a, b := run(), run()
	if a != b {
		t.Fatalf("runs differ:\n%+v\n%+v", a, b)
	}
	if a.host.RXPackets == 0 || a.host.TXPackets == 0 || a.sshdAccepts == 0 || a.drvIRQs == 0 {
		t.Errorf("no traffic: %+v", a)
	}
	t.Logf("%+v", a)
}

// Without a device tree (under QEMU head.S keeps x0 = 0) the driver finds
// no device and refuses to load, touching no MMIO; eth0 stays with the
// packet generator.
func TestVirtnetNoDeviceTree(t *testing.T) {
	k := running(t)
	fdt, ok := k.Kallsyms().LookupName("__fdt_pointer")
	if !ok {
		t.Fatal("no __fdt_pointer")
	}
	var err error
	k.StopMachine(func() { err = k.WriteMem(fdt.Addr, make([]byte, 8)) })
	if err != nil {
		t.Fatal(err)
	}
	if err := k.LoadEmbeddedModule("virtnet"); !errors.Is(err, syscall.ENODEV) {
		t.Fatalf("load without a device tree: %v, want ENODEV", err)
	}
	if _, _, ok := k.Module("virtnet"); ok {
		t.Error("the module stays after a failed init")
	}
	before := netCounters(t, k, false)
	waitNet(t, k, "the packet generator", func(s netSnapshot) bool { return s.tcpRcv > before.tcpRcv+50 })
}
