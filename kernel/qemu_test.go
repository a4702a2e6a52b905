package kernel_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/kpemu/kpemu/internal/waitfor"
	"github.com/kpemu/kpemu/kernel/image"
)

// The committed image boots under QEMU's virt board with two CPUs, brings
// up the secondary with PSCI and reaches user space without a panic;
// QEMU is stopped once the console says so. Skipped without qemu-system-aarch64,
// unless CI is set.
func TestQEMUBootsSMP(t *testing.T) {
	if testing.Short() {
		t.Skip("boots QEMU for seconds")
	}
	qemu, err := exec.LookPath("qemu-system-aarch64")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("CI is set but qemu-system-aarch64 is missing")
		}
		t.Skip("qemu-system-aarch64 not installed")
	}
	elf := t.TempDir() + "/kpemu.elf"
	if err := os.WriteFile(elf, image.ELF(), 0o644); err != nil {
		t.Fatal(err)
	}
	// QEMU runs until the console shows every wanted line (or the bound
	// says it never will), however long a loaded host takes to get there.
	ctx, cancel := context.WithDeadline(context.Background(), waitfor.Deadline(t))
	defer cancel()
	cmd := exec.CommandContext(ctx, qemu, "-M", "virt", "-cpu", "cortex-a57", "-smp", "2",
		"-m", "128", "-nographic", "-nic", "none", "-no-reboot", "-kernel", elf)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	wants := []string{"smp: Brought up 1 node, 2 CPUs", "CPU1: Booted secondary processor", "Run /init as init process"}
	var out strings.Builder
	missing := func() []string {
		var m []string
		for _, w := range wants {
			if !strings.Contains(out.String(), w) {
				m = append(m, w)
			}
		}
		return m
	}
	sc := bufio.NewScanner(stdout)
	for len(missing()) > 0 && sc.Scan() {
		out.WriteString(sc.Text() + "\n")
	}
	con := out.String()
	if m := missing(); len(m) > 0 {
		if ctx.Err() != nil {
			t.Fatalf("console lacks %q after %v:\n%s", m, waitfor.Bound, con)
		}
		// QEMU left before: the guest powered off or failed.
		t.Fatalf("qemu exited early, console lacks %q:\n%s", m, con)
	}
	if strings.Contains(con, "Kernel panic") || strings.Contains(con, "Internal error") {
		t.Errorf("guest died under QEMU:\n%s", con)
	}
}
