package machine

import (
	"io"
	"log/slog"
)

// PL011 register offsets (Arm PrimeCell UART PL011 TRM, DDI 0183).
const (
	uartDR    = 0x000
	uartFR    = 0x018
	uartICR   = 0x044
	uartRegs  = 0x04c // end of the read/write register block we keep
	uartIDs   = 0xfe0 // PeriphID0..3, PCellID0..3
	uartFRTXF = 1 << 7
	uartFRRXF = 1 << 4
)

// pl011IDs are PeriphID0..3 then PCellID0..3, one byte per word.
const pl011IDs = "\x11\x10\x14\x00\x0d\xf0\x05\xb1"

// pl011 is a transmit-only PL011: bytes written to DR go straight to the
// console, the FIFOs always look empty, and the other registers just hold
// what was written so drivers that configure them read back sane values.
type pl011 struct {
	out     io.Writer
	log     *slog.Logger
	regs    [uartRegs / 4]uint32
	buf     [1]byte // reused so writing a byte does not allocate
	errSeen bool
}

func newPL011(out io.Writer, log *slog.Logger) *pl011 {
	u := &pl011{out: out, log: log}
	u.regs[0x030/4] = 0x300 // CR: TXE|RXE, as after reset
	return u
}

func (u *pl011) read(off uint64, _ int) uint64 {
	switch {
	case off == uartDR:
		return 0 // no receive path
	case off == uartFR:
		return uartFRTXF | uartFRRXF
	case off >= uartIDs && off < uartIDs+32 && off%4 == 0:
		return uint64(pl011IDs[(off-uartIDs)/4])
	case off < uartRegs && off%4 == 0 && off != uartICR:
		return uint64(u.regs[off/4])
	}
	return 0
}

func (u *pl011) write(off uint64, _ int, v uint64) {
	switch {
	case off == uartDR:
		u.buf[0] = byte(v)
		if _, err := u.out.Write(u.buf[:]); err != nil && !u.errSeen {
			// The guest cannot be told; log once rather than per byte.
			u.errSeen = true
			u.log.Warn("machine: console write failed", "err", err)
		}
	case off == uartFR || off == uartICR:
		// FR is read-only; ICR clears interrupts, and none are raised.
	case off < uartRegs && off%4 == 0:
		u.regs[off/4] = uint32(v)
	}
}
