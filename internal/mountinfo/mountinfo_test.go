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
