// Command sysreggen makes machine's system register table
// (sysreg_table.go) from its one-line-per-register source (sysregs.txt):
// the SysReg constants, SysReg.String and lookupSysReg. machine's
// sysreg.go runs it with go generate; its test fails when the committed
// output is stale.
//
//	go run ./internal/sysreggen -in sysregs.txt -out sysreg_table.go
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/format"
	"io"
	"log"
	"os"
	"strconv"
	"strings"
)

// reg is one line of the table.
type reg struct {
	name               string // the Arm ARM's; with "<n>" for a numbered set
	op0, op1, crn, op2 uint32
	crm                uint32 // unused for a numbered set: n is in CRm
	read, write        bool   // at EL1
	el0Read, el0Write  bool
	count              string // a numbered set's size, a Go constant; "" for one register
	line               int
}

// numbered reports whether r is a set of registers numbered in CRm.
func (r reg) numbered() bool { return r.count != "" }

// constName is the Go constant: the name, with register 0 of a set.
func (r reg) constName() string { return strings.Replace(r.name, "<n>", "0", 1) }

// reachable reports whether MRS or MSR reach r at EL1 or EL0.
func (r reg) reachable() bool { return r.read || r.write || r.el0Read || r.el0Write }

// key packs the encoding as in bits [20:5] of MRS/MSR (machine's
// sysRegKey); crm is 0 for a numbered set.
func (r reg) key() uint32 { return r.op0<<14 | r.op1<<11 | r.crn<<7 | r.crm<<3 | r.op2 }

func (r reg) encoding() string {
	crm := "n"
	if !r.numbered() {
		crm = strconv.Itoa(int(r.crm))
	}
	return fmt.Sprintf("op0=%d op1=%d CRn=%d CRm=%s op2=%d", r.op0, r.op1, r.crn, crm, r.op2)
}

func (r reg) access() string {
	return fmt.Sprintf("sysRegAccess{%t, %t, %t, %t}", r.read, r.write, r.el0Read, r.el0Write)
}

// parse reads the table: blank lines and # comments aside, one register a
// line.
func parse(in io.Reader) ([]reg, error) {
	var regs []reg
	seenName, seenKey := map[string]bool{}, map[uint32]string{}
	sc := bufio.NewScanner(in)
	for n := 1; sc.Scan(); n++ {
		text, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(text)
		if len(f) == 0 {
			continue
		}
		r, err := parseLine(f)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		r.line = n
		if seenName[r.constName()] {
			return nil, fmt.Errorf("line %d: %s listed twice", n, r.name)
		}
		seenName[r.constName()] = true
		if r.reachable() && !r.numbered() {
			if other, ok := seenKey[r.key()]; ok {
				return nil, fmt.Errorf("line %d: %s has the encoding of %s", n, r.name, other)
			}
			seenKey[r.key()] = r.name
		}
		regs = append(regs, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the table: %w", err)
	}
	if len(regs) == 0 {
		return nil, errors.New("no registers")
	}
	return regs, checkSets(regs)
}

// parseLine parses the fields of one line: name op0 op1 CRn CRm op2 EL1
// EL0 [count].
func parseLine(f []string) (reg, error) {
	if len(f) != 8 && len(f) != 9 {
		return reg{}, fmt.Errorf("%d fields, want name op0 op1 CRn CRm op2 EL1 EL0 [count]", len(f))
	}
	r := reg{name: f[0]}
	if len(f) == 9 {
		r.count = f[8]
	}
	if r.numbered() != strings.Contains(r.name, "<n>") || r.numbered() != (f[4] == "n") {
		return reg{}, fmt.Errorf("%s: a numbered set has <n> in its name, n as CRm and a count; one register none of them", r.name)
	}
	fields := []struct {
		p   *uint32
		s   string
		max uint32
	}{{&r.op0, f[1], 3}, {&r.op1, f[2], 7}, {&r.crn, f[3], 15}, {&r.crm, f[4], 15}, {&r.op2, f[5], 7}}
	for _, fd := range fields {
		if fd.s == "n" {
			continue
		}
		v, err := strconv.ParseUint(fd.s, 10, 32)
		if err != nil || uint32(v) > fd.max {
			return reg{}, fmt.Errorf("%s: encoding field %q is not 0..%d", r.name, fd.s, fd.max)
		}
		*fd.p = uint32(v)
	}
	var err error
	if r.read, r.write, err = parseAccess(f[6]); err != nil {
		return reg{}, fmt.Errorf("%s: EL1: %w", r.name, err)
	}
	if r.el0Read, r.el0Write, err = parseAccess(f[7]); err != nil {
		return reg{}, fmt.Errorf("%s: EL0: %w", r.name, err)
	}
	return r, nil
}

func parseAccess(s string) (read, write bool, err error) {
	switch s {
	case "-":
		return false, false, nil
	case "r":
		return true, false, nil
	case "w":
		return false, true, nil
	case "rw":
		return true, true, nil
	}
	return false, false, fmt.Errorf("access %q, want r, w, rw or -", s)
}

// checkSets requires the numbered sets to share op0, op1 and CRn, which
// lookupSysReg tests at once, and to differ in op2; a single register
// there must not have a set's op2, or the set would hide it.
func checkSets(regs []reg) error {
	var first *reg
	op2s := map[uint32]string{}
	for i := range regs {
		r := &regs[i]
		if !r.numbered() {
			continue
		}
		if first == nil {
			first = r
		}
		if r.op0 != first.op0 || r.op1 != first.op1 || r.crn != first.crn {
			return fmt.Errorf("line %d: %s: numbered sets must share op0, op1 and CRn with %s", r.line, r.name, first.name)
		}
		if other, ok := op2s[r.op2]; ok {
			return fmt.Errorf("line %d: %s has the op2 of %s", r.line, r.name, other)
		}
		op2s[r.op2] = r.name
	}
	for _, r := range regs {
		if first == nil || r.numbered() || r.op0 != first.op0 || r.op1 != first.op1 || r.crn != first.crn {
			continue
		}
		if other, ok := op2s[r.op2]; ok {
			return fmt.Errorf("line %d: %s lies among the registers of %s", r.line, r.name, other)
		}
	}
	return nil
}

// generate writes the Go source of the table.
func generate(regs []reg) ([]byte, error) {
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("// Code generated by machine/internal/sysreggen from sysregs.txt; DO NOT EDIT.\n\n")
	p("package machine\n\n")

	p("// System registers. Register names follow the Arm ARM, hence the underscores.\n")
	p("const (\n")
	explicit := false // once one constant is explicit, iota's implicit repetition no longer holds
	for i, r := range regs {
		switch {
		case i == 0:
			p("\t%s SysReg = iota // %s\n", r.constName(), r.encoding())
		case explicit || regs[i-1].numbered():
			size := "1"
			if regs[i-1].numbered() {
				size = regs[i-1].count
			}
			if !explicit {
				p("\n") // a gofmt alignment section of their own
			}
			p("\t%s = %s + %s // %s\n", r.constName(), regs[i-1].constName(), size, r.encoding())
			explicit = true
		default:
			p("\t%s // %s\n", r.constName(), r.encoding())
		}
	}
	last, size := regs[len(regs)-1], "1"
	if last.numbered() {
		size = last.count
	}
	p("\n\tnumSysRegs = %s + %s // not a register: the count\n)\n\n", last.constName(), size)

	p("// String returns the Arm ARM name of the register.\n")
	p("func (r SysReg) String() string {\n\tswitch r {\n")
	for _, r := range regs {
		if !r.numbered() {
			p("\tcase %s:\n\t\treturn %q\n", r.constName(), r.name)
		}
	}
	p("\t}\n\tswitch {\n")
	for _, r := range regs {
		if r.numbered() {
			prefix, suffix, _ := strings.Cut(r.name, "<n>")
			c := r.constName()
			p("\tcase r >= %s && r < %s+%s:\n\t\treturn %q + itoa(int(r-%s)) + %q\n", c, c, r.count, prefix, c, suffix)
		}
	}
	p("\t}\n\treturn \"SysReg(\" + itoa(int(r)) + \")\"\n}\n\n")

	p("// lookupSysReg maps an MRS/MSR encoding key (sysRegKey) to a register\n")
	p("// and its access rights; ok is false for encodings the machine does not\n")
	p("// implement.\n")
	p("func lookupSysReg(key uint32) (r SysReg, acc sysRegAccess, ok bool) {\n")
	var sets []reg
	for _, r := range regs {
		if r.numbered() && r.reachable() {
			sets = append(sets, r)
		}
	}
	if len(sets) > 0 {
		s := sets[0]
		p("\t// op0=%d op1=%d CRn=%d: the numbered registers, n in CRm.\n", s.op0, s.op1, s.crn)
		p("\tif key&^0x7f == %#x {\n", s.op0<<14|s.op1<<11|s.crn<<7)
		p("\t\tn, op2 := SysReg(key>>3&15), key&7\n\t\tswitch {\n")
		for _, r := range sets {
			p("\t\tcase op2 == %d && n < %s:\n\t\t\treturn %s + n, %s, true\n", r.op2, r.count, r.constName(), r.access())
		}
		p("\t\t}\n\t}\n")
	}
	p("\tswitch key {\n")
	for _, r := range regs {
		if !r.numbered() && r.reachable() {
			p("\tcase %#x: // %s\n\t\treturn %s, %s, true\n", r.key(), r.name, r.constName(), r.access())
		}
	}
	p("\t}\n\treturn 0, sysRegAccess{}, false\n}\n")

	src, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("formatting the generated source: %w", err)
	}
	return src, nil
}

func run(in, out string) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	regs, err := parse(f)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	src, err := generate(regs)
	if err != nil {
		return err
	}
	return os.WriteFile(out, src, 0o644)
}

func main() {
	in := flag.String("in", "sysregs.txt", "the table")
	out := flag.String("out", "sysreg_table.go", "the Go file to write")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("sysreggen: ")
	if err := run(*in, *out); err != nil {
		log.Fatal(err)
	}
}
