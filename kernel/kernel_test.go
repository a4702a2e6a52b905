package kernel_test

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/kpemu/kpemu/internal/waitfor"
	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/kernel/image"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func boot(t testing.TB) *kernel.Kernel {
	t.Helper()
	return bootWith(t, kernel.Config{})
}

// bootWith boots with cfg, quiet and waiting as long as tests wait.
func bootWith(t testing.TB, cfg kernel.Config) *kernel.Kernel {
	t.Helper()
	cfg.Logger, cfg.GuestWait = quiet(), waitfor.Bound
	k, err := kernel.Boot(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestKallsyms(t *testing.T) {
	k := boot(t)
	syms := k.Kallsyms()
	read, ok := syms.LookupName("vfs_read")
	if !ok || read.Type != 'T' || read.Size == 0 {
		t.Fatalf("vfs_read = %+v", read)
	}
	tests := []struct {
		addr uint64
		want string
	}{
		{read.Addr, "vfs_read+0x0/0x"},
		{read.Addr + 8, "vfs_read+0x8/0x"},
		{read.Addr + read.Size - 4, "vfs_read+0x"},
		{0x1000, "0x1000"},
	}
	for _, tt := range tests {
		if got := syms.Format(tt.addr); !strings.HasPrefix(got, tt.want) {
			t.Errorf("Format(%#x) = %q, want prefix %q", tt.addr, got, tt.want)
		}
	}
	// Every address inside a function resolves to it; the next symbol
	// starts where the size ends.
	s, off, ok := syms.LookupAddr(read.Addr + read.Size)
	if !ok || s.Name == "vfs_read" || off != 0 {
		t.Errorf("LookupAddr(end of vfs_read) = %s+%#x %v", s.Name, off, ok)
	}
	if _, _, ok := syms.LookupAddr(k.Layout().End + 0x100000); ok {
		t.Error("an address past _end resolved")
	}
	for i, s := range syms.Symbols()[1:] {
		if s.Addr < syms.Symbols()[i].Addr {
			t.Fatal("symbols not sorted by address")
		}
		if strings.HasPrefix(s.Name, "$") {
			t.Fatalf("mapping symbol %s in kallsyms", s.Name)
		}
	}
	if len(syms.Lookup("no_such_symbol")) != 0 {
		t.Error("Lookup found a missing symbol")
	}
}

func TestLayout(t *testing.T) {
	k := boot(t)
	l := k.Layout()
	for name, r := range map[string]kernel.Range{"text": l.Text, "entry": l.EntryText, "kprobes": l.KprobesText, "slots": l.InsnSlots} {
		if r.End <= r.Start {
			t.Errorf("%s range %+v is empty", name, r)
		}
	}
	for _, fn := range []string{"vfs_read", "vfs_write", "do_fork", "kernel_clone", "tcp_v4_rcv"} {
		s, _ := k.Kallsyms().LookupName(fn)
		if !k.IsText(s.Addr) || l.KprobesText.Contains(s.Addr) || l.EntryText.Contains(s.Addr) {
			t.Errorf("%s at %#x is not plain text", fn, s.Addr)
		}
	}
	for _, fn := range []string{"notify_page_fault", "kprobe_breakpoint_handler"} {
		s, ok := k.Kallsyms().LookupName(fn)
		if !ok || !l.KprobesText.Contains(s.Addr) {
			t.Errorf("%s is not in .kprobes.text", fn)
		}
	}
	// The entry point is _start's physical address, where the CPU starts
	// with the MMU off; the rest of the layout is kernel VAs in the image.
	if s, ok := k.Kallsyms().LookupName("_start"); !ok {
		t.Error("no _start")
	} else if pa, err := k.Phys(s.Addr, 4); err != nil || pa != l.Entry {
		t.Errorf("_start at %#x is PA %#x, %v; the ELF entry is %#x", s.Addr, pa, err, l.Entry)
	}
	if !l.Image.Contains(l.Text.Start) || l.Text.End > l.Image.End || l.End != l.Image.End {
		t.Errorf("text %+v is not inside the image %+v", l.Text, l.Image)
	}
	if s, _ := k.Kallsyms().LookupName("vectors"); !l.EntryText.Contains(s.Addr) || s.Addr&0x7ff != 0 {
		t.Errorf("vectors at %#x: not 2 KiB aligned in the entry text", s.Addr)
	}
}

func TestPatchText(t *testing.T) {
	k := boot(t)
	s, _ := k.Kallsyms().LookupName("vfs_write")
	orig, err := k.ReadInsn(s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.PatchText(s.Addr, 0xd503201f); err != nil {
		t.Fatal(err)
	}
	if got, _ := k.ReadInsn(s.Addr); got != 0xd503201f {
		t.Errorf("patched insn = %#x", got)
	}
	if err := k.PatchText(s.Addr, orig); err != nil {
		t.Fatal(err)
	}
	bad := []uint64{s.Addr + 2, k.Layout().End + 8}
	if d, ok := k.Kallsyms().LookupName("nr_vfs_read"); ok {
		bad = append(bad, d.Addr)
	}
	for _, a := range bad {
		if err := k.PatchText(a, 0); err == nil {
			t.Errorf("PatchText(%#x) succeeded", a)
		}
	}
}

func TestBootRunsWorkload(t *testing.T) {
	var console bytes.Buffer
	k, err := kernel.Boot(kernel.Config{Logger: quiet(), Console: &console})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		if err := k.Machine().Step(100_000); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-k.Ready():
	default:
		t.Fatal("the guest never reported ready")
	}
	if !strings.Contains(console.String(), "Linux version") {
		t.Errorf("console: %q", console.String())
	}
	for _, c := range []string{"workload_iterations", "nr_vfs_read", "nr_vfs_write", "nr_forks", "nr_tcp_rcv", "nr_tcp_csum_bad"} {
		if v, err := k.ReadSymbolU64(c); err != nil || v == 0 {
			t.Errorf("%s = %d, %v", c, v, err)
		}
	}
	comm, pid := k.Current(0)
	if comm == "" || pid < 0 {
		t.Errorf("Current = %q, %d", comm, pid)
	}
	// Current keeps the last comm per CPU; a task that renames itself
	// (prctl PR_SET_NAME, exec) must show the new name at once.
	if addr := k.CurrentCommAddr(0); addr != 0 {
		if err := k.WriteMem(addr, []byte("renamed\x00")); err != nil {
			t.Fatal(err)
		}
		if got, _ := k.Current(0); got != "renamed" {
			t.Errorf("Current after the comm changed = %q, want %q", got, "renamed")
		}
	}
	if k.Uptime() <= 0 {
		t.Error("Uptime did not advance")
	}
	if _, ok := k.Panicked(); ok {
		t.Error("guest panicked")
	}
}

func TestBootRefusesBadImages(t *testing.T) {
	good := image.ELF()
	wrongMachine := bytes.Clone(good)
	binary.LittleEndian.PutUint16(wrongMachine[18:], uint16(elf.EM_X86_64))
	noSyms := stripSymbols(t, good)
	tests := []struct {
		name string
		img  []byte
		want string
	}{
		{"not an ELF", []byte("hello"), "bad kernel image"},
		{"truncated", good[:100], "bad kernel image"},
		{"wrong machine", wrongMachine, "AArch64"},
		{"no symbols", noSyms, "bad kernel image"},
		{"bss past RAM", withLastLoad(t, good, 40, 1<<40), "does not fit in RAM"},
		{"bss wrapping", withLastLoad(t, good, 40, 1<<64-1<<12), "does not fit in RAM"},
		{"filesz > memsz", withLastLoad(t, good, 40, 0x10), "filesz > memsz"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := kernel.Boot(kernel.Config{Image: tt.img, Logger: quiet()})
			if err == nil || !errors.Is(err, kernel.ErrBadImage) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Boot = %v, want an ErrBadImage mentioning %q", err, tt.want)
			}
		})
	}
}

// withLastLoad is img with the 64-bit field at offset off (40: p_memsz)
// of its last PT_LOAD program header set to v.
func withLastLoad(t *testing.T, img []byte, off int, v uint64) []byte {
	t.Helper()
	img = bytes.Clone(img)
	phoff := int(binary.LittleEndian.Uint64(img[32:]))
	size, n := int(binary.LittleEndian.Uint16(img[54:])), int(binary.LittleEndian.Uint16(img[56:]))
	for i := n - 1; i >= 0; i-- {
		ph := img[phoff+i*size:]
		if elf.ProgType(binary.LittleEndian.Uint32(ph)) == elf.PT_LOAD {
			binary.LittleEndian.PutUint64(ph[off:], v)
			return img
		}
	}
	t.Fatal("no PT_LOAD")
	return nil
}

// stripSymbols renames the .symtab section type so debug/elf finds none.
func stripSymbols(t *testing.T, img []byte) []byte {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(img))
	if err != nil {
		t.Fatal(err)
	}
	out := bytes.Clone(img)
	shoff := binary.LittleEndian.Uint64(img[0x28:])
	shentsize := uint64(binary.LittleEndian.Uint16(img[0x3a:]))
	for i, s := range f.Sections {
		if s.Type == elf.SHT_SYMTAB {
			binary.LittleEndian.PutUint32(out[shoff+uint64(i)*shentsize+4:], uint32(elf.SHT_PROGBITS))
		}
	}
	return out
}

func TestFuncParams(t *testing.T) {
	k := boot(t)
	tests := []struct {
		fn   string
		want []kernel.Param
	}{
		{"vfs_read", []kernel.Param{{"file", "struct file *", 8}, {"buf", "char *", 8}, {"count", "size_t", 8}, {"pos", "loff_t *", 8}}},
		{"do_fork", []kernel.Param{{"clone_flags", "unsigned long", 8}, {"stack_start", "unsigned long", 8}, {"stack_size", "unsigned long", 8}, {"parent_tidptr", "int *", 8}, {"child_tidptr", "int *", 8}}},
	}
	for _, tt := range tests {
		got, err := k.FuncParams(tt.fn)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(tt.want) {
			t.Fatalf("%s: %+v", tt.fn, got)
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("%s param %d = %+v, want %+v", tt.fn, i, got[i], tt.want[i])
			}
		}
	}
	if _, err := k.FuncParams("no_such_fn"); err == nil {
		t.Error("FuncParams of a missing function succeeded")
	}
}
