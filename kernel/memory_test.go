package kernel

import (
	"debug/elf"
	"errors"
	"testing"

	"github.com/kpemu/kpemu/machine"
)

// The layout of the arm64 guest: the image linked at KIMAGE_VADDR and
// loaded at PA 0x40200000, 128 MiB of RAM. Built by hand, so that the
// translation is tested without booting an image.
const (
	testImagePA = 0x40200000
	testVoff    = KimageVaddr - testImagePA
	testImage   = 0x1c0000 // _end - _text
	testRAM     = 128 << 20
)

func testKernel() *Kernel {
	return &Kernel{
		layout: Layout{
			Entry:         testImagePA,
			KimageVoffset: testVoff,
			Image:         Range{KimageVaddr, KimageVaddr + testImage},
			End:           KimageVaddr + testImage,
		},
		ramSize: testRAM,
	}
}

func TestPhys(t *testing.T) {
	k := testKernel()
	tests := []struct {
		name string
		va   uint64
		n    int
		pa   uint64 // 0: refused
	}{
		{"_text", KimageVaddr, 4, testImagePA},
		{"inside the image", KimageVaddr + 0x1234, 8, testImagePA + 0x1234},
		{"last word of the image", KimageVaddr + testImage - 8, 8, testImagePA + testImage - 8},
		{"straddling _end", KimageVaddr + testImage - 4, 8, 0},
		{"at _end", KimageVaddr + testImage, 1, 0},
		{"below _text", KimageVaddr - 1, 1, 0},
		{"PAGE_OFFSET", PageOffset, 8, PhysOffset},
		{"a task_struct", PageOffset + 0x3456780, 64, PhysOffset + 0x3456780},
		{"the linear map's last byte", PageOffset + testRAM - 1, 1, PhysOffset + testRAM - 1},
		{"straddling the end of RAM", PageOffset + testRAM - 4, 8, 0},
		{"past RAM", PageOffset + testRAM, 1, 0},
		{"MODULES_VADDR", ModulesVaddr, 4, ModulesPhys},
		{"a module's data", ModulesVaddr + 0x2010, 8, ModulesPhys + 0x2010},
		{"the module area's last word", ModulesEnd - 8, 8, ModulesPhys + ModulesVsize - 8},
		{"straddling MODULES_END", ModulesEnd - 4, 8, 0},
		{"MODULES_END", ModulesEnd, 1, 0},
		{"below MODULES_VADDR", ModulesVaddr - 8, 8, 0},
		{"a user address", 0x400000, 8, 0},
		{"TASK_SIZE", TaskSize, 1, 0},
		{"the UART", machine.UARTBase, 4, 0},
		{"a physical RAM address", machine.RAMBase + 0x1000, 4, 0},
		{"an empty range in the image", KimageVaddr + 16, 0, testImagePA + 16},
		{"a negative length", KimageVaddr, -1, 0},
		{"wrapping around", ^uint64(0) - 3, 8, 0},
	}
	for _, tt := range tests {
		pa, err := k.Phys(tt.va, tt.n)
		if tt.pa == 0 {
			if !errors.Is(err, machine.ErrBadAddress) {
				t.Errorf("%s: Phys(%#x, %d) = %#x, %v; want ErrBadAddress", tt.name, tt.va, tt.n, pa, err)
			}
			continue
		}
		if err != nil || pa != tt.pa {
			t.Errorf("%s: Phys(%#x, %d) = %#x, %v; want %#x", tt.name, tt.va, tt.n, pa, err, tt.pa)
		}
	}
}

// The accessors write and read RAM at the translated address, so that a
// kernel VA and its linear-map alias see the same bytes.
func TestKernelAccessors(t *testing.T) {
	m, err := machine.New(machine.Config{RAMSize: testRAM})
	if err != nil {
		t.Fatal(err)
	}
	k := testKernel()
	k.m = m
	va := uint64(KimageVaddr + 0x800)
	if err := k.Write64(va, 0x1122334455667788); err != nil {
		t.Fatal(err)
	}
	if v, err := m.Read64(testImagePA + 0x800); err != nil || v != 0x1122334455667788 {
		t.Errorf("PA of %#x holds %#x, %v", va, v, err)
	}
	alias := uint64(PageOffset + testImagePA - PhysOffset + 0x800)
	if v, err := k.Read32(alias); err != nil || v != 0x55667788 {
		t.Errorf("linear alias %#x holds %#x, %v", alias, v, err)
	}
	if err := k.Write32(ModulesVaddr, 0xd503201f); err != nil {
		t.Fatal(err)
	}
	if v, err := k.Read32(PageOffset + ModulesPhys - PhysOffset); err != nil || v != 0xd503201f {
		t.Errorf("module area alias holds %#x, %v", v, err)
	}
	if _, err := k.Read64(0x1000); !errors.Is(err, machine.ErrBadAddress) {
		t.Errorf("Read64 of a user address: %v", err)
	}
	if err := k.WriteMem(machine.UARTBase, []byte{'x'}); !errors.Is(err, machine.ErrBadAddress) {
		t.Errorf("WriteMem to the UART: %v", err)
	}
}

func TestKimageVoffset(t *testing.T) {
	load := func(vaddr, paddr uint64) *elf.Prog {
		return &elf.Prog{ProgHeader: elf.ProgHeader{Type: elf.PT_LOAD, Vaddr: vaddr, Paddr: paddr}}
	}
	stack := &elf.Prog{ProgHeader: elf.ProgHeader{Type: elf.PT_GNU_STACK}}
	f := &elf.File{Progs: []*elf.Prog{load(KimageVaddr, testImagePA), stack, load(KimageVaddr+0x30000, testImagePA+0x30000)}}
	if v, err := kimageVoffset(f); err != nil || v != testVoff {
		t.Errorf("kimageVoffset = %#x, %v; want %#x", v, err, uint64(testVoff))
	}
	f.Progs = append(f.Progs, load(KimageVaddr+0x40000, testImagePA+0x50000))
	if _, err := kimageVoffset(f); !errors.Is(err, ErrBadImage) {
		t.Errorf("segments with different offsets: %v, want ErrBadImage", err)
	}
	if _, err := kimageVoffset(&elf.File{Progs: []*elf.Prog{stack}}); !errors.Is(err, ErrBadImage) {
		t.Errorf("no PT_LOAD: %v, want ErrBadImage", err)
	}
}

func TestModuleAreaUsable(t *testing.T) {
	dtb := func(ram uint64) uint64 { return PhysOffset + ram - 2<<20 }
	tests := []struct {
		name               string
		imageEnd, ram, fdt uint64
		want               bool
	}{
		{"default", testImagePA + testImage, testRAM, dtb(testRAM), true},
		{"image reaching MODULES_PHYS", ModulesPhys, testRAM, dtb(testRAM), true},
		{"image past MODULES_PHYS", ModulesPhys + 1, testRAM, dtb(testRAM), false},
		{"RAM ends inside the area", testImagePA + testImage, 24 << 20, dtb(24 << 20), false},
		{"device tree inside the area", testImagePA + testImage, 32<<20 + 1<<20, dtb(32<<20 + 1<<20), false},
		{"device tree right above the area", testImagePA + testImage, 34 << 20, dtb(34 << 20), true},
	}
	for _, tt := range tests {
		if got := moduleAreaUsable(tt.imageEnd, tt.ram, tt.fdt); got != tt.want {
			t.Errorf("%s: moduleAreaUsable = %v, want %v", tt.name, got, tt.want)
		}
	}
}
