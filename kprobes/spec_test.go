package kprobes

import "testing"

func TestParseSpec(t *testing.T) {
	tests := []struct {
		in   string
		want Spec
		err  bool
	}{
		{"vfs_read", Spec{Type: TypeKprobe, Symbol: "vfs_read"}, false},
		{"vfs_read+8", Spec{Type: TypeKprobe, Symbol: "vfs_read", Offset: 8}, false},
		{"k:vfs_read+0x10", Spec{Type: TypeKprobe, Symbol: "vfs_read", Offset: 16}, false},
		{"0x400841b0", Spec{Type: TypeKprobe, Addr: 0x400841b0}, false},
		{"0xffff8000080841b0", Spec{Type: TypeKprobe, Addr: 0xffff8000080841b0}, false},
		{"j:do_fork", Spec{Type: TypeJprobe, Symbol: "do_fork"}, false},
		{"j:do_fork:jdo_fork", Spec{Type: TypeJprobe, Symbol: "do_fork", Handler: "jdo_fork"}, false},
		{"r:vfs_read", Spec{Type: TypeKretprobe, Symbol: "vfs_read"}, false},
		{"r20:vfs_read", Spec{Type: TypeKretprobe, Symbol: "vfs_read", MaxActive: 20}, false},
		{"r0:vfs_read", Spec{}, true},
		{"r5000:vfs_read", Spec{}, true},
		{"e1000ish:vnet_rx", Spec{Type: TypeKprobe, Symbol: "e1000ish:vnet_rx"}, false},
		{"k:e1000ish:vnet_rx+4", Spec{Type: TypeKprobe, Symbol: "e1000ish:vnet_rx", Offset: 4}, false},
		{"r:e1000ish:vnet_rx", Spec{Type: TypeKretprobe, Symbol: "e1000ish:vnet_rx"}, false},
		{"ramfs_helper:rfh_read_csum", Spec{Type: TypeKprobe, Symbol: "ramfs_helper:rfh_read_csum"}, false},
		{"vfs_read+x", Spec{}, true},
		{"j:do_fork:", Spec{}, true},
		{"k:", Spec{}, true},
		{"", Spec{}, true},
	}
	for _, tt := range tests {
		got, err := ParseSpec(tt.in)
		if (err != nil) != tt.err || (err == nil && got != tt.want) {
			t.Errorf("ParseSpec(%q) = %+v, %v; want %+v, err %v", tt.in, got, err, tt.want, tt.err)
		}
		if err == nil {
			if back, err := ParseSpec(got.String()); err != nil || back != got {
				t.Errorf("round trip of %q via %q = %+v, %v", tt.in, got.String(), back, err)
			}
		}
	}
}
