package tracing

import (
	"syscall"
	"testing"
)

// parseBitmap is bitmap_parse: the oracle's answers for 2 CPUs, and the
// edges of its chunks.
func TestParseBitmap(t *testing.T) {
	for _, c := range []struct {
		in    string
		nbits int
		want  []uint32
		errno syscall.Errno
	}{
		{"3\n", 2, []uint32{3}, 0},
		{"1", 2, []uint32{1}, 0},
		{"\n", 2, []uint32{0}, 0},
		{" 3", 2, []uint32{3}, 0},
		{"3 ", 2, []uint32{3}, 0},
		{"00000003", 2, []uint32{3}, 0},
		{",3,", 2, []uint32{3}, 0},
		{"4", 2, nil, syscall.EOVERFLOW},
		{"ffffffff", 2, nil, syscall.EOVERFLOW},
		{"0,3", 2, nil, syscall.EOVERFLOW},
		{"100000000", 2, nil, syscall.EOVERFLOW},
		{"0x3", 2, nil, syscall.EINVAL},
		{"xyz", 2, nil, syscall.EINVAL},
		{"x00000003", 2, []uint32{3}, 0}, // the ninth character is only looked at for a hex digit
		{"3\nzz", 2, []uint32{3}, 0},     // the newline ends it
		{"ffffffff", 32, []uint32{0xffffffff}, 0},
		{"1,00000002", 33, []uint32{2, 1}, 0},
		{"2,00000000", 33, nil, syscall.EOVERFLOW},
		{"f", 4, []uint32{0xf}, 0},
	} {
		got, err := parseBitmap(c.in, c.nbits)
		var errno syscall.Errno
		if err != nil {
			errno = err.(syscall.Errno)
		}
		if errno != c.errno || (err == nil && !equalWords(got, c.want)) {
			t.Errorf("parseBitmap(%q, %d) = %x, %v; want %x, errno %d", c.in, c.nbits, got, err, c.want, c.errno)
		}
	}
}

func equalWords(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// savedCmdlinesNum rounds a count up to what its pages hold, as the
// oracle's saved_cmdlines_size reads back.
func TestSavedCmdlinesNum(t *testing.T) {
	for in, want := range map[int]int{1: 6552, 128: 6552, 6000: 6552, 6552: 6552, 6553: 19659, 32768: 45874} {
		if got := savedCmdlinesNum(in); got != want {
			t.Errorf("savedCmdlinesNum(%d) = %d, want %d", in, got, want)
		}
	}
}

// ftracePages allocates as ftrace_allocate_pages: Linux's own
// 42038-record core (of about 42900 before its init functions went)
// took 168 pages in 3 groups, as the oracle read.
func TestFtracePages(t *testing.T) {
	for _, c := range []struct{ n, pages, groups int }{
		{0, 0, 0},
		{1, 1, 1},
		{256, 1, 1},
		{257, 2, 1},
		{42900, 168, 3},
		{42038, 165, 4},
	} {
		if p, g := ftracePages(c.n); p != c.pages || g != c.groups {
			t.Errorf("ftracePages(%d) = %d, %d; want %d, %d", c.n, p, g, c.pages, c.groups)
		}
	}
}
