package tracing_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// printk_formats lists the constant formats of trace_printk() calls, as
// Linux 6.1's samples/trace_printk module gives them (its kselftest
// event/trace_printk.tc greps for two): the module's four constant ones,
// escaped as t_show escapes them, none of its non-constant ones, each
// once, and still after the module goes. The trace has the eight lines,
// from process and from interrupt context.
func TestPrintkFormatsTracePrintk(t *testing.T) {
	f := setup(t)
	f.run(t)
	if got := f.read(t, "tracing/printk_formats"); got != "" {
		t.Fatalf("printk_formats before any module = %q", got)
	}
	for round := 0; round < 2; round++ {
		if err := f.k.LoadEmbeddedModule("trace_printk"); err != nil {
			t.Fatal(err)
		}
		if err := f.k.UnloadModule("trace_printk"); err != nil {
			t.Fatal(err)
		}
	}
	got := f.read(t, "tracing/printk_formats")
	line := regexp.MustCompile(`^0x[0-9a-f]+ : "(.*)"$`)
	var fmts []string
	for _, l := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
		m := line.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("printk_formats line %q", l)
		}
		fmts = append(fmts, m[1])
	}
	want := []string{ // sorted
		`(irq) This is a %s that will use trace_bprintk()\n`,
		`(irq) This is a static string that will use trace_bputs\n`,
		`This is a %s that will use trace_bprintk()\n`,
		`This is a static string that will use trace_bputs\n`,
	}
	// In the order of the module's section, which is the linker's.
	slices.Sort(fmts)
	if !slices.Equal(fmts, want) {
		t.Errorf("printk_formats:\n%s\nwant the formats %q", got, want)
	}
	tr := f.read(t, "tracing/trace")
	for _, re := range []string{
		`: This .* trace_bputs`, `: This .* trace_puts`, `: This .* trace_bprintk`, `: This .* trace_printk`,
		`: \(irq\) .* trace_bputs`, `: \(irq\) .* trace_puts`, `: \(irq\) .* trace_bprintk`, `: \(irq\) .* trace_printk`,
	} {
		if !regexp.MustCompile(re).MatchString(tr) {
			t.Errorf("trace has no line matching %q:\n%s", re, tr)
		}
	}
}
