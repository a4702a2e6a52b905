//go:build !linux

package machine

// newRAM allocates guest RAM in the Go heap where there is no mmap.
func newRAM(size uint64) ([]byte, error) { return make([]byte, size), nil }

func freeRAM([]byte) {}
