package machine

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"testing"
	"time"
)

// testProg is the bare-metal differential test program, built by
// testdata/qemutest.mk (make target machine-testprog).
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
	var out bytes.Buffer
	m, err := New(Config{Console: &out, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	m.Boot(loadELF(t, m, path), 0)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if !m.PoweredOff() {
		t.Fatalf("machine did not power off; output so far:\n%s", out.Bytes())
	}
	return out.Bytes()
}

// TestQEMUDifferential runs the same image on machine and on QEMU's virt
// board and requires byte-identical UART output.
func TestQEMUDifferential(t *testing.T) {
	got := runOnMachine(t, testProg)
	if !bytes.HasSuffix(got, []byte("done\n")) {
		t.Fatalf("machine output incomplete:\n%s", got)
	}
	qemu, err := exec.LookPath("qemu-system-aarch64")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("qemu-system-aarch64 not installed: CI must install qemu-system-arm")
		}
		t.Skip("qemu-system-aarch64 not installed (Debian package qemu-system-arm)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, qemu, "-M", "virt", "-cpu", "cortex-a57", "-m", "128",
		"-nographic", "-no-reboot", "-nic", "none", "-kernel", testProg)
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
}
