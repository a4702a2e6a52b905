//go:build linux

#include "textflag.h"

// func jitEnter(code uintptr, c *CPU, left uint64) (rest, flags uint64, slot uintptr)
//
// Runs translated code (jit_amd64.go) with DI = c and R10 = left; the
// code returns rest in AX, flags in BX and slot in DX. It uses AX, BX,
// CX, DX, SI, R8-R10 and, for the guest registers a block caches,
// R11-R15, and no stack beyond the return address. R14 is Go's g: an
// ABI0 function may clobber it, and Go code reloads it from TLS after
// every call to one (cmd/compile's amd64 ssa.go, getgFromTLS).
TEXT ·jitEnter(SB), NOSPLIT, $0-48
	MOVQ code+0(FP), AX
	MOVQ c+8(FP), DI
	MOVQ left+16(FP), R10
	CALL AX
	MOVQ AX, rest+24(FP)
	MOVQ BX, flags+32(FP)
	MOVQ DX, slot+40(FP)
	RET
