package kernel

import (
	"encoding/binary"
	"fmt"

	"github.com/kpemu/kpemu/machine"
)

// Guest kernel memory by virtual address. The guest runs with Linux arm64's
// layout (abi.go): the image at KIMAGE_VADDR, the linear map of RAM at
// PAGE_OFFSET, the module area at MODULES_VADDR. All three are fixed
// offsets from physical memory, so the host translates arithmetically, as
// Linux's __pa does, rather than walking the guest's page tables: that
// works before the guest turned its MMU on and needs no vCPU.

// Phys returns the physical address of the kernel virtual address va, for
// an access of n bytes: the whole of [va, va+n) must lie in the kernel
// image (_text.._end, PA = VA - kimage_voffset), the linear map
// ([PAGE_OFFSET, PAGE_OFFSET + RAM size), PA = VA - PAGE_OFFSET +
// PHYS_OFFSET) or the module area (PA = VA - MODULES_VADDR +
// MODULES_PHYS). Anything else, such as a user address or a device, is
// an error wrapping machine.ErrBadAddress.
func (k *Kernel) Phys(va uint64, n int) (uint64, error) {
	if n >= 0 {
		size := uint64(n)
		// in reports whether [va, va+size) lies in [start, end).
		in := func(start, end uint64) bool { return va >= start && va < end && size <= end-va }
		l := &k.layout
		switch {
		case in(l.Image.Start, l.Image.End):
			return va - l.KimageVoffset, nil
		case in(PageOffset, PageOffset+k.ramSize):
			return va - PageOffset + PhysOffset, nil
		case in(ModulesVaddr, ModulesEnd):
			return va - ModulesVaddr + ModulesPhys, nil
		}
	}
	return 0, fmt.Errorf("kernel: %#x+%#x is not in the kernel image, the linear map or the module area: %w", va, n, machine.ErrBadAddress)
}

// ReadMem copies guest memory at kernel virtual address va into p.
func (k *Kernel) ReadMem(va uint64, p []byte) error {
	pa, err := k.Phys(va, len(p))
	if err != nil {
		return err
	}
	if err := k.m.ReadMem(pa, p); err != nil {
		return fmt.Errorf("kernel address %#x: %w", va, err)
	}
	return nil
}

// WriteMem copies p into guest memory at kernel virtual address va. As
// machine.WriteMem, which it calls with the physical address, it drops the
// decoded copies of the pages it touches and breaks exclusive reservations.
func (k *Kernel) WriteMem(va uint64, p []byte) error {
	pa, err := k.Phys(va, len(p))
	if err != nil {
		return err
	}
	if err := k.m.WriteMem(pa, p); err != nil {
		return fmt.Errorf("kernel address %#x: %w", va, err)
	}
	return nil
}

// Read32 reads a little-endian 32-bit word at kernel virtual address va.
func (k *Kernel) Read32(va uint64) (uint32, error) {
	var b [4]byte
	if err := k.ReadMem(va, b[:]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b[:]), nil
}

// Read64 reads a little-endian 64-bit word at kernel virtual address va.
func (k *Kernel) Read64(va uint64) (uint64, error) {
	var b [8]byte
	if err := k.ReadMem(va, b[:]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}

// Write32 writes a little-endian 32-bit word at kernel virtual address va.
func (k *Kernel) Write32(va uint64, v uint32) error {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], v)
	return k.WriteMem(va, b[:])
}

// Write64 writes a little-endian 64-bit word at kernel virtual address va.
func (k *Kernel) Write64(va uint64, v uint64) error {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	return k.WriteMem(va, b[:])
}
