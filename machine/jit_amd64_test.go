//go:build linux

package machine

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/arch/x86/x86asm"
)

// TestEmitterEncodings disassembles what each emitter primitive writes,
// with x86asm, and checks it is the intended instruction: the encodings
// are hand-written, and a wrong REX bit or ModRM field would still run.
func TestEmitterEncodings(t *testing.T) {
	// Where access leaves the data: RAM offset, or micro-TLB host + VA.
	ram, host := mem{base: rCX, index: rDX, scale: 1}, mem{base: rDX, index: rAX, scale: 1}
	tests := []struct {
		emit func(e *emitter)
		want string // Intel syntax, instructions separated by "; "
	}{
		{func(e *emitter) { e.ld(rAX, 5, true) }, "mov rax, qword ptr [rdi+0x28]"},
		{func(e *emitter) { e.ld(r9, regSP, false) }, "mov r9d, dword ptr [rdi+0x100]"},
		{func(e *emitter) { e.st(regSink, rSI) }, ""},
		// Guest registers a block caches: x7 in R11; SP pinned in R15.
		{func(e *emitter) { e.host[7] = r11; e.ld(rAX, 7, true) }, "mov rax, r11"},
		{func(e *emitter) { e.host[7] = r11; e.ld(r11, 7, false) }, "mov r11d, r11d"},
		{func(e *emitter) { e.host[7] = r11; e.ld(r11, 7, true); e.ldFor(r11, 7, false) }, ""},
		{func(e *emitter) { e.host[7] = r11; e.st(7, rSI) }, "mov r11, rsi"},
		{func(e *emitter) { e.host[7] = r11; e.setReg(7, 1<<40) }, "mov r11, 0x10000000000"},
		{func(e *emitter) { e.host[7] = r11; e.addr(7, -16) }, "lea rax, ptr [r11-0x10]"},
		{func(e *emitter) { e.host[regSP] = pinSP; e.testSPAligned() }, "test r15b, 0xf"},
		{func(e *emitter) { e.reset(0); e.ld(rAX, regSP, true); e.st(30, rSI) }, "mov rax, r15; mov r14, rsi"},
		// jitEnter loads and stores the pinned registers, not the blocks.
		{func(e *emitter) {
			e.reset(0)
			e.host[7], e.host[8] = r11, r11+1
			e.entry = 1<<7 | 1<<regSP | 1<<29 // x8 is written before it is read
			e.loadCache()
		}, "mov r11, qword ptr [rdi+0x38]"},
		{func(e *emitter) {
			e.reset(0)
			e.host[7], e.host[9] = r11, r11+1
			e.writeBack(1<<9 | 1<<8 | 1<<30 | 1<<regSP)
		}, "mov qword ptr [rdi+0x48], r12"},
		{func(e *emitter) { e.store(r11+1, 0, mem{base: rCX, index: rDX, scale: 1}) }, "mov byte ptr [rcx+rdx], r12b"},
		{func(e *emitter) { e.stPC(rAX) }, "mov qword ptr [rdi+PC], rax"},
		{func(e *emitter) { e.movImm(rCX, 0x12345678) }, "mov ecx, 0x12345678"},
		{func(e *emitter) { e.movImm(r8, ^uint64(0)) }, "mov r8, -0x1"},
		{func(e *emitter) { e.movImm(rBX, 0x123456789a) }, "mov rbx, 0x123456789a"},
		{func(e *emitter) { e.setReg(3, 7) }, "mov qword ptr [rdi+0x18], 0x7"},
		{func(e *emitter) { e.setReg(3, 1<<40) }, "mov rax, 0x10000000000; mov qword ptr [rdi+0x18], rax"},
		{func(e *emitter) { e.alu(aluSUB, true, rSI, rCX) }, "sub rsi, rcx"},
		{func(e *emitter) { e.aluMem(aluADD, true, rSI, 5) }, "add rsi, qword ptr [rdi+0x28]"},
		{func(e *emitter) { e.aluMem(aluXOR, false, r11, 3) }, "xor r11d, dword ptr [rdi+0x18]"},
		{func(e *emitter) { e.aluMem(aluCMP, true, rSI, 4) }, "cmp rsi, qword ptr [rdi+0x20]"},
		{func(e *emitter) { e.host[7] = r11; e.writebackAddr(7, -16, true) }, "lea rsi, ptr [r11-0x10]; mov rax, rsi"},
		{func(e *emitter) { e.host[7] = r11; e.writebackAddr(7, 16, false) }, "lea rsi, ptr [r11+0x10]; mov rax, r11"},
		{func(e *emitter) { e.writebackAddr(7, 16, false) }, "mov rax, qword ptr [rdi+0x38]; lea rsi, ptr [rax+0x10]"},
		{func(e *emitter) { e.alu(aluXOR, false, rAX, r9) }, "xor eax, r9d"},
		{func(e *emitter) { e.aluImm(aluCMP, true, r10, 4) }, "cmp r10, 0x4"},
		// The shortest immediates and displacements, and the bases that
		// need a displacement byte (R13) or a SIB byte (R12) with none.
		{func(e *emitter) { e.aluImm(aluAND, true, rBX, -64) }, "and rbx, -0x40"},
		{func(e *emitter) { e.aluImm(aluAND, false, rCX, 0xff) }, "and ecx, 0xff"},
		{func(e *emitter) { e.aluImm(aluADD, true, rSI, 128) }, "add rsi, 0x80"},
		{func(e *emitter) { e.opM(true, []byte{0x8b}, rAX, mem{base: r11 + 2, index: noIndex}) }, "mov rax, qword ptr [r13]"},
		{func(e *emitter) { e.opM(true, []byte{0x8b}, rAX, mem{base: r11 + 1, index: noIndex}) }, "mov rax, qword ptr [r12]"},
		{func(e *emitter) { e.opM(true, []byte{0x8b}, rAX, mem{base: r11 + 1, index: noIndex, disp: -128}) }, "mov rax, qword ptr [r12-0x80]"},
		{func(e *emitter) { e.opM(true, []byte{0x8b}, rAX, mem{base: rDX, index: rAX, scale: 1, disp: 127}) }, "mov rax, qword ptr [rdx+rax+0x7f]"},
		{func(e *emitter) { e.opM(true, []byte{0x8b}, rAX, mem{base: rDX, index: noIndex, disp: 128}) }, "mov rax, qword ptr [rdx+0x80]"},
		{func(e *emitter) { e.aluConst(aluAND, true, rAX, 0xff00ff00ff00ff00) }, "mov rcx, 0xff00ff00ff00ff00; and rax, rcx"},
		{func(e *emitter) { e.aluConst(aluOR, false, rSI, 0xffff0000) }, "or esi, -0x10000"},
		{func(e *emitter) { e.shift(2, true, rDX, 63) }, "sar rdx, 0x3f"},
		{func(e *emitter) { e.shift(3, false, rAX, 7) }, "ror eax, 0x7"},
		{func(e *emitter) { e.extend(rCX, 6, 2) }, "movsxd rcx, ecx; shl rcx, 0x2"},
		{func(e *emitter) { e.extend(rCX, 0, 0) }, "movzx ecx, cl"},
		{func(e *emitter) { e.extend(rCX, 5, 1) }, "movsx rcx, cx; shl rcx, 0x1"},
		{func(e *emitter) { e.cond(0xb) }, "movzx ecx, byte ptr [rdi+NZCV]; mov ebx, 0x55aa; bt ebx, ecx"},
		{func(e *emitter) { e.storeNZCV(afterLogic) }, "lahf; movzx ecx, ah; seto ch; mov al, byte ptr [rdi+rcx+FLAGS]; mov byte ptr [rdi+NZCV], al"},
		{func(e *emitter) { e.storeNZCV(afterSub) }, "lahf; movzx ecx, ah; seto ch; mov al, byte ptr [rdi+rcx+SUBFLAGS]; mov byte ptr [rdi+NZCV], al"},
		{func(e *emitter) { e.ret(jitTaken) }, "mov rax, r10; mov ebx, 0x2; xor edx, edx; ret"},
		{func(e *emitter) { e.load(rAX, 0, extSign64, ram) }, "movsx rax, byte ptr [rcx+rdx]"},
		{func(e *emitter) { e.load(r8, 1, extZero, ram.plus(8)) }, "movzx r8d, word ptr [rcx+rdx+0x8]"},
		{func(e *emitter) { e.load(rAX, 2, extSign64, ram) }, "movsxd rax, dword ptr [rcx+rdx]"},
		{func(e *emitter) { e.store(r8, 0, ram) }, "mov byte ptr [rcx+rdx], r8b"},
		{func(e *emitter) { e.store(rAX, 1, ram.plus(2)) }, "mov word ptr [rcx+rdx+0x2], ax"},
		{func(e *emitter) { e.store(r9, 3, ram.plus(8)) }, "mov qword ptr [rcx+rdx+0x8], r9"},
		{func(e *emitter) { e.load(r9, 3, extZero, host.plus(8)) }, "mov r9, qword ptr [rdx+rax+0x8]"},
	}
	for _, tt := range tests {
		e := &emitter{}
		tt.emit(e)
		var got []string
		for code := e.b; len(code) > 0; {
			in, err := x86asm.Decode(code, 64)
			if err != nil {
				t.Errorf("want %q: undecodable % x: %v", tt.want, code, err)
				break
			}
			got = append(got, x86asm.IntelSyntax(in, 0, nil))
			code = code[in.Len:]
		}
		// Field offsets by name: they move when CPU gains fields.
		want := strings.NewReplacer("SUBFLAGS", fmt.Sprintf("%#x", offFlagBits+flagRow), "FLAGS", fmt.Sprintf("%#x", offFlagBits),
			"NZCV", fmt.Sprintf("%#x", offNZCV), "PC", fmt.Sprintf("%#x", offPC)).Replace(tt.want)
		if g := strings.Join(got, "; "); g != want {
			t.Errorf("emitted % x\n got %s\nwant %s", e.b, g, want)
		}
	}
}

// TestCodeChunksAligned checks that the code cache's chunks start on a
// huge page, as a huge page must, and that the mapping trimmed around
// them left them whole: translated code runs from each.
func TestCodeChunksAligned(t *testing.T) {
	m, c, _ := newTestMachine(t, benchLoop())
	if err := m.Step(1 << 16); err != nil {
		t.Fatal(err)
	}
	j := c.jit
	if len(j.chunks) == 0 {
		t.Fatal("nothing translated")
	}
	for i, mem := range j.chunks {
		if a := addrOf(mem); a%hugePage != 0 || len(mem) != hugePage {
			t.Errorf("chunk %d at %#x, %d bytes: want %d bytes on a %d-byte boundary", i, a, len(mem), hugePage, hugePage)
		}
	}
	// The whole chunk is mapped: its last byte can be written and read.
	last := j.chunks[0][hugePage-1:]
	last[0] = 0xcc
	if last[0] != 0xcc {
		t.Error("the chunk's last byte did not keep what was written")
	}
}

// TestCPULayout checks the placement in CPU that translated code relies
// on for speed: each micro-TLB entry and each jump cache set within one
// cache line, and PSTATE.NZCV, which translated code stores at every
// flag-setting instruction, alone in its line. A field added before them
// moves them; the padding in front of each then needs adjusting.
func TestCPULayout(t *testing.T) {
	_, c, _ := newTestMachine(t, prog("nop"))
	const line = 64
	if a := uintptr(unsafe.Pointer(c)); a%line != 0 {
		t.Errorf("CPU at %#x, not on a cache line", a)
	}
	if offUTLB%line != 0 || line%utlbEntrySize != 0 {
		t.Errorf("micro-TLB at offset %#x: its %d-byte entries straddle cache lines", offUTLB, utlbEntrySize)
	}
	if offJumps%line != 0 || line%jumpSetSize != 0 {
		t.Errorf("jump cache at offset %#x: its %d-byte sets straddle cache lines", offJumps, jumpSetSize)
	}
	before := int32(unsafe.Offsetof(c.pageBlocks)) + 7
	after := int32(unsafe.Offsetof(c.retired))
	if offNZCV/line == before/line || offNZCV/line == after/line {
		t.Errorf("nzcvBits at offset %#x shares a cache line with pageBlocks (ends %#x) or retired (%#x)", offNZCV, before, after)
	}
}
