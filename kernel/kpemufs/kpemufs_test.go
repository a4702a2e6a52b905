package kpemufs_test

import (
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/kpemu/kpemu/debugfs"
	"github.com/kpemu/kpemu/kernel"
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
