package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDispatchSplices(t *testing.T) {
	dir := t.TempDir()
	loop := filepath.Join(dir, "loop.go")
	write := func(name, src string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("loop.go", `package m

func (c *CPU) run() {
loop:
	for {
		// decodegen:dispatch begin
		// decodegen:dispatch end
	}
}
`)
	write("exec.go", `package m

func (c *CPU) execLD(in *inst, pc uint64) {
	if bad {
		return
	}
	f := func() int { return 1 }
	use(f)
}

func (c *CPU) execADD(a *addArgs, pc uint64) {
	c.r[a.rd] = uint64(a.shift()) + x.a
	use(a)
}

func (c *CPU) execWFI(in *inst, pc, n uint64) bool {
	if c.lines != 0 {
		return false
	}
	return c.sleep(n)
}
`)
	tab, err := Parse("t", `
LD   0000 .... .... .... .... .... .... ....  hot
WFI  0001 .... .... .... .... .... .... ....  slice hot
X    0010 .... .... .... .... .... .... ....
&add shift:uint8=sh
ADD  0011 .... .... .... .... .... .... ....  &add hot
`)
	if err != nil {
		t.Fatal(err)
	}
	out, err := tab.Dispatch(loop)
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	for _, want := range []string{
		"case opLD: // execLD",
		"if bad {\n\t\t\t\tcontinue loop\n\t\t\t}",
		"f := func() int { return 1 }", // a closure keeps its return
		"if c.lines != 0 {\n\t\t\t\tcontinue loop\n\t\t\t}",
		"if c.sleep(n) {\n\t\t\t\tbreak loop\n\t\t\t}",
		"default:\n\t\t\tif c.execute(in, pc, n) {",
		// The view is inlined: slots read directly, not through methods.
		"case opADD: // execADD\n\t\t\tc.r[in.rd] = uint64(in.sh) + x.a\n\t\t\tuse((*addArgs)(in))",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("dispatch lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "opX") {
		t.Errorf("X is not hot but is spliced:\n%s", got)
	}
}
