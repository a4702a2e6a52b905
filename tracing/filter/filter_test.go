package filter

import (
	"syscall"
	"testing"
)

var testFields = map[string]Field{"next_comm": {Str: true}, "prev_pid": {Signed: true}, "common_flags": {}}

// A filter that Check passes is built by Parse and run by Eval: the
// string operators (~ is lib/glob.c's glob, whose '*' crosses '/'), the
// signed comparisons and the bitwise test.
func TestParseEval(t *testing.T) {
	rec := map[string]Value{"next_comm": {Str: "swapper/1", IsStr: true}, "prev_pid": {Num: uint64(1<<64 - 5)}, "common_flags": {Num: 4}}
	for _, tt := range []struct {
		filter string
		want   bool
	}{
		{`next_comm ~ "sw*"`, true},
		{`next_comm ~ "*per/1"`, true},
		{`next_comm ~ "sh*"`, false},
		{`next_comm == "swapper/1"`, true},
		{`next_comm != "swapper/1"`, false},
		{`prev_pid < -1`, true},
		// a signed field compares signed whatever the constant (-5 < 0)
		{`prev_pid < 0`, true},
		{`prev_pid > 100`, false},
		{`common_flags < 5`, true},
		{`prev_pid > -10 && common_flags & 4`, true},
		{`!(prev_pid > -10) || common_flags & 1`, false},
	} {
		if pe := Check(tt.filter, testFields); pe != nil {
			t.Fatalf("Check(%q) = %+v", tt.filter, pe)
		}
		n, err := Parse(tt.filter, testFields)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.filter, err)
		}
		if got := n.Eval(rec); got != tt.want {
			t.Errorf("%q on %v = %v, want %v", tt.filter, rec, got, tt.want)
		}
	}
}

// Check's verdicts carry Linux's code, caret and errno.
func TestCheck(t *testing.T) {
	for _, tt := range []struct {
		filter string
		code   Err
		errno  syscall.Errno
		text   string
	}{
		{`nope == 1`, ErrFieldNotFound, syscall.EINVAL, "nope == 1\n     ^\nparse_error: Field not found\n"},
		{`(prev_pid == 1`, ErrTooManyOpen, syscall.ENOENT, "(prev_pid == 1\n^\nparse_error: Too many '('\n"},
		{`next_comm == 1`, ErrExpectString, syscall.EINVAL, "next_comm == 1\n              ^\nparse_error: Expecting string field\n"},
	} {
		pe := Check(tt.filter, testFields)
		if pe == nil {
			t.Fatalf("Check(%q) passed", tt.filter)
		}
		if pe.Code != tt.code || pe.Errno != tt.errno || pe.Text(tt.filter) != tt.text {
			t.Errorf("Check(%q) = %v %v %q, want %v %v %q", tt.filter, pe.Code, pe.Errno, pe.Text(tt.filter), tt.code, tt.errno, tt.text)
		}
	}
}
