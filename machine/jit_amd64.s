//go:build linux

#include "textflag.h"
#include "go_asm.h"

// The guest registers pinned to host registers (jit_amd64.go's pinSP,
// pinX30, pinX29): their slots in CPU.r.
#define PIN_SP (CPU_cpuState+cpuState_r+8*32)
#define PIN_X30 (CPU_cpuState+cpuState_r+8*30)
#define PIN_X29 (CPU_cpuState+cpuState_r+8*29)

// func jitEnter(code uintptr, c *CPU, left uint64) (rest, flags uint64, slot uintptr)
//
// Runs translated code (jit_amd64.go) with DI = c and R10 = left; the
// code returns rest in AX, flags in BX and slot in DX. It uses AX, BX,
// CX, DX, SI, R8-R10, R11-R12 for the guest registers a block caches,
// and R13-R15 for the pinned ones, which are loaded here and stored back
// when the code returns; and no stack beyond the return address. R14 is
// Go's g: an ABI0 function may clobber it, and Go code reloads it from
// TLS after every call to one (cmd/compile's amd64 ssa.go, getgFromTLS).
TEXT ·jitEnter(SB), NOSPLIT, $0-48
	MOVQ code+0(FP), AX
	MOVQ c+8(FP), DI
	MOVQ left+16(FP), R10
	MOVQ PIN_SP(DI), R15
	MOVQ PIN_X30(DI), R14
	MOVQ PIN_X29(DI), R13
	CALL AX
	MOVQ R15, PIN_SP(DI)
	MOVQ R14, PIN_X30(DI)
	MOVQ R13, PIN_X29(DI)
	MOVQ AX, rest+24(FP)
	MOVQ BX, flags+32(FP)
	MOVQ DX, slot+40(FP)
	RET
