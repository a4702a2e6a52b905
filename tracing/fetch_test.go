package tracing_test

import (
	"regexp"
	"strings"
	"testing"
)

// User and kernel memory, as Linux's nofault accessors see them from a
// probe on do_sys_open, whose second argument is the user's path: ustring
// and +u read user memory through the current process's translation and
// fault on a kernel address; string and plain dereferences read the kernel
// and fault on a user address.
func TestFetchUserAndKernelMemory(t *testing.T) {
	f := setup(t)
	tests := []struct {
		arg  string
		want string // a regexp for "name=value" in the trace line
	}{
		{"u=+0($arg2):ustring", `u="/[a-z]+/[a-z.]+"`},
		{"uu=+u0($arg2):string", `uu="/[a-z]+/[a-z.]+"`},
		{"ux=+u0($arg2):x8", `ux=0x2f`},
		{"k=+0($arg2):string", `k=\(fault\)`},
		{"kx=+0($arg2):x8", `kx=0x0`},
		{"ku=@linux_proc_banner:ustring", `ku=\(fault\)`},
		{"kux=+u0(@linux_proc_banner):x8", `kux=0x0`},
		{"ks=@linux_proc_banner:string", `ks="%s version %s \(kpemu@kpemu\) \(clang 14\) %s\n"`},
		{"kb=@linux_proc_banner:x8", `kb=0x25`},
	}
	args := make([]string, len(tests))
	for i, tt := range tests {
		args[i] = tt.arg
	}
	def := "p:uopen do_sys_open " + strings.Join(args, " ") + "\n"
	if err := f.write("tracing/kprobe_events", def, false); err != nil {
		t.Fatalf("%q: %v", def, err)
	}
	if err := f.write("tracing/events/kprobes/uopen/enable", "1\n", true); err != nil {
		t.Fatal(err)
	}
	var trace string
	for i := 0; i < 40 && !strings.Contains(trace, "uopen:"); i++ {
		f.step(t, 5_000_000)
		trace = f.read(t, "tracing/trace")
	}
	i := strings.Index(trace, "uopen: (do_sys_open+0x0/")
	if i < 0 {
		t.Fatalf("no hit on do_sys_open:\n%.2000s", trace)
	}
	line := trace[i:]
	for _, tt := range tests {
		t.Run(tt.arg, func(t *testing.T) {
			if !regexp.MustCompile(" " + tt.want).MatchString(line) {
				t.Errorf("want %s in %q", tt.want, line)
			}
		})
	}
}
