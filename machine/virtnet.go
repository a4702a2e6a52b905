package machine

import (
	"encoding/binary"
	"sync"
	"time"
)

// virtnet is kpemu's own virtual NIC: an MMIO device with descriptor rings
// in guest RAM, one level-sensitive SPI and a host-side traffic source. It
// carries bare IPv4 packets (no Ethernet header), like a TUN device, since
// the guest's stack starts at ip_rcv. It is not a QEMU device: QEMU's virt
// leaves its page unassigned, so a guest must find it in the device tree
// (compatible "kpemu,virtnet") before touching it.
//
// Register map (little-endian; 32-bit registers, 64-bit statistics that may
// be read whole or as two 32-bit halves):
//
//	0x000 ID          RO  0x74656e76 ("vnet")
//	0x004 VERSION     RO  1
//	0x008 CTRL        RW  bit 0 RX_EN, bit 1 TX_EN; writing bit 31 (RESET)
//	                      stops both rings and clears every register but
//	                      the statistics (reads 0)
//	0x00c ISR         R/W1C  bit 0 RX (descriptors filled), bit 1 TX (descriptors
//	                      completed), bit 2 RX_NOBUF (a packet was dropped:
//	                      no free RX descriptor)
//	0x010 IMR         RW  interrupt enable mask, same bits; the SPI is high
//	                      while ISR & IMR != 0
//	0x014 RX_INTERVAL RW  system counter ticks between generated packets
//	                      (default 5000; 0 stops the source)
//	0x020 RX_BASE_LO  RW  RX ring physical address, 16-byte aligned
//	0x024 RX_BASE_HI  RW
//	0x028 RX_SIZE     RW  descriptors in the RX ring, a power of two <= 1024
//	0x02c RX_HEAD     RO  next descriptor the device fills
//	0x030 RX_TAIL     RW  one past the last descriptor the driver posted
//	0x040 TX_BASE_LO  RW  TX ring, as RX
//	0x044 TX_BASE_HI  RW
//	0x048 TX_SIZE     RW
//	0x04c TX_HEAD     RO  next descriptor the device consumes
//	0x050 TX_TAIL     RW  doorbell: one past the last descriptor posted
//	0x080 RX_PACKETS  RO  packets written into the RX ring
//	0x088 RX_BYTES    RO
//	0x090 RX_DROPS    RO  packets generated while the ring was full
//	0x098 RX_CORRUPT  RO  of RX_PACKETS, corrupted on purpose (bad TCP checksum)
//	0x0a0 TX_PACKETS  RO  frames taken from the TX ring
//	0x0a8 TX_BYTES    RO
//	0x0b0 TX_BADCSUM  RO  of TX_PACKETS, with a bad IPv4 or TCP checksum
//	0x0b8 TX_ERRORS   RO  descriptors the device could not use (bad
//	                      address or length, not IPv4/TCP)
//
// Rings follow e1000's head/tail convention: the descriptors from HEAD up to
// TAIL (exclusive, modulo SIZE) belong to the device, HEAD == TAIL means it
// owns none, so a driver posts at most SIZE-1. A descriptor is 16 bytes:
//
//	u64 addr    buffer physical address
//	u32 len     RX: buffer size when posted, the packet's length when filled;
//	            TX: the frame's length
//	u32 status  bit 0 DD (the device is done with it), bit 1 ERR (TX: the
//	            frame was bad); the driver clears it when it posts
//
// Traffic: while RX_EN is set the source makes one IPv4/TCP segment every
// RX_INTERVAL ticks of the system counter from the moment RX_EN was set; in
// deterministic mode the counter counts guest instructions, so the packets
// and their arrival points are the same in every run. Parallel mode polls
// on a host timer instead.
type virtnet struct {
	m   *Machine
	irq func(level bool)

	mu       sync.Mutex
	ctrl     uint32
	isr, imr uint32
	interval uint32
	rx, tx   vnRing
	level    bool

	start     uint64 // counter value when RX_EN was set
	generated uint64 // packets the source made since then (delivered or dropped)
	gen       vnSource
	stats     VirtnetStats
	alarm     *time.Timer // parallel mode: the next poll
}

// vnRing is one descriptor ring's registers.
type vnRing struct {
	base       uint64
	size       uint32
	head, tail uint32
}

// VirtnetStats are the virtual NIC's statistics registers.
type VirtnetStats struct {
	RXPackets, RXBytes, RXDrops, RXCorrupt  uint64
	TXPackets, TXBytes, TXBadCsum, TXErrors uint64
}

// Virtnet's place in the memory map: a page in the hole QEMU's virt leaves
// between its virtio-mmio transports (0x0a000000..0x0a004000) and the
// platform bus (0x0c000000), clear of 0x0b000000, which the QEMU
// differential test reads for an external abort; and SPI 8, which virt
// gives only to the secure UART of a secure-enabled board.
const (
	VirtnetBase = 0x0b100000
	IRQVirtnet  = 40 // SPI 8
)

// Register offsets and bits (see the map above).
const (
	vnID         = 0x000
	vnVersion    = 0x004
	vnCtrl       = 0x008
	vnISR        = 0x00c
	vnIMR        = 0x010
	vnInterval   = 0x014
	vnRXBaseLo   = 0x020
	vnRXBaseHi   = 0x024
	vnRXSize     = 0x028
	vnRXHead     = 0x02c
	vnRXTail     = 0x030
	vnTXBaseLo   = 0x040
	vnTXBaseHi   = 0x044
	vnTXSize     = 0x048
	vnTXHead     = 0x04c
	vnTXTail     = 0x050
	vnStats      = 0x080
	vnStatsEnd   = 0x0c0
	vnIDValue    = 0x74656e76
	vnVersionVal = 1

	vnCtrlRXEn  = 1 << 0
	vnCtrlTXEn  = 1 << 1
	vnCtrlReset = 1 << 31

	VirtnetIntRX      = 1 << 0
	VirtnetIntTX      = 1 << 1
	VirtnetIntNoBuf   = 1 << 2
	vnIntAll          = VirtnetIntRX | VirtnetIntTX | VirtnetIntNoBuf
	vnDescSize        = 16
	vnDescDD          = 1 << 0
	vnDescErr         = 1 << 1
	vnMaxRing         = 1024
	vnMaxFrame        = 2048
	vnDefaultInterval = 5000
	// vnMaxBurst bounds the packets one poll makes, so that a counter jump
	// costs the host bounded work; the rest count as drops.
	vnMaxBurst = 256
	// vnParallelTick is how often parallel mode polls the source.
	vnParallelTick = time.Millisecond
)

// addVirtnet creates the NIC and maps it at VirtnetBase; the scheduler
// polls it through its region (bus.poll) so that packets arrive at counter
// values, not host times.
func (m *Machine) addVirtnet() {
	d := &virtnet{m: m, irq: func(level bool) { m.gic.setSPI(IRQVirtnet, level) }}
	d.resetLocked()
	m.bus.add(region{
		name: "virtnet", base: VirtnetBase, size: PageSize,
		read:  d.read,
		write: d.write,
		poll:  d.poll,
	})
}

// VirtnetStats returns the NIC's statistics registers, read as the host.
func (m *Machine) VirtnetStats() VirtnetStats {
	r := m.bus.find(VirtnetBase, 8)
	if r == nil || r.name != "virtnet" {
		return VirtnetStats{}
	}
	var s VirtnetStats
	for i, p := range []*uint64{&s.RXPackets, &s.RXBytes, &s.RXDrops, &s.RXCorrupt,
		&s.TXPackets, &s.TXBytes, &s.TXBadCsum, &s.TXErrors} {
		*p = r.read(nil, vnStats+uint64(i)*8, 8)
	}
	return s
}

// resetLocked puts every register but the statistics to its reset value.
func (d *virtnet) resetLocked() {
	d.ctrl, d.isr, d.imr = 0, 0, 0
	d.interval = vnDefaultInterval
	d.rx, d.tx = vnRing{}, vnRing{}
	d.generated = 0
	if d.alarm != nil {
		d.alarm.Stop()
		d.alarm = nil
	}
	d.update()
}

// update drives the SPI from ISR & IMR.
func (d *virtnet) update() {
	level := d.isr&d.imr != 0
	if level != d.level {
		d.level = level
		d.irq(level)
	}
}

func (d *virtnet) statsWord(i int) uint64 {
	s := &d.stats
	return [...]uint64{s.RXPackets, s.RXBytes, s.RXDrops, s.RXCorrupt,
		s.TXPackets, s.TXBytes, s.TXBadCsum, s.TXErrors}[i]
}

func (d *virtnet) read(_ *CPU, off uint64, size int) uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	if off >= vnStats && off < vnStatsEnd {
		v := d.statsWord(int(off-vnStats) / 8)
		if size == 8 {
			return v
		}
		if off%8 == 4 {
			return v >> 32
		}
		return uint64(uint32(v))
	}
	switch off {
	case vnID:
		return vnIDValue
	case vnVersion:
		return vnVersionVal
	case vnCtrl:
		return uint64(d.ctrl)
	case vnISR:
		return uint64(d.isr)
	case vnIMR:
		return uint64(d.imr)
	case vnInterval:
		return uint64(d.interval)
	case vnRXBaseLo:
		return uint64(uint32(d.rx.base))
	case vnRXBaseHi:
		return d.rx.base >> 32
	case vnRXSize:
		return uint64(d.rx.size)
	case vnRXHead:
		return uint64(d.rx.head)
	case vnRXTail:
		return uint64(d.rx.tail)
	case vnTXBaseLo:
		return uint64(uint32(d.tx.base))
	case vnTXBaseHi:
		return d.tx.base >> 32
	case vnTXSize:
		return uint64(d.tx.size)
	case vnTXHead:
		return uint64(d.tx.head)
	case vnTXTail:
		return uint64(d.tx.tail)
	}
	return 0
}

// ringSize accepts a power of two up to vnMaxRing; anything else disables
// the ring (size 0), so that a bad value cannot make the device walk RAM.
func ringSize(v uint32) uint32 {
	if v == 0 || v > vnMaxRing || v&(v-1) != 0 {
		return 0
	}
	return v
}

func (d *virtnet) write(c *CPU, off uint64, _ int, v uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	// The counter at the start of the writer's slice: a point that is the
	// same in every deterministic run, which is all the source needs.
	now := d.m.systemCounter(0)
	w := uint32(v)
	switch off {
	case vnCtrl:
		if w&vnCtrlReset != 0 {
			d.resetLocked()
			return
		}
		if w&vnCtrlRXEn != 0 && d.ctrl&vnCtrlRXEn == 0 {
			d.start, d.generated = now, 0
			d.armAlarm()
		}
		d.ctrl = w & (vnCtrlRXEn | vnCtrlTXEn)
	case vnISR:
		d.isr &^= w
	case vnIMR:
		d.imr = w & vnIntAll
	case vnInterval:
		d.interval = w
		d.start, d.generated = now, 0
	case vnRXBaseLo:
		d.rx.base = d.rx.base&^0xffffffff | uint64(w&^15)
	case vnRXBaseHi:
		d.rx.base = d.rx.base&0xffffffff | uint64(w)<<32
	case vnRXSize:
		d.rx.size, d.rx.head, d.rx.tail = ringSize(w), 0, 0
	case vnRXTail:
		if d.rx.size != 0 {
			d.rx.tail = w & (d.rx.size - 1)
		}
	case vnTXBaseLo:
		d.tx.base = d.tx.base&^0xffffffff | uint64(w&^15)
	case vnTXBaseHi:
		d.tx.base = d.tx.base&0xffffffff | uint64(w)<<32
	case vnTXSize:
		d.tx.size, d.tx.head, d.tx.tail = ringSize(w), 0, 0
	case vnTXTail:
		if d.tx.size != 0 {
			d.tx.tail = w & (d.tx.size - 1)
		}
		// Deterministic mode transmits at the doorbell, on behalf of the
		// writing CPU; parallel mode leaves it to the next poll, which runs
		// with the world stopped as host stores to RAM must.
		if !d.m.parallel {
			d.transmit(c)
		}
	}
	d.update()
}

// dmaRead copies guest RAM at pa into p; false if the range is not RAM.
func (d *virtnet) dmaRead(pa uint64, p []byte) bool {
	off, err := d.m.ramRange(pa, len(p))
	if err != nil {
		return false
	}
	copy(p, d.m.ram[off:])
	return true
}

// dmaWrite stores p at pa as a store by CPU by (nil: the device, with the
// world stopped) would, dropping decode caches and reservations.
func (d *virtnet) dmaWrite(by *CPU, pa uint64, p []byte) bool {
	off, err := d.m.ramRange(pa, len(p))
	if err != nil {
		return false
	}
	copy(d.m.ram[off:], p)
	d.m.stored(by, off, uint64(len(p)))
	return true
}

// transmit consumes the TX descriptors from HEAD to TAIL: each frame is
// checked and counted, the descriptor written back with DD (and ERR for a
// bad frame), and TX raised in ISR.
func (d *virtnet) transmit(by *CPU) {
	if d.ctrl&vnCtrlTXEn == 0 || d.tx.size == 0 {
		return
	}
	var desc [vnDescSize]byte
	frame := make([]byte, 0, vnMaxFrame)
	done := false
	for d.tx.head != d.tx.tail {
		da := d.tx.base + uint64(d.tx.head)*vnDescSize
		if !d.dmaRead(da, desc[:]) {
			d.stats.TXErrors++
			d.ctrl &^= vnCtrlTXEn // a ring outside RAM: stop, as a DMA fault would
			break
		}
		addr := binary.LittleEndian.Uint64(desc[0:])
		n := binary.LittleEndian.Uint32(desc[8:])
		status := uint32(vnDescDD)
		if n == 0 || n > vnMaxFrame || !d.dmaRead(addr, frame[:n]) {
			d.stats.TXErrors++
			status |= vnDescErr
		} else {
			switch checkFrame(frame[:n]) {
			case frameOK:
				d.stats.TXPackets++
				d.stats.TXBytes += uint64(n)
			case frameBadCsum:
				d.stats.TXPackets++
				d.stats.TXBytes += uint64(n)
				d.stats.TXBadCsum++
				status |= vnDescErr
			default:
				d.stats.TXErrors++
				status |= vnDescErr
			}
		}
		binary.LittleEndian.PutUint32(desc[12:], status)
		d.dmaWrite(by, da+12, desc[12:16])
		d.tx.head = (d.tx.head + 1) & (d.tx.size - 1)
		done = true
	}
	if done {
		d.isr |= VirtnetIntTX
	}
}

// poll runs the traffic source up to counter value now and returns the
// counter value of the next packet (noDeadline when the source is off).
func (d *virtnet) poll(now uint64) uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.m.parallel {
		d.transmit(nil)
	}
	if d.ctrl&vnCtrlRXEn == 0 || d.interval == 0 {
		d.update()
		return noDeadline
	}
	iv := uint64(d.interval)
	due := (now - d.start) / iv
	if due > d.generated+vnMaxBurst {
		d.stats.RXDrops += due - vnMaxBurst - d.generated
		d.gen.skip(due - vnMaxBurst - d.generated)
		d.generated = due - vnMaxBurst
	}
	for d.generated < due {
		d.generated++
		d.receive(d.gen.next())
	}
	d.update()
	return d.start + (d.generated+1)*iv
}

// receive puts one packet into the RX ring, or counts a drop.
func (d *virtnet) receive(pkt []byte, corrupt bool) {
	if d.rx.size == 0 || d.rx.head == d.rx.tail {
		d.stats.RXDrops++
		d.isr |= VirtnetIntNoBuf
		return
	}
	var desc [vnDescSize]byte
	da := d.rx.base + uint64(d.rx.head)*vnDescSize
	if !d.dmaRead(da, desc[:]) {
		d.stats.RXDrops++
		d.ctrl &^= vnCtrlRXEn
		return
	}
	addr := binary.LittleEndian.Uint64(desc[0:])
	size := binary.LittleEndian.Uint32(desc[8:])
	status := uint32(vnDescDD)
	n := uint32(len(pkt))
	if size < n || !d.dmaWrite(nil, addr, pkt) {
		// Too small or not RAM: the descriptor comes back with ERR and no data.
		status |= vnDescErr
		n = 0
		d.stats.RXDrops++
	} else {
		d.stats.RXPackets++
		d.stats.RXBytes += uint64(n)
		if corrupt {
			d.stats.RXCorrupt++
		}
	}
	binary.LittleEndian.PutUint32(desc[8:], n)
	binary.LittleEndian.PutUint32(desc[12:], status)
	d.dmaWrite(nil, da+8, desc[8:16])
	d.rx.head = (d.rx.head + 1) & (d.rx.size - 1)
	d.isr |= VirtnetIntRX
}

// armAlarm starts parallel mode's host-timed polling. d.mu held.
func (d *virtnet) armAlarm() {
	if !d.m.parallel || d.alarm != nil {
		return
	}
	var tick func()
	tick = func() {
		d.m.Exclusive(func() { d.poll(d.m.systemCounter(0)) })
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.alarm != nil && d.ctrl&vnCtrlRXEn != 0 {
			d.alarm = time.AfterFunc(vnParallelTick, tick)
		} else {
			d.alarm = nil
		}
	}
	d.alarm = time.AfterFunc(vnParallelTick, tick)
}

// The traffic source: a few TCP flows from 10.0.2.2 to 10.0.2.15, each
// with its own port pair and sequence numbers, payloads cut from a text
// per service, chosen by a fixed-seed xorshift generator; every
// vnCorruptEvery-th segment gets one payload bit flipped after its
// checksums were computed.
const (
	vnSrcAddr      = 0x0a000202 // 10.0.2.2
	vnDstAddr      = 0x0a00020f // 10.0.2.15
	vnCorruptEvery = 16
	vnMaxPayload   = 200
	vnSeed         = 0x6b70656d752d6e65 // "kpemu-ne"
)

// vnFlows are the flows' destination ports; 5000 has no listener, so the
// guest answers it with a reset (counted in OutRsts).
var vnFlows = [...]struct {
	sport, dport uint16
	text         string
}{
	{40022, 22, "SSH-2.0-OpenSSH_9.2p1 Debian-2\r\nls -l /etc\nuptime\ncat /etc/motd\n"},
	{40023, 22, "whoami\nps aux\ndmesg | tail\nexit\n"},
	{40080, 80, "GET /index.html HTTP/1.1\r\nHost: 10.0.2.15\r\nUser-Agent: kpemu\r\n\r\n"},
	{40443, 443, "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 TLS client hello, kpemu "},
	{48080, 8080, "POST /api/v1/metrics HTTP/1.1\r\nContent-Length: 42\r\n\r\n{\"cpu\":1}"},
	{45000, 5000, "ping 0123456789 the quick brown fox jumps over the lazy dog\n"},
}

type vnSource struct {
	rnd    uint64
	seq    [len(vnFlows)]uint32
	n      uint64 // segments made
	ipID   uint16
	inited bool
}

func (g *vnSource) rand() uint64 {
	if !g.inited {
		g.rnd = vnSeed
		for i := range g.seq {
			g.seq[i] = uint32(1000 * (i + 1))
		}
		g.inited = true
	}
	g.rnd ^= g.rnd << 13
	g.rnd ^= g.rnd >> 7
	g.rnd ^= g.rnd << 17
	return g.rnd
}

// skip advances the source by n segments without building them.
func (g *vnSource) skip(n uint64) {
	for ; n > 0; n-- {
		g.next()
	}
}

// next builds the next segment and says whether it was corrupted.
func (g *vnSource) next() ([]byte, bool) {
	r := g.rand()
	f := int(r % uint64(len(vnFlows)))
	flow := &vnFlows[f]
	plen := int(r>>8) % (vnMaxPayload + 1)
	if r>>40&7 == 0 {
		plen = 0 // a bare ACK now and then
	}
	text := flow.text
	start := int(r>>16) % len(text)
	pkt := make([]byte, 40+plen)
	for i := 0; i < plen; i++ {
		pkt[40+i] = text[(start+i)%len(text)]
	}
	g.n++
	g.ipID++
	ip := pkt[:20]
	ip[0] = 0x45
	binary.BigEndian.PutUint16(ip[2:], uint16(len(pkt)))
	binary.BigEndian.PutUint16(ip[4:], g.ipID)
	binary.BigEndian.PutUint16(ip[6:], 0x4000) // DF
	ip[8] = 64
	ip[9] = 6 // TCP
	binary.BigEndian.PutUint32(ip[12:], vnSrcAddr)
	binary.BigEndian.PutUint32(ip[16:], vnDstAddr)
	binary.BigEndian.PutUint16(ip[10:], csumFold(csumAdd(0, ip)))
	th := pkt[20:]
	binary.BigEndian.PutUint16(th[0:], flow.sport)
	binary.BigEndian.PutUint16(th[2:], flow.dport)
	binary.BigEndian.PutUint32(th[4:], g.seq[f])
	binary.BigEndian.PutUint32(th[8:], uint32(r>>32))
	th[12] = 5 << 4
	th[13] = 0x10 // ACK
	if plen > 0 {
		th[13] |= 0x08 // PSH
	}
	binary.BigEndian.PutUint16(th[14:], 64240)
	binary.BigEndian.PutUint16(th[16:], tcpChecksum(pkt))
	g.seq[f] += uint32(plen)
	corrupt := g.n%vnCorruptEvery == 0
	if corrupt {
		if plen > 0 {
			th[20+plen/2] ^= 0x10
		} else {
			th[14] ^= 0x01 // the window: still covered by the checksum
		}
	}
	return pkt, corrupt
}

// Frame check results.
const (
	frameOK = iota
	frameBadCsum
	frameMalformed
)

// checkFrame validates an IPv4/TCP frame from the TX ring.
func checkFrame(p []byte) int {
	if len(p) < 40 || p[0]>>4 != 4 || p[0]&15 < 5 || p[9] != 6 {
		return frameMalformed
	}
	ihl := int(p[0]&15) * 4
	tot := int(binary.BigEndian.Uint16(p[2:]))
	if tot < ihl+20 || tot > len(p) || len(p) < ihl {
		return frameMalformed
	}
	if csumFold(csumAdd(0, p[:ihl])) != 0 {
		return frameBadCsum
	}
	if tcpChecksum(p[:tot]) != 0 {
		return frameBadCsum
	}
	return frameOK
}

// tcpChecksum is the TCP checksum of the IPv4 packet p over the
// pseudo-header: 0 for a packet whose checksum field is right, the value
// to store for one whose field is 0.
func tcpChecksum(p []byte) uint16 {
	ihl := int(p[0]&15) * 4
	seg := p[ihl:]
	var ph [12]byte
	copy(ph[0:8], p[12:20])
	ph[9] = 6
	binary.BigEndian.PutUint16(ph[10:], uint16(len(seg)))
	return csumFold(csumAdd(csumAdd(0, ph[:]), seg))
}

// csumAdd adds b to the one's complement sum s (RFC 1071).
func csumAdd(s uint32, b []byte) uint32 {
	for len(b) >= 2 {
		s += uint32(binary.BigEndian.Uint16(b))
		b = b[2:]
	}
	if len(b) == 1 {
		s += uint32(b[0]) << 8
	}
	for s>>16 != 0 {
		s = s&0xffff + s>>16
	}
	return s
}

func csumFold(s uint32) uint16 {
	for s>>16 != 0 {
		s = s&0xffff + s>>16
	}
	return ^uint16(s)
}
