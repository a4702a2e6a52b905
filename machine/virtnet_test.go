package machine

import (
	"encoding/binary"
	"log/slog"
	"strings"
	"testing"
)

func newNetMachine(t *testing.T) (*Machine, *region) {
	t.Helper()
	m, err := New(Config{RAMSize: testRAM, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	r := m.bus.find(VirtnetBase, 4)
	if r == nil || r.name != "virtnet" {
		t.Fatal("no virtnet region at VirtnetBase")
	}
	return m, r
}

// The registers: identification, read/write masks, ring size validation,
// W1C status, reset.
func TestVirtnetRegisters(t *testing.T) {
	tests := []struct {
		name  string
		write map[uint64]uint64 // applied in offset order is not needed: independent registers
		off   uint64
		want  uint64
	}{
		{"id", nil, vnID, vnIDValue},
		{"version", nil, vnVersion, 1},
		{"interval default", nil, vnInterval, vnDefaultInterval},
		{"ctrl keeps enable bits only", map[uint64]uint64{vnCtrl: 0x7}, vnCtrl, 3},
		{"imr masked to known bits", map[uint64]uint64{vnIMR: 0xff}, vnIMR, vnIntAll},
		{"rx base lo aligned", map[uint64]uint64{vnRXBaseLo: 0x40001234}, vnRXBaseLo, 0x40001230},
		{"rx base hi", map[uint64]uint64{vnRXBaseHi: 0x1}, vnRXBaseHi, 1},
		{"rx size power of two", map[uint64]uint64{vnRXSize: 64}, vnRXSize, 64},
		{"rx size not a power of two", map[uint64]uint64{vnRXSize: 48}, vnRXSize, 0},
		{"tx size too big", map[uint64]uint64{vnTXSize: 2048}, vnTXSize, 0},
		{"tail wraps to the ring", map[uint64]uint64{vnTXSize: 8}, vnTXTail, 0},
		{"unknown offset", nil, 0x800, 0},
		{"stats start at zero", nil, vnStats, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, r := newNetMachine(t)
			for off, v := range tt.write {
				r.write(nil, off, 4, v)
			}
			if got := r.read(nil, tt.off, 4); got != tt.want {
				t.Errorf("read %#x = %#x, want %#x", tt.off, got, tt.want)
			}
		})
	}
	_, r := newNetMachine(t)
	r.write(nil, vnCtrl, 4, vnCtrlRXEn)
	r.write(nil, vnIMR, 4, vnIntAll)
	r.write(nil, vnRXSize, 4, 16)
	r.write(nil, vnCtrl, 4, vnCtrlReset)
	for _, off := range []uint64{vnCtrl, vnIMR, vnRXSize, vnISR} {
		if got := r.read(nil, off, 4); got != 0 {
			t.Errorf("after reset %#x = %#x", off, got)
		}
	}
}

// ringSetup lays out a ring of n descriptors at ring with buffers of size
// bytes from buf on, the way a driver does.
func ringSetup(t *testing.T, m *Machine, ring, buf uint64, n, size int) {
	t.Helper()
	for i := 0; i < n; i++ {
		var d [vnDescSize]byte
		binary.LittleEndian.PutUint64(d[0:], buf+uint64(i*size))
		binary.LittleEndian.PutUint32(d[8:], uint32(size))
		if err := m.WriteMem(ring+uint64(i)*vnDescSize, d[:]); err != nil {
			t.Fatal(err)
		}
	}
}

// RX: the source fills posted descriptors at its rate, valid packets with
// one in 16 corrupted, raises RX through the GIC while unmasked, and drops
// when the ring is full.
func TestVirtnetRX(t *testing.T) {
	m, r := newNetMachine(t)
	const ring, buf = RAMBase + 0x10000, RAMBase + 0x20000
	ringSetup(t, m, ring, buf, 8, 2048)
	runGICScript(t, m, append(gicOn(1),
		gicOp{op: "dw", off: gicdISENABLER + 4, v: 1 << (IRQVirtnet - 32)},
		gicOp{op: "db", off: gicdITARGETSR + IRQVirtnet, v: 1}))
	r.write(nil, vnRXBaseLo, 4, ring)
	r.write(nil, vnRXSize, 4, 8)
	r.write(nil, vnRXTail, 4, 7) // 7 posted
	r.write(nil, vnIMR, 4, VirtnetIntRX)
	start := m.systemCounter(0)
	r.write(nil, vnCtrl, 4, vnCtrlRXEn)

	if d := r.poll(start + vnDefaultInterval - 1); d != start+vnDefaultInterval {
		t.Fatalf("next deadline %d, want %d", d, start+vnDefaultInterval)
	}
	if m.CPU(0).interruptLines() != 0 {
		t.Fatal("IRQ before a packet")
	}
	r.poll(start + 3*vnDefaultInterval)
	if got := r.read(nil, vnRXHead, 4); got != 3 {
		t.Fatalf("RX_HEAD = %d, want 3", got)
	}
	if m.CPU(0).interruptLines() == 0 {
		t.Fatal("no IRQ with RX pending")
	}
	for i := 0; i < 3; i++ {
		d := make([]byte, vnDescSize)
		_ = m.ReadMem(ring+uint64(i)*vnDescSize, d)
		n := binary.LittleEndian.Uint32(d[8:])
		if binary.LittleEndian.Uint32(d[12:]) != vnDescDD || n < 40 {
			t.Fatalf("descriptor %d: % x", i, d)
		}
		pkt := make([]byte, n)
		_ = m.ReadMem(buf+uint64(i)*2048, pkt)
		if got := checkFrame(pkt); got != frameOK {
			t.Errorf("packet %d: check %d", i, got)
		}
	}
	r.write(nil, vnISR, 4, VirtnetIntRX) // acknowledge
	if r.read(nil, vnISR, 4) != 0 || m.CPU(0).interruptLines() != 0 {
		t.Fatal("IRQ stays after the acknowledgement")
	}
	// 20 more packets: 4 fit (7 posted), 16 are dropped.
	r.poll(start + 23*vnDefaultInterval)
	s := m.VirtnetStats()
	// The 16th packet, the first corrupted one, was among the drops.
	if s.RXPackets != 7 || s.RXDrops != 16 || s.RXCorrupt != 0 {
		t.Errorf("stats %+v, want 7 packets, 16 drops, none corrupt", s)
	}
	if r.read(nil, vnISR, 4)&VirtnetIntNoBuf == 0 {
		t.Error("no RX_NOBUF")
	}
}

// TX: the doorbell makes the device check and complete the frames.
func TestVirtnetTX(t *testing.T) {
	good, _ := (&vnSource{}).next()
	bad := append([]byte(nil), good...)
	bad[len(bad)-1] ^= 0xff
	if len(good) == 40 {
		bad[36] ^= 1 // no payload: spoil the urgent pointer, covered by the checksum
	}
	tests := []struct {
		name       string
		frame      []byte
		wantStatus uint32
		wantStats  VirtnetStats
	}{
		{"good", good, vnDescDD, VirtnetStats{TXPackets: 1, TXBytes: uint64(len(good))}},
		{"bad checksum", bad, vnDescDD | vnDescErr, VirtnetStats{TXPackets: 1, TXBytes: uint64(len(bad)), TXBadCsum: 1}},
		{"not IPv4", make([]byte, 60), vnDescDD | vnDescErr, VirtnetStats{TXErrors: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, r := newNetMachine(t)
			const ring, buf = RAMBase + 0x10000, RAMBase + 0x20000
			ringSetup(t, m, ring, buf, 4, 512)
			_ = m.WriteMem(buf, tt.frame)
			_ = m.Write32(ring+8, uint32(len(tt.frame)))
			r.write(nil, vnTXBaseLo, 4, ring)
			r.write(nil, vnTXSize, 4, 4)
			r.write(nil, vnCtrl, 4, vnCtrlTXEn)
			r.write(nil, vnTXTail, 4, 1)
			if got := r.read(nil, vnTXHead, 4); got != 1 {
				t.Errorf("TX_HEAD = %d", got)
			}
			st, _ := m.Read32(ring + 12)
			if st != tt.wantStatus {
				t.Errorf("status %#x, want %#x", st, tt.wantStatus)
			}
			if s := m.VirtnetStats(); s != tt.wantStats {
				t.Errorf("stats %+v, want %+v", s, tt.wantStats)
			}
			if r.read(nil, vnISR, 4) != VirtnetIntTX {
				t.Error("no TX interrupt status")
			}
		})
	}
}

// The source is a pure function of its position: same packets every run,
// valid checksums but on the corrupted ones.
func TestVirtnetSourceDeterministic(t *testing.T) {
	var a, b vnSource
	for i := 1; i <= 64; i++ {
		p, c := a.next()
		q, _ := b.next()
		if string(p) != string(q) {
			t.Fatalf("packet %d differs", i)
		}
		if want := i%vnCorruptEvery == 0; c != want {
			t.Fatalf("packet %d corrupt = %v", i, c)
		}
		if ok := checkFrame(p) == frameOK; ok == c {
			t.Fatalf("packet %d: check ok %v, corrupted %v", i, ok, c)
		}
	}
}

// The device tree lists the NIC where it is.
func TestVirtnetInDeviceTree(t *testing.T) {
	m, _ := newNetMachine(t)
	blob := string(m.DeviceTree())
	for _, want := range []string{"virtnet@b100000", "kpemu,virtnet"} {
		if !strings.Contains(blob, want) {
			t.Errorf("device tree lacks %q", want)
		}
	}
}
