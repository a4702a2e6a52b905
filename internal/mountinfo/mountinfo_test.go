package mountinfo

import "testing"

func TestUnescape(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"/sys/kernel/debug", "/sys/kernel/debug"},
		{`/tmp/a\040b`, "/tmp/a b"},
		{`/tmp/tab\011nl\012`, "/tmp/tab\tnl\n"},
		{`/tmp/back\134slash`, `/tmp/back\slash`},
		{`/tmp/short\04`, `/tmp/short\04`},
		{`/tmp/not\999octal`, `/tmp/not\999octal`},
	} {
		if got := Unescape(tc.in); got != tc.want {
			t.Errorf("Unescape(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestDevice(t *testing.T) {
	const table = `22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
40 22 0:41 / /tmp/a\040b rw,nosuid shared:20 - fuse.kpemu debugfs rw,user_id=0
41 22 0:42 / /tmp/dbg rw - fuse.kpemu debugfs rw
43 41 0:45 / /tmp/dbg rw - fuse.kpemu debugfs rw
`
	for _, tc := range []struct {
		dir      string
		maj, min uint32
		ok       bool
	}{
		{"/", 8, 1, true},
		{"/tmp/a b", 0, 41, true},
		{"/tmp/dbg", 0, 45, true}, // the mount on top
		{"/tmp/none", 0, 0, false},
	} {
		maj, min, ok := Device(table, tc.dir)
		if maj != tc.maj || min != tc.min || ok != tc.ok {
			t.Errorf("Device(%q) = %d:%d %v, want %d:%d %v", tc.dir, maj, min, ok, tc.maj, tc.min, tc.ok)
		}
	}
}

func TestParse(t *testing.T) {
	const table = `22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
40 22 0:41 / /tmp/a\040b rw,nosuid shared:20 master:3 - fuse.kpemu debugfs rw,user_id=0
short line
41 22 0:42 / /tmp/dbg rw - fuse.kpemu
`
	want := []Mount{
		{Dev: "8:1", Point: "/", FSType: "ext4", Source: "/dev/sda1"},
		{Dev: "0:41", Point: "/tmp/a b", FSType: "fuse.kpemu", Source: "debugfs"},
	}
	got := Parse(table)
	if len(got) != len(want) {
		t.Fatalf("Parse = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("mount %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}
