package kpemufs_test

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"syscall"
	"testing"

	"github.com/kpemu/kpemu/debugfs"
	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/kernel/image"
	"github.com/kpemu/kpemu/kernel/kpemufs"
)

func TestFiles(t *testing.T) {
	var console strings.Builder
	k, err := kernel.Boot(kernel.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Console: &console})
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Machine().Step(2_000_000); err != nil {
		t.Fatal(err)
	}
	tree := debugfs.NewTree()
	if err := kpemufs.Register(tree, k); err != nil {
		t.Fatal(err)
	}
	ks, err := tree.ReadFile("kpemu/kallsyms")
	if err != nil {
		t.Fatal(err)
	}
	read, _ := k.Kallsyms().LookupName("vfs_read")
	if want := fmt.Sprintf("%016x T vfs_read\n", read.Addr); !strings.Contains(string(ks), want) {
		t.Errorf("kallsyms lacks %q", want)
	}
	dmesg, err := tree.ReadFile("kpemu/dmesg")
	if err != nil {
		t.Fatal(err)
	}
	// The console also carries what user space writes there (/init's
	// sysfs lines); dmesg is its kernel lines, each with its timestamp.
	var kernelLines strings.Builder
	for _, l := range strings.SplitAfter(strings.ReplaceAll(console.String(), "\r\n", "\n"), "\n") {
		if strings.HasPrefix(l, "[") {
			kernelLines.WriteString(l)
		}
	}
	if string(dmesg) != kernelLines.String() || !strings.Contains(string(dmesg), "Linux version") {
		t.Errorf("dmesg %q differs from the console's kernel lines %q", dmesg, kernelLines.String())
	}
	version, err := tree.ReadFile("kpemu/version")
	if err != nil {
		t.Fatal(err)
	}
	if want := "Linux version 6.1.0-kpemu (kpemu@kpemu) (clang 14) #1 SMP\n"; string(version) != want {
		t.Errorf("version = %q, want %q", version, want)
	}
	if !strings.Contains(string(dmesg), strings.TrimSuffix(string(version), "\n")) {
		t.Errorf("the boot banner in dmesg differs from kpemu/version %q", version)
	}
	vmcoreinfo, err := tree.ReadFile("kpemu/vmcoreinfo")
	if err != nil {
		t.Fatal(err)
	}
	stext, _ := k.Kallsyms().LookupName("_stext")
	voff := k.Layout().KimageVoffset
	for _, want := range []string{
		"OSRELEASE=6.1.0-kpemu\n",
		"PAGESIZE=4096\n",
		fmt.Sprintf("SYMBOL(_stext)=%x\n", stext.Addr),
		"NUMBER(VA_BITS)=48\n",
		"NUMBER(MODULES_VADDR)=0xffff800001000000\n",
		"NUMBER(MODULES_END)=0xffff800002000000\n",
		fmt.Sprintf("NUMBER(kimage_voffset)=0x%x\n", voff),
		"NUMBER(PHYS_OFFSET)=0x40000000\n",
		"KERNELOFFSET=0\n",
	} {
		if !strings.Contains(string(vmcoreinfo), want) {
			t.Errorf("vmcoreinfo lacks %q:\n%s", want, vmcoreinfo)
		}
	}
	if !strings.HasPrefix(string(vmcoreinfo), "OSRELEASE=") {
		t.Errorf("vmcoreinfo does not start with OSRELEASE, as Linux's: %q", vmcoreinfo)
	}
	h, err := tree.Open(t.Context(), "kpemu/mem", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	// kpemu/mem is physical: a script subtracts kimage_voffset.
	buf := make([]byte, 4)
	n, err := h.Read(t.Context(), buf, int64(read.Addr-voff))
	if err != nil || n != 4 {
		t.Fatalf("read mem = %d, %v", n, err)
	}
	want, _ := k.ReadInsn(read.Addr)
	if got := binary.LittleEndian.Uint32(buf); got != want {
		t.Errorf("mem at vfs_read = %#x, want %#x", got, want)
	}
	if n, err := h.Read(t.Context(), buf, 1<<40); n != 0 || err != nil {
		t.Errorf("read past RAM = %d, %v; want EOF", n, err)
	}
	if _, err := h.Read(t.Context(), buf, 0x1000); err == nil {
		t.Error("read below RAM succeeded")
	}
}

// TestNotes: kpemu/notes (bound over /sys/kernel/notes by kpemu-ns.sh) is
// the running image's ELF notes, whose GNU build-id is the one perf probe
// -k checks the image file against.
func TestNotes(t *testing.T) {
	k, err := kernel.Boot(kernel.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	tree := debugfs.NewTree()
	if err := kpemufs.Register(tree, k); err != nil {
		t.Fatal(err)
	}
	notes, err := tree.ReadFile("kpemu/notes")
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(bytes.NewReader(image.ELF()))
	if err != nil {
		t.Fatal(err)
	}
	sec := f.Section(".notes")
	if sec == nil {
		t.Fatal("the image has no .notes section")
	}
	want, err := sec.Data()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(notes, want) {
		t.Errorf("kpemu/notes = % x, want the image's .notes % x", notes, want)
	}
	// One note: namesz 4, descsz 20 (SHA-1), type NT_GNU_BUILD_ID, "GNU\0".
	if len(notes) != 16+20 || binary.LittleEndian.Uint32(notes[0:]) != 4 || binary.LittleEndian.Uint32(notes[4:]) != 20 ||
		binary.LittleEndian.Uint32(notes[8:]) != 3 || string(notes[12:16]) != "GNU\x00" {
		t.Errorf("kpemu/notes is not one GNU build-id note: % x", notes)
	}
}

// kpemu/workload_forks stops and restarts kworkload's forks; a bad write
// is EINVAL and changes nothing.
func TestWorkloadForks(t *testing.T) {
	k, err := kernel.Boot(kernel.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	tree := debugfs.NewTree()
	if err := kpemufs.Register(tree, k); err != nil {
		t.Fatal(err)
	}
	forks, _ := k.Kallsyms().LookupName("workload_forks")
	count := func() uint64 {
		t.Helper()
		v, err := k.Read64(forks.Addr)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	step := func() {
		t.Helper()
		if err := k.Machine().Step(3_000_000); err != nil {
			t.Fatal(err)
		}
	}
	read := func() string {
		t.Helper()
		b, err := tree.ReadFile("kpemu/workload_forks")
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	step()
	if got := read(); got != "1\n" || count() == 0 {
		t.Fatalf("at boot: workload_forks %q, %d forks; want 1 and some", got, count())
	}
	for _, tt := range []struct {
		write   string
		wantErr error
		want    string
		forking bool
	}{
		{"0\n", nil, "0\n", false},
		{"yes\n", syscall.EINVAL, "0\n", false},
		{"1\n", nil, "1\n", true},
	} {
		err := tree.WriteFile("kpemu/workload_forks", []byte(tt.write), true)
		if !errors.Is(err, tt.wantErr) && (err != nil || tt.wantErr != nil) {
			t.Errorf("write %q: %v, want %v", tt.write, err, tt.wantErr)
		}
		step() // an iteration under way when the switch flipped ends
		before := count()
		step()
		if got, forked := read(), count() != before; got != tt.want || forked != tt.forking {
			t.Errorf("after %q: workload_forks %q, forked %v; want %q, %v", tt.write, got, forked, tt.want, tt.forking)
		}
	}
}
