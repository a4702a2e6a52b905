package kprobes_test

import (
	"strings"
	"testing"

	"github.com/kpemu/kpemu/kprobes"
)

// Probes on the NIC's receive path: tcp_v4_rcv, hit from the driver's
// interrupt, and the driver's interrupt handler in the virtnet module;
// both keep hitting while the device sends, and the module's probe goes
// with the module.
func TestProbeVirtnetReceivePath(t *testing.T) {
	k, kp := bootRunning(t)
	if err := k.LoadEmbeddedModule("virtnet"); err != nil {
		t.Fatal(err)
	}
	probes := []*kprobes.Kprobe{
		{Symbol: "tcp_v4_rcv"},
		{Symbol: "virtnet:virtnet_interrupt"},
	}
	for _, p := range probes {
		if err := kp.Register(p); err != nil {
			t.Fatalf("%s: %v", p.Symbol, err)
		}
	}
	if got := listText(kp); !strings.Contains(got, "virtnet_interrupt+0x0  virtnet") {
		t.Errorf("list = %q", got)
	}
	for _, p := range probes {
		first := p.Hits()
		waitFor(t, "hits on "+p.Symbol, func() bool { return p.Hits() > first+20 })
	}
	// /bin/sshd (started by init, after the kernel is ready) accepts
	// the device's port-22 flows.
	waitFor(t, "sshd's accept4", func() bool { return stopped(t, k, "sock_accepts") > 0 })
	if err := k.UnloadModule("virtnet"); err != nil {
		t.Fatal(err)
	}
	if !kp.Gone(probes[1]) {
		t.Error("the handler's probe is not gone with the module")
	}
	// The packet generator takes over: tcp_v4_rcv keeps hitting.
	first := probes[0].Hits()
	waitFor(t, "hits on tcp_v4_rcv after unload", func() bool { return probes[0].Hits() > first+20 })
	for _, p := range probes {
		kp.Unregister(p)
	}
}
