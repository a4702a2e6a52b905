package machine

import (
	"sort"
	"sync"

	"golang.org/x/arch/arm64/arm64asm"
)

// UndefinedCount is how many undefined-instruction exceptions one
// mnemonic caused.
type UndefinedCount struct {
	Mnemonic string // arm64asm's opcode name, "unallocated", or "unknown"
	Count    uint64
}

// undefStats counts undefined instructions by mnemonic. It is touched only
// on the undefined-instruction path, so one mutex (which also serialises
// the calls into arm64asm) costs the hot path nothing.
type undefStats struct {
	mu     sync.Mutex
	byName map[string]uint64
}

// add counts one undefined instruction word; known is false when the word
// could not be read (it is then counted as "unknown").
func (s *undefStats) add(w uint32, known bool) {
	name := "unknown"
	s.mu.Lock()
	defer s.mu.Unlock()
	if known {
		name = undefName(w)
	}
	if s.byName == nil {
		s.byName = make(map[string]uint64)
	}
	s.byName[name]++
}

// undefName names an instruction word by arm64asm's decoder, which knows
// the encodings the machine does not implement; words it rejects are
// "unallocated".
func undefName(w uint32) string {
	in, err := arm64asm.Decode([]byte{byte(w), byte(w >> 8), byte(w >> 16), byte(w >> 24)})
	if err != nil {
		return "unallocated"
	}
	return in.Op.String()
}

// UndefinedStats returns the undefined-instruction exceptions taken so
// far, per mnemonic, most frequent first (ties by name). Safe from any
// goroutine.
func (m *Machine) UndefinedStats() []UndefinedCount {
	s := &m.undefs
	s.mu.Lock()
	out := make([]UndefinedCount, 0, len(s.byName))
	for k, v := range s.byName {
		out = append(out, UndefinedCount{k, v})
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Mnemonic < out[j].Mnemonic
	})
	return out
}

// undefinedWord takes the undefined-instruction exception for the word w
// at pc.
func (c *CPU) undefinedWord(pc uint64, w uint32) {
	c.m.undefs.add(w, true)
	c.takeUndefined(pc)
}

// undefined takes the undefined-instruction exception for the instruction
// at pc, an encoding that is undefined in the current state (at EL0, say).
func (c *CPU) undefined(pc uint64) {
	w, ok := c.insnWord(pc)
	c.m.undefs.add(w, ok)
	c.takeUndefined(pc)
}

// insnWord reads the instruction at pc from the page being executed.
func (c *CPU) insnWord(pc uint64) (uint32, bool) {
	if c.page == nil || pc&^(PageSize-1) != c.pageVA {
		return 0, false
	}
	off := c.pagePA - RAMBase + pc&(PageSize-1)
	if off+4 > uint64(len(c.m.ram)) {
		return 0, false
	}
	return uint32(c.m.ramLoad(off, 2)), true
}
