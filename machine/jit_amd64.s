//go:build linux

#include "textflag.h"

// func jitEnter(code uintptr, c *CPU, left uint64) (rest, flags uint64, slot uintptr)
//
// Runs translated code (jit_amd64.go) with DI = c and R10 = left; the
// code returns rest in AX, flags in BX and slot in DX. It uses only AX,
// BX, CX, DX, SI and R8-R10, and no stack beyond the return address.
TEXT ·jitEnter(SB), NOSPLIT, $0-48
	MOVQ code+0(FP), AX
	MOVQ c+8(FP), DI
	MOVQ left+16(FP), R10
	CALL AX
	MOVQ AX, rest+24(FP)
	MOVQ BX, flags+32(FP)
	MOVQ DX, slot+40(FP)
	RET
