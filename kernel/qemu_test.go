package kernel_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/kpemu/kpemu/kernel/image"
)

// The committed image boots under QEMU's virt board with two CPUs, brings
// up the secondary with PSCI and reaches the workload, which keeps running
// (no panic) until QEMU is stopped. Skipped without qemu-system-aarch64,
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
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, qemu, "-M", "virt", "-cpu", "cortex-a57", "-smp", "2",
		"-m", "128", "-nographic", "-nic", "none", "-no-reboot", "-kernel", elf)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	if ctx.Err() == nil {
		// QEMU left before the timeout: the guest powered off or failed.
		t.Fatalf("qemu exited early (%v):\n%s", err, out.String())
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	con := out.String()
	for _, want := range []string{"smp: Brought up 1 node, 2 CPUs", "CPU1: Booted secondary processor", "Run /init as init process"} {
		if !strings.Contains(con, want) {
			t.Errorf("console lacks %q:\n%s", want, con)
		}
	}
	if strings.Contains(con, "Kernel panic") || strings.Contains(con, "Internal error") {
		t.Errorf("guest died under QEMU:\n%s", con)
	}
}
