package kprobes

import "github.com/kpemu/kpemu/kernel"

// slotSize is MAX_INSN_SIZE (2) instructions: the stepped instruction and
// BRK #0x006.
const slotSize = 8

// slotAllocator hands out out-of-line slots from the image's reserved
// area (Linux's get_insn_slot). It is used under kp.mu, and with the
// machine stopped but for allocFresh and free.
type slotAllocator struct {
	area  kernel.Range
	next  uint64   // first never-used slot, relative to area.Start
	freed []uint64 // returned slots, oldest first
}

// alloc returns a free slot. A returned slot is reused only when no vCPU
// is in the middle of stepping through it (its kcb still points there).
func (s *slotAllocator) alloc(kcbs []kprobeCtlblk) (uint64, bool) {
	if a, ok := s.allocFresh(); ok {
		return a, true
	}
	for i, a := range s.freed {
		busy := false
		for _, k := range kcbs {
			if (k.cur != nil && k.cur.slot == a) || (k.prev.cur != nil && k.prev.cur.slot == a) {
				busy = true
			}
		}
		if !busy {
			s.freed = append(s.freed[:i:i], s.freed[i+1:]...)
			return a, true
		}
	}
	return 0, false
}

// allocFresh returns a never-used slot, which no vCPU can be stepping
// through, so that it needs no look at them (nor a stopped machine).
func (s *slotAllocator) allocFresh() (uint64, bool) {
	if s.area.Start+s.next+slotSize <= s.area.End {
		a := s.area.Start + s.next
		s.next += slotSize
		return a, true
	}
	return 0, false
}

func (s *slotAllocator) free(a uint64) { s.freed = append(s.freed, a) }
