package machine

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/kpemu/kpemu/internal/waitfor"
)

// TestUARTRegisters drives the PL011 model directly.
func TestUARTRegisters(t *testing.T) {
	var out strings.Builder
	var level bool
	u := newPL011(&out, slog.New(slog.DiscardHandler), func(l bool) { level = l })
	type op struct {
		write     bool
		off, v    uint64
		wantLevel bool
	}
	steps := []op{
		{off: uartFR, v: uartFRTXE | uartFRRXE},
		{write: true, off: uartIMSC, v: uartIntRX | uartIntTX | uartIntRT},
		{write: true, off: uartDR, v: 'h', wantLevel: true}, // TX interrupt
		{off: uartRIS, v: uartIntTX, wantLevel: true},
		{write: true, off: uartICR, v: uartIntTX},
		{off: uartMIS, v: 0},
		{write: true, off: uartLCRH, v: uartFEN},
	}
	for i, s := range steps {
		if s.write {
			u.write(0, s.off, 4, s.v)
		} else if got := u.read(0, s.off, 4); got != s.v {
			t.Fatalf("step %d: read %#x = %#x, want %#x", i, s.off, got, s.v)
		}
		if s.write && level != s.wantLevel {
			t.Fatalf("step %d: level %v", i, level)
		}
	}
	u.push([]byte("ab"))
	if !level || u.read(0, uartRIS, 4) != uartIntRX || u.read(0, uartFR, 4)&uartFRRXE != 0 {
		t.Fatalf("after input: level %v RIS %#x FR %#x", level, u.read(0, uartRIS, 4), u.read(0, uartFR, 4))
	}
	if a, b := u.read(0, uartDR, 4), u.read(0, uartDR, 4); a != 'a' || b != 'b' {
		t.Fatalf("read %q %q", rune(a), rune(b))
	}
	if level || u.read(0, uartFR, 4)&uartFRRXE == 0 {
		t.Fatal("interrupt or data left after draining")
	}
	// FIFO disabled: one holding register, the rest waits in the backlog.
	u.write(0, uartLCRH, 4, 0)
	u.push([]byte("xyz"))
	if u.read(0, uartFR, 4)&uartFRRXF == 0 || len(u.rx) != 1 || len(u.backlog) != 2 {
		t.Fatalf("holding register: FR %#x rx %q backlog %q", u.read(0, uartFR, 4), u.rx, u.backlog)
	}
	if out.String() != "h" {
		t.Fatalf("console %q", out.String())
	}
}

// TestUARTConsoleIn echoes Config.ConsoleIn to the console through the
// guest: poll FR.RXFE, read DR, write DR, until it reads '.'.
func TestUARTConsoleIn(t *testing.T) {
	var out strings.Builder
	m, err := New(Config{RAMSize: testRAM, Console: &out, ConsoleIn: strings.NewReader("hello."), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	code := dprog(
		"mov x1, #0x9000000",
		"ldr w2, [x1, #0x18]", "tbnz w2, #4, #-4", // wait while RXFE
		"ldr w3, [x1]", "str w3, [x1]",
		"cmp w3, #0x2e", "b.ne #-20",
		"mov x0, #0x8", "movk x0, #0x8400, lsl #16", "hvc #0",
	)
	for i, w := range code {
		mustWrite32(t, m, testCode+uint64(4*i), w)
	}
	m.Boot(testCode, 0)
	ctx, cancel := context.WithDeadline(context.Background(), waitfor.Deadline(t))
	defer cancel()
	if err := m.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if out.String() != "hello." {
		t.Fatalf("echoed %q", out.String())
	}
}
