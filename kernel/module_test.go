package kernel_test

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/kpemu/kpemu/internal/waitfor"
	"github.com/kpemu/kpemu/kernel"
	"github.com/kpemu/kpemu/kernel/image"
)

// running boots the kernel and runs it on another goroutine until the
// test ends; module loads need the guest running.
func running(t testing.TB) *kernel.Kernel {
	t.Helper()
	return runningWith(t, kernel.Config{})
}

// runningWith is running, booted with cfg (bootWith).
func runningWith(t testing.TB, cfg kernel.Config) *kernel.Kernel {
	t.Helper()
	k := bootWith(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = k.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	waitfor.Recv(t, "the guest to boot", k.Ready())
	return k
}

func mustModule(t *testing.T, name string) []byte {
	t.Helper()
	obj, ok := image.Module(name)
	if !ok {
		t.Fatalf("no embedded module %s (have %v)", name, image.Modules())
	}
	return obj
}

// readU64Running reads a guest word with the machine stopped.
func readU64Running(t *testing.T, k *kernel.Kernel, sym string) uint64 {
	t.Helper()
	s, ok := k.Kallsyms().LookupName(sym)
	if !ok {
		t.Fatalf("no symbol %s", sym)
	}
	var v uint64
	var err error
	k.StopMachine(func() { v, err = k.ReadU64(s.Addr) })
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestModuleLoadUnload(t *testing.T) {
	k := running(t)
	var events []string
	k.RegisterModuleNotifier(func(ev kernel.ModuleEvent) {
		events = append(events, ev.State.String()+" "+ev.Module.Name)
	})
	if err := k.LoadEmbeddedModule("e1000ish"); err != nil {
		t.Fatal(err)
	}
	mods := k.Modules()
	if want := fmt.Sprintf("e1000ish 4096 0 - Live 0x%016x\n", uint64(kernel.ModulesVaddr)); len(mods) != 1 || mods[0].String() != want {
		t.Fatalf("modules = %q", mods)
	}
	s, ok := k.Kallsyms().LookupName("e1000ish:vnet_get_stats64")
	if !ok || s.Module != "e1000ish" || s.Type != 't' || s.Addr < kernel.ModulesVaddr {
		t.Fatalf("vnet_get_stats64 = %+v %v", s, ok)
	}
	if !k.IsModuleText(s.Addr) || k.IsText(s.Addr) {
		t.Error("module text is not module text")
	}
	if got := k.Kallsyms().Format(s.Addr + 4); got != "vnet_get_stats64+0x4/0x"+strings.TrimPrefix(k.Kallsyms().Format(s.Addr), "vnet_get_stats64+0x0/0x") {
		t.Errorf("Format = %q", got)
	}
	// The workload calls into the module: its counters move.
	first := readU64Running(t, k, "e1000ish:vnet_priv")
	waitfor.Until(t, "vnet_rx to run", func() bool { return readU64Running(t, k, "e1000ish:vnet_priv") != first })
	if err := k.LoadEmbeddedModule("e1000ish"); !errors.Is(err, syscall.EEXIST) {
		t.Errorf("second load: %v, want EEXIST", err)
	}
	if err := k.LoadEmbeddedModule("ramfs_helper"); err != nil {
		t.Fatal(err)
	}
	if mods := k.Modules(); len(mods) != 2 || mods[0].Name != "ramfs_helper" || mods[0].Addr != kernel.ModulesVaddr+4096 {
		t.Fatalf("modules = %q", mods)
	}
	if err := k.UnloadModule("e1000ish"); err != nil {
		t.Fatal(err)
	}
	if _, ok := k.Kallsyms().LookupName("e1000ish:vnet_get_stats64"); ok {
		t.Error("symbols stay after unload")
	}
	if err := k.UnloadModule("e1000ish"); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("second unload: %v, want ENOENT", err)
	}
	// The freed area is reused.
	if err := k.LoadEmbeddedModule("e1000ish"); err != nil {
		t.Fatal(err)
	}
	if m, _, _ := k.Module("e1000ish"); m.Base != kernel.ModulesVaddr {
		t.Errorf("reloaded at %#x", m.Base)
	}
	want := "Loading e1000ish,Live e1000ish,Loading ramfs_helper,Live ramfs_helper,Unloading e1000ish,Loading e1000ish,Live e1000ish"
	if got := strings.Join(events, ","); got != want {
		t.Errorf("notifier events:\n got %s\nwant %s", got, want)
	}
	if err := k.LoadEmbeddedModule("no_such_module"); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("unknown module: %v, want ENOENT", err)
	}
}

// elfEdit returns a copy of obj changed by fn.
func elfEdit(obj []byte, fn func(b []byte, f *elf.File)) []byte {
	b := append([]byte(nil), obj...)
	f, err := elf.NewFile(bytes.NewReader(obj))
	if err != nil {
		panic(err)
	}
	fn(b, f)
	return b
}

// relaEntries returns the file offsets of every RELA entry.
func relaEntries(f *elf.File) []uint64 {
	var out []uint64
	for _, s := range f.Sections {
		if s.Type == elf.SHT_RELA {
			for off := uint64(0); off < s.Size; off += 24 {
				out = append(out, s.Offset+off)
			}
		}
	}
	return out
}

func TestModuleMalformed(t *testing.T) {
	k := running(t)
	good := mustModule(t, "e1000ish")
	tests := []struct {
		name string
		obj  []byte
		want error
		text string
	}{
		{"empty", nil, kernel.ErrBadModule, "not an ELF"},
		{"truncated", good[:200], kernel.ErrBadModule, ""},
		{"wrong machine", elfEdit(good, func(b []byte, _ *elf.File) {
			binary.LittleEndian.PutUint16(b[18:], uint16(elf.EM_X86_64))
		}), kernel.ErrBadModule, "EM_X86_64"},
		{"an executable", image.ELF(), kernel.ErrBadModule, "ET_EXEC"},
		{"unknown relocation", elfEdit(good, func(b []byte, f *elf.File) {
			at := relaEntries(f)[0] + 8
			info := binary.LittleEndian.Uint64(b[at:])
			binary.LittleEndian.PutUint64(b[at:], info&^0xffffffff|1000)
		}), kernel.ErrRelocType, "unsupported relocation"},
		{"undefined symbol", elfEdit(good, func(b []byte, f *elf.File) {
			// Rename the undefined "printk" to "printq".
			strtab := f.Sections[f.SectionByType(elf.SHT_SYMTAB).Link]
			i := bytes.Index(b[strtab.Offset:strtab.Offset+strtab.Size], []byte("printk\x00"))
			b[strtab.Offset+uint64(i)+5] = 'q'
		}), syscall.ENOENT, "Unknown symbol printq"},
		{"relocation past its section", elfEdit(good, func(b []byte, f *elf.File) {
			binary.LittleEndian.PutUint64(b[relaEntries(f)[0]:], 1<<40)
		}), kernel.ErrBadModule, "outside"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := k.Kallsyms().Symbols()
			err := k.LoadModule("bad", tt.obj)
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.text) {
				t.Fatalf("LoadModule = %v, want %v containing %q", err, tt.want, tt.text)
			}
			if errors.Is(tt.want, kernel.ErrBadModule) && !errors.Is(err, syscall.EINVAL) {
				t.Errorf("%v is not EINVAL", err)
			}
			if len(k.Modules()) != 0 || len(k.Kallsyms().Symbols()) != len(before) {
				t.Error("a refused module left traces")
			}
		})
	}
}

// TestModuleInitFails: init_module's error comes back as its errno and
// the module is gone, its notifiers having heard COMING then GOING. The
// failure is real: e1000ish's netdev_rx_handler_register returns -EBUSY
// when eth0 already has a handler (a second copy under another name).
func TestModuleInitFails(t *testing.T) {
	k := running(t)
	var events []string
	k.RegisterModuleNotifier(func(ev kernel.ModuleEvent) { events = append(events, ev.State.String()+" "+ev.Module.Name) })
	obj := mustModule(t, "e1000ish")
	if err := k.LoadModule("e1000ish", obj); err != nil {
		t.Fatal(err)
	}
	err := k.LoadModule("e1000ish_2", obj)
	if !errors.Is(err, syscall.EBUSY) {
		t.Fatalf("second driver: %v, want EBUSY", err)
	}
	if len(k.Modules()) != 1 {
		t.Errorf("modules = %v", k.Modules())
	}
	if _, ok := k.Kallsyms().LookupName("e1000ish_2:vnet_rx"); ok {
		t.Error("a failed module's symbols stay")
	}
	if got, want := strings.Join(events, ","), "Loading e1000ish,Live e1000ish,Loading e1000ish_2,Unloading e1000ish_2"; got != want {
		t.Errorf("events %s, want %s", got, want)
	}
}
