package main

import "testing"

func TestParseProbeSpec(t *testing.T) {
	tests := []struct {
		spec   string
		symbol string
		offset uint64
		addr   uint64
		err    bool
	}{
		{"vfs_read", "vfs_read", 0, 0, false},
		{"vfs_read+8", "vfs_read", 8, 0, false},
		{"vfs_read+0x10", "vfs_read", 16, 0, false},
		{"0x400841b0", "", 0, 0x400841b0, false},
		{"vfs_read+x", "", 0, 0, true},
		{"", "", 0, 0, true},
	}
	for _, tt := range tests {
		p, err := parseProbeSpec(tt.spec)
		if (err != nil) != tt.err {
			t.Errorf("%q: err = %v", tt.spec, err)
			continue
		}
		if err == nil && (p.Symbol != tt.symbol || p.Offset != tt.offset || p.Addr != tt.addr) {
			t.Errorf("%q = %+v", tt.spec, p)
		}
	}
}
