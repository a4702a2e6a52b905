package machine

import (
	"errors"
	"io"
	"log/slog"
	"sync"
)

// PL011 register offsets (Arm PrimeCell UART PL011 TRM, DDI 0183).
const (
	uartDR    = 0x000
	uartRSR   = 0x004
	uartFR    = 0x018
	uartLCRH  = 0x02c
	uartCR    = 0x030
	uartIFLS  = 0x034
	uartIMSC  = 0x038
	uartRIS   = 0x03c
	uartMIS   = 0x040
	uartICR   = 0x044
	uartRegs  = 0x04c // end of the read/write register block we keep
	uartIDs   = 0xfe0 // PeriphID0..3, PCellID0..3
	uartFRTXE = 1 << 7
	uartFRRXF = 1 << 6
	uartFRRXE = 1 << 4
	uartFEN   = 1 << 4 // LCR_H: FIFOs enabled

	uartIntRX   = 1 << 4 // UARTRXINTR
	uartIntTX   = 1 << 5 // UARTTXINTR
	uartIntRT   = 1 << 6 // UARTRTINTR, receive timeout
	uartIntMask = 0x7ff

	uartFIFODepth = 16
)

// pl011IDs are PeriphID0..3 then PCellID0..3, one byte per word.
const pl011IDs = "\x11\x10\x14\x00\x0d\xf0\x05\xb1"

// pl011 is a PL011 whose transmitter is infinitely fast: bytes written to
// DR go straight to the console and the TX FIFO always looks empty. The
// receiver has a FIFO fed from the host (Config.ConsoleIn). Interrupts
// follow QEMU's model: RX is raised when a byte arrives (the trigger level
// is one byte, as QEMU, which ignores IFLS, so the receive timeout RT,
// which covers bytes waiting below the trigger level, never has to fire),
// TX after each transmitted byte; ICR clears them, and draining the FIFO
// drops RX and RT.
type pl011 struct {
	out io.Writer
	log *slog.Logger
	irq func(level bool) // drives the UART's SPI

	mu      sync.Mutex
	regs    [uartRegs / 4]uint32
	ris     uint32
	rx      []byte // receive FIFO, oldest first
	backlog []byte // host input not yet in the FIFO
	drained chan struct{}
	level   bool
	buf     [1]byte // reused so writing a byte does not allocate
	errSeen bool
}

func newPL011(out io.Writer, log *slog.Logger, irq func(bool)) *pl011 {
	u := &pl011{out: out, log: log, irq: irq, drained: make(chan struct{}, 1)}
	u.reset()
	return u
}

// reset restores the registers' reset values; pending host input stays.
func (u *pl011) reset() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.regs = [uartRegs / 4]uint32{}
	u.regs[uartCR/4] = 0x300   // TXE|RXE
	u.regs[uartIFLS/4] = 0x012 // half full, as after reset
	u.ris = 0
	// Host input that arrived before the reset is not lost: the FIFO's
	// bytes go back in front of the backlog and come in again afterwards.
	u.backlog = append(append([]byte(nil), u.rx...), u.backlog...)
	u.rx = u.rx[:0]
	u.refill()
	u.update()
}

func (u *pl011) depth() int {
	if u.regs[uartLCRH/4]&uartFEN != 0 {
		return uartFIFODepth
	}
	return 1 // FIFOs disabled: one holding register
}

// refill moves backlog bytes into free FIFO entries. u.mu held.
func (u *pl011) refill() {
	for len(u.backlog) > 0 && len(u.rx) < u.depth() {
		u.rx = append(u.rx, u.backlog[0])
		u.backlog = u.backlog[1:]
		// Trigger level one byte, as QEMU: every arrival raises RX.
		u.ris |= uartIntRX
	}
	if len(u.backlog) == 0 {
		select {
		case u.drained <- struct{}{}:
		default:
		}
	}
}

// update drives the interrupt output from RIS and IMSC. u.mu held.
func (u *pl011) update() {
	level := u.ris&u.regs[uartIMSC/4] != 0
	if level != u.level {
		u.level = level
		u.irq(level)
	}
}

// push queues host input. Callers stop the world first (feedConsole), so
// the bytes appear between instructions.
func (u *pl011) push(p []byte) {
	u.mu.Lock()
	defer u.mu.Unlock()
	select {
	case <-u.drained: // a stale token would let the feeder run ahead
	default:
	}
	u.backlog = append(u.backlog, p...)
	u.refill()
	u.update()
}

func (u *pl011) read(_ int, off uint64, _ int) uint64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	switch {
	case off == uartDR:
		if len(u.rx) == 0 {
			return 0
		}
		b := u.rx[0]
		u.rx = append(u.rx[:0], u.rx[1:]...)
		u.refill()
		if len(u.rx) == 0 {
			u.ris &^= uartIntRX | uartIntRT
		}
		u.update()
		return uint64(b)
	case off == uartFR:
		fr := uint64(uartFRTXE)
		if len(u.rx) == 0 {
			fr |= uartFRRXE
		}
		if len(u.rx) >= u.depth() {
			fr |= uartFRRXF
		}
		return fr
	case off == uartRIS:
		return uint64(u.ris)
	case off == uartMIS:
		return uint64(u.ris & u.regs[uartIMSC/4])
	case off >= uartIDs && off < uartIDs+32 && off%4 == 0:
		return uint64(pl011IDs[(off-uartIDs)/4])
	case off < uartRegs && off%4 == 0 && off != uartICR:
		return uint64(u.regs[off/4])
	}
	return 0
}

func (u *pl011) write(_ int, off uint64, _ int, v uint64) {
	u.mu.Lock()
	defer u.mu.Unlock()
	switch {
	case off == uartDR:
		u.buf[0] = byte(v)
		if _, err := u.out.Write(u.buf[:]); err != nil && !u.errSeen {
			// The guest cannot be told; log once rather than per byte.
			u.errSeen = true
			u.log.Warn("machine: console write failed", "err", err)
		}
		u.ris |= uartIntTX
	case off == uartICR:
		u.ris &^= uint32(v) & uartIntMask
	case off == uartFR || off == uartRIS || off == uartMIS:
		// Read-only.
	case off == uartRSR:
		// Writing clears the receive errors; none are ever raised.
	case off == uartLCRH:
		u.regs[off/4] = uint32(v)
		u.refill() // enabling the FIFO makes room for backlog
	case off < uartRegs && off%4 == 0:
		u.regs[off/4] = uint32(v)
		if off == uartIMSC {
			u.regs[off/4] &= uartIntMask
		}
	default:
		return
	}
	u.update()
}

// feedConsole copies host input into the UART until in ends. Each chunk
// enters with the world stopped, and the next is read only once the guest
// drained the backlog, so a fast producer is paced by the guest's reads.
func (m *Machine) feedConsole(in io.Reader) {
	buf := make([]byte, 256)
	for {
		n, err := in.Read(buf)
		if n > 0 {
			chunk := append([]byte(nil), buf[:n]...)
			m.Exclusive(func() { m.uart.push(chunk) })
			<-m.uart.drained
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				m.log.Warn("machine: console input failed", "err", err)
			}
			return
		}
	}
}
