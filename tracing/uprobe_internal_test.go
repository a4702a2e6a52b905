package tracing

import (
	"strings"
	"testing"
)

// The auto name is cut as snprintf into MAX_EVENT_NAME_LEN bytes cuts it
// (Linux printed this one for a 60-character file name); kpemu's guest
// names are at most 31 bytes, so only this test reaches the cut.
func TestUprobeAutoName(t *testing.T) {
	for _, tt := range []struct {
		path   string
		offset uint64
		want   string
	}{
		{"/tmp/" + strings.Repeat("abcdefghij", 6), 0x123456789abc, "p_" + strings.Repeat("abcdefghij", 6) + "_"},
		{"/bin/sh", 10, "p_sh_0xa"},
		{"/tmp/a.b-c_d", 1, "p_a_0x1"},
		{"/tmp/x+y", 1, "p_x+y_0x1"},
		{"/bin/sh/", 3, "p__0x3"},
		{"sh", 0, "p_sh_0x0"},
	} {
		if got := uprobeAutoName(tt.path, tt.offset); got != tt.want {
			t.Errorf("uprobeAutoName(%q, %#x) = %q, want %q", tt.path, tt.offset, got, tt.want)
		}
	}
}
