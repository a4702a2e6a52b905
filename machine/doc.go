// Package machine is kpemu's AArch64 machine, laid out like QEMU's virt
// board: up to 8 vCPUs implementing the A64 integer, FP and Advanced SIMD
// instruction sets (simd.go, fpu.go: a soft-float following the Arm ARM) at EL0
// and EL1 with the exception model, system registers, stage-1 translation
// and the debug architecture (software step, hardware breakpoints and
// watchpoints); RAM; a GICv2, the generic timers, a PL011 UART and a PL031
// RTC; PSCI over HVC; and a generated device tree.
//
// The decoder is a table: a64.decode lists every instruction as a
// decodetree-style pattern (fixed bits, named fields, the argument set
// whose typed operands it decodes to, its execute and translate
// functions), and internal/decodegen, run by go generate, turns it into
// a64_decode.go (the decoder, the operand views, execute),
// a64_jit_amd64.go (the translator's dispatch) and the hot cases of
// runFast (exec.go); the system registers are one line each in
// sysregs.txt (internal/sysreggen). The interpreter decodes each guest
// instruction once into a cached, pre-decoded form kept per 4 KiB
// physical page. Every store that lands in a
// page holding decoded code (a guest store, DC ZVA, or the host's WriteMem)
// drops that page's cache, so patched text takes effect on the next fetch.
// Translation (mmu.go) goes through an ASID-tagged TLB; since the decode
// cache is physical, the fetch path re-translates after a TLBI or a write
// to a translation register, so remapping never runs stale code.
//
// Execution is deterministic by default: one host goroutine interleaves the
// powered-on vCPUs in fixed quanta, the generic timer counts retired
// instructions, and timer deadlines bound the quanta, so the same inputs
// give the same run. Config.Parallel runs one goroutine per vCPU instead:
// RAM is then reached through sync/atomic, store-exclusives and the LSE
// atomics are compare-and-swaps, and decoded pages are published
// atomically (see parallel.go).
//
// Devices raise interrupts through the GIC, which publishes each vCPU's
// IRQ/FIQ lines (irq.go); the interpreter polls them at branches, page
// crossings and DAIF changes.
//
// # Concurrency
//
// A Machine is driven by one goroutine at a time through Run, Step or
// DebugRun. While that goroutine runs the guest, other goroutines may touch
// guest state only inside Exclusive, which stops every vCPU at an
// instruction boundary. Host memory and register accessors (ReadMem,
// WriteMem, CPU.X, ...) do not lock: call them from inside Exclusive, from
// a hostcall handler, or while nothing runs.
package machine
