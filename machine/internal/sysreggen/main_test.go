package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestCommittedTableIsCurrent fails when machine/sysreg_table.go is not
// what sysregs.txt generates: run go generate in machine.
func TestCommittedTableIsCurrent(t *testing.T) {
	f, err := os.Open("../../sysregs.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	regs, err := parse(f)
	if err != nil {
		t.Fatal(err)
	}
	want, err := generate(regs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../sysreg_table.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("machine/sysreg_table.go is stale: run `go generate ./machine/` and commit it")
	}
}

// TestParseRejects checks that mistakes in the table are caught with the
// line they are on.
func TestParseRejects(t *testing.T) {
	for _, tc := range []struct {
		name, table, want string
	}{
		{"fields", "A_EL1 3 0 1 0 0 rw\n", "line 1: 7 fields"},
		{"range", "A_EL1 3 8 1 0 0 rw -\n", "not 0..7"},
		{"access", "A_EL1 3 0 1 0 0 x -\n", `access "x"`},
		{"twice", "A_EL1 3 0 1 0 0 rw -\nA_EL1 3 0 1 0 1 rw -\n", "line 2: A_EL1 listed twice"},
		{"same encoding", "A_EL1 3 0 1 0 0 rw -\nB_EL1 3 0 1 0 0 r -\n", "B_EL1 has the encoding of A_EL1"},
		{"set without n", "A<n>_EL1 2 0 0 1 4 rw - numA\n", "a numbered set"},
		{"n without set", "A_EL1 2 0 0 n 4 rw -\n", "a numbered set"},
		{"set op2", "A<n>_EL1 2 0 0 n 4 rw - numA\nB<n>_EL1 2 0 0 n 4 rw - numB\n", "has the op2 of"},
		{"hidden", "A<n>_EL1 2 0 0 n 4 rw - numA\nB_EL1 2 0 0 2 4 rw -\n", "lies among"},
		{"empty", "# nothing\n", "no registers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse(strings.NewReader(tc.table))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("parse: %v, want an error with %q", err, tc.want)
			}
		})
	}
}
