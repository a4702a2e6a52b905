package machine

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
)

// TestReadMemFrom loads bytes from a reader straight into RAM, as Boot
// loads the image's segments, and refuses what is not all RAM.
func TestReadMemFrom(t *testing.T) {
	const ram = 1 << 20
	tests := []struct {
		name    string
		addr    uint64
		src     string
		n       int
		wantErr error
		want    string // RAM at addr afterwards
	}{
		{name: "all of it", addr: RAMBase + 0x1000, src: "segment", n: 7, want: "segment"},
		{name: "a prefix", addr: RAMBase + 0x1000, src: "segment", n: 3, want: "seg\x00\x00\x00\x00"},
		{name: "RAM's last bytes", addr: RAMBase + ram - 3, src: "end", n: 3, want: "end"},
		{name: "past RAM's end", addr: RAMBase + ram - 2, src: "end", n: 3, wantErr: ErrBadAddress},
		{name: "below RAM", addr: RAMBase - 4, src: "low", n: 3, wantErr: ErrBadAddress},
		{name: "a short reader", addr: RAMBase + 0x1000, src: "seg", n: 7, wantErr: io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := New(Config{RAMSize: ram, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			err = m.ReadMemFrom(tt.addr, strings.NewReader(tt.src), tt.n)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("ReadMemFrom(%#x, %q, %d) = %v, want %v", tt.addr, tt.src, tt.n, err, tt.wantErr)
			}
			if tt.wantErr != nil {
				return
			}
			got := make([]byte, len(tt.want))
			if err := m.ReadMem(tt.addr, got); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, []byte(tt.want)) {
				t.Errorf("RAM at %#x = %q, want %q", tt.addr, got, tt.want)
			}
		})
	}
}
