package machine

import (
	"encoding/binary"
	"fmt"
)

// The flattened device tree (Devicetree Specification v0.4, chapter 5)
// describing the board as QEMU's virt does, so that a kernel written for
// virt finds its devices the same way.

// FDT structure block tokens and header constants.
const (
	fdtMagic     = 0xd00dfeed
	fdtBeginNode = 1
	fdtEndNode   = 2
	fdtProp      = 3
	fdtEnd       = 9
	fdtVersion   = 17
	fdtLastComp  = 16
	fdtHeaderLen = 40
)

// Phandles, as QEMU virt numbers them.
const (
	phandleClock = 0x8000
	phandleGIC   = 0x8001
)

// GIC interrupt specifier fields (#interrupt-cells = 3).
const (
	fdtIRQSPI     = 0
	fdtIRQPPI     = 1
	fdtIRQLevelHi = 4
)

// fdtBuilder writes a device tree blob: a structure block of tokens and a
// strings block of property names, each name stored once.
type fdtBuilder struct {
	structs []byte
	strings []byte
	offsets map[string]uint32
}

func newFDTBuilder() *fdtBuilder { return &fdtBuilder{offsets: make(map[string]uint32)} }

func (b *fdtBuilder) u32(v uint32) { b.structs = binary.BigEndian.AppendUint32(b.structs, v) }

// pad aligns the structure block to 4 bytes, as every token must be.
func (b *fdtBuilder) pad() {
	for len(b.structs)%4 != 0 {
		b.structs = append(b.structs, 0)
	}
}

func (b *fdtBuilder) begin(name string) {
	b.u32(fdtBeginNode)
	b.structs = append(b.structs, name...)
	b.structs = append(b.structs, 0)
	b.pad()
}

func (b *fdtBuilder) end() { b.u32(fdtEndNode) }

func (b *fdtBuilder) prop(name string, val []byte) {
	off, ok := b.offsets[name]
	if !ok {
		off = uint32(len(b.strings))
		b.offsets[name] = off
		b.strings = append(b.strings, name...)
		b.strings = append(b.strings, 0)
	}
	b.u32(fdtProp)
	b.u32(uint32(len(val)))
	b.u32(off)
	b.structs = append(b.structs, val...)
	b.pad()
}

// cells is a property of 32-bit cells.
func (b *fdtBuilder) cells(name string, v ...uint32) {
	var p []byte
	for _, x := range v {
		p = binary.BigEndian.AppendUint32(p, x)
	}
	b.prop(name, p)
}

// strs is a property holding a list of strings.
func (b *fdtBuilder) strs(name string, v ...string) {
	var p []byte
	for _, s := range v {
		p = append(p, s...)
		p = append(p, 0)
	}
	b.prop(name, p)
}

// reg64 encodes base/size pairs with #address-cells = #size-cells = 2.
func reg64(pairs ...uint64) []uint32 {
	var c []uint32
	for _, v := range pairs {
		c = append(c, uint32(v>>32), uint32(v))
	}
	return c
}

// finish returns the blob: header, an empty memory reservation map, the
// structure block and the strings block.
func (b *fdtBuilder) finish() []byte {
	b.u32(fdtEnd)
	const rsvOff = fdtHeaderLen
	const rsvLen = 16 // the terminating all-zero entry
	structOff := uint32(rsvOff + rsvLen)
	stringsOff := structOff + uint32(len(b.structs))
	total := stringsOff + uint32(len(b.strings))
	out := make([]byte, 0, total)
	for _, v := range []uint32{fdtMagic, total, structOff, stringsOff, rsvOff, fdtVersion, fdtLastComp, 0,
		uint32(len(b.strings)), uint32(len(b.structs))} {
		out = binary.BigEndian.AppendUint32(out, v)
	}
	out = append(out, make([]byte, rsvLen)...)
	out = append(out, b.structs...)
	return append(out, b.strings...)
}

// DeviceTree returns a flattened device tree blob describing the machine:
// memory, CPUs with PSCI as their enable method, PSCI over HVC, the GICv2,
// the generic timer's four PPIs, the PL011 with its clock, the PL031, kpemu's virtnet NIC and
// /chosen with stdout-path, as QEMU's virt board does.
func (m *Machine) DeviceTree() []byte {
	b := newFDTBuilder()
	ncpu := len(m.cpus)
	// PPI specifiers carry a CPU mask in bits [15:8] on a GICv2.
	ppiFlags := uint32(1<<ncpu-1)<<8 | fdtIRQLevelHi
	uartNode := fmt.Sprintf("pl011@%x", UARTBase)

	b.begin("")
	b.cells("interrupt-parent", phandleGIC)
	b.cells("#size-cells", 2)
	b.cells("#address-cells", 2)
	b.strs("compatible", "linux,dummy-virt")
	b.strs("model", "kpemu virt")

	b.begin("psci")
	b.cells("migrate", 0xc4000005)
	b.cells("cpu_on", psciCPUOn|psci64)
	b.cells("cpu_off", psciCPUOff)
	b.cells("cpu_suspend", psciCPUSuspend|psci64)
	b.strs("method", "hvc")
	b.strs("compatible", "arm,psci-1.0", "arm,psci-0.2", "arm,psci")
	b.end()

	b.begin(fmt.Sprintf("memory@%x", RAMBase))
	b.cells("reg", reg64(RAMBase, uint64(len(m.ram)))...)
	b.strs("device_type", "memory")
	b.end()

	b.begin("cpus")
	b.cells("#size-cells", 0)
	b.cells("#address-cells", 1)
	for i := 0; i < ncpu; i++ {
		b.begin(fmt.Sprintf("cpu@%x", i))
		b.strs("enable-method", "psci")
		b.cells("reg", uint32(i)) // MPIDR_EL1 affinity: Aff0 = index
		b.strs("compatible", "arm,cortex-a57")
		b.strs("device_type", "cpu")
		b.end()
	}
	b.end()

	b.begin("timer")
	b.prop("always-on", nil)
	// Secure physical, non-secure physical, virtual, hypervisor: PPIs
	// 13, 14, 11, 10 (INTIDs 29, 30, 27, 26).
	b.cells("interrupts",
		fdtIRQPPI, 13, ppiFlags,
		fdtIRQPPI, ppiPhysTimer-16, ppiFlags,
		fdtIRQPPI, ppiVirtTimer-16, ppiFlags,
		fdtIRQPPI, 10, ppiFlags)
	b.strs("compatible", "arm,armv8-timer", "arm,armv7-timer")
	b.end()

	b.begin(fmt.Sprintf("intc@%x", GICDBase))
	b.cells("phandle", phandleGIC)
	b.cells("reg", reg64(GICDBase, gicRegionSize, GICCBase, gicRegionSize)...)
	b.strs("compatible", "arm,cortex-a15-gic")
	b.prop("interrupt-controller", nil)
	b.cells("#interrupt-cells", 3)
	// Cells for child nodes (QEMU hangs the GICv2m frame here); dtc
	// expects an interrupt provider to state them.
	b.prop("ranges", nil)
	b.cells("#size-cells", 2)
	b.cells("#address-cells", 2)
	b.end()

	b.begin("apb-pclk")
	b.cells("phandle", phandleClock)
	b.strs("clock-output-names", "clk24mhz")
	b.cells("clock-frequency", 24000000)
	b.cells("#clock-cells", 0)
	b.strs("compatible", "fixed-clock")
	b.end()

	b.begin(uartNode)
	b.strs("clock-names", "uartclk", "apb_pclk")
	b.cells("clocks", phandleClock, phandleClock)
	b.cells("interrupts", fdtIRQSPI, IRQUART-gicInternal, fdtIRQLevelHi)
	b.cells("reg", reg64(UARTBase, PageSize)...)
	b.strs("compatible", "arm,pl011", "arm,primecell")
	b.end()

	b.begin(fmt.Sprintf("pl031@%x", RTCBase))
	b.strs("clock-names", "apb_pclk")
	b.cells("clocks", phandleClock)
	b.cells("interrupts", fdtIRQSPI, IRQRTC-gicInternal, fdtIRQLevelHi)
	b.cells("reg", reg64(RTCBase, PageSize)...)
	b.strs("compatible", "arm,pl031", "arm,primecell")
	b.end()

	// kpemu's own NIC (virtnet.go): not on QEMU's virt, so a guest that
	// runs on both must find it here before touching its page.
	b.begin(fmt.Sprintf("virtnet@%x", VirtnetBase))
	b.cells("interrupts", fdtIRQSPI, IRQVirtnet-gicInternal, fdtIRQLevelHi)
	b.cells("reg", reg64(VirtnetBase, PageSize)...)
	b.strs("compatible", "kpemu,virtnet")
	b.end()

	// kpemu's host-to-guest doorbell (doorbell.go), likewise.
	b.begin(fmt.Sprintf("doorbell@%x", DoorbellBase))
	b.cells("interrupts", fdtIRQSPI, IRQDoorbell-gicInternal, fdtIRQLevelHi)
	b.cells("reg", reg64(DoorbellBase, PageSize)...)
	b.strs("compatible", "kpemu,doorbell")
	b.end()

	b.begin("chosen")
	b.strs("stdout-path", "/"+uartNode)
	b.end()

	b.end()
	return b.finish()
}

// fdtPlacement is where LoadDeviceTree puts the blob: the start of the
// last 2 MiB of RAM, so that it is 8-byte aligned and does not cross a
// 2 MiB boundary, as the arm64 Linux boot protocol requires, and stays
// clear of an image loaded low in RAM.
const fdtPlacement = 2 << 20

// LoadDeviceTree writes DeviceTree() into guest RAM and returns its
// physical address, the value to pass in x0 to Boot. Call it while the
// machine is not running.
func (m *Machine) LoadDeviceTree() (uint64, error) {
	blob := m.DeviceTree()
	if uint64(len(m.ram)) < fdtPlacement || len(blob) > fdtPlacement {
		return 0, fmt.Errorf("machine: device tree of %d bytes does not fit in %d bytes of RAM: %w", len(blob), len(m.ram), ErrBadAddress)
	}
	addr := RAMBase + uint64(len(m.ram)) - fdtPlacement
	if err := m.WriteMem(addr, blob); err != nil {
		return 0, fmt.Errorf("machine: loading the device tree: %w", err)
	}
	return addr, nil
}
