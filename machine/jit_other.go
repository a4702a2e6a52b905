//go:build !(linux && amd64)

package machine

import (
	"io"
	"sync/atomic"
)

// Hosts other than linux/amd64 have no translator: every block is empty
// and runFast interprets every instruction.

type jitCache struct {
	blocks, flushes, entries atomic.Uint64
	bytes                    atomic.Int64
}

func newJITCache(bool, io.Writer) *jitCache { return &jitCache{} }

func (*jitCache) enabled() bool             { return false }
func (*jitCache) disable()                  {}
func (*jitCache) free()                     {}
func (*jitCache) size() int                 { return 0 }
func (*jitCache) shrink(int, int)           {}
func (*jitCache) add(*CPU, jitCode) uintptr { return 0 }
func (*jitCache) link(uintptr, uintptr)     {}
func translatable(*inst, uint8) bool        { return false }
func jitEnter(uintptr, *CPU, uint64) (uint64, uint64, uintptr) {
	panic("machine: no translated code on this host")
}
func (*CPU) emitBlock([]*inst, uint64) jitCode { return jitCode{} }
func registerFence() bool                      { return true }
func fenceAll()                                {}
