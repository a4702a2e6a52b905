package machine

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/kpemu/kpemu/internal/waitfor"
)

// deviceProgs are the device differential programs (testdata/<name>.elf,
// built by testdata/Makefile): each prints over the PL011 and powers off
// with PSCI SYSTEM_OFF; its output must not depend on timing.
var deviceProgs = []struct {
	name string
	cpus int
}{
	{"gictimer", 1},
	{"smp", 4},
}

// runDeviceProg runs a program on machine and returns its UART output and
// the per-CPU instruction counts.
func runDeviceProg(t *testing.T, path string, cpus int) ([]byte, []uint64) {
	t.Helper()
	m, out := bootAndRun(t, path, Config{NumCPUs: cpus}, nil)
	var insns []uint64
	for i := 0; i < cpus; i++ {
		insns = append(insns, m.CPU(i).Retired())
	}
	return out, insns
}

// TestQEMUDevices runs each device program twice on machine, requiring
// identical output and per-CPU instruction counts (determinism), then on
// QEMU's virt board, requiring identical output.
func TestQEMUDevices(t *testing.T) {
	qemu, qerr := exec.LookPath("qemu-system-aarch64")
	for _, p := range deviceProgs {
		t.Run(p.name, func(t *testing.T) {
			path := "testdata/" + p.name + ".elf"
			got, insns := runDeviceProg(t, path, p.cpus)
			again, insns2 := runDeviceProg(t, path, p.cpus)
			if !bytes.Equal(got, again) {
				t.Fatalf("two runs differ:\n%s\n---\n%s", got, again)
			}
			for i := range insns {
				if insns[i] != insns2[i] {
					t.Fatalf("cpu%d retired %d then %d instructions", i, insns[i], insns2[i])
				}
			}
			if !bytes.HasSuffix(got, []byte("done\n")) {
				t.Fatalf("machine output incomplete:\n%s", got)
			}
			if qerr != nil {
				if os.Getenv("CI") != "" {
					t.Fatal("qemu-system-aarch64 not installed: CI must install qemu-system-arm")
				}
				t.Skip("qemu-system-aarch64 not installed (Debian package qemu-system-arm)")
			}
			ctx, cancel := context.WithDeadline(context.Background(), waitfor.Deadline(t))
			defer cancel()
			cmd := exec.CommandContext(ctx, qemu, "-M", "virt", "-cpu", "max", "-m", "128",
				"-smp", strconv.Itoa(p.cpus), "-nographic", "-no-reboot", "-nic", "none", "-kernel", path)
			cmd.Stdin = nil // QEMU's monitor must not read the test's stdin
			want, err := cmd.Output()
			if err != nil {
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					t.Fatalf("qemu: %v\n%s", err, ee.Stderr)
				}
				t.Fatalf("qemu: %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("UART output differs from QEMU\nmachine:\n%s\nqemu:\n%s", got, want)
			}
		})
	}
}
