//go:build linux

package machine

import (
	"encoding/binary"
	"unsafe"
)

// The x86-64 translator of blocks (jit.go).
//
// Translated code runs with DI = the *CPU. Each instruction loads its
// operands, computes in AX, BX, CX, DX, SI and R8/R9, and stores its
// result. SP, X30 and X29 live in R15, R14 and R13 in all translated
// code (pinSP): jitEnter loads them and stores them back. A block keeps
// the other guest registers it uses most in R11-R12 (regCache): loaded at
// the block's entry, written back to c.r at each of its exits. Every
// other guest register lives in c.r. So whenever the code returns to
// jitEnter (at its end, or stopping before an instruction, a "bail", for
// runFast to go on with the interpreter) the CPU struct is exactly as the
// interpreter would leave it.

// jitEnter runs translated code at code with DI = c and R10 = left, the
// instructions it may retire (jit_amd64.s). It returns what is left, the
// exit flags, and the chaining slot the code left through (or 0).
//
//go:noescape
func jitEnter(code uintptr, c *CPU, left uint64) (rest, flags uint64, slot uintptr)

// Offsets of the CPU fields translated code touches.
const (
	offR    = int32(unsafe.Offsetof(CPU{}.r))
	offPC   = int32(unsafe.Offsetof(CPU{}.pc))
	offNZCV = int32(unsafe.Offsetof(CPU{}.nzcvBits))

	offFlagBits = int32(unsafe.Offsetof(CPU{}.flagBits))
	flagRow     = int32(unsafe.Sizeof(CPU{}.flagBits[0]))
	offUTLB     = int32(unsafe.Offsetof(CPU{}.utlb))
	offRTag     = int32(unsafe.Offsetof(utlbEntry{}.rtag))
	offWTag     = int32(unsafe.Offsetof(utlbEntry{}.wtag))
	offOff      = int32(unsafe.Offsetof(utlbEntry{}.off))
	offHost     = int32(unsafe.Offsetof(utlbEntry{}.host))
	offIRQ      = int32(unsafe.Offsetof(CPU{}.lines))
	offCodeStr  = int32(unsafe.Offsetof(CPU{}.codeStore))
	offBudget   = int32(unsafe.Offsetof(CPU{}.runBudget))

	offExcValid = int32(unsafe.Offsetof(CPU{}.excValid))
	offExcAddr  = int32(unsafe.Offsetof(CPU{}.excAddr))
	offExcSize  = int32(unsafe.Offsetof(CPU{}.excSize))
	offExcPA    = int32(unsafe.Offsetof(CPU{}.excPA))
	offExcVal   = int32(unsafe.Offsetof(CPU{}.excVal))

	offDAIF   = int32(unsafe.Offsetof(CPU{}.daif))
	offSS     = int32(unsafe.Offsetof(CPU{}.ss))
	offIL     = int32(unsafe.Offsetof(CPU{}.il))
	offSPSel  = int32(unsafe.Offsetof(CPU{}.spsel))
	offSPEL0  = int32(unsafe.Offsetof(CPU{}.spEL0))
	offSPEL1  = int32(unsafe.Offsetof(CPU{}.spEL1))
	offEL     = int32(unsafe.Offsetof(CPU{}.el))
	offPageVA = int32(unsafe.Offsetof(CPU{}.pageVA))
	offIndex  = int32(unsafe.Offsetof(CPU{}.index))
	offSys    = int32(unsafe.Offsetof(CPU{}.sys))
	offJumps  = int32(unsafe.Offsetof(CPU{}.jumps) + unsafe.Offsetof(jumpCache{}.tables))
	offGen    = int32(unsafe.Offsetof(CPU{}.jumps) + unsafe.Offsetof(jumpCache{}.gen))
)

// field returns the operand of the CPU field at offset disp.
func field(disp int32) mem { return mem{base: rDI, index: noIndex, disp: disp} }

// x86-64 registers (their encoding numbers) and condition codes.
const (
	rAX = 0
	rCX = 1
	rDX = 2
	rBX = 3
	rSI = 6
	rDI = 7
	r8  = 8
	r9  = 9
	r10 = 10 // the instructions left in the budget
	r11 = 11 // R11 up: guest registers a block caches (regCache), then the pinned ones

	noIndex = -1

	ccO  = 0x0
	ccB  = 0x2 // CF set
	ccAE = 0x3 // CF clear
	ccE  = 0x4
	ccNE = 0x5
	ccBE = 0x6
	ccA  = 0x7
	ccS  = 0x8
)

// Group-1 ALU operations: the /digit of opcode 81 and, times 8 plus 1,
// the "r/m, reg" opcode.
const (
	aluADD = 0
	aluOR  = 1
	aluAND = 4
	aluSUB = 5
	aluXOR = 6
	aluCMP = 7
)

// shiftDigit returns the /digit of opcodes C1 and D3 (x86 shifts and
// rotates) for an A64 shift type (LSL, LSR, ASR, ROR).
func shiftDigit(typ uint8) byte {
	switch typ & 3 {
	case 1:
		return 5 // shr
	case 2:
		return 7 // sar
	case 3:
		return 1 // ror
	}
	return 4 // shl
}

// mem is an x86 memory operand: base + index*scale + disp.
type mem struct {
	base, index int
	scale       byte
	disp        int32
}

// plus returns m displaced by d more bytes.
func (m mem) plus(d int32) mem { m.disp += d; return m }

// reg returns the operand of guest register slot s in c.r.
func reg(s uint8) mem { return mem{base: rDI, index: noIndex, disp: offR + 8*int32(s)} }

// regCache is how many guest registers a block may keep in host
// registers, R11 up; the pinned ones (pinSP) come after them.
const regCache = 2

// The guest registers pinned to host registers in all translated code
// (jit_amd64.s has their slots): jitEnter loads them from c.r and stores
// them back when the code returns, so that no block loads them at its
// entry or writes them back at its exits. They are what the kernel's
// every function touches (its prologue and epilogue: STP x29, x30, [sp,
// #-16]!, LDP, RET), and a call crosses blocks twice, each crossing a
// write-back and a load of all three when blocks cached them. Kernel
// workload +5-10% against five cached per block; CoreMark, whose hot
// loops keep their values in other registers, the same.
const (
	pinSP  = r11 + regCache + 2 // R15: SP
	pinX30 = r11 + regCache + 1 // R14: X30, the link register
	pinX29 = r11 + regCache     // R13: X29, the frame pointer
)

// emitter assembles one block.
type emitter struct {
	b  []byte
	pc uint64 // of the block's first instruction
	// host is the host register that holds guest register slot s in
	// this block, or 0 (AX, never a cache register) if it lives in c.r.
	host [regSink + 1]uint8
	// uses counts, in a block's first emission (counting), the accesses
	// to each slot, from which the second picks the slots to cache.
	uses     [regSink + 1]int
	counting bool
	// writes holds bit s if the block may write slot s, entry if it may
	// read s before writing it, and loops whether it branches back to its
	// own start: all three found counting.
	writes, entry uint64
	loops         bool
	loop          int // where the loop goes back to: the body after the loads
	// written holds bit s once the code so far may have changed cached
	// slot s: what an exit writes back.
	written uint64
	bails   []bailRef
	stubs   []bailRef // the bail exits emitted: where, for which k and written
	slots   [][2]int  // jitCode.slots
	links   []linkRef // LEAs that must address a chaining slot
	irq     []int     // rel32s of jumps to the exit for a pending interrupt
	cold    []coldRef // code out of line, emitted after the body
	// flagsAt is where the last flag setter's code ends, and flagsAfter
	// what set its x86 flags (see flagsFor).
	flagsAt, flagsAfter int
	// jumps is the offset in CPU of the jump cache table (its EL's) the
	// block's branches look up, or 0 if they do not.
	jumps int32
	// spAligned: the code so far checked that SP is 16-byte aligned,
	// and moved it by multiples of 16 since, so an access through SP
	// needs no check again (checkSP).
	spAligned bool
	// The groups of accesses that share a micro-TLB check
	// (jit_group_amd64.go): counting finds the plan, with the groups
	// it may still add to in open; the second emission follows it.
	plan       groupPlan
	open       [maxGroups]openGroup
	movingBase bool // a base register's move by a constant is being stored (stBase, emitAddSubImm)
	// hostIn is 1 + the save slot of the group whose host DX holds, or
	// 0: a member right after its leader or another member (or after
	// instructions that leave DX alone, keepsHost) uses DX as it is.
	hostIn uint8
	// n is the block's length: a conditional branch before its last
	// instruction goes on in the block when not taken (jit.go's
	// translate1), and a loop's next iteration must fit all of it.
	n int
}

// bailRef is a rel32 at b[at:] that must jump to the exit before
// instruction k, which writes back the cached slots in written.
type bailRef struct {
	at, k   int
	written uint64
}

// coldRef is code emitted out of line, after the block's body: the
// rarely taken path of an instruction, kept out of the way of the
// common one (the instruction cache holds more of the kernel's code).
// The jump at b[at:] leads to it, and it jumps back to back. written is
// the emitter's at the jump, for the bails it may emit.
type coldRef struct {
	at, back int
	written  uint64
	emit     func()
}

// linkRef is the rel32 at b[at:] of a LEA of a chaining slot, on the exit
// of a taken branch or not, to target.
type linkRef struct {
	at     int
	taken  bool
	target uint64
	stub   int // its slot's first target, emitBlock's
}

// raw appends bytes as they are: opcodes, immediates.
func (e *emitter) raw(v ...byte) { e.b = append(e.b, v...) }

func (e *emitter) imm32(v int32) { e.b = binary.LittleEndian.AppendUint32(e.b, uint32(v)) }

func (e *emitter) rex(w bool, r, x, b int) {
	v := byte(0x40)
	if w {
		v |= 8
	}
	if r >= 8 {
		v |= 4
	}
	if x >= 8 {
		v |= 2
	}
	if b >= 8 {
		v |= 1
	}
	if v != 0x40 {
		e.b = append(e.b, v)
	}
}

// opM emits op with ModRM reg field r (a register or a /digit) and memory
// operand m, always with a 32-bit displacement.
func (e *emitter) opM(w bool, op []byte, r int, m mem) {
	e.rex(w, r, max(m.index, 0), m.base)
	e.b = append(e.b, op...)
	// The shortest displacement: none, 8 bits or 32. (Shorter code:
	// more of the kernel's fits the instruction cache.) A base of BP or
	// R13 without one would mean another mode.
	mod, disp := byte(0x80), 4
	switch {
	case m.disp == 0 && m.base&7 != 5:
		mod, disp = 0, 0
	case m.disp == int32(int8(m.disp)):
		mod, disp = 0x40, 1
	}
	if m.index == noIndex && m.base&7 != 4 {
		e.b = append(e.b, mod|byte(r&7)<<3|byte(m.base&7))
	} else {
		idx, ss := byte(4), byte(0)
		if m.index != noIndex {
			idx = byte(m.index & 7)
			for s := m.scale; s > 1; s >>= 1 {
				ss++
			}
		}
		e.b = append(e.b, mod|byte(r&7)<<3|4, ss<<6|idx<<3|byte(m.base&7))
	}
	switch disp {
	case 1:
		e.raw(byte(m.disp))
	case 4:
		e.imm32(m.disp)
	}
}

// opR emits op with ModRM reg field r and register operand rm.
func (e *emitter) opR(w bool, op []byte, r, rm int) {
	e.rex(w, r, 0, rm)
	e.b = append(e.b, op...)
	e.b = append(e.b, 0xc0|byte(r&7)<<3|byte(rm&7))
}

// ld loads guest register s into x (w false: its low 32 bits, zero-extended).
func (e *emitter) ld(x int, s uint8, w bool) {
	e.read(s)
	switch h := int(e.host[s]); {
	case h == 0:
		e.opM(w, []byte{0x8b}, x, reg(s))
	case h != x || !w:
		e.opR(w, []byte{0x8b}, x, h) // mov x, h
	}
}

// ldFor loads guest register s into x for an operation at width w that
// writes x next: if x is s's host register, there is nothing to do (a
// 32-bit operation clears the upper half itself).
func (e *emitter) ldFor(x int, s uint8, w bool) {
	if e.host[s] != 0 && int(e.host[s]) == x {
		e.read(s)
		return
	}
	e.ld(x, s, w)
}

// src returns a register holding guest register s, to read (at width w)
// before anything writes that register: s's host register if s is
// cached, else x, loaded.
func (e *emitter) src(s uint8, x int, w bool) int {
	if h := int(e.host[s]); h != 0 {
		e.read(s)
		return h
	}
	e.ld(x, s, w)
	return x
}

// into returns the register to compute guest register s's new value in,
// for st(s, ...): s's host register if s is cached, else x.
func (e *emitter) into(s uint8, x int) int {
	if h := int(e.host[s]); h != 0 {
		return h
	}
	return x
}

// st stores x into guest register s. Writes to the sink (XZR as a
// destination) are dropped: nothing reads it.
func (e *emitter) st(s uint8, x int) {
	e.use(s)
	switch h := int(e.host[s]); {
	case s == regSink:
	case h != 0:
		if h != x {
			e.opR(true, []byte{0x8b}, h, x) // mov h, x
		}
		e.wrote(s)
	default:
		e.opM(true, []byte{0x89}, x, reg(s))
		e.wrote(s)
	}
}

// use counts an access to slot s, when counting.
func (e *emitter) use(s uint8) {
	if e.counting && int(s) < len(e.uses) {
		e.uses[s]++
	}
}

// read counts a read of slot s, which, before any write to s, makes s a
// slot the block's entry must load if it caches s.
func (e *emitter) read(s uint8) {
	e.use(s)
	if e.writes&(1<<s) == 0 {
		e.entry |= 1 << s
	}
}

// wrote notes a write to slot s: to write back at exits, if s is cached.
func (e *emitter) wrote(s uint8) {
	if e.counting && !e.movingBase {
		e.groupWrote(s)
	}
	if s == regSP {
		e.spAligned = false
	}
	e.writes |= 1 << s
	if e.host[s] != 0 {
		e.written |= 1 << s
	}
}

// cacheRegs picks the slots to keep in host registers: the most used,
// of those used at least twice (a slot used once gains nothing from its
// load at the block's entry). XZR reads as zero and the sink is never
// read: neither is worth a register.
func (e *emitter) cacheRegs(uses *[regSink + 1]int) {
	for i := range regCache {
		best := -1
		for s, n := range uses {
			if s == regZR || s == regSink || e.host[s] != 0 || n < 2 {
				continue
			}
			if best < 0 || n > uses[best] {
				best = s
			}
		}
		if best < 0 {
			return
		}
		e.host[best] = uint8(r11 + i)
	}
}

// loadCache loads the cached slots the block may read before it writes
// them into their host registers. (An exit writes back only slots
// written by then: see written.)
func (e *emitter) loadCache() {
	for s, h := range e.host {
		if perBlock(h) && e.entry&(1<<s) != 0 {
			e.opM(true, []byte{0x8b}, int(h), reg(uint8(s)))
		}
	}
}

// writeBack stores the cached slots in set from their host registers.
func (e *emitter) writeBack(set uint64) {
	for s, h := range e.host {
		if perBlock(h) && set&(1<<s) != 0 {
			e.opM(true, []byte{0x89}, int(h), reg(uint8(s)))
		}
	}
}

// checkSP bails before instruction k, an access through SP, if SP is
// not 16-byte aligned (a misaligned SP may fault, SCTLR_EL1.SA: the
// interpreter decides), unless the code checked it already.
func (e *emitter) checkSP(k int) {
	if !e.spAligned {
		e.testSPAligned()
		e.bail(ccNE, k)
		e.spAligned = true
	}
}

// stBase writes SI, the written-back base address, to base register rn,
// which moved by imm: by a multiple of 16, SP stays as aligned as it was.
func (e *emitter) stBase(rn uint8, imm uint64) {
	aligned := e.spAligned && imm%16 == 0
	e.movingBase = true
	e.st(rn, rSI)
	e.movingBase = false
	if e.counting {
		e.groupMoved(rn, int32(imm))
	}
	if rn == regSP {
		e.spAligned = aligned
	}
}

// testSPAligned sets ZF if SP is 16-byte aligned.
func (e *emitter) testSPAligned() {
	e.read(regSP)
	if h := e.host[regSP]; h != 0 {
		e.opR(false, []byte{0xf6}, 0, int(h)) // test h8, 15
	} else {
		e.opM(false, []byte{0xf6}, 0, reg(regSP)) // test byte [sp], 15
	}
	e.raw(15)
}

// stPC stores x into c.pc.
func (e *emitter) stPC(x int) {
	e.opM(true, []byte{0x89}, x, field(offPC))
}

// movImm sets x to v in the shortest form.
func (e *emitter) movImm(x int, v uint64) {
	switch {
	case v <= 0xffffffff:
		e.rex(false, 0, 0, x)
		e.raw(0xb8 + byte(x&7))
		e.imm32(int32(uint32(v)))
	case int64(v) == int64(int32(v)):
		e.opR(true, []byte{0xc7}, 0, x)
		e.imm32(int32(v))
	default:
		e.rex(true, 0, 0, x)
		e.raw(0xb8 + byte(x&7))
		e.b = binary.LittleEndian.AppendUint64(e.b, v)
	}
}

// setReg sets guest register s to the constant v. Clobbers AX.
func (e *emitter) setReg(s uint8, v uint64) {
	switch h := int(e.host[s]); {
	case s == regSink:
	case h != 0:
		e.use(s)
		e.wrote(s)
		e.movImm(h, v)
	case int64(v) == int64(int32(v)):
		e.use(s)
		e.wrote(s)
		e.opM(true, []byte{0xc7}, 0, reg(s))
		e.imm32(int32(v))
	default:
		e.movImm(rAX, v)
		e.st(s, rAX)
	}
}

// alu emits "op dst, src" (a group-1 operation) at width w.
func (e *emitter) alu(op byte, w bool, dst, src int) { e.opR(w, []byte{op*8 + 1}, src, dst) }

// aluMem emits "op dst, [guest register s]" (a group-1 operation) at
// width w, for s not cached.
func (e *emitter) aluMem(op byte, w bool, dst int, s uint8) {
	e.read(s)
	e.opM(w, []byte{op*8 + 3}, dst, reg(s))
}

// aluImm emits "op dst, imm".
func (e *emitter) aluImm(op byte, w bool, dst int, imm int32) {
	if imm == int32(int8(imm)) {
		e.opR(w, []byte{0x83}, int(op), dst) // sign-extended imm8
		e.raw(byte(imm))
		return
	}
	e.opR(w, []byte{0x81}, int(op), dst)
	e.imm32(imm)
}

// aluConst emits "op dst, v", through CX when v does not fit an imm32.
func (e *emitter) aluConst(op byte, w bool, dst int, v uint64) {
	if !w {
		v = uint64(uint32(v))
		if int64(v) == int64(int32(v)) || v <= 0xffffffff {
			e.aluImm(op, false, dst, int32(uint32(v)))
			return
		}
	}
	if int64(v) == int64(int32(v)) {
		e.aluImm(op, w, dst, int32(v))
		return
	}
	e.movImm(rCX, v)
	e.alu(op, w, dst, rCX)
}

// shift emits a shift or rotate of x by n (A64 shift type typ).
func (e *emitter) shift(typ uint8, w bool, x int, n uint8) {
	if n == 0 {
		return
	}
	e.opR(w, []byte{0xc1}, int(shiftDigit(typ)), x)
	e.raw(n)
}

func (e *emitter) mov32(x int) { e.opR(false, []byte{0x89}, x, x) } // zero-extend x's low half

func (e *emitter) setcc(cc byte, x int) { e.opR(false, []byte{0x0f, 0x90 + cc}, 0, x) }

// bail jumps, if cc holds, to the exit before instruction k.
func (e *emitter) bail(cc byte, k int) {
	e.raw(0x0f, 0x80+cc)
	e.bails = append(e.bails, bailRef{at: len(e.b), k: k, written: e.written})
	e.imm32(0)
}

// jcc emits a forward conditional jump and returns where to patch it.
func (e *emitter) jcc(cc byte) int {
	e.raw(0x0f, 0x80+cc)
	e.imm32(0)
	return len(e.b)
}

// jmp emits a forward jump and returns where to patch it.
func (e *emitter) jmp() int {
	e.raw(0xe9)
	e.imm32(0)
	return len(e.b)
}

// outOfLine emits a jump if cc holds to the code fn emits, out of line
// (emitCold), which then jumps back to here.
func (e *emitter) outOfLine(cc byte, fn func()) {
	at := e.jcc(cc)
	e.cold = append(e.cold, coldRef{at: at, back: len(e.b), written: e.written, emit: fn})
	e.flagsAt = -1 // the cold code jumps back here
}

// emitCold emits the code outOfLine deferred.
func (e *emitter) emitCold() {
	written := e.written
	for i := 0; i < len(e.cold); i++ { // (fn may defer more)
		r := e.cold[i]
		e.here(r.at)
		e.written = r.written
		r.emit()
		e.raw(0xe9) // jmp back
		e.imm32(int32(r.back - (len(e.b) + 4)))
	}
	e.written = written
}

// here makes the jump returned by jcc or jmp land at the current position.
func (e *emitter) here(j int) {
	binary.LittleEndian.PutUint32(e.b[j-4:], uint32(len(e.b)-j))
	e.flagsAt = -1 // a jump lands here: the x86 flags may be any
}

// ret returns to jitEnter with flags and no chaining slot.
func (e *emitter) ret(flags uint32) {
	e.opR(true, []byte{0x8b}, rAX, r10) // mov rax, r10
	e.movImm(rBX, uint64(flags))
	e.opR(false, []byte{0x31}, rDX, rDX) // xor edx, edx
	e.raw(0xc3)
}

// leave ends the block, n instructions long, going on at target. A
// target on the block's page is reached by chaining: an indirect jump
// through a slot that first holds an exit to runFast and, once runFast
// has found or made the target's block, that block's chain entry.
// A taken branch exits instead while an interrupt is pending, so that
// runFast polls it exactly where the interpreter would.
//
// Only the ways out to runFast store target in c.pc: a block entered by
// chaining knows its own pc. (Stored on every exit, it was a 64-bit
// immediate and a store, 17 bytes, on the hottest paths of the code.)
func (e *emitter) leave(target uint64, taken bool, n int) {
	if taken && target == e.pc {
		e.loops = true
		if !e.counting {
			e.loopBack(n)
		}
	}
	e.writeBack(e.written)
	e.aluImm(aluSUB, true, r10, int32(n))
	flags := uint32(0)
	if taken {
		flags = jitTaken
	}
	if target&^(PageSize-1) != e.pc&^(PageSize-1) {
		e.movImm(rAX, target)
		if e.jumps != 0 {
			// runFast polls at every page crossing; so does the code.
			e.irqCheck()
			e.jumpConst(target)
		}
		e.stPC(rAX)
		e.ret(flags)
		return
	}
	if taken {
		e.irqCheckAt(target)
	}
	e.raw(0x48, 0x8d, 0x15) // lea rdx, [rip+slot]
	e.links = append(e.links, linkRef{at: len(e.b), taken: taken, target: target})
	e.imm32(0)
	e.raw(0xff, 0x22) // jmp [rdx]
}

// loopBack starts the exit of a block, n instructions long, that
// branches back to its own start: while the next iteration fits the
// budget and no interrupt line is up, it goes on at once, with the cached
// registers where they are; else it falls through to the exit leave
// emits next, as any taken branch's.
func (e *emitter) loopBack(n int) {
	e.aluImm(aluSUB, true, r10, int32(n))
	e.opM(false, []byte{0x83}, aluCMP, field(offIRQ)) // cmp dword [lines], 0
	e.raw(0)
	irq := e.jcc(ccNE)
	e.aluImm(aluCMP, true, r10, int32(e.n)) // the next iteration may run all of the block
	short := e.jcc(ccB)
	e.raw(0xe9) // jmp loop
	e.imm32(int32(e.loop - (len(e.b) + 4)))
	e.here(irq)
	e.here(short)
	e.aluImm(aluADD, true, r10, int32(n)) // leave takes them off
}

// jumpConst jumps to the block at target (in RAX) if the jump cache
// holds it, and else goes on. Clobbers CX.
func (e *emitter) jumpConst(target uint64) {
	e.jumpTag(rCX, e.jumps)
	e.jumpLookup(rCX, mem{base: rDI, index: noIndex, disp: e.jumps + int32(jumpSet(target))*jumpSetSize})
}

// jumpLookup jumps to the chain entry of the jump cache set at set if
// one of its ways holds tag, and else goes on: the first way inline,
// the second out of line, whose miss comes back to the inline miss.
func (e *emitter) jumpLookup(tag int, set mem) {
	e.opM(true, []byte{0x39}, tag, set) // cmp [way0.tag], tag
	e.outOfLine(ccNE, func() {
		way1 := set
		way1.disp += jumpEntrySize
		e.opM(true, []byte{0x39}, tag, way1) // cmp [way1.tag], tag
		miss := e.jcc(ccNE)
		way1.disp += 8
		e.opM(false, []byte{0xff}, 4, way1) // jmp [way1.chain]
		e.here(miss)
	})
	cold := &e.cold[len(e.cold)-1]
	way0 := set // (set stays for the out-of-line code)
	way0.disp += 8
	e.opM(false, []byte{0xff}, 4, way0) // jmp [way0.chain]
	cold.back = len(e.b)
}

// jumpReg jumps to the block at the pc in RAX if the jump cache table at
// offset table (jumpTable) holds it, and else goes on. Clobbers BX and CX.
func (e *emitter) jumpReg(table int32) {
	e.raw(0xa8, 3) // test al, 3: a misaligned pc faults, and matches no entry
	misaligned := e.jcc(ccNE)
	e.jumpTag(rBX, table)
	// ecx = jumpSet(rax) * jumpSetSize: pc bits [12:2] of the fold, at
	// bits [15:5]
	e.opR(false, []byte{0x89}, rAX, rCX) // mov ecx, eax
	e.shift(1, false, rCX, jumpSetBits)  // shr ecx, jumpSetBits
	e.alu(aluXOR, false, rCX, rAX)
	e.shift(0, false, rCX, 3)
	e.aluImm(aluAND, false, rCX, (jumpSets-1)*jumpSetSize)
	e.jumpLookup(rBX, mem{base: rDI, index: rCX, scale: 1, disp: table})
	e.here(misaligned)
}

// jumpTable returns the offset in CPU of EL el's jump cache table.
func jumpTable(el uint8) int32 { return offJumps + int32(el&1)*jumpSize*jumpEntrySize }

// jumpTag sets x to the tag in the jump cache table at offset table of
// the pc in RAX: pc ^ the table's gen.
func (e *emitter) jumpTag(x int, table int32) {
	el := (table - offJumps) / (jumpSize * jumpEntrySize)
	e.opM(true, []byte{0x8b}, x, field(offGen+8*el)) // mov x, [gen]
	e.alu(aluXOR, true, x, rAX)
}

// irqCheck jumps to the exit for a pending interrupt if an interrupt line
// is up and PSTATE does not mask it: when pollIRQ would take it. (A
// masked one, pending while the kernel runs with interrupts off, must
// not stop chaining.) AX holds the pc to go on at, which it stores in
// c.pc for that exit. Clobbers BX, CX.
func (e *emitter) irqCheck() { e.irqCheckPC(func() { e.stPC(rAX) }) }

// irqCheckAt is irqCheck with the pc to go on at a constant.
func (e *emitter) irqCheckAt(pc uint64) {
	e.irqCheckPC(func() {
		e.movImm(rAX, pc)
		e.stPC(rAX)
	})
}

// irqCheckPC is irqCheck, with setPC to store the pc out of line.
func (e *emitter) irqCheckPC(setPC func()) {
	e.opM(false, []byte{0x83}, aluCMP, field(offIRQ)) // cmp dword [lines], 0
	e.raw(0)
	e.outOfLine(ccNE, func() {
		setPC()
		// The lines PSTATE masks: I masks lineIRQ (bit 0), F lineFIQ (bit 1).
		e.opM(false, []byte{0x0f, 0xb6}, rCX, field(offDAIF)) // movzx ecx, byte [daif]
		e.opR(false, []byte{0x8b}, rBX, rCX)                  // mov ebx, ecx
		e.shift(1, false, rBX, 1)
		e.aluImm(aluAND, false, rBX, lineIRQ)
		e.aluImm(aluAND, false, rCX, 1)
		e.shift(0, false, rCX, 1) // lineFIQ
		e.alu(aluOR, false, rBX, rCX)
		e.opR(false, []byte{0xf7}, 2, rBX)             // not ebx
		e.opM(false, []byte{0x85}, rBX, field(offIRQ)) // test [lines], ebx
		e.raw(0x0f, 0x80+ccNE)
		e.irq = append(e.irq, len(e.b))
		e.imm32(0)
	})
}

// What set the x86 flags that storeNZCV turns into NZCV.
const (
	afterLogic = iota // AND, TST: C and V are 0
	afterAdd
	afterSub // A64's C is the inverse of x86's borrow
)

// flagsAfter returns what set the flags after the x86 operation op (ADD
// or SUB).
func flagsAfter(op byte) int {
	if op == aluSUB {
		return afterSub
	}
	return afterAdd
}

// storeNZCV stores NZCV (N<<3 | Z<<2 | C<<1 | V) from the x86 flags:
// LAHF's byte (SF, ZF, CF) and OF index CPU.flagBits. It leaves the x86
// flags as they were, for a B.cond right after it (flagsFor). Clobbers
// AX, CX.
func (e *emitter) storeNZCV(after int) {
	e.raw(0x9f)                              // lahf
	e.opR(false, []byte{0x0f, 0xb6}, rCX, 4) // movzx ecx, ah
	e.setcc(ccO, 5)                          // seto ch
	row := mem{base: rDI, index: rCX, scale: 1, disp: offFlagBits}
	if after == afterSub {
		row.disp += flagRow
	}
	e.opM(false, []byte{0x8a}, rAX, row) // mov al, [row+rcx]
	e.opM(false, []byte{0x88}, rAX, field(offNZCV))
	e.flagsAt, e.flagsAfter = len(e.b), after
}

// flagsFor returns the x86 condition code that tests the A64 condition
// cc on the x86 flags as the flag setter just emitted left them, if the
// code is right after it (no instruction or jump target in between)
// and one x86 condition says the same; else ok is false.
func (e *emitter) flagsFor(cc uint8) (x86 byte, ok bool) {
	if e.flagsAt != len(e.b) {
		return 0, false
	}
	// By A64 condition, EQ to LE: the x86 condition after a SUB (whose
	// CF is A64's C inverted), after an ADD, after an AND (C and V are
	// 0: the conditions on them are constants); 0xff: none.
	tab := [3][14]byte{
		afterSub:   {ccE, ccNE, ccAE, ccB, ccS, ccS + 1, ccO, ccO + 1, ccA, ccBE, 0xd, 0xc, 0xf, 0xe},
		afterAdd:   {ccE, ccNE, ccB, ccAE, ccS, ccS + 1, ccO, ccO + 1, 0xff, 0xff, 0xd, 0xc, 0xf, 0xe},
		afterLogic: {ccE, ccNE, 0xff, 0xff, ccS, ccS + 1, 0xff, 0xff, 0xff, 0xff, 0xd, 0xc, 0xf, 0xe},
	}
	if cc >= 14 || tab[e.flagsAfter][cc] == 0xff {
		return 0, false
	}
	return tab[e.flagsAfter][cc], true
}

// cond sets x86's CF to the A64 condition cc (not AL or NV), using BX
// and CX.
func (e *emitter) cond(cc uint8) {
	e.opM(false, []byte{0x0f, 0xb6}, rCX, field(offNZCV)) // movzx ecx, nzcv
	e.movImm(rBX, uint64(condTable[cc&15]))
	e.opR(false, []byte{0x0f, 0xa3}, rCX, rBX) // bt ebx, ecx
}

// extend applies an A64 register extend (UXTB..SXTX) and left shift to x.
func (e *emitter) extend(x int, option, amt uint8) {
	switch option {
	case 0:
		e.opR(false, []byte{0x0f, 0xb6}, x, x)
	case 1:
		e.opR(false, []byte{0x0f, 0xb7}, x, x)
	case 2:
		e.mov32(x)
	case 4:
		e.opR(true, []byte{0x0f, 0xbe}, x, x)
	case 5:
		e.opR(true, []byte{0x0f, 0xbf}, x, x)
	case 6:
		e.opR(true, []byte{0x63}, x, x)
	}
	e.shift(0, true, x, amt)
}

// Conditions of translation (a64.decode's jitif).

// jitMRSOK: the registers the kernel reads most: current (SP_EL0), the
// interrupt mask, the CPU number.
// NZCV, at any EL, and CurrentEL and SPSel too: the kretprobe trampoline
// builds a PSTATE from them at every return it catches. MDSCR_EL1 (the
// entry code's single-step check) and DCZID_EL0 (memset's): each split a
// block on most system calls. The counters (the scheduler's clock) in
// deterministic mode only (see translate1): parallel mode's follow the
// host clock.
func jitMRSOK(a *sysArgs, el uint8) bool {
	sr := SysReg(a.imm)
	return sr == NZCV || el == 1 && (sr == SP_EL0 || sr == DAIF || sr == MPIDR_EL1 || sr == CurrentEL || sr == SPSel ||
		sr == MDSCR_EL1 || sr == DCZID_EL0 || sr == CNTVCT_EL0 || sr == CNTPCT_EL0 || jitPlainSys(sr))
}

func jitMSROK(a *sysArgs, el uint8) bool {
	sr := SysReg(a.imm)
	return sr == NZCV || el == 1 && (sr == SP_EL0 || sr == DAIF || jitPlainSys(sr))
}

// jitPlainSys reports whether MRS and MSR of sr at EL1 only read and
// write c.sys[sr] (readSys's and writeSys's default), which translated
// code then does in place: the registers of the kernel's exception
// entry and return (ELR, SPSR, ESR, FAR), which every kprobe hit goes
// through twice, and the thread pointers. Interpreting each of them
// split the blocks of kernel_entry and ret_to_kernel.
func jitPlainSys(sr SysReg) bool {
	switch sr {
	case SPSR_EL1, ELR_EL1, ESR_EL1, FAR_EL1, TPIDR_EL1, TPIDR_EL0, TPIDRRO_EL0:
		return true
	}
	return false
}

func jitMSRiOK(a *pstateArgs, el uint8) bool {
	return el == 1 && (a.field() == pstateDAIFSet || a.field() == pstateDAIFClr)
}

// jitEL1: DC ZVA; BRK, an exception the kernel takes in the kernel
// (see emitBRK); ERET, which EL0 may not execute.
func jitEL1[T any](_ *T, el uint8) bool { return el == 1 }

// jitEL0: SVC, a system call (the kernel's own, rare, are left to the
// interpreter).
func jitEL0[T any](_ *T, el uint8) bool { return el == 0 }

// jitPairOK: pairs of W or X registers (not the 128-bit CASP-sized ones).
func jitPairOK(a *pairArgs, _ uint8) bool { return a.size() == 2 || a.size() == 3 }

// emitBlock translates insts (each translatable, the first at pc) into
// code laid out as: the chain entry (the budget check a chained jump
// needs), the body (where runFast enters), the exits, and the chaining
// slots, whose initial values jitCache.add fills in.
func (c *CPU) emitBlock(insts []*inst, pc uint64) jitCode {
	// The first emission only counts each guest register's accesses,
	// for the second to pick the ones it caches.
	e := &c.jit.emit
	e.reset(pc)
	e.counting = true
	e.body(c, insts)
	e.plan.findSaves(insts)
	uses, writes, entry, loops, plan := e.uses, e.writes, e.entry, e.loops, e.plan
	e.reset(pc)
	e.cacheRegs(&uses)
	e.entry, e.loops, e.plan = entry, loops, plan
	if loops {
		// Any exit may follow an earlier iteration's writes: each must
		// write back every cached slot the block writes, which the entry
		// must load then.
		e.written = writes
		e.entry |= writes
	}
	// Chain entry: runFast's "does all of the block fit" check.
	n := len(insts)
	e.opR(true, []byte{0x81}, aluCMP, r10)
	e.imm32(int32(n))
	short := e.jcc(ccB)
	body := len(e.b)
	e.body(c, insts)
	e.here(short)
	e.movImm(rAX, pc) // (a block entered by chaining: c.pc is another's)
	e.stPC(rAX)
	e.ret(0)
	e.emitCold()
	// One exit per instruction that may bail, and per set of registers
	// to write back: c.pc is that instruction.
	stubs := e.stubs[:0]
	for _, r := range e.bails {
		at := -1
		for _, s := range stubs {
			if s.k == r.k && s.written == r.written {
				at = s.at
			}
		}
		if at < 0 {
			at = len(e.b)
			stubs = append(stubs, bailRef{at: at, k: r.k, written: r.written})
			e.writeBack(r.written)
			e.movImm(rAX, pc+uint64(r.k)*4)
			e.stPC(rAX)
			if r.k != 0 {
				e.aluImm(aluSUB, true, r10, int32(r.k))
			}
			e.ret(jitBail)
		}
		binary.LittleEndian.PutUint32(e.b[r.at:], uint32(at-(r.at+4)))
	}
	e.stubs = stubs
	if len(e.irq) > 0 {
		at := len(e.b)
		e.ret(jitTaken)
		for _, j := range e.irq {
			binary.LittleEndian.PutUint32(e.b[j:], uint32(at-(j+4)))
		}
	}
	// The unlinked exits leave with RDX = the slot, for runFast to link.
	unlinked := [2]int{len(e.b), 0}
	e.opR(true, []byte{0x8b}, rAX, r10)
	e.movImm(rBX, 0)
	e.raw(0xc3)
	unlinked[1] = len(e.b)
	e.opR(true, []byte{0x8b}, rAX, r10)
	e.movImm(rBX, jitTaken)
	e.raw(0xc3)
	out := jitCode{body: body, n: n, pc: pc, slots: e.slots[:0]}
	// Each slot first holds its own way out, which sets c.pc to its
	// target.
	for i := range e.links {
		l := &e.links[i]
		l.stub = len(e.b)
		e.movImm(rAX, l.target)
		e.stPC(rAX)
		e.raw(0xe9) // jmp to the unlinked exit
		e.imm32(int32(unlinked[b2u(l.taken)] - (len(e.b) + 4)))
	}
	for len(e.b)%8 != 0 {
		e.raw(0xcc)
	}
	for _, l := range e.links {
		slot := len(e.b)
		binary.LittleEndian.PutUint32(e.b[l.at:], uint32(slot-(l.at+4)))
		out.slots = append(out.slots, [2]int{slot, l.stub})
		e.b = binary.LittleEndian.AppendUint64(e.b, 0)
	}
	out.code, e.slots = e.b, out.slots
	return out
}

// reset readies e for a block at pc, keeping its buffers.
func (e *emitter) reset(pc uint64) {
	*e = emitter{b: e.b[:0], pc: pc, bails: e.bails[:0], stubs: e.stubs[:0], links: e.links[:0], irq: e.irq[:0], cold: e.cold[:0], slots: e.slots, flagsAt: -1}
	e.host[regSP], e.host[30], e.host[29] = pinSP, pinX30, pinX29
}

// perBlock reports whether host register h holds a guest register for
// the block alone (regCache), which the block loads and writes back; not
// one of the pinned ones, which reset assigns.
func perBlock(h uint8) bool { return h != 0 && h < pinX29 }

// body emits the block's body: the cached registers' loads, then insts
// (the first at e.pc), and, unless the last ends the block, the exit to
// the next instruction.
func (e *emitter) body(c *CPU, insts []*inst) {
	e.jumps = jumpTable(c.el)
	e.n = len(insts)
	e.loadCache()
	e.loop = len(e.b)
	e.hostIn = 0
	for k, in := range insts {
		if e.counting && !keepsGroups(in) {
			e.closeGroups()
		}
		if k > 0 && !keepsHost(insts[k-1].op) {
			e.hostIn = 0
		}
		e.inst(c, in, k, e.pc+uint64(k)*4)
	}
	if n := len(insts); !endsBlock(insts[n-1]) {
		e.leave(e.pc+uint64(n)*4, false, n)
	}
}

// emitNOP translates NOP.
func (e *emitter) emitNOP(_ *CPU, in *inst, _ int, _ uint64) {

}

// emitDMB translates DMB and DSB. x86 orders every pair of accesses but
// a store and a later load, so only a barrier that orders those (not the
// loads-only or stores-only kinds, CRm<1:0> 01 and 10) needs MFENCE,
// and only where another vCPU runs beside this one.
func (e *emitter) emitDMB(c *CPU, in *inst, _ int, _ uint64) {
	if c.par && in.imm&3 != 1 && in.imm&3 != 2 {
		e.raw(0x0f, 0xae, 0xf0) // mfence
	}
}

// emitADR translates ADR.
func (e *emitter) emitADR(_ *CPU, in *inst, _ int, pc uint64) {
	rd := in.rd
	e.setReg(rd, pc+in.imm)
}

// emitADRP translates ADRP.
func (e *emitter) emitADRP(_ *CPU, in *inst, _ int, pc uint64) {
	rd := in.rd
	e.setReg(rd, pc&^0xfff+in.imm)
}

// emitMOVi translates MOVi.
func (e *emitter) emitMOVi(_ *CPU, in *inst, _ int, _ uint64) {
	rd := in.rd
	e.setReg(rd, in.imm)
}

// emitAddSubImm translates ADDi, SUBi, ADDSi, SUBSi.
func (e *emitter) emitAddSubImm(_ *CPU, in *inst, _ int, _ uint64) {
	rd, rn, sf := in.rd, in.rn, in.sf
	op := byte(aluADD)
	if in.op == opSUBi || in.op == opSUBSi {
		op = aluSUB
	}
	flags := in.op == opADDSi || in.op == opSUBSi
	aligned := e.spAligned && rd == regSP && rn == regSP && in.imm%16 == 0
	x := e.into(rd, rSI)
	e.ldFor(x, rn, sf)
	if in.imm != 0 || !sf || flags { // (MOV to or from SP is ADD #0)
		e.aluImm(op, sf, x, int32(in.imm))
	}
	// A base register moved by a constant keeps its group of accesses.
	move := sf && rd == rn && rd != regSink
	e.movingBase = move
	e.st(rd, x)
	e.movingBase = false
	if move && e.counting {
		d := int32(in.imm)
		if op == aluSUB {
			d = -d
		}
		e.groupMoved(rd, d)
	}
	if aligned {
		e.spAligned = true
	}
	if flags {
		e.storeNZCV(flagsAfter(op))
	}
}

// emitLogicImm translates ANDi, ORRi, EORi, ANDSi.
func (e *emitter) emitLogicImm(_ *CPU, in *inst, _ int, _ uint64) {
	rd, rn, sf := in.rd, in.rn, in.sf
	x := e.into(rd, rSI)
	e.ldFor(x, rn, true)
	e.aluConst(logicALU(in.op), sf || in.op == opANDi, x, in.imm)
	e.st(rd, x)
	if in.op == opANDSi {
		e.storeNZCV(afterLogic)
	}
}

// emitMOVK translates MOVK.
func (e *emitter) emitMOVK(_ *CPU, a *movkArgs, _ int, _ uint64) {
	rd, ra, sf := a.rd, a.old(), a.sf
	x := e.into(rd, rAX)
	e.ldFor(x, ra, true)
	e.aluConst(aluAND, true, x, a.keep())
	e.aluConst(aluOR, sf, x, a.imm)
	e.st(rd, x)
}

// emitShiftImm translates LSLi, LSRi, ASRi.
func (e *emitter) emitShiftImm(_ *CPU, a *shiftimmArgs, _ int, _ uint64) {
	rd, rn, sf := a.rd, a.rn, a.sf
	x := e.into(rd, rAX)
	e.ld(x, rn, sf)
	e.shift(shiftType(a.op), sf, x, a.shift())
	e.st(rd, x)
}

// emitBitfield translates UBFM, SBFM, BFM.
func (e *emitter) emitBitfield(_ *CPU, a *bitfieldArgs, _ int, _ uint64) {
	e.bitfield(a)
}

// emitMOVr translates MOVr.
func (e *emitter) emitMOVr(_ *CPU, in *inst, _ int, _ uint64) {
	rd, rm, sf := in.rd, in.rm, in.sf
	x := e.into(rd, rAX)
	e.ld(x, rm, sf)
	e.st(rd, x)
}

// emitLogicReg translates ANDr, ORRr, EORr, ANDSr.
func (e *emitter) emitLogicReg(_ *CPU, a *shiftedArgs, _ int, _ uint64) {
	rd, rn, rm, sf := a.rd, a.rn, a.rm, a.sf
	x := e.into(rd, rSI)
	var y int
	switch plain := a.amount() == 0 && !a.invert(); {
	case plain && e.host[rm] == 0:
		y = -1 // the operand straight from c.r
	case plain && int(e.host[rm]) != x:
		y = e.src(rm, rCX, sf)
	default:
		e.ld(rCX, rm, sf)
		e.shift(a.shift(), sf, rCX, a.amount())
		if a.invert() {
			e.opR(sf, []byte{0xf7}, 2, rCX) // not
		}
		y = rCX
	}
	e.ldFor(x, rn, sf)
	if y < 0 {
		e.aluMem(logicALU(a.op), sf, x, rm)
	} else {
		e.alu(logicALU(a.op), sf, x, y)
	}
	e.st(rd, x)
	if a.op == opANDSr {
		e.storeNZCV(afterLogic)
	}
}

// emitAddSubReg translates ADDr, SUBr, ADDSr, SUBSr (shifted register)
// and ADDx, SUBx, ADDSx, SUBSx (extended register).
func (e *emitter) emitAddSubReg(_ *CPU, in *inst, _ int, _ uint64) {
	rd, rn, rm, sf := in.rd, in.rn, in.rm, in.sf
	sub := in.op == opSUBr || in.op == opSUBSr || in.op == opSUBx || in.op == opSUBSx
	x := e.into(rd, rSI)
	y := rCX
	if in.op == opADDx || in.op == opSUBx || in.op == opADDSx || in.op == opSUBSx {
		a := (*extendedArgs)(in)
		e.ld(rCX, rm, true)
		e.extend(rCX, a.extend(), a.amount())
	} else if a := (*shiftedArgs)(in); a.amount() == 0 && e.host[rm] == 0 {
		y = -1 // the operand straight from c.r
	} else if a.amount() == 0 && int(e.host[rm]) != x {
		y = e.src(rm, rCX, sf)
	} else {
		e.ld(rCX, rm, sf)
		e.shift(a.shift(), sf, rCX, a.amount())
	}
	e.ldFor(x, rn, sf)
	op := byte(aluADD)
	if sub {
		op = aluSUB
	}
	if y < 0 {
		e.aluMem(op, sf, x, rm)
	} else {
		e.alu(op, sf, x, y)
	}
	e.st(rd, x)
	if in.op == opADDSr || in.op == opSUBSr || in.op == opADDSx || in.op == opSUBSx {
		e.storeNZCV(flagsAfter(op))
	}
}

// emitCondSelect translates CSEL, CSINC, CSINV, CSNEG.
func (e *emitter) emitCondSelect(_ *CPU, a *condArgs, _ int, _ uint64) {
	rd, rn, rm, sf := a.rd, a.rn, a.rm, a.sf
	e.ld(rAX, rn, sf)
	if a.cond()&14 != 14 {
		e.ld(rDX, rm, sf)
		switch a.op {
		case opCSINC:
			e.opR(sf, []byte{0xff}, 0, rDX)
		case opCSINV:
			e.opR(sf, []byte{0xf7}, 2, rDX)
		case opCSNEG:
			e.opR(sf, []byte{0xf7}, 3, rDX)
		}
		e.cond(a.cond())
		e.opR(true, []byte{0x0f, 0x40 + ccAE}, rAX, rDX) // cmovae rax, rdx
	}
	e.st(rd, rAX)
}

// emitMulAdd translates MADD, MSUB.
func (e *emitter) emitMulAdd(_ *CPU, a *muladdArgs, _ int, _ uint64) {
	rd, rn, rm, ra, sf := a.rd, a.rn, a.rm, a.addend(), a.sf
	e.ld(rAX, rn, true)
	e.ld(rCX, rm, true)
	e.opR(sf, []byte{0x0f, 0xaf}, rAX, rCX) // imul rax, rcx
	e.ld(rDX, ra, true)
	if a.op == opMADD {
		e.alu(aluADD, sf, rAX, rDX)
		e.st(rd, rAX)
	} else {
		e.alu(aluSUB, sf, rDX, rAX)
		e.st(rd, rDX)
	}
}

// emitMulLong translates SMADDL, SMSUBL, UMADDL, UMSUBL: Ra plus or
// minus the product of Wn and Wm, sign- or zero-extended to 64 bits (the
// low 64 bits of that product are imul's of the extended values).
func (e *emitter) emitMulLong(_ *CPU, a *muladdArgs, _ int, _ uint64) {
	signed := a.op == opSMADDL || a.op == opSMSUBL
	e.ld(rAX, a.rn, false)
	e.ld(rCX, a.rm, false)
	if signed {
		e.extend(rAX, 6, 0) // movsxd
		e.extend(rCX, 6, 0)
	}
	e.opR(true, []byte{0x0f, 0xaf}, rAX, rCX) // imul rax, rcx
	e.ld(rDX, a.addend(), true)
	if a.op == opSMADDL || a.op == opUMADDL {
		e.alu(aluADD, true, rAX, rDX)
		e.st(a.rd, rAX)
	} else {
		e.alu(aluSUB, true, rDX, rAX)
		e.st(a.rd, rDX)
	}
}

// emitMulHigh translates SMULH, UMULH: the high 64 bits of the 128-bit
// product, which x86's one-operand IMUL and MUL leave in DX.
func (e *emitter) emitMulHigh(_ *CPU, in *inst, _ int, _ uint64) {
	e.ld(rAX, in.rn, true)
	e.ld(rCX, in.rm, true)
	digit := 4 // mul rcx
	if in.op == opSMULH {
		digit = 5 // imul rcx
	}
	e.opR(true, []byte{0xf7}, digit, rCX)
	e.st(in.rd, rDX)
}

// emitRev translates REV, REV16, REV32.
func (e *emitter) emitRev(_ *CPU, in *inst, _ int, _ uint64) {
	sf := in.sf
	x := e.into(in.rd, rAX)
	switch in.op {
	case opREV16: // (x & M) << 8 | (x >> 8) & M, M = 0x00ff... per halfword
		const m = 0x00ff00ff00ff00ff
		e.ld(rAX, in.rn, sf)
		e.opR(true, []byte{0x8b}, rDX, rAX) // mov rdx, rax
		e.movImm(rCX, m)
		e.alu(aluAND, sf, rAX, rCX)
		e.shift(0, sf, rAX, 8)
		e.shift(1, sf, rDX, 8)
		e.alu(aluAND, sf, rDX, rCX)
		e.alu(aluOR, sf, rAX, rDX)
		e.st(in.rd, rAX)
		return
	case opREV32: // each word's bytes reversed: all eight, then the words swapped
		e.ld(x, in.rn, true)
		e.bswap(true, x)
		e.shift(3, true, x, 32)
	default:
		e.ld(x, in.rn, sf)
		e.bswap(sf, x)
	}
	e.st(in.rd, x)
}

// bswap reverses the bytes of x (w false: of its low half, zero-extended).
func (e *emitter) bswap(w bool, x int) {
	e.rex(w, 0, 0, x)
	e.raw(0x0f, 0xc8+byte(x&7))
}

// emitCCMP translates CCMP and CCMN: if cond holds, the flags of Rn
// minus (plus) Rm or the immediate; else the instruction's nzcv.
func (e *emitter) emitCCMP(_ *CPU, a *ccmpArgs, _ int, _ uint64) {
	sf := a.sf
	var fail int
	always := a.cond()&14 == 14 // AL, and NV, which acts as AL here
	if !always {
		e.cond(a.cond())
		fail = e.jcc(ccAE)
	}
	op, after := byte(aluCMP), afterSub
	if a.op == opCCMN {
		op, after = aluADD, afterAdd
	}
	e.ld(rSI, a.rn, sf)
	if a.immediate() {
		e.aluImm(op, sf, rSI, int32(a.imm))
	} else {
		e.alu(op, sf, rSI, e.src(a.rm, rCX, sf))
	}
	e.storeNZCV(after)
	if !always {
		done := e.jmp()
		e.here(fail)
		e.opM(false, []byte{0xc6}, 0, field(offNZCV)) // mov byte [nzcv], nzcv
		e.raw(a.nzcv())
		e.here(done)
	}
}

// emitShiftReg translates LSLV, LSRV, ASRV, RORV.
func (e *emitter) emitShiftReg(_ *CPU, in *inst, _ int, _ uint64) {
	rd, rn, rm, sf := in.rd, in.rn, in.rm, in.sf
	e.ld(rAX, rn, sf)
	e.ld(rCX, rm, true)
	// x86 masks the count to the operand width, as A64 does.
	e.opR(sf, []byte{0xd3}, int(shiftDigit(shiftType(in.op))), rAX)
	e.st(rd, rAX)
}

// emitB translates B.
func (e *emitter) emitB(_ *CPU, in *inst, k int, pc uint64) {
	e.leave(pc+in.imm, true, k+1)
}

// emitBL translates BL.
func (e *emitter) emitBL(_ *CPU, in *inst, k int, pc uint64) {
	e.setReg(30, pc+4)
	e.leave(pc+in.imm, true, k+1)
}

// emitBranchReg translates BR, RET, BLR.
func (e *emitter) emitBranchReg(c *CPU, in *inst, k int, pc uint64) {
	rn := in.rn
	next := pc + 4
	e.ld(rAX, rn, true)
	if in.op == opBLR {
		// (Not setReg, whose scratch register is AX: the target.)
		x := e.into(30, rCX)
		e.movImm(x, next)
		e.st(30, x)
	}
	e.writeBack(e.written)
	e.aluImm(aluSUB, true, r10, int32(k+1))
	e.jumpOut(c.el, true)
}

// emitBRK translates BRK at EL1 as exception entry to EL1 with SP_EL1
// (enterEL1 with the BRK's syndrome): a kprobe's two BRKs a hit (the
// probe's, the step's), taken by the kernel that placed them. Left to
// the interpreter, each cost a return to runFast and back. Any other
// state (SP_EL0 selected, a step or illegal state pending) bails to the
// interpreter. The EL stays, so the code goes on through the jump cache
// to the vector.
func (e *emitter) emitBRK(c *CPU, in *inst, k int, pc uint64) {
	e.spselEL1(k)
	e.exceptionEntry(c, uint64(ecBRK64)<<26|1<<25|in.imm&0xffff, pc, func() {
		e.aluImm(aluOR, false, rAX, 1<<2|1) // EL1, SP_EL1
	})
	e.opM(true, []byte{0x8b}, rAX, field(offSys+8*int32(VBAR_EL1)))
	e.aluImm(aluADD, true, rAX, 0x200) // current EL with SP_ELx
	e.writeBack(e.written)
	e.aluImm(aluSUB, true, r10, int32(k+1))
	e.jumpOut(1, false) // (interrupts are masked now)
}

// emitERET translates ERET at EL1, from SP_EL1, that returns to EL1
// with SP_EL1 or to EL0, with no step or illegal state to restore: the
// return from an exception the kernel took in the kernel (a kprobe hit
// makes two), or from a system call or an interrupt of user space; as
// eret and then pollIRQ do. Any other return bails to the interpreter.
func (e *emitter) emitERET(c *CPU, in *inst, k int, pc uint64) {
	e.spselEL1(k)
	e.opM(true, []byte{0x8b}, rAX, field(offSys+8*int32(SPSR_EL1)))
	e.opR(false, []byte{0x8b}, rCX, rAX) // mov ecx, eax
	e.aluImm(aluAND, false, rCX, 0x1f|spsrSS|spsrIL)
	e.aluImm(aluCMP, false, rCX, 1<<2|1) // EL1h
	toEL1 := e.jcc(ccE)
	e.opR(false, []byte{0x85}, rCX, rCX) // test ecx, ecx: EL0t
	e.bail(ccNE, k)
	e.eretTo(c, 0, k)
	e.here(toEL1)
	e.eretTo(c, 1, k)
}

// eretTo ends emitERET's return to el, with SPSR_EL1 in AX.
func (e *emitter) eretTo(c *CPU, el uint8, k int) {
	e.dropMonitor(c)
	e.opR(false, []byte{0x8b}, rCX, rAX) // mov ecx, eax
	e.shift(1, false, rCX, 28)
	e.opM(false, []byte{0x88}, rCX, field(offNZCV)) // mov byte [nzcv], cl
	e.shift(1, false, rAX, 6)
	e.aluImm(aluAND, false, rAX, 0xf)
	e.opM(false, []byte{0x88}, rAX, field(offDAIF)) // mov byte [daif], al
	e.writeBack(e.written)
	if el == 0 {
		e.switchMode(0, offSPEL1, offSPEL0)
	}
	e.opM(true, []byte{0x8b}, rAX, field(offSys+8*int32(ELR_EL1)))
	e.aluImm(aluSUB, true, r10, int32(k+1))
	e.jumpOut(el, true) // (an interrupt the restored DAIF unmasks first)
}

// switchMode is setMode between EL1 with SP_EL1 and EL0 (to is the new
// EL, with SPSel as it): the live SP (pinSP) goes to the bank at save,
// the one at load comes in. The EL's change makes runFast fetch the page
// afresh, as enterEL1 and eret do.
func (e *emitter) switchMode(to uint8, save, load int32) {
	e.opM(true, []byte{0x89}, pinSP, field(save)) // mov [save], sp
	e.opM(true, []byte{0x8b}, pinSP, field(load)) // mov sp, [load]
	e.opM(false, []byte{0xc6}, 0, field(offEL))   // mov byte [el], to
	e.raw(to)
	e.opM(false, []byte{0xc6}, 0, field(offSPSel)) // mov byte [spsel], to
	e.raw(to)
	e.opM(true, []byte{0xc7}, 0, field(offPageVA)) // mov qword [pageVA], noPage
	e.imm32(noPage)
}

// jumpOut ends the block with a taken branch to the pc in AX, the
// instructions retired already taken off: through the jump cache of EL
// el (an exception entry or return changes the EL) to the block there;
// else (or, with irq, for an interrupt that PSTATE does not mask) out
// to runFast. Only the ways out store the pc in c.pc: a block found
// knows its own.
func (e *emitter) jumpOut(el uint8, irq bool) {
	if e.jumps != 0 {
		if irq {
			e.irqCheck()
		}
		e.jumpReg(jumpTable(el))
	}
	e.stPC(rAX)
	e.ret(jitTaken)
}

// emitSVC translates SVC at EL0 as exception entry to EL1 with SP_EL1
// (enterEL1 with the SVC's syndrome): a system call. With a step or
// illegal state pending it bails to the interpreter. It goes on through
// EL1's jump cache to the vector.
func (e *emitter) emitSVC(c *CPU, in *inst, k int, pc uint64) {
	e.opM(false, []byte{0x0f, 0xb6}, rCX, field(offSS)) // movzx ecx, byte [ss]
	e.opM(false, []byte{0x0a}, rCX, field(offIL))       // or cl, byte [il]
	e.bail(ccNE, k)
	e.exceptionEntry(c, uint64(ecSVC64)<<26|1<<25|in.imm&0xffff, pc+4, func() {
		e.opM(false, []byte{0x0a}, rAX, field(offSPSel)) // or al, byte [spsel] (EL0)
	})
	e.writeBack(e.written)
	e.switchMode(1, offSPEL0, offSPEL1)
	e.opM(true, []byte{0x8b}, rAX, field(offSys+8*int32(VBAR_EL1)))
	e.aluImm(aluADD, true, rAX, 0x400) // lower EL using AArch64
	e.aluImm(aluSUB, true, r10, int32(k+1))
	e.jumpOut(1, false) // (interrupts are masked now)
}

// exceptionEntry is what enterEL1 does for emitBRK and emitSVC before
// the change of mode: SPSR_EL1 from PSTATE as PSTATE() makes it (mode
// ORs the EL and SP bits into EAX), ESR_EL1 and ELR_EL1, interrupts
// masked, the exclusive monitor cleared, the exception counted. Clobbers
// AX, BX, CX.
func (e *emitter) exceptionEntry(c *CPU, esr, elr uint64, mode func()) {
	e.opM(false, []byte{0x0f, 0xb6}, rAX, field(offNZCV)) // movzx eax, byte [nzcv]
	e.shift(0, false, rAX, 28)
	e.opM(false, []byte{0x0f, 0xb6}, rCX, field(offDAIF)) // movzx ecx, byte [daif]
	e.shift(0, false, rCX, 6)
	e.alu(aluOR, false, rAX, rCX)
	mode()
	e.opM(true, []byte{0x89}, rAX, field(offSys+8*int32(SPSR_EL1)))
	e.movImm(rAX, esr)
	e.opM(true, []byte{0x89}, rAX, field(offSys+8*int32(ESR_EL1)))
	e.movImm(rAX, elr)
	e.opM(true, []byte{0x89}, rAX, field(offSys+8*int32(ELR_EL1)))
	e.opM(false, []byte{0xc6}, 0, field(offDAIF)) // mov byte [daif], 0xf
	e.raw(0xf)
	e.dropMonitor(c)
	e.movImm(rAX, uint64(uintptr(unsafe.Pointer(&c.m.exceptions))))
	e.raw(0xf0)                                                  // lock
	e.opM(true, []byte{0xff}, 0, mem{base: rAX, index: noIndex}) // inc qword [rax]
}

// spselEL1 bails before instruction k unless PSTATE selects SP_EL1 and
// no step or illegal state is pending: exception entry and return
// without a change of stack or debug state.
func (e *emitter) spselEL1(k int) {
	e.opM(false, []byte{0x80}, aluCMP, field(offSPSel)) // cmp byte [spsel], 1
	e.raw(1)
	e.bail(ccNE, k)
	e.opM(false, []byte{0x0f, 0xb6}, rCX, field(offSS)) // movzx ecx, byte [ss]
	e.opM(false, []byte{0x0a}, rCX, field(offIL))       // or cl, byte [il]
	e.bail(ccNE, k)
}

// dropMonitor clears this CPU's exclusive monitor, set or not, as the
// interpreter's clearExclusive. Clobbers BX.
func (e *emitter) dropMonitor(c *CPU) {
	if c.par { // (which counts no reservations)
		e.opM(false, []byte{0xc6}, 0, field(offExcValid)) // mov byte [valid], 0
		e.raw(0)
		return
	}
	e.opM(false, []byte{0x80}, aluCMP, field(offExcValid)) // cmp byte [valid], 0
	e.raw(0)
	none := e.jcc(ccE)
	e.clearExclusive(c)
	e.here(none)
}

// emitCondBranch translates Bcond, CBZ, CBNZ, TBZ, TBNZ.
func (e *emitter) emitCondBranch(_ *CPU, in *inst, k int, pc uint64) {
	rn, sf := in.rn, in.sf
	next := pc + 4
	var notTaken int
	switch in.op {
	case opBcond:
		cond := (*condArgs)(in).cond()
		if cond&14 == 14 {
			e.leave(pc+in.imm, true, k+1)
			return
		}
		if x86, ok := e.flagsFor(cond); ok {
			notTaken = e.jcc(x86 ^ 1)
			break
		}
		e.cond(cond)
		notTaken = e.jcc(ccAE)
	case opCBZ, opCBNZ:
		x := e.src(rn, rAX, sf)
		e.opR(sf, []byte{0x85}, x, x) // test
		if in.op == opCBZ {
			notTaken = e.jcc(ccNE)
		} else {
			notTaken = e.jcc(ccE)
		}
	default:
		x := e.src(rn, rAX, true)
		e.opR(true, []byte{0x0f, 0xba}, 4, x) // bt x, bit
		e.raw((*testbitArgs)(in).bit())
		if in.op == opTBZ {
			notTaken = e.jcc(ccB)
		} else {
			notTaken = e.jcc(ccAE)
		}
	}
	e.leave(pc+in.imm, true, k+1)
	e.here(notTaken)
	if k == e.n-1 {
		e.leave(next, false, k+1)
	}
}

// emitMRS translates MRS.
func (e *emitter) emitMRS(c *CPU, a *sysArgs, k int, _ uint64) {
	rd := a.rd
	if sr := SysReg(a.imm); jitPlainSys(sr) || sr == MDSCR_EL1 { // (MDSCR_EL1 is plain to read)
		x := e.into(rd, rAX)
		e.opM(true, []byte{0x8b}, x, field(offSys+8*int32(sr))) // mov x, [sys+8*sr]
		e.st(rd, x)
		return
	}
	switch SysReg(a.imm) {
	case DCZID_EL0: // at EL1, DC ZVA's block size, whatever SCTLR_EL1.DZE says
		e.setReg(rd, dczidValue)
		return
	case NZCV:
		e.opM(false, []byte{0x0f, 0xb6}, rAX, field(offNZCV)) // movzx eax, byte [nzcv]
		e.shift(0, false, rAX, 28)
	case CurrentEL: // the block's EL, which its key fixes
		e.setReg(rd, uint64(c.el)<<2)
		return
	case CNTVCT_EL0, CNTPCT_EL0:
		// systemCounter(inSlice) of deterministic mode: the instructions
		// retired before this run, the skew, and this run's before this
		// one, which are the run's budget less what R10 had left at the
		// block's start (or its loop's), plus the block's k before.
		m := c.m
		e.movImm(rAX, uint64(uintptr(unsafe.Pointer(&m.instructions))))
		e.opM(true, []byte{0x8b}, rAX, mem{base: rAX, index: noIndex}) // mov rax, [rax]
		e.movImm(rCX, uint64(uintptr(unsafe.Pointer(&m.counterSkew))))
		e.opM(true, []byte{0x03}, rAX, mem{base: rCX, index: noIndex}) // add rax, [rcx]
		e.opM(true, []byte{0x03}, rAX, field(offBudget))               // add rax, [budget]
		e.alu(aluSUB, true, rAX, r10)
		if k != 0 {
			e.aluImm(aluADD, true, rAX, int32(k))
		}
	case SPSel:
		e.opM(false, []byte{0x0f, 0xb6}, rAX, field(offSPSel)) // movzx eax, byte [spsel]
	case SP_EL0:
		// At EL1 with SPSel 0, SP_EL0 is the live SP: the interpreter's.
		e.opM(false, []byte{0x80}, aluCMP, field(offSPSel))
		e.raw(0)
		e.bail(ccE, k)
		x := e.into(rd, rAX)
		e.opM(true, []byte{0x8b}, x, field(offSPEL0))
		e.st(rd, x)
		return
	case DAIF:
		e.opM(false, []byte{0x0f, 0xb6}, rAX, field(offDAIF)) // movzx eax, byte [daif]
		e.shift(0, false, rAX, 6)
	default: // MPIDR_EL1: RES1 bit 31, Aff0 the CPU's index
		e.opM(false, []byte{0x0f, 0xb6}, rAX, field(offIndex))
		e.aluImm(aluOR, false, rAX, -1<<31)
	}
	e.st(rd, rAX)
}

// emitMSR translates MSR.
func (e *emitter) emitMSR(_ *CPU, a *sysArgs, k int, pc uint64) {
	rn := a.rn
	next := pc + 4
	if sr := SysReg(a.imm); jitPlainSys(sr) {
		e.ld(rAX, rn, true)
		e.opM(true, []byte{0x89}, rAX, field(offSys+8*int32(sr))) // mov [sys+8*sr], rax
		return
	}
	if SysReg(a.imm) == NZCV {
		e.ld(rAX, rn, false)
		e.shift(1, false, rAX, 28)
		e.aluImm(aluAND, false, rAX, 15)
		e.opM(false, []byte{0x88}, rAX, field(offNZCV)) // mov byte [nzcv], al
		return
	}
	if SysReg(a.imm) == SP_EL0 {
		// SP_EL0 cannot be written while it is the SP: undefined.
		e.opM(false, []byte{0x80}, aluCMP, field(offSPSel))
		e.raw(0)
		e.bail(ccE, k)
		e.ld(rAX, rn, true)
		e.opM(true, []byte{0x89}, rAX, field(offSPEL0))
		return
	}
	e.ld(rAX, rn, true) // DAIF
	e.shift(1, true, rAX, 6)
	e.aluImm(aluAND, false, rAX, 15)
	e.opM(false, []byte{0x88}, rAX, field(offDAIF))
	// Unmasking may let a pending interrupt a before the next
	// instruction: leave as a taken branch does, polling.
	e.leave(next, true, k+1)
}

// emitMSRi translates MSRi.
func (e *emitter) emitMSRi(_ *CPU, a *pstateArgs, k int, pc uint64) {
	next := pc + 4
	if a.field() == pstateDAIFSet {
		e.opM(false, []byte{0x80}, aluOR, field(offDAIF))
		e.raw(byte(a.imm))
		return
	}
	e.opM(false, []byte{0x80}, aluAND, field(offDAIF))
	e.raw(^byte(a.imm))
	e.leave(next, true, k+1)
}

// emitDCZVA translates DCZVA.
func (e *emitter) emitDCZVA(c *CPU, a *sysArgs, k int, _ uint64) {
	rn := a.rn
	e.ld(rAX, rn, true)
	e.aluImm(aluAND, true, rAX, -dczBlock)
	at := e.access(c, k, dczBlock, true, true)
	e.opR(false, []byte{0x31}, rAX, rAX) // xor eax, eax
	for i := int32(0); i < dczBlock; i += 8 {
		e.store(rAX, 3, at.plus(i))
	}
	e.codeCheck(c, k)
}

// emitSTXR translates STXR (and STLXR): it succeeds if this CPU's
// monitor holds exactly the address and size, and clears the monitor
// either way (exclusiveOK). A store that needs the interpreter bails
// before the monitor changes.
func (e *emitter) emitSTXR(c *CPU, a *exclStoreArgs, k int, _ uint64) {
	if a.pre&preSP != 0 {
		e.checkSP(k)
	}
	if c.par {
		e.stxrParallel(c, a, k)
		return
	}
	fails := e.monitorHolds(a)
	e.ld(r8, a.rd, true)
	e.store(r8, a.size(), e.access(c, k, 1<<a.size(), true, true))
	e.clearExclusive(c)
	e.setReg(a.status(), 0)
	done := e.jmp()
	for _, f := range fails {
		e.here(f)
	}
	e.dropMonitor(c)
	e.setReg(a.status(), 1)
	e.here(done)
}

// monitorHolds loads STXR's address into AX and checks that this CPU's
// monitor holds it and the size (exclusiveOK), returning the jumps taken
// where it does not.
func (e *emitter) monitorHolds(a *exclStoreArgs) [3]int {
	e.ld(rAX, a.rn, true)
	e.opM(false, []byte{0x80}, aluCMP, field(offExcValid))
	e.raw(0)
	invalid := e.jcc(ccE)
	e.opM(true, []byte{0x3b}, rAX, field(offExcAddr)) // cmp rax, [excAddr]
	addr := e.jcc(ccNE)
	e.opM(false, []byte{0x80}, aluCMP, field(offExcSize))
	e.raw(a.size())
	return [3]int{invalid, addr, e.jcc(ccNE)}
}

// stxrParallel translates STXR in parallel mode, as execSTXR: with the
// monitor holding the address and size, a compare-and-swap against the
// value the load-exclusive read (LOCK CMPXCHG) stores, and the status
// says whether it did; the monitor is cleared either way.
func (e *emitter) stxrParallel(c *CPU, a *exclStoreArgs, k int) {
	fails := e.monitorHolds(a)
	at := e.access(c, k, 1<<a.size(), true, true)
	e.ld(r8, a.rd, true)
	e.opM(false, []byte{0xc6}, 0, field(offExcValid)) // mov byte [valid], 0
	e.raw(0)
	e.opM(true, []byte{0x8b}, rAX, field(offExcVal))                  // mov rax, [excVal]
	e.raw(0xf0)                                                       // lock
	e.sized(a.size(), []byte{0x0f, 0xb0}, []byte{0x0f, 0xb1}, r8, at) // cmpxchg
	e.setcc(ccNE, rAX)
	e.opR(false, []byte{0x0f, 0xb6}, rAX, rAX) // movzx eax, al
	e.st(a.status(), rAX)
	e.codeCheck(c, k)
	done := e.jmp()
	for _, f := range fails {
		e.here(f)
	}
	e.opM(false, []byte{0xc6}, 0, field(offExcValid)) // mov byte [valid], 0
	e.raw(0)
	e.setReg(a.status(), 1)
	e.here(done)
}

// clearExclusive clears this CPU's (valid) monitor, as clearExclusive.
func (e *emitter) clearExclusive(c *CPU) {
	e.opM(false, []byte{0xc6}, 0, field(offExcValid)) // mov byte [valid], 0
	e.raw(0)
	e.movImm(rBX, uint64(uintptr(unsafe.Pointer(&c.m.reservations))))
	e.opM(true, []byte{0xff}, 1, mem{base: rBX, index: noIndex}) // dec qword [rbx]
}

// logicALU returns the x86 operation of a logical instruction.
func logicALU(op opcode) byte {
	switch op {
	case opORRi, opORRr:
		return aluOR
	case opEORi, opEORr:
		return aluXOR
	}
	return aluAND
}

// shiftType returns the A64 shift type of a shift instruction.
func shiftType(op opcode) uint8 {
	switch op {
	case opLSRi, opLSRV:
		return 1
	case opASRi, opASRV:
		return 2
	case opRORV:
		return 3
	}
	return 0
}

// ldExclusive translates LDXR (and LDAXR) with the address in AX: the
// load, then the monitor as setExclusive sets it.
func (e *emitter) ldExclusive(c *CPU, a *ldstArgs, k int) {
	e.opR(true, []byte{0x8b}, rSI, rAX) // mov rsi, rax: the VA
	e.load(rAX, a.size(), extZero, e.access(c, k, 1<<a.size(), false, true))
	e.st(a.rd, rAX)
	e.opM(true, []byte{0x89}, rAX, field(offExcVal))
	if c.par { // (which counts no reservations)
		e.opM(false, []byte{0xc6}, 0, field(offExcValid)) // mov byte [valid], 1
		e.raw(1)
	} else {
		e.opM(false, []byte{0x80}, aluCMP, field(offExcValid)) // cmp byte [valid], 0
		e.raw(0)
		valid := e.jcc(ccNE)
		e.opM(false, []byte{0xc6}, 0, field(offExcValid)) // mov byte [valid], 1
		e.raw(1)
		e.movImm(rBX, uint64(uintptr(unsafe.Pointer(&c.m.reservations))))
		e.opM(true, []byte{0xff}, 0, mem{base: rBX, index: noIndex}) // inc qword [rbx]
		e.here(valid)
	}
	e.opM(true, []byte{0x89}, rSI, field(offExcAddr))
	e.opM(false, []byte{0xc6}, 0, field(offExcSize)) // mov byte [size], lg
	e.raw(a.size())
	e.opM(true, []byte{0x8d}, rBX, mem{base: rDX, index: noIndex, disp: RAMBase}) // lea rbx, [rdx+RAMBase]
	e.opM(true, []byte{0x89}, rBX, field(offExcPA))
}

// bitfield translates SBFM, BFM and UBFM (see the interpreter's bitfield).
func (e *emitter) bitfield(a *bitfieldArgs) {
	sf := a.sf
	wmask, tmask := a.imm, a.tmask()
	e.ld(rAX, a.rn, sf)
	if a.op == opSBFM {
		// top: all ones if bit imms of the source is set.
		e.opR(true, []byte{0x8b}, rDX, rAX) // mov rdx, rax
		e.shift(0, true, rDX, 63-a.imms())
		e.shift(2, true, rDX, 63)
	}
	e.shift(3, sf, rAX, a.immr()) // ror
	switch a.op {
	case opUBFM:
		e.aluConst(aluAND, true, rAX, wmask&tmask)
	case opSBFM:
		e.aluConst(aluAND, true, rAX, wmask&tmask)
		e.aluConst(aluAND, true, rDX, ^tmask)
		e.alu(aluOR, true, rAX, rDX)
	default: // BFM: bot = dst&^wmask | rot&wmask; dst&^tmask | bot&tmask
		e.ld(rSI, a.old(), true)
		e.aluConst(aluAND, true, rAX, wmask)
		e.opR(true, []byte{0x8b}, rDX, rSI) // mov rdx, rsi
		e.aluConst(aluAND, true, rDX, ^wmask)
		e.alu(aluOR, true, rAX, rDX)
		e.aluConst(aluAND, true, rAX, tmask)
		e.aluConst(aluAND, true, rSI, ^tmask)
		e.alu(aluOR, true, rAX, rSI)
	}
	if !sf {
		e.mov32(rAX)
	}
	e.st(a.rd, rAX)
}

// access checks a data access of span bytes (both of a pair) at the
// guest virtual address in AX and returns where its data is: with the
// MMU on, unless ramOff asks for the RAM offset, [DX+AX] with DX the
// micro-TLB entry's host; else [CX+DX] with DX the RAM offset. It bails
// before instruction k unless the fast path applies: RAM, within one
// page, and with the MMU on a micro-TLB hit. A store also bails on pages
// holding code (a store there invalidates decoded instructions) and while
// any exclusive monitor is set (the store must snoop it). Clobbers BX,
// CX.
func (e *emitter) access(c *CPU, k, span int, write, ramOff bool) mem {
	m := c.m
	if c.xlate {
		entry := e.tagCheck(c, k, 0, int32(span), write)
		if !ramOff {
			entry.disp = offUTLB + offHost
			e.opM(true, []byte{0x8b}, rDX, entry) // mov rdx, host
			switch {
			case write && c.par:
				// BX = the RAM page: (host + va - ram) >> 12.
				e.opM(true, []byte{0x8d}, rBX, mem{base: rDX, index: rAX, scale: 1}) // lea rbx, [rdx+rax]
				e.movImm(rCX, uint64(addrOf(m.ram)))
				e.alu(aluSUB, true, rBX, rCX)
				e.shift(1, true, rBX, 12)
			case write:
				e.snoop(m, k, 0, int32(span), true)
			}
			return mem{base: rDX, index: rAX, scale: 1}
		}
		e.opR(false, []byte{0x8b}, rDX, rAX) // mov edx, eax
		e.aluImm(aluAND, false, rDX, PageSize-1)
		entry.disp = offUTLB + offOff
		e.opM(true, []byte{0x03}, rDX, entry) // add rdx, off
	} else {
		e.opR(true, []byte{0x8b}, rDX, rAX) // mov rdx, rax
		e.aluImm(aluSUB, true, rDX, RAMBase)
		e.movImm(rCX, uint64(len(m.ram)-span))
		e.alu(aluCMP, true, rDX, rCX)
		e.bail(ccA, k)
		if write {
			// A store that crosses into the next page: the code check
			// below looks at the first page only. (A load may cross:
			// RAM is contiguous, and so is the interpreter's fast path.)
			e.opR(false, []byte{0x8b}, rCX, rDX) // mov ecx, edx
			e.aluImm(aluAND, false, rCX, PageSize-1)
			e.aluImm(aluCMP, false, rCX, int32(PageSize-span))
			e.bail(ccA, k)
		}
	}
	if write && !c.xlate {
		// (With the MMU on, no entry lets a store into a page of code.)
		e.opR(true, []byte{0x8b}, rCX, rDX) // mov rcx, rdx
		e.shift(1, true, rCX, 12)
		e.movImm(rBX, uint64(uintptr(unsafe.Pointer(&m.code[0]))))
		e.opM(true, []byte{0x83}, aluCMP, mem{base: rBX, index: rCX, scale: 8}) // cmp qword [rbx+rcx*8], 0
		e.raw(0)
		e.bail(ccNE, k)
	}
	switch {
	case write && c.par:
		e.opR(true, []byte{0x8b}, rBX, rDX) // mov rbx, rdx
		e.shift(1, true, rBX, 12)
	case write:
		e.snoop(m, k, 0, int32(span), false)
	}
	e.movImm(rCX, uint64(addrOf(m.ram)))
	return mem{base: rCX, index: rDX, scale: 1}
}

// tagCheck bails before instruction k unless the bytes [lo, hi) from
// the virtual address in AX are in one page that the micro-TLB maps for
// reads (or, write, stores), and returns the operand of the tag it
// compared (CX indexes the entry: callers set disp to reach its other
// fields). The entry is the first byte's page's; its tag must be the
// last byte's page's, so that bytes crossing into the next page match no
// entry. Clobbers CX, DX.
func (e *emitter) tagCheck(c *CPU, k int, lo, hi int32, write bool) mem {
	// The entry: index ((va+lo >> 12) & utlbMask) * 32.
	if lo == 0 {
		e.opR(false, []byte{0x89}, rAX, rCX) // mov ecx, eax
	} else {
		e.opM(false, []byte{0x8d}, rCX, mem{base: rAX, index: noIndex, disp: lo}) // lea ecx, [rax+lo]
	}
	e.shift(1, false, rCX, 12-5)
	e.aluImm(aluAND, false, rCX, utlbMask*utlbEntrySize)
	if hi > 1 {
		e.opM(true, []byte{0x8d}, rDX, mem{base: rAX, index: noIndex, disp: hi - 1}) // lea rdx, [rax+hi-1]
	} else {
		e.opR(true, []byte{0x8b}, rDX, rAX) // mov rdx, rax
	}
	// utlbTag: the page's last byte at EL1, its first at EL0.
	if c.el != 0 {
		e.aluImm(aluOR, true, rDX, PageSize-1)
	} else {
		e.aluImm(aluAND, true, rDX, -PageSize)
	}
	entry := mem{base: rDI, index: rCX, scale: 1, disp: offUTLB + offRTag}
	if write {
		entry.disp = offUTLB + offWTag
	}
	e.opM(true, []byte{0x3b}, rDX, entry) // cmp rdx, tag
	e.bail(ccNE, k)
	return entry
}

// codeCheck follows a store in parallel mode, instruction k, whose RAM
// page access left in BX: if the page holds code, the code stops after
// the store, with CPU.codeStore set for runFast to do the bookkeeping
// the interpreter's stores do (storedPar). The check comes after the
// store, as in the interpreter, so that a page another vCPU starts to
// decode meanwhile sees the store or is withdrawn (fetchPagePar). No-op
// in deterministic mode, whose stores never reach a page of code here
// (access bails first). Clobbers BX, CX.
func (e *emitter) codeCheck(c *CPU, k int) {
	if !c.par {
		return
	}
	e.movImm(rCX, uint64(uintptr(unsafe.Pointer(&c.m.codeGen[0]))))
	e.opM(false, []byte{0x83}, aluCMP, mem{base: rCX, index: rBX, scale: 4}) // cmp dword [rcx+rbx*4], 0
	e.raw(0)
	none := e.jcc(ccE)
	e.opM(true, []byte{0x8d}, rBX, mem{base: rBX, index: noIndex, disp: 1}) // lea rbx, [rbx+1]
	e.opM(true, []byte{0x89}, rBX, field(offCodeStr))
	e.raw(0xe9) // jmp: the exit before instruction k+1
	e.bails = append(e.bails, bailRef{at: len(e.b), k: k + 1, written: e.written})
	e.imm32(0)
	e.here(none)
}

// snoop bails before instruction k, which stores to the bytes [lo, hi)
// from RAM offset DX, if another CPU's exclusive monitor holds a granule
// they touch: the interpreter's store clears it. (Which CPU is "another" is
// known only at run time: blocks are shared by the CPUs.) With host, DX
// is instead the micro-TLB entry's host, for the VA in AX, which the
// check (rarely needed: only while a monitor is set, so out of line)
// turns into the RAM offset and back. Clobbers BX, CX.
func (e *emitter) snoop(m *Machine, k int, lo, hi int32, host bool) {
	e.movImm(rBX, uint64(uintptr(unsafe.Pointer(&m.reservations))))
	e.opM(true, []byte{0x83}, aluCMP, mem{base: rBX, index: noIndex}) // cmp qword [rbx], 0
	e.raw(0)
	e.outOfLine(ccNE, func() {
		ram := uint64(addrOf(m.ram))
		if host { // DX = host + va - ram
			e.alu(aluADD, true, rDX, rAX)
			e.movImm(rCX, ram)
			e.alu(aluSUB, true, rDX, rCX)
		}
		for _, o := range m.cpus {
			base := uint64(uintptr(unsafe.Pointer(o)))
			e.movImm(rBX, base)
			e.alu(aluCMP, true, rBX, rDI)
			self := e.jcc(ccE)
			e.opM(false, []byte{0x80}, aluCMP, mem{base: rBX, index: noIndex, disp: offExcValid}) // cmp byte [valid], 0
			e.raw(0)
			skip := e.jcc(ccE)
			// The reserved granule's RAM offset, against the store's first
			// and last granules.
			e.opM(true, []byte{0x8b}, rBX, mem{base: rBX, index: noIndex, disp: offExcPA})
			e.aluImm(aluSUB, true, rBX, RAMBase)
			e.aluImm(aluAND, true, rBX, -64)                                         // ergMask
			e.opM(true, []byte{0x8d}, rCX, mem{base: rDX, index: noIndex, disp: lo}) // lea rcx, [rdx+lo]
			e.aluImm(aluAND, true, rCX, -64)                                         // ergMask
			e.alu(aluCMP, true, rBX, rCX)
			below := e.jcc(ccB)
			e.opM(true, []byte{0x8d}, rCX, mem{base: rDX, index: noIndex, disp: hi - 1}) // lea rcx, [rdx+hi-1]
			e.aluImm(aluAND, true, rCX, -64)                                             // ergMask
			e.alu(aluCMP, true, rBX, rCX)
			e.bail(ccBE, k)
			e.here(below)
			e.here(skip)
			e.here(self)
		}
		if host { // back: DX = offset + ram - va
			e.movImm(rCX, ram)
			e.alu(aluADD, true, rDX, rCX)
			e.alu(aluSUB, true, rDX, rAX)
		}
	})
}

// load loads 1<<lg bytes at a (what access returned, plus a
// displacement) into x, extended as ext says.
func (e *emitter) load(x int, lg, ext uint8, a mem) {
	switch {
	case lg == 0 && ext == extSign64:
		e.opM(true, []byte{0x0f, 0xbe}, x, a)
	case lg == 0 && ext == extSign32:
		e.opM(false, []byte{0x0f, 0xbe}, x, a)
	case lg == 0:
		e.opM(false, []byte{0x0f, 0xb6}, x, a)
	case lg == 1 && ext == extSign64:
		e.opM(true, []byte{0x0f, 0xbf}, x, a)
	case lg == 1 && ext == extSign32:
		e.opM(false, []byte{0x0f, 0xbf}, x, a)
	case lg == 1:
		e.opM(false, []byte{0x0f, 0xb7}, x, a)
	case lg == 2 && ext == extSign64:
		e.opM(true, []byte{0x63}, x, a)
	case lg == 2:
		e.opM(false, []byte{0x8b}, x, a)
	default:
		e.opM(true, []byte{0x8b}, x, a)
	}
}

// store stores the low 1<<lg bytes of x at a (what access returned,
// plus a displacement). x is AX, R8/R9 or a cache register, whose low
// bytes need no REX quirks.
func (e *emitter) store(x int, lg uint8, a mem) { e.sized(lg, []byte{0x88}, []byte{0x89}, x, a) }

// xchg exchanges the low 1<<lg bytes of x with those at a, as store
// stores them: x gets the old value.
func (e *emitter) xchg(x int, lg uint8, a mem) { e.sized(lg, []byte{0x86}, []byte{0x87}, x, a) }

// sized emits the x86 operation on 1<<lg bytes of x and a: op8 for a
// byte, else op, with the operand-size prefix for 16 bits and REX.W for
// 64.
func (e *emitter) sized(lg uint8, op8, op []byte, x int, a mem) {
	switch lg {
	case 0:
		e.opM(false, op8, x, a)
	case 1:
		e.raw(0x66)
		e.opM(false, op, x, a)
	default:
		e.opM(lg == 3, op, x, a)
	}
}

// emitMem translates the loads and stores, whose ops are of three
// argument sets (&ldst, &ldstReg, &pair): it reads their operands
// through each op's view.
func (e *emitter) emitMem(c *CPU, in *inst, k int, pc uint64) {
	var lg, ext uint8 // log2 of the access size, how a load extends
	switch in.op {
	case opLDRreg, opSTRreg:
		a := (*ldstRegArgs)(in)
		lg, ext = a.size(), a.ext()
	case opLDP, opSTP:
		a := (*pairArgs)(in)
		lg, ext = a.size(), a.ext()
	default:
		a := (*ldstArgs)(in)
		lg, ext = a.size(), a.ext()
	}
	rd, rn := in.rd, in.rn
	size := 1 << lg
	if in.pre&preSP != 0 {
		e.checkSP(k)
	}
	// AX: the address; SI: the base register's written-back value.
	writeback := false
	// The address is base plus disp, for groups of accesses
	// (jit_group_amd64.go), unless base is noBase.
	base, disp := rn, int32(in.imm)
	switch in.op {
	case opLDRlit:
		base = noBase
		e.movImm(rAX, pc+in.imm)
	case opLDRo, opSTRo:
		e.addr(rn, int32(in.imm))
	case opLDRpre, opSTRpre, opLDRpost, opSTRpost:
		writeback = true
		pre := in.op == opLDRpre || in.op == opSTRpre
		e.writebackAddr(rn, int32(in.imm), pre)
		if !pre {
			disp = 0
		}
	case opLDAR, opSTLR, opLDXR:
		// Aligned accesses only: a misaligned one faults, in the
		// interpreter.
		disp = 0
		e.ld(rAX, rn, true)
		e.opR(true, []byte{0xf7}, 0, rAX) // test rax, size-1
		e.imm32(int32(size - 1))
		e.bail(ccNE, k)
		if in.op == opLDXR {
			e.ldExclusive(c, (*ldstArgs)(in), k)
			return
		}
	case opLDRreg, opSTRreg:
		base = noBase
		a := (*ldstRegArgs)(in)
		e.ld(rAX, rn, true)
		e.ld(rCX, a.rm, true)
		e.extend(rCX, a.extend(), a.shift())
		e.alu(aluADD, true, rAX, rCX)
	case opLDP, opSTP:
		a := (*pairArgs)(in)
		if a.mode() != modeOffset {
			writeback = true
			e.writebackAddr(rn, int32(in.imm), a.mode() == modePre)
			if a.mode() != modePre {
				disp = 0
			}
		} else {
			e.addr(rn, int32(in.imm))
		}
		rt2 := a.rt2()
		if in.op == opSTP {
			// Both sources before any writeback.
			x, y := e.src(rd, r8, true), e.src(rt2, r9, true)
			at := e.accessAt(c, k, base, disp, 2*size, true)
			e.store(x, lg, at)
			e.store(y, lg, at.plus(int32(size)))
			if writeback {
				e.stBase(rn, in.imm)
			}
			e.codeCheck(c, k)
			return
		}
		at := e.accessAt(c, k, base, disp, 2*size, false)
		// Straight into cached destinations, unless a writeback of the
		// same register must come first (the interpreter's order).
		x, y := r8, r9
		if !writeback || rd != rn && rt2 != rn {
			x, y = e.into(rd, r8), e.into(rt2, r9)
		}
		e.load(x, lg, ext, at)
		e.load(y, lg, ext, at.plus(int32(size)))
		if writeback {
			e.stBase(rn, in.imm)
		}
		e.st(rd, x)
		e.st(rt2, y)
		return
	}
	switch in.op {
	case opSTRo, opSTRpre, opSTRpost, opSTRreg, opSTLR:
		x := e.src(rd, r8, true)
		at := e.accessAt(c, k, base, disp, size, true)
		if in.op == opSTLR && c.par {
			// A store-release must not pass a later load-acquire (A64's
			// release is sequentially consistent with acquires): XCHG,
			// a locked store, orders it as MFENCE would.
			if x != r8 {
				e.opR(true, []byte{0x8b}, r8, x) // mov r8, x
			}
			e.xchg(r8, lg, at)
		} else {
			e.store(x, lg, at)
		}
		if writeback {
			e.stBase(rn, in.imm)
		}
		e.codeCheck(c, k)
	default:
		x := rAX
		if !writeback || rd != rn {
			x = e.into(rd, rAX)
		}
		e.load(x, lg, ext, e.accessAt(c, k, base, disp, size, false))
		if writeback {
			e.stBase(rn, in.imm)
		}
		e.st(rd, x)
	}
}

// writebackAddr sets SI to guest register s plus imm, the value a
// pre- or post-indexed access writes back, and AX to the address: SI if
// pre, else s.
func (e *emitter) writebackAddr(s uint8, imm int32, pre bool) {
	h := int(e.host[s])
	if h == 0 {
		e.ld(rAX, s, true)
		h = rAX
	} else {
		e.read(s)
	}
	e.opM(true, []byte{0x8d}, rSI, mem{base: h, index: noIndex, disp: imm}) // lea rsi, [h+imm]
	switch {
	case pre:
		e.opR(true, []byte{0x8b}, rAX, rSI) // mov rax, rsi
	case h != rAX:
		e.opR(true, []byte{0x8b}, rAX, h) // mov rax, h
	}
}

// addr sets AX to guest register s plus disp.
func (e *emitter) addr(s uint8, disp int32) {
	if h := e.host[s]; h != 0 {
		e.read(s)
		e.opM(true, []byte{0x8d}, rAX, mem{base: int(h), index: noIndex, disp: disp}) // lea rax, [h+disp]
		return
	}
	e.ld(rAX, s, true)
	if disp != 0 {
		e.aluImm(aluADD, true, rAX, disp)
	}
}
