package gdbstub_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/kpemu/kpemu/gdbstub"
	"github.com/kpemu/kpemu/internal/waitfor"
	"github.com/kpemu/kpemu/kernel"
)

// elfPath is the guest image with symbols, as committed.
const elfPath = "../kernel/image/kpemu.elf"

// gdbMultiarch finds Debian's gdb-multiarch; in CI its absence fails the
// test instead of skipping it.
func gdbMultiarch(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("gdb-multiarch")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("gdb-multiarch is required in CI (make deps): %v", err)
		}
		t.Skip("gdb-multiarch not installed (apt-get install gdb-multiarch)")
	}
	return p
}

// serveKernel boots the guest on cpus vCPUs and serves it on a loopback
// port, returning the kernel and the address.
func serveKernel(t *testing.T, cpus int) (*kernel.Kernel, string) {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	k, err := kernel.Boot(kernel.Config{NumCPUs: cpus, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- gdbstub.Serve(ctx, ln, gdbstub.NewMachineTarget(k.Machine()), gdbstub.Config{Logger: log})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return k, ln.Addr().String()
}

// runGDB runs gdb-multiarch in batch mode with the commands, on the ELF.
func runGDB(t *testing.T, addr string, cmds ...string) string {
	t.Helper()
	gdb := gdbMultiarch(t)
	ctx, cancel := context.WithDeadline(context.Background(), waitfor.Deadline(t))
	defer cancel()
	args := []string{"-batch", "-nx", "-ex", "set architecture aarch64", "-ex", "target remote " + addr}
	for _, c := range cmds {
		args = append(args, "-ex", c)
	}
	out, err := exec.CommandContext(ctx, gdb, append(args, elfPath)...).CombinedOutput()
	t.Logf("gdb output:\n%s", out)
	if err != nil {
		t.Fatalf("gdb-multiarch: %v", err)
	}
	return string(out)
}

// counter reads a guest u64 variable with the machine stopped.
func counter(t *testing.T, k *kernel.Kernel, sym string) uint64 {
	t.Helper()
	var v uint64
	var err error
	k.StopMachine(func() { v, err = k.ReadSymbolU64(sym) })
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// pcAfter finds the value of pc in `info registers` output after marker.
func pcAfter(t *testing.T, out, marker string) uint64 {
	t.Helper()
	i := strings.Index(out, marker)
	if i < 0 {
		t.Fatalf("no %q in the output", marker)
	}
	m := regexp.MustCompile(`(?m)^pc\s+0x([0-9a-f]+)\s`).FindStringSubmatch(out[i:])
	if m == nil {
		t.Fatalf("no pc after %q", marker)
	}
	var pc uint64
	fmt.Sscanf(m[1], "%x", &pc)
	return pc
}

func TestGDBBreakStepDetach(t *testing.T) {
	gdbMultiarch(t)
	k, addr := serveKernel(t, 2)
	vfsRead, ok := k.Kallsyms().LookupName("vfs_read")
	if !ok {
		t.Fatal("no vfs_read")
	}
	out := runGDB(t, addr,
		"break vfs_read", "continue",
		"echo ==continued\\n", "info registers pc",
		"stepi",
		"echo ==stepped\\n", "info registers",
		"x/4i $pc", "info threads", "detach")

	m := regexp.MustCompile(`Breakpoint 1 at 0x([0-9a-f]+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatal("no breakpoint set")
	}
	var bp uint64
	fmt.Sscanf(m[1], "%x", &bp)
	if bp < vfsRead.Addr || bp >= vfsRead.Addr+vfsRead.Size {
		t.Errorf("breakpoint at %#x, outside vfs_read [%#x, %#x)", bp, vfsRead.Addr, vfsRead.Addr+vfsRead.Size)
	}
	if pc := pcAfter(t, out, "==continued"); pc != bp {
		t.Errorf("pc after continue = %#x, want the breakpoint %#x", pc, bp)
	}
	if pc := pcAfter(t, out, "==stepped"); pc != bp+4 {
		t.Errorf("pc after stepi = %#x, want %#x", pc, bp+4)
	}
	// Whichever CPU reads first hits the breakpoint (the kernel's
	// workload on CPU 0, or a user process on CPU 1); gdb makes it the
	// current thread.
	hit := regexp.MustCompile(`Thread (\d) hit Breakpoint 1, vfs_read \(`).FindStringSubmatch(out)
	if hit == nil {
		t.Fatal("no thread hit the breakpoint in vfs_read")
	}
	thread := hit[1]
	other := "2"
	if thread == "2" {
		other = "1"
	}
	cpu := func(th string) string { return fmt.Sprint(th[0] - '1') }
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^x0\s+0x[0-9a-f]+`),
		regexp.MustCompile(`(?m)^x30\s+0x[0-9a-f]+`),
		regexp.MustCompile(`(?m)^sp\s+0x[0-9a-f]+`),
		regexp.MustCompile(`(?m)^cpsr\s+0x[0-9a-f]+`),
		regexp.MustCompile(`(?m)^vbar_el1\s+0x[0-9a-f]+\s+0x[0-9a-f]+ <vectors>`),
		regexp.MustCompile(fmt.Sprintf(`=> 0x0*%x <vfs_read\+%d>:`, bp+4, bp+4-vfsRead.Addr)),
		regexp.MustCompile(`\* ` + thread + `\s+Thread ` + thread + ` \(CPU#` + cpu(thread) + ` EL1\)\s+0x0*` + fmt.Sprintf("%x", bp+4) + ` in vfs_read`),
		regexp.MustCompile(`(?m)^\s+` + other + `\s+Thread ` + other + ` \(CPU#` + cpu(other) + ` EL\d`),
		regexp.MustCompile(`\[Inferior 1 \(Remote target\) detached\]`),
	} {
		if !want.MatchString(out) {
			t.Errorf("gdb output lacks %s", want)
		}
	}

	// After the detach the guest runs freely again, without the breakpoint.
	before := counter(t, k, "nr_vfs_read")
	waitfor.Until(t, "the guest to run after detach", func() bool { return counter(t, k, "nr_vfs_read") > before+2 })
}

func TestGDBWatchpoint(t *testing.T) {
	gdbMultiarch(t)
	k, addr := serveKernel(t, 1)
	out := runGDB(t, addr,
		"watch nr_vfs_read", "continue",
		"echo ==watched\\n", "print nr_vfs_read", "info registers pc",
		"delete", "detach")
	if !regexp.MustCompile(`Hardware watchpoint 1: nr_vfs_read`).MatchString(out) {
		t.Error("gdb did not set a hardware watchpoint")
	}
	m := regexp.MustCompile(`Old value = (\d+)\s+New value = (\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatal("the watchpoint did not trigger")
	}
	var old, cur uint64
	fmt.Sscan(m[1], &old)
	fmt.Sscan(m[2], &cur)
	if cur != old+1 {
		t.Errorf("nr_vfs_read went from %d to %d", old, cur)
	}
	vfsRead, _ := k.Kallsyms().LookupName("vfs_read")
	if pc := pcAfter(t, out, "==watched"); pc < vfsRead.Addr || pc >= vfsRead.Addr+vfsRead.Size {
		t.Errorf("stopped at %#x, outside vfs_read (which counts the reads)", pc)
	}
}
