package gdbstub

import (
	"errors"
	"fmt"
	"strconv"
)

// packetSize is the largest packet payload the stub accepts (advertised as
// PacketSize in qSupported) and the bound on the replies it builds.
const packetSize = 0x4000

// interruptByte is what GDB sends, outside any packet, for Ctrl-C.
const interruptByte = 0x03

// inKind classifies what the parser found in the byte stream.
type inKind int

const (
	inPacket      inKind = iota // a packet with a good checksum
	inBadChecksum               // a packet whose checksum did not match (or was not hex)
	inOversize                  // a packet with a good checksum but longer than packetSize
	inAck                       // '+'
	inNak                       // '-'
	inInterrupt                 // 0x03
)

// inEvent is one unit of input: a packet (data holds its payload, still
// escaped, as binary packets are unescaped by their handler), an ack, or an
// interrupt.
type inEvent struct {
	kind inKind
	data []byte
}

// parser is the receive state machine. It holds at most packetSize bytes
// of payload however long the packet, so a client cannot make the stub
// allocate without bound.
type parser struct {
	state    int
	data     []byte
	sum      byte
	oversize bool
	csum     byte
}

const (
	psIdle = iota
	psData
	psCsum1
	psCsum2
)

// feed consumes one byte and reports an event when one completed.
func (p *parser) feed(b byte) (inEvent, bool) {
	switch p.state {
	case psIdle:
		switch b {
		case '$':
			p.start()
		case '+':
			return inEvent{kind: inAck}, true
		case '-':
			return inEvent{kind: inNak}, true
		case interruptByte:
			return inEvent{kind: inInterrupt}, true
		}
		// Anything else between packets is line noise: ignore it, as
		// GDB's own stubs do.
	case psData:
		switch b {
		case '#':
			p.state = psCsum1
		case '$':
			// An unescaped '$' cannot occur in a payload: the previous
			// packet was truncated and a new one starts.
			p.start()
		default:
			p.sum += b
			if len(p.data) < packetSize {
				p.data = append(p.data, b)
			} else {
				p.oversize = true
			}
		}
	case psCsum1:
		v, ok := unhex(b)
		if !ok {
			p.state = psIdle
			return inEvent{kind: inBadChecksum}, true
		}
		p.csum = v << 4
		p.state = psCsum2
	case psCsum2:
		p.state = psIdle
		v, ok := unhex(b)
		if !ok || p.csum|v != p.sum {
			return inEvent{kind: inBadChecksum}, true
		}
		if p.oversize {
			return inEvent{kind: inOversize}, true
		}
		data := p.data
		p.data = nil
		return inEvent{kind: inPacket, data: data}, true
	}
	return inEvent{}, false
}

func (p *parser) start() {
	p.state = psData
	p.data = p.data[:0]
	p.sum = 0
	p.oversize = false
}

func unhex(b byte) (byte, bool) {
	switch {
	case b >= '0' && b <= '9':
		return b - '0', true
	case b >= 'a' && b <= 'f':
		return b - 'a' + 10, true
	case b >= 'A' && b <= 'F':
		return b - 'A' + 10, true
	}
	return 0, false
}

const hexDigits = "0123456789abcdef"

// frame wraps a payload as $payload#cs. The payload must already be
// escaped where it holds binary data.
func frame(payload []byte) []byte {
	out := make([]byte, 0, len(payload)+4)
	out = append(out, '$')
	var sum byte
	for _, b := range payload {
		sum += b
	}
	out = append(out, payload...)
	return append(out, '#', hexDigits[sum>>4], hexDigits[sum&0xf])
}

// escapeBinary escapes the bytes that cannot appear raw in a packet: '#',
// '$', '}' and '*' (which GDB would read as run-length encoding) become
// '}' followed by the byte XOR 0x20.
func escapeBinary(dst, src []byte) []byte {
	for _, b := range src {
		switch b {
		case '#', '$', '}', '*':
			dst = append(dst, '}', b^0x20)
		default:
			dst = append(dst, b)
		}
	}
	return dst
}

var errBadEscape = errors.New("gdbstub: escape at end of binary data")

// unescapeBinary undoes escapeBinary.
func unescapeBinary(src []byte) ([]byte, error) {
	out := make([]byte, 0, len(src))
	for i := 0; i < len(src); i++ {
		b := src[i]
		if b == '}' {
			i++
			if i == len(src) {
				return nil, errBadEscape
			}
			b = src[i] ^ 0x20
		}
		out = append(out, b)
	}
	return out, nil
}

// parseHex parses a non-empty hexadecimal number of at most 64 bits.
func parseHex(s string) (uint64, error) {
	if s == "" {
		return 0, errors.New("gdbstub: empty number")
	}
	v, err := strconv.ParseUint(s, 16, 64)
	if err != nil {
		return 0, fmt.Errorf("gdbstub: bad hex number: %w", err)
	}
	return v, nil
}

// decodeHex decodes a string of hex byte pairs.
func decodeHex(s string) ([]byte, error) {
	if len(s)%2 != 0 {
		return nil, errors.New("gdbstub: odd hex length")
	}
	out := make([]byte, len(s)/2)
	for i := range out {
		hi, ok1 := unhex(s[2*i])
		lo, ok2 := unhex(s[2*i+1])
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("gdbstub: bad hex digit at %d", 2*i)
		}
		out[i] = hi<<4 | lo
	}
	return out, nil
}

// appendHex appends p as hex byte pairs.
func appendHex(dst, p []byte) []byte {
	for _, b := range p {
		dst = append(dst, hexDigits[b>>4], hexDigits[b&0xf])
	}
	return dst
}

// appendRegHex appends the n low bytes of v in target (little-endian)
// order as hex.
func appendRegHex(dst []byte, v uint64, n int) []byte {
	for i := 0; i < n; i++ {
		b := byte(v >> (8 * i))
		dst = append(dst, hexDigits[b>>4], hexDigits[b&0xf])
	}
	return dst
}

// regFromBytes reads a little-endian register value.
func regFromBytes(p []byte) uint64 {
	var v uint64
	for i := len(p) - 1; i >= 0; i-- {
		v = v<<8 | uint64(p[i])
	}
	return v
}
