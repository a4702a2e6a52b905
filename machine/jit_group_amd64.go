//go:build linux

package machine

import "unsafe"

// Accesses that share one micro-TLB check.
//
// Kernel code touches the same few bytes again and again within a block:
// a prologue's STP and the epilogue's LDP of one frame, the LDR and STR of
// a counter. Each access checks the micro-TLB (about ten x86 instructions
// and a branch) although, within a block, nothing changes the micro-TLB
// between them: it changes only outside translated code, and an exit or a
// bail ends the block's run.
//
// So the accesses of a block through one base register, while nothing
// else writes that register, form a group: its first access, the leader,
// checks once the page of every byte the group touches (relative to the
// base at the leader: the accesses' own writebacks, and ADD or SUB of a
// constant, move it by a known amount), against the store tag if any of
// them stores, and leaves the entry's host in DX; the others, the
// members, use it from there, or, after an instruction whose code uses
// DX (keepsHost), reload it from CPU.pageHost, where the leader saves it
// only then (findSaves). If the group's bytes span two pages, or one of
// them is not mapped as it needs, the leader bails and the interpreter
// goes on; the members never bail for the micro-TLB. Likewise the leader of a group
// that stores snoops the other CPUs' exclusive monitors for all of its
// bytes, and its stores need not.
//
// The counting emission finds the groups (groupAccess, groupWrote,
// closeGroups) and leaves their plan for the second, which emits them.
// Only in deterministic mode with the MMU on: a parallel-mode store checks
// for code after it lands, and with the MMU off there is no micro-TLB.

// maxGroupSpan bounds the bytes one check covers: the wider, the more
// often a group's bytes cross a page (about span/4096 of the runs of an
// unaligned one), which makes its leader bail.
const maxGroupSpan = 128

// offPageHost is the offset in CPU of the slots leaders save hosts in.
const offPageHost = int32(unsafe.Offsetof(CPU{}.pageHost))

// noBase marks an access whose address is not a base register plus a
// constant (a register offset, a literal): it takes no part in groups.
const noBase = 0xff

// groupRole is what an access is in its group, in the plan.
type groupRole uint8

const (
	roleAlone  groupRole = iota // checks for itself
	roleLeader                  // checks for its group, saves the host
	roleMember                  // reuses its leader's check
)

// groupPlan is, per access of the block (by instruction), its role, its
// group's save slot and, for a leader, the bytes its check covers
// relative to its own address.
type groupPlan struct {
	role   [maxBlock]groupRole
	slot   [maxBlock]uint8
	lo, hi [maxBlock]int32
	write  [maxBlock]bool
	// access is whether the instruction accesses memory through
	// accessAt; save, whether a leader must save its host for a member
	// that finds DX changed (findSaves).
	access, save [maxBlock]bool
}

// findSaves sets plan.save for the leaders one of whose members will
// not find the host in DX, as accessAt will emit them (emitter.hostIn).
func (p *groupPlan) findSaves(insts []*inst) {
	var leader [maxGroups]int
	hostIn := uint8(0)
	for k := range insts {
		if k > 0 && !keepsHost(insts[k-1].op) {
			hostIn = 0
		}
		if !p.access[k] {
			continue
		}
		switch slot := p.slot[k]; p.role[k] {
		case roleLeader:
			leader[slot], hostIn = k, slot+1
		case roleMember:
			if hostIn != slot+1 {
				p.save[leader[slot]] = true
			}
			hostIn = slot + 1
		default:
			hostIn = 0
		}
	}
}

// openGroup is a group the counting emission may still add to.
type openGroup struct {
	used   bool
	base   uint8
	leader int   // the leader's instruction
	at     int32 // the leader's address less the base's value then
	off    int32 // the base's value now less its value at the leader
	lo, hi int32 // the bytes touched, relative to the base at the leader
}

// grouping reports whether this block groups accesses.
func grouping(c *CPU) bool { return c.xlate && !c.par }

// groupAccess returns, emitting, the plan's role and slot for the access
// of instruction k at base+disp of span bytes; counting, it adds the
// access to its base's open group or opens one.
func (e *emitter) groupAccess(k int, base uint8, disp int32, span int, write bool) (groupRole, uint8) {
	if !e.counting {
		return e.plan.role[k], e.plan.slot[k]
	}
	e.plan.access[k] = true
	if base == noBase {
		return roleAlone, 0
	}
	for i := range e.open {
		g := &e.open[i]
		if !g.used || g.base != base {
			continue
		}
		lo := g.off + disp
		hi := lo + int32(span)
		if nlo, nhi := min(g.lo, lo), max(g.hi, hi); nhi-nlo <= maxGroupSpan {
			g.lo, g.hi = nlo, nhi
			l := g.leader
			e.plan.role[l], e.plan.role[k] = roleLeader, roleMember
			e.plan.slot[k] = uint8(i)
			e.plan.lo[l], e.plan.hi[l] = g.lo-g.at, g.hi-g.at
			e.plan.write[l] = e.plan.write[l] || write
			return roleMember, uint8(i)
		}
		g.used = false // too wide: this access leads a new group
		break
	}
	e.plan.role[k] = roleAlone
	for i := range e.open {
		if g := &e.open[i]; !g.used {
			*g = openGroup{used: true, base: base, leader: k, at: disp, lo: disp, hi: disp + int32(span)}
			e.plan.slot[k] = uint8(i)
			e.plan.lo[k], e.plan.hi[k], e.plan.write[k] = 0, int32(span), write
			break
		}
	}
	return roleAlone, 0
}

// groupMoved notes that an access's writeback, or an ADD or SUB of a
// constant, moved base by imm: its group goes on, relative to the base's
// new value.
func (e *emitter) groupMoved(base uint8, imm int32) {
	for i := range e.open {
		if g := &e.open[i]; g.used && g.base == base {
			g.off += imm
		}
	}
}

// groupWrote closes the group of base s, which something other than an
// access's writeback wrote.
func (e *emitter) groupWrote(s uint8) {
	for i := range e.open {
		if g := &e.open[i]; g.used && g.base == s {
			g.used = false
		}
	}
}

// closeGroups closes every group, before an instruction after which
// the micro-TLB may differ or an access needs its own check.
func (e *emitter) closeGroups() {
	for i := range e.open {
		e.open[i].used = false
	}
}

// keepsGroups reports whether the open groups may go on past in. No
// translated instruction changes the micro-TLB; those that take or
// return from an exception, which may change the EL, end the groups all
// the same.
func keepsGroups(in *inst) bool { return in.op != opBRK && in.op != opERET }

// groupCheck emits the leader's check, instead of access's own: the
// bytes [lo, hi) from the access's address in AX (tagCheck). It leaves
// the entry's host in DX and, if a member will need it there
// (plan.save), in save slot slot: a store on the hottest path that most
// groups' members, which find it in DX, never read. Clobbers CX.
func (e *emitter) groupCheck(c *CPU, k int, lo, hi int32, write bool, slot uint8) {
	entry := e.tagCheck(c, k, lo, hi, write)
	entry.disp = offUTLB + offHost
	e.opM(true, []byte{0x8b}, rDX, entry) // mov rdx, host
	if e.plan.save[k] {
		e.opM(true, []byte{0x89}, rDX, field(pageHostAt(slot))) // mov [pageHost+8*slot], rdx
	}
}

// pageHostAt is the offset in CPU of save slot slot.
func pageHostAt(slot uint8) int32 { return offPageHost + 8*int32(slot) }

// accessAt is access (not for a RAM offset) for an access at guest
// register base plus disp, or noBase: it checks for the access's group,
// or reuses its group's check.
func (e *emitter) accessAt(c *CPU, k int, base uint8, disp int32, span int, write bool) mem {
	if !grouping(c) {
		return e.access(c, k, span, write, false)
	}
	switch role, slot := e.groupAccess(k, base, disp, span, write); role {
	case roleLeader:
		lo, hi, stores := e.plan.lo[k], e.plan.hi[k], e.plan.write[k]
		e.groupCheck(c, k, lo, hi, stores, slot)
		e.hostIn = slot + 1
		if stores {
			// For every store of the group: no other CPU's monitor can
			// change before they are done, and this one's is not snooped.
			e.snoop(c.m, k, lo, hi, true)
		}
	case roleMember:
		if e.hostIn != slot+1 {
			e.opM(true, []byte{0x8b}, rDX, field(pageHostAt(slot))) // mov rdx, [pageHost+8*slot]
			e.hostIn = slot + 1
		}
	default:
		e.hostIn = 0
		return e.access(c, k, span, write, false)
	}
	return mem{base: rDX, index: rAX, scale: 1}
}

// keepsHost reports whether the translation of an instruction of op
// leaves DX as it found it, or, for the accesses through accessAt, as
// accessAt said (emitter.hostIn). Only those, and the cheapest moves
// between accesses: reloading the host after any other costs a load.
// (A snoop's out-of-line code puts DX back.)
func keepsHost(op opcode) bool {
	switch op {
	case opNOP, opMOVr, opMOVi, opMOVK, opADR, opADRP, opADDi, opSUBi,
		opLDRo, opSTRo, opLDP, opSTP, opLDRpre, opSTRpre, opLDRpost, opSTRpost:
		return true
	}
	return false
}
