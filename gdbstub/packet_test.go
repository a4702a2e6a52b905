package gdbstub

import (
	"bytes"
	"strings"
	"testing"
)

// feedAll runs a byte stream through a parser and returns the events.
func feedAll(in []byte) []inEvent {
	var p parser
	var out []inEvent
	for _, b := range in {
		if ev, ok := p.feed(b); ok {
			out = append(out, ev)
		}
	}
	return out
}

func TestParser(t *testing.T) {
	long := strings.Repeat("a", packetSize+10)
	tests := []struct {
		name string
		in   string
		want []inEvent
	}{
		{"packet", "$g#67", []inEvent{{inPacket, []byte("g")}}},
		{"upper-case checksum", "$qC#B4", []inEvent{{inPacket, []byte("qC")}}},
		{"empty packet", "$#00", []inEvent{{inPacket, []byte{}}}},
		{"acks and interrupt", "+-\x03", []inEvent{{kind: inAck}, {kind: inNak}, {kind: inInterrupt}}},
		{"noise between packets", "xyz\n$g#67zz", []inEvent{{inPacket, []byte("g")}}},
		{"bad checksum", "$g#68", []inEvent{{kind: inBadChecksum}}},
		{"non-hex checksum", "$g#6z", []inEvent{{kind: inBadChecksum}}},
		{"non-hex first checksum digit", "$g#z7", []inEvent{{kind: inBadChecksum}}},
		{"truncated then restarted", "$m0,4$g#67", []inEvent{{inPacket, []byte("g")}}},
		{"truncated at end", "$g#6", nil},
		{"interrupt inside a packet is data", "$\x03#03", []inEvent{{inPacket, []byte{3}}}},
		{"oversize", string(frame([]byte(long))), []inEvent{{kind: inOversize}}},
		{"oversize with bad checksum", "$" + long + "#00", []inEvent{{kind: inBadChecksum}}},
		{"escaped payload kept raw", string(frame([]byte("X0,1:}]"))), []inEvent{{inPacket, []byte("X0,1:}]")}}},
		{"two packets", "$g#67+$?#3f", []inEvent{{inPacket, []byte("g")}, {kind: inAck}, {inPacket, []byte("?")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := feedAll([]byte(tt.in))
			if len(got) != len(tt.want) {
				t.Fatalf("events = %+v, want %+v", got, tt.want)
			}
			for i := range got {
				if got[i].kind != tt.want[i].kind || !bytes.Equal(got[i].data, tt.want[i].data) {
					t.Errorf("event %d = %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestFrame(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "$#00"},
		{"OK", "$OK#9a"},
		{"qC", "$qC#b4"},
	}
	for _, tt := range tests {
		if got := string(frame([]byte(tt.in))); got != tt.want {
			t.Errorf("frame(%q) = %q, want %q", tt.in, got, tt.want)
		}
		// What the stub frames, its parser reads back.
		if ev := feedAll(frame([]byte(tt.in))); len(ev) != 1 || string(ev[0].data) != tt.in {
			t.Errorf("round trip of %q = %+v", tt.in, ev)
		}
	}
}

func TestEscape(t *testing.T) {
	tests := []struct{ raw, esc string }{
		{"abc", "abc"},
		{"#$}*", "}\x03}\x04}]}\x0a"},
		{"\x00\xff", "\x00\xff"},
	}
	for _, tt := range tests {
		if got := string(escapeBinary(nil, []byte(tt.raw))); got != tt.esc {
			t.Errorf("escape(%q) = %q, want %q", tt.raw, got, tt.esc)
		}
		got, err := unescapeBinary([]byte(tt.esc))
		if err != nil || string(got) != tt.raw {
			t.Errorf("unescape(%q) = %q, %v", tt.esc, got, err)
		}
	}
	if _, err := unescapeBinary([]byte("ab}")); err == nil {
		t.Error("a trailing escape was accepted")
	}
}

func TestHex(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"0", 0, true},
		{"ffffffffffffffff", ^uint64(0), true},
		{"DeadBeef", 0xdeadbeef, true},
		{"", 0, false},
		{"10000000000000000", 0, false},
		{"-1", 0, false},
		{"0x10", 0, false},
		{"g", 0, false},
	}
	for _, tt := range tests {
		got, err := parseHex(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseHex(%q) = %#x, %v", tt.in, got, err)
		}
	}
	for _, bad := range []string{"a", "zz", "0g"} {
		if _, err := decodeHex(bad); err == nil {
			t.Errorf("decodeHex(%q) accepted", bad)
		}
	}
	if got := string(appendRegHex(nil, 0x1122334455667788, 8)); got != "8877665544332211" {
		t.Errorf("appendRegHex = %s", got)
	}
	if got := regFromBytes([]byte{0x88, 0x77, 0x66, 0x55}); got != 0x55667788 {
		t.Errorf("regFromBytes = %#x", got)
	}
}

// FuzzParser checks that no byte stream panics the parser or makes it
// hold more than a packet's worth of payload.
func FuzzParser(f *testing.F) {
	for _, s := range []string{"$g#67", "+$qSupported:swbreak+#00", "$", "#", "$#", "}}}$$##", "\x03\x03", "$X0,1:}#aa"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, ev := range feedAll(in) {
			if len(ev.data) > packetSize {
				t.Fatalf("payload of %d bytes", len(ev.data))
			}
		}
	})
}
