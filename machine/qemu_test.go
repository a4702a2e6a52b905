package machine

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kpemu/kpemu/internal/waitfor"
)

// testProg is the differential test program of the integer instruction
// groups (testdata/qemutest/, built by testdata/Makefile).
const testProg = "testdata/qemutest.elf"

// loadELF copies the loadable segments of an ELF image into guest RAM and
// returns its entry point.
func loadELF(t testing.TB, m *Machine, path string) uint64 {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Machine != elf.EM_AARCH64 {
		t.Fatalf("%s: machine %v", path, f.Machine)
	}
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD {
			continue
		}
		data := make([]byte, p.Memsz)
		if _, err := io.ReadFull(p.Open(), data[:p.Filesz]); err != nil {
			t.Fatal(err)
		}
		if err := m.WriteMem(p.Paddr, data); err != nil {
			t.Fatal(err)
		}
	}
	return f.Entry
}

// runOnMachine boots the program and returns its UART output.
func runOnMachine(t testing.TB, path string) []byte {
	t.Helper()
	_, out := bootAndRun(t, path, Config{}, nil)
	return out
}

// bootAndRun boots the program on a machine configured as cfg (its
// console and logger aside), after patch (if any) has changed the loaded
// image, runs it to power-off and returns the machine and its UART output.
func bootAndRun(t testing.TB, path string, cfg Config, patch func(*Machine)) (*Machine, []byte) {
	t.Helper()
	var out bytes.Buffer
	cfg.Console, cfg.Logger = &out, slog.New(slog.DiscardHandler)
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	entry := loadELF(t, m, path)
	if patch != nil {
		patch(m)
	}
	m.Boot(entry, 0)
	ctx, cancel := context.WithDeadline(context.Background(), waitfor.Deadline(t))
	defer cancel()
	if err := m.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if !m.PoweredOff() {
		t.Fatalf("machine did not power off; output so far:\n%s", out.Bytes())
	}
	return m, out.Bytes()
}

// diffProgs are the differential test programs (testdata/Makefile builds
// them) and the QEMU CPU model each is compared on. The programs keep to
// Armv8.0 behaviour, so QEMU's -cpu max (which adds PAN, LSE, ...) gives
// the same results as an Armv8.0 core would;
// lsetest uses the Armv8.1 atomics and LDAPR, which -cpu max has.
var diffProgs = []struct {
	path string
	cpu  string
}{
	{testProg, "cortex-a57"},
	{"testdata/eltest.elf", "max"},
	{"testdata/mmutest.elf", "max"},
	{"testdata/dbgtest.elf", "max"},
	{"testdata/lsetest.elf", "max"},
	{"testdata/fptest.elf", "max"},
}

// TestQEMUDifferential runs each program on machine and on QEMU's virt
// board and requires byte-identical UART output.
func TestQEMUDifferential(t *testing.T) {
	for _, p := range diffProgs {
		t.Run(strings.TrimSuffix(filepath.Base(p.path), ".elf"), func(t *testing.T) {
			t.Parallel()
			got := runOnMachine(t, p.path)
			if !bytes.HasSuffix(got, []byte("done\n")) {
				t.Fatalf("machine output incomplete:\n%s", got)
			}
			want := runOnQEMU(t, p.path, p.cpu)
			if !bytes.Equal(got, want) {
				t.Errorf("UART output differs from QEMU\n%s", lineDiff(got, want))
			}
		})
	}
}

// runOnQEMU runs the program on qemu-system-aarch64 and returns its UART
// output. It skips the test when QEMU is missing, unless CI is set.
func runOnQEMU(t *testing.T, path, cpu string) []byte {
	t.Helper()
	qemu, err := exec.LookPath("qemu-system-aarch64")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("qemu-system-aarch64 not installed: CI must install qemu-system-arm")
		}
		t.Skip("qemu-system-aarch64 not installed (Debian package qemu-system-arm)")
	}
	ctx, cancel := context.WithDeadline(context.Background(), waitfor.Deadline(t))
	defer cancel()
	cmd := exec.CommandContext(ctx, qemu, "-M", "virt", "-cpu", cpu, "-m", "128",
		"-nographic", "-no-reboot", "-nic", "none", "-kernel", path)
	cmd.Stdin = nil // QEMU's monitor must not read the test's stdin
	want, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("qemu: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("qemu: %v", err)
	}
	return want
}

// lineDiff shows the first differing line of two outputs with context.
func lineDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			from := max(0, i-3)
			return fmt.Sprintf("line %d:\nmachine: %q\nqemu:    %q\ncontext (qemu):\n%s", i+1, gl, wl,
				strings.Join(w[from:min(len(w), i+1)], "\n"))
		}
	}
	return "(equal)"
}
