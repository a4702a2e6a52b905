package machine

import "sync"

// doorbell is kpemu's host-to-guest doorbell: an MMIO page with one
// level-sensitive SPI that the host raises (RingDoorbell) and the guest
// lowers by acknowledging, so that a guest driver learns at once, not at
// its next tick, that the host queued work for it in guest memory. It is
// not a QEMU device: a guest finds it in the device tree (compatible
// "kpemu,doorbell") before touching its page.
//
// Register map (little-endian, 32-bit):
//
//	0x000 ID       RO  0x6c656264 ("dbel")
//	0x004 PENDING  RO  the bits rung and not yet acknowledged; the SPI is
//	                   high while it is non-zero
//	0x008 ACK      WO  clears the bits written
//	0x00c HOSTPIDS RO  the host's pid_max when the guest mirrors host
//	                   processes (Config.HostPIDMax), else 0
//
// Other offsets read as zero and ignore writes.
type doorbell struct {
	mu         sync.Mutex
	pending    uint32
	irq        func(level bool)
	hostPIDMax uint32
}

// The doorbell's place in the memory map: the page after virtnet's, in the
// same hole of QEMU's virt map; and SPI 9, which virt gives only to the
// ACPI GED of an ACPI board.
const (
	DoorbellBase = 0x0b101000
	IRQDoorbell  = 41 // SPI 9
)

const (
	dbID      = 0x000
	dbPending = 0x004
	dbAck     = 0x008
	dbHostPID = 0x00c
	dbIDValue = 0x6c656264
)

func (m *Machine) addDoorbell(hostPIDMax uint32) {
	d := &doorbell{irq: func(level bool) { m.gic.setSPI(IRQDoorbell, level) }, hostPIDMax: hostPIDMax}
	m.doorbell = d
	m.bus.add(region{name: "doorbell", base: DoorbellBase, size: PageSize, read: d.read, write: d.write})
}

// RingDoorbell sets bits in the doorbell's PENDING register and raises its
// interrupt. Safe from any goroutine, with the machine running or not.
func (m *Machine) RingDoorbell(bits uint32) {
	d := m.doorbell
	d.mu.Lock()
	defer d.mu.Unlock()
	d.pending |= bits
	d.irq(d.pending != 0)
}

func (d *doorbell) read(_ *CPU, off uint64, size int) uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch off {
	case dbID:
		return dbIDValue
	case dbPending:
		return uint64(d.pending)
	case dbHostPID:
		return uint64(d.hostPIDMax)
	}
	return 0
}

func (d *doorbell) write(_ *CPU, off uint64, size int, v uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if off == dbAck {
		d.pending &^= uint32(v)
		d.irq(d.pending != 0)
	}
}
