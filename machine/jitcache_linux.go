//go:build linux && amd64

package machine

import (
	"encoding/binary"
	"syscall"
)

// jitCache is a machine's store of translated code: executable chunks
// filled in order. When it reaches its limit it is emptied at once, and
// every block dropped.
type jitCache struct {
	chunks [][]byte
	used   int  // bytes used of the last chunk
	off    bool // no translation: Config.Interpret, or mapping failed
}

const (
	jitChunk = 1 << 20
	jitLimit = 32 << 20
)

func newJITCache(interpret bool) *jitCache { return &jitCache{off: interpret} }

// add copies code into the cache and returns its address; 0 if there is
// no room (translation is then off for good). It is called between blocks
// of m's only running CPU: a full cache can be emptied.
func (j *jitCache) add(m *Machine, jc jitCode) uintptr {
	code := jc.code
	if j.off || len(code) > jitChunk {
		return 0
	}
	if len(j.chunks) == 0 || j.used+len(code) > jitChunk {
		if len(j.chunks)*jitChunk >= jitLimit {
			j.free()
			for i := range m.code {
				if p := m.code[i].Load(); p != nil {
					p.blocks = nil
				}
			}
		}
		mem, err := syscall.Mmap(-1, 0, jitChunk, syscall.PROT_READ|syscall.PROT_WRITE|syscall.PROT_EXEC, syscall.MAP_PRIVATE|syscall.MAP_ANON)
		if err != nil {
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

// enabled reports whether blocks may be translated.
func (j *jitCache) enabled() bool { return !j.off }
