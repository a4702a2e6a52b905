package tracing

import "testing"

// TestFilterGlob checks the ~ operator, which matches as lib/glob.c's
// glob_match: '*' crosses '/' (next_comm ~ "sw*" takes swapper/1), which
// path.Match's does not.
func TestFilterGlob(t *testing.T) {
	for _, tc := range []struct {
		pat, str string
		want     bool
	}{
		{"sw*", "swapper/1", true},
		{"*per/1", "swapper/1", true},
		{"*app*", "swapper/1", true},
		{"sw*", "sh", false},
		{"s?", "sh", true},
		{"s?", "s", false},
		{"[a-c]at", "bat", true},
		{"[!a-c]at", "bat", false},
		{"[!a-c]at", "cat", false},
		{"[!a-c]at", "rat", true},
		{"c\\*t", "c*t", true},
		{"c\\*t", "cat", false},
		{"", "", true},
		{"*", "", true},
		{"a*b*c", "aXXbYYc", true},
		{"a*b*c", "aXXbYY", false},
	} {
		p := predNode{field: "next_comm", op: "~", str: tc.pat, isStr: true}
		if got := p.eval(map[string]filterValue{"next_comm": {str: tc.str, isStr: true}}); got != tc.want {
			t.Errorf("next_comm ~ %q on %q = %v, want %v", tc.pat, tc.str, got, tc.want)
		}
	}
}
