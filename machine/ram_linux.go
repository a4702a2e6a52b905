package machine

import (
	"fmt"
	"syscall"
)

// newRAM maps guest RAM outside the Go heap. The garbage collector then
// paces itself by what the host side allocates: with RAM in the heap,
// its 128 MiB counted as live data and let each GC cycle grow the heap by
// as much again in garbage (the peak RSS of a traced run was 244 MiB).
// And the pages cost nothing until the guest touches them, where make
// cleared them all at every boot.
func newRAM(size uint64) ([]byte, error) {
	mem, err := syscall.Mmap(-1, 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
	if err != nil {
		return nil, fmt.Errorf("machine: mapping %d MiB of guest RAM: %w", size>>20, err)
	}
	return mem, nil
}

// freeRAM unmaps what newRAM mapped. Nothing may touch it after.
func freeRAM(mem []byte) { _ = syscall.Munmap(mem) }
