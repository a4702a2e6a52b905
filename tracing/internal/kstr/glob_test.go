package kstr

import "testing"

// GlobMatch is lib/glob.c's glob_match on the cases Linux's code takes
// apart: where '*' sits (it crosses '/', which path.Match's does not:
// next_comm ~ "sw*" takes swapper/1), classes (inverted, ranges, a
// leading ']', malformed ones as literals) and '\' escapes.
func TestGlobMatch(t *testing.T) {
	glob := []struct {
		pat, str string
		want     bool
	}{
		{"a*c", "abc", true},
		{"a*c", "ab", false},
		{"*a*b", "xaxb", true},
		{"k?rnel_cl[o]ne", "kernel_clone", true},
		{"[!a]bc", "xbc", true},
		{"[!a]bc", "abc", false},
		{"[a-c]x", "bx", true},
		{"[a-c]x", "dx", false},
		{"[]]x", "]x", true},
		{`\*x`, "*x", true},
		{`\*x`, "ax", false},
		{"[a-", "[a-", true},
		{"a?", "a", false},
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
	}
	for _, tt := range glob {
		if got := GlobMatch(tt.pat, tt.str); got != tt.want {
			t.Errorf("GlobMatch(%q, %q) = %v", tt.pat, tt.str, got)
		}
	}
}

// SimpleStrtoul takes the longest number prefix in C's notation.
func TestSimpleStrtoul(t *testing.T) {
	for s, want := range map[string]uint64{"12abc": 12, "0x1f": 31, "010": 8, "0": 0, "08": 0, "0x": 0} {
		if got := SimpleStrtoul(s); got != want {
			t.Errorf("SimpleStrtoul(%q) = %d, want %d", s, got, want)
		}
	}
}
