//go:build linux && amd64

package machine

import (
	"encoding/binary"
	"fmt"
	"io"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// jitCache is a store of translated code: executable chunks filled in
// order. When it reaches its limit it is emptied at once, and every block
// in it dropped. Only the goroutine running its CPUs touches it; the
// counters are atomic for Stats, and only that goroutine writes them.
type jitCache struct {
	chunks [][]byte
	used   int  // bytes used of the last chunk
	off    bool // no translation: Config.Interpret, or mapping failed

	chunk, limit int // bytes per mapping, and in all (tests make them small)

	blocks  atomic.Uint64 // blocks translated
	flushes atomic.Uint64 // times the cache was emptied
	entries atomic.Uint64 // runFast's entries into translated code
	bytes   atomic.Int64  // bytes of code held

	perfMap io.Writer // Config.PerfMap

	// emit is reused for every block: the kernel translates thousands
	// a second (its code pages are stored to and dropped), and a fresh
	// emitter's buffers each time were garbage for the GC.
	emit emitter
}

func newJITCache(interpret bool, perfMap io.Writer) *jitCache {
	return &jitCache{off: interpret, chunk: hugePage, limit: 16 << 20, perfMap: perfMap}
}

// hugePage is the size of an x86-64 huge page: that of a chunk of the
// cache, mapped in one where the host allows it. The kernel's translated
// code is megabytes, run a block here and a block there; in small pages
// it missed the iTLB, and its workload ran about 4% slower.
const hugePage = 2 << 20

// mapCode maps size bytes of executable memory, aligned to hugePage (a
// huge page must be) and advised to be huge pages. Without transparent
// huge pages on the host it is small pages, which work the same.
func mapCode(size int) ([]byte, error) {
	// Over-map by a huge page and unmap the unaligned ends: the kernel
	// aligns large anonymous mappings only since Linux 6.7.
	p, err := unix.MmapPtr(-1, 0, nil, uintptr(size+hugePage), unix.PROT_READ|unix.PROT_WRITE|unix.PROT_EXEC, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return nil, err
	}
	head := -uintptr(p) & (hugePage - 1)
	if head != 0 {
		_ = unix.MunmapPtr(p, head)
	}
	_ = unix.MunmapPtr(unsafe.Add(p, head+uintptr(size)), hugePage-head) // (never empty)
	mem := unsafe.Slice((*byte)(unsafe.Add(p, head)), size)
	_ = unix.Madvise(mem, unix.MADV_HUGEPAGE) // only a hint
	return mem, nil
}

// add copies code into the cache of c and returns its address, or 0 if
// it cannot (the block is then left to the interpreter; if mapping
// failed, every block from now on). It is called between blocks, with no
// CPU translating into this cache in its translated code: a full cache
// can be emptied.
func (j *jitCache) add(c *CPU, jc jitCode) uintptr {
	m := c.m
	code := jc.code
	if j.off || len(code) > j.chunk {
		return 0
	}
	if len(j.chunks) == 0 || j.used+len(code) > j.chunk {
		if len(j.chunks)*j.chunk >= j.limit {
			j.free()
			j.flushes.Store(j.flushes.Load() + 1)
			// Drop every block of the cache: its owner's, on every page.
			// Its CPUs fetch their pages afresh (pageBlocks), the page
			// running now too: it may be one no longer in m.code
			// (parallel mode withdraws pages).
			for _, o := range m.cpus {
				if o.jit == j {
					o.flushJumps()
					o.pageVA = noPage
				}
			}
			for i := range m.code {
				if p := m.code[i].Load(); p != nil {
					p.blocks[c.jitOwner] = nil
				}
			}
			c.pageBlocks = nil
		}
		mem, err := mapCode(j.chunk)
		if err != nil {
			// Executable memory refused (a hardened host): interpret.
			m.log.Warn("machine: block translation off: no executable memory", "err", err)
			j.off = true
			return 0
		}
		j.chunks = append(j.chunks, mem)
		j.used = 0
	}
	mem := j.chunks[len(j.chunks)-1]
	at := j.used
	copy(mem[at:], code)
	base := addrOf(mem[at:])
	for _, s := range jc.slots {
		binary.LittleEndian.PutUint64(mem[at+s[0]:], uint64(base)+uint64(s[1]))
	}
	// 16-byte aligned entries, as compilers align branch targets.
	j.used = (at + len(code) + 15) &^ 15
	j.bytes.Store(int64(j.size()))
	j.blocks.Store(j.blocks.Load() + 1)
	if j.perfMap != nil {
		fmt.Fprintf(j.perfMap, "%x %x kpemu@%#x+%d\n", base, len(code), jc.pc, jc.n)
	}
	return base
}

// link points the chaining slot at address slot to target.
func (j *jitCache) link(slot, target uintptr) {
	for _, mem := range j.chunks {
		if base := addrOf(mem); slot >= base && slot < base+uintptr(len(mem)) {
			binary.LittleEndian.PutUint64(mem[slot-base:], uint64(target))
			return
		}
	}
}

// free unmaps every chunk. Nothing may be running translated code.
func (j *jitCache) free() {
	for _, mem := range j.chunks {
		_ = unix.MunmapPtr(unsafe.Pointer(unsafe.SliceData(mem)), uintptr(len(mem)))
	}
	j.chunks, j.used = nil, 0
	j.bytes.Store(0)
}

// shrink sets the mapping size and limit, so that tests can fill the
// cache.
func (j *jitCache) shrink(chunk, limit int) { j.chunk, j.limit = chunk, limit }

// size returns the bytes of code the cache holds.
func (j *jitCache) size() int {
	if len(j.chunks) == 0 {
		return 0
	}
	return (len(j.chunks)-1)*j.chunk + j.used
}

// enabled reports whether blocks may be translated.
func (j *jitCache) enabled() bool { return !j.off }

// disable turns translation off before anything was translated.
func (j *jitCache) disable() { j.off = true }

// Linux's membarrier(2) on amd64: a full barrier on every thread of the
// process that is running, by IPI (the "expedited" kind, which needs the
// process registered once).
const (
	sysMembarrier                      = 324
	membarrierPrivateExpedited         = 1 << 3
	membarrierRegisterPrivateExpedited = 1 << 4
)

// registerFence readies fenceAll; false if the host kernel lacks it.
func registerFence() bool {
	_, _, errno := syscall.Syscall(sysMembarrier, membarrierRegisterPrivateExpedited, 0, 0)
	return errno == 0
}

// fenceAll runs a memory barrier on every thread of the process that is
// running. It cannot fail once registerFence succeeded.
func fenceAll() {
	_, _, _ = syscall.Syscall(sysMembarrier, membarrierPrivateExpedited, 0, 0)
}
