//go:build linux && amd64

package machine

import (
	"encoding/binary"
	"fmt"
	"io"
	"syscall"
)

// jitCache is a machine's store of translated code: executable chunks
// filled in order. When it reaches its limit it is emptied at once, and
// every block dropped.
type jitCache struct {
	chunks [][]byte
	used   int  // bytes used of the last chunk
	off    bool // no translation: Config.Interpret, or mapping failed

	chunk, limit int // bytes per mapping, and in all (tests make them small)

	blocks  uint64 // blocks translated
	flushes uint64 // times the cache was emptied
	entries uint64 // runFast's entries into translated code

	perfMap io.Writer // Config.PerfMap

	// emit is reused for every block: the kernel translates thousands
	// a second (its code pages are stored to and dropped), and a fresh
	// emitter's buffers each time were garbage for the GC.
	emit emitter
}

func newJITCache(interpret bool, perfMap io.Writer) *jitCache {
	return &jitCache{off: interpret, chunk: 1 << 20, limit: 16 << 20, perfMap: perfMap}
}

// add copies code into the cache and returns its address, or 0 if it
// cannot (the block is then left to the interpreter; if mapping failed,
// every block from now on). It is called between blocks of m's only
// running CPU: a full cache can be emptied.
func (j *jitCache) add(m *Machine, jc jitCode) uintptr {
	code := jc.code
	if j.off || len(code) > j.chunk {
		return 0
	}
	if len(j.chunks) == 0 || j.used+len(code) > j.chunk {
		if len(j.chunks)*j.chunk >= j.limit {
			j.free()
			j.flushes++
			m.flushJumps()
			for i := range m.code {
				if p := m.code[i].Load(); p != nil {
					p.blocks = nil
				}
			}
		}
		mem, err := syscall.Mmap(-1, 0, j.chunk, syscall.PROT_READ|syscall.PROT_WRITE|syscall.PROT_EXEC, syscall.MAP_PRIVATE|syscall.MAP_ANON)
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
	j.blocks++
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
		_ = syscall.Munmap(mem)
	}
	j.chunks, j.used = nil, 0
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
